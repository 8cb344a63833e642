#!/usr/bin/env bash
# Throughput, latency and memory of `kagami proxy` (reverse and forward, capture on) against
# nginx as a reverse proxy and mitmdump in reverse mode, all in front of the same nginx origin,
# driven by wrk with identical settings. Everything listens on and talks to 127.0.0.1 only.
# kagami-rules20 is kagami-reverse with 20 enabled rules that match no request (the cost of the
# rule pipeline; target ≥ 0.90 of kagami-reverse's req/s). kagami-contract is kagami-reverse
# checking every exchange against an OpenAPI description of the benchmark's paths (--contract;
# target ≥ 0.90 of kagami-reverse's req/s and p99 within 1 ms of it). nio-proxy is the least
# reverse proxy SwiftNIO makes (bench/NIOProxyBaseline: its own HTTP/1 handlers relaying each part,
# no capture): the framework's floor, against which Kagami's own cost per exchange shows. The
# disk's sequential write bandwidth (dd of 1 GB with fdatasync, before and after the runs) is the
# other bound 1 MB bodies captured may meet: the report says which bound Kagami is nearer.
# Usage: bench/proxy/run.sh [ROUNDS]
#   ROUNDS (default 1): each round runs every target once per file, targets interleaved so the
#   ones being compared run close in time, each round starting one target further along the
#   list; the table reports the round with the median req/s.
# Environment: KAGAMI (a built binary; skips the release build), NIO_PROXY (a built
#   NIOProxyBaseline; skips its build), TARGETS (subset, in order),
#   WRK_THREADS (2), WRK_CONNECTIONS (50), WRK_DURATION (10s), WARMUP (2s),
#   SMALL_BYTES (100), LARGE_BYTES (1048576), DISK_PROBE_MB (1024).
set -euo pipefail

ROUNDS="${1:-1}"
SMALL_BYTES="${SMALL_BYTES:-100}"
LARGE_BYTES="${LARGE_BYTES:-1048576}"
MITMPROXY_VERSION=11.0.2
COMMAND_LINE="bench/proxy/run.sh $*"

NEEDED_APT="nginx wrk"
source "$(dirname "$0")/common.sh"

www_file small "$SMALL_BYTES"
www_file large "$LARGE_BYTES" random

read -r -a TARGETS <<< "${TARGETS:-nginx-direct nginx-proxy nio-proxy mitmdump mitmdump-save kagami-reverse kagami-rules20 kagami-contract kagami-forward}"
if [[ " ${TARGETS[*]} " == *" nio-proxy "* && -z "${NIO_PROXY:-}" ]]; then
    echo "building bench/NIOProxyBaseline (release)…"
    (cd bench/NIOProxyBaseline && swift build -c release >/dev/null)
    NIO_PROXY="$(cd bench/NIOProxyBaseline && swift build -c release --show-bin-path)/NIOProxyBaseline"
fi

# Origin and reverse proxy are separate nginx instances, so the proxy's memory is its own.
start_origin
start_nginx_proxy

# wrk has no proxy option: the forward-proxy runs send absolute-form request lines.
for file in small large; do write_forward_script "$WORK/forward-$file.lua" "$file"; done

write_rules20 "$WORK/rules20.yaml" "$WORK/www"

write_bench_api "$WORK/bench-api.yaml"

# Memory of a process and its children, in kB: the sum of a /proc status field (VmHWM = peak
# resident, VmRSS = resident now).
memory_kb() {
    local field=$1 pids="$2" total=0 pid value
    for pid in $pids; do
        value=$(awk -v field="$field:" '$1 == field { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
        total=$((total + ${value:-0}))
    done
    echo "$total"
}
# CPU time in clock ticks of the whole machine (user, nice, system, irq and softirq of /proc/stat:
# every process and the kernel's own work, such as writing dirty pages back); cpu_ticks, of
# given processes, is in common.sh.
machine_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }

# Starts the proxy for one run and sets PROXY_PID, PROXY_URL_PORT.
start_proxy() {
    local target=$1 run=$2 port
    port=$(free_port)
    case "$target" in
        mitmdump)
            mkdir -p "$WORK/$run-mitm"
            "$MITMDUMP" --mode "reverse:http://127.0.0.1:$ORIGIN_PORT" --listen-host 127.0.0.1 -p "$port" \
                --set confdir="$WORK/$run-mitm" -q >"$WORK/$run.log" 2>&1 &
            ;;
        mitmdump-save)
            mkdir -p "$WORK/$run-mitm"
            "$MITMDUMP" --mode "reverse:http://127.0.0.1:$ORIGIN_PORT" --listen-host 127.0.0.1 -p "$port" \
                --set confdir="$WORK/$run-mitm" -w "$WORK/$run.mitm" -q >"$WORK/$run.log" 2>&1 &
            ;;
        nio-proxy)
            "$NIO_PROXY" "$port" "$ORIGIN_PORT" >"$WORK/$run.log" 2>&1 &
            ;;
        kagami-reverse)
            "$KAGAMI" proxy --reverse "http://127.0.0.1:$ORIGIN_PORT" --port "$port" \
                --session "$WORK/$run.sqlite" >"$WORK/$run.log" 2>&1 &
            ;;
        kagami-rules20)
            "$KAGAMI" proxy --reverse "http://127.0.0.1:$ORIGIN_PORT" --port "$port" \
                --session "$WORK/$run.sqlite" --rules "$WORK/rules20.yaml" >"$WORK/$run.log" 2>&1 &
            ;;
        kagami-contract)
            "$KAGAMI" proxy --reverse "http://127.0.0.1:$ORIGIN_PORT" --port "$port" \
                --session "$WORK/$run.sqlite" --contract "$WORK/bench-api.yaml=http://127.0.0.1:$ORIGIN_PORT" >"$WORK/$run.log" 2>&1 &
            ;;
        kagami-forward)
            "$KAGAMI" proxy --port "$port" --session "$WORK/$run.sqlite" >"$WORK/$run.log" 2>&1 &
            ;;
    esac
    PROXY_PID=$!
    PIDS+=("$PROXY_PID")
    PROXY_PORT=$port
    wait_for_port "$port"
}
# Sets STOP_SECONDS: how long the proxy took to exit after SIGTERM (Kagami flushes its session).
stop_proxy() {
    local started tries=0
    started=$(date +%s.%N)
    kill -TERM "$PROXY_PID" 2>/dev/null || true
    while kill -0 "$PROXY_PID" 2>/dev/null && [ $tries -lt 600 ]; do sleep 0.1; tries=$((tries + 1)); done
    if kill -0 "$PROXY_PID" 2>/dev/null; then
        echo "  process $PROXY_PID did not exit within 60 s of SIGTERM; killed" >&2
        kill -9 "$PROXY_PID" 2>/dev/null || true
    fi
    wait "$PROXY_PID" 2>/dev/null || true
    STOP_SECONDS=$(python3 -c "import time; print(f'{time.time() - $started:.1f}')")
}

run_wrk() {
    local duration=$1 port=$2 file=$3 target=$4
    if [ "$target" = kagami-forward ]; then
        timeout -k 5 "$WRK_TIMEOUT" wrk -t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -d"$duration" --latency \
            -s "$WORK/forward-$file.lua" "http://127.0.0.1:$port/" || echo "wrk did not finish within $WRK_TIMEOUT s"
    else
        timeout -k 5 "$WRK_TIMEOUT" wrk -t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -d"$duration" --latency \
            "http://127.0.0.1:$port/$file" || echo "wrk did not finish within $WRK_TIMEOUT s"
    fi
}

# The disk's sequential write bandwidth, where the sessions are written (1 GB with the data
# synced before dd exits): durable capture of 1 MB bodies may be bound by it rather than the CPU.
disk_mb_s() {
    dd if=/dev/zero of="$WORK/disk-probe" bs=1M count="${DISK_PROBE_MB:-1024}" conv=fdatasync 2>&1 \
        | awk '/copied/ { for (i = 1; i <= NF; i++) if ($i == "s,") { print int(($1 / $(i - 1)) / 1048576) } }'
    rm -f "$WORK/disk-probe"
}
DISK_MB_S_BEFORE=$(disk_mb_s)

RESULTS="$WORK/results.tsv"
: > "$RESULTS"
for round in $(seq 1 "$ROUNDS"); do
    # Each round starts one target further along the list, so no target always follows the same
    # one (a run after one that wrote gigabytes meets the kernel still writing them back).
    shift_by=$(( (round - 1) % ${#TARGETS[@]} ))
    ORDER=("${TARGETS[@]:shift_by}" "${TARGETS[@]:0:shift_by}")
    for file in small large; do
        for target in "${ORDER[@]}"; do
            run="r$round-$target-$file"
            case "$target" in
                nginx-direct) port=$ORIGIN_PORT ;;
                nginx-proxy) port=$NGINX_PROXY_PORT ;;
                *) start_proxy "$target" "$run"; port=$PROXY_PORT ;;
            esac
            case "$target" in
                nginx-direct) pids=$(nginx_pids origin) ;;
                nginx-proxy) pids=$(nginx_pids nginx-proxy) ;;
                *) pids=$PROXY_PID ;;
            esac
            echo "round $round: $target, $file (load $(cut -d' ' -f1-3 /proc/loadavg))"
            run_wrk "$WARMUP" "$port" "$file" "$target" > "$WORK/$run.warmup.wrk"
            rss_warm=$(memory_kb VmRSS "$pids")
            proxy_before=$(cpu_ticks "$pids")
            machine_before=$(machine_ticks)
            run_wrk "$WRK_DURATION" "$port" "$file" "$target" > "$WORK/$run.wrk"
            proxy_cpu=$(( $(cpu_ticks "$pids") - proxy_before ))
            machine_cpu=$(( $(machine_ticks) - machine_before ))
            rss_end=$(memory_kb VmRSS "$pids")
            rss_peak=$(memory_kb VmHWM "$pids")
            recorded=""
            STOP_SECONDS=""
            if [[ "$target" == kagami-* || "$target" == mitmdump* || "$target" == nio-proxy ]]; then
                stop_proxy
            fi
            if [[ "$target" == kagami-* ]]; then
                recorded=$(grep -o 'Stopped\. [0-9]* exchange' "$WORK/$run.log" | grep -o '[0-9]*' || true)
                # The check says how many exchanges it checked and how many it had to skip.
                grep '^Contract: [0-9]* exchanges\? checked' "$WORK/$run.log" | sed "s/^/  $target: /" || true
                # A run with 1 MB bodies stores gigabytes; keep the disk from filling up.
                rm -f "$WORK/$run.sqlite" "$WORK/$run.sqlite-wal" "$WORK/$run.sqlite-shm" "$WORK/$run.sqlite-flows" "$WORK/$run.sqlite-bodies"
            fi
            if [[ "$target" == mitmdump-save ]]; then
                rm -f "$WORK/$run.mitm"
            fi
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$target" "$file" "$rss_peak" \
                "$rss_warm" "$rss_end" "$WORK/$run.warmup.wrk" "$WORK/$run.wrk" "$recorded" "$STOP_SECONDS" \
                "$proxy_cpu" "$machine_cpu" "$CLOCK_TICKS" >> "$RESULTS"
            if [ -f "$WORK/$run.log" ] && grep -qiE 'error|warning|fatal' "$WORK/$run.log"; then
                echo "  $target log:"; grep -iE 'error|warning|fatal' "$WORK/$run.log" | sort | uniq -c | sort -rn | head -5 | sed 's/^/    /'
            fi
        done
    done
done

DISK_MB_S_AFTER=$(disk_mb_s)
DATE=$(date -u +%F)
mkdir -p bench/results
python3 bench/proxy/report.py "$RESULTS" --date "$DATE" --disk-mb-s "$DISK_MB_S_BEFORE" "$DISK_MB_S_AFTER" --large-bytes "$LARGE_BYTES" \
    --machine "nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(date -u '+%F %H:%M UTC'), load at end $(cut -d' ' -f1-3 /proc/loadavg)" \
    --tools "$(swift --version 2>&1 | head -1); $("$NGINX" -v 2>&1 | sed 's/.*: //'); $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2); mitmproxy $("$MITMDUMP" --version | awk '/Mitmproxy/ { print $2 }'); kagami $KAGAMI_BUILD at $(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
    --settings "wrk -t$WRK_THREADS -c$WRK_CONNECTIONS -d$WRK_DURATION --latency (after a $WARMUP warm-up); files: small $SMALL_BYTES B, large $LARGE_BYTES B; rounds $ROUNDS" \
    --command "$COMMAND_LINE" --cores "$(nproc)" \
    --output "bench/results/proxy-$DATE.md"
