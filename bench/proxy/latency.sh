#!/usr/bin/env bash
# Latency at a fixed rate: SwiftNIO's least proxy (bench/NIOProxyBaseline, nothing captured) and
# Kagami recording every exchange into a session file (reverse and forward), in front of the same
# nginx origin, everything on 127.0.0.1. First each target's saturation (wrk -c50, as run.sh:
# its req/s and p99, which at saturation is the length of the queue, not a latency); then every
# target at one fixed rate, half of nio-proxy's saturation req/s, driven by hey (RATE_WORKERS
# workers, each sending at most RATE/RATE_WORKERS requests a second over a kept-alive
# connection); the table gives the p50/p90/p99 each target answered with at that rate, and
# p99 - nio-proxy's p99 (the target: ≤ 1 ms). hey waits for each answer before the next
# request of its worker, so a stall delays what follows rather than piling it up: read a p99
# under the rate asked for as such (the achieved rate is in the table).
# Usage: bench/proxy/latency.sh [ROUNDS]   (default 2; each round runs every target, in turn
#   starting one further along; the table reports the round with each target's median p99)
# Environment: KAGAMI, NIO_PROXY (built binaries), TARGETS (nio-proxy kagami-reverse
#   kagami-forward), RATE (requests/s; default: half of nio-proxy's saturation), RATE_WORKERS (50),
#   DURATION (10s), SMALL_BYTES (100), and wrk's settings as in run.sh.
# Writes bench/results/proxy-latency-YYYY-MM-DD.md.
set -euo pipefail

ROUNDS="${1:-2}"
DURATION="${DURATION:-10s}"
RATE_WORKERS="${RATE_WORKERS:-50}"
COMMAND_LINE="bench/proxy/latency.sh $*"
NEEDED_APT="nginx wrk hey"
BENCH_NAME=latency
source "$(dirname "$0")/common.sh"
RESULT="bench/results/proxy-latency-$(date -u +%F).md"

read -r -a TARGETS <<< "${TARGETS:-nio-proxy kagami-reverse kagami-forward}"
if [[ " ${TARGETS[*]} " == *" nio-proxy "* && -z "${NIO_PROXY:-}" ]]; then
    echo "building bench/NIOProxyBaseline (release)…"
    (cd bench/NIOProxyBaseline && swift build -c release >/dev/null)
    NIO_PROXY="$(cd bench/NIOProxyBaseline && swift build -c release --show-bin-path)/NIOProxyBaseline"
fi

www_file small "${SMALL_BYTES:-100}"
start_origin

start_target() {
    local target=$1 run=$2
    PROXY_PORT=$(free_port)
    case "$target" in
        nio-proxy) "$NIO_PROXY" "$PROXY_PORT" "$ORIGIN_PORT" >"$WORK/$run.log" 2>&1 & ;;
        kagami-reverse)
            "$KAGAMI" proxy --reverse "http://127.0.0.1:$ORIGIN_PORT" --port "$PROXY_PORT" --no-ui \
                --session "$WORK/$run.sqlite" >"$WORK/$run.log" 2>&1 & ;;
        kagami-forward)
            "$KAGAMI" proxy --port "$PROXY_PORT" --no-ui --session "$WORK/$run.sqlite" >"$WORK/$run.log" 2>&1 & ;;
        *) echo "unknown target $target" >&2; exit 2 ;;
    esac
    PROXY_PID=$!
    PIDS+=("$PROXY_PID")
    wait_for_port "$PROXY_PORT"
}
stop_target() {
    kill -TERM "$PROXY_PID" 2>/dev/null || true
    for _ in $(seq 600); do kill -0 "$PROXY_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$PROXY_PID" 2>/dev/null || true
    wait "$PROXY_PID" 2>/dev/null || true
}
# The URL a target is asked for, and (forward) the proxy option of wrk's script or hey.
target_url() { [ "$1" = kagami-forward ] && echo "http://127.0.0.1:$ORIGIN_PORT/small" || echo "http://127.0.0.1:$PROXY_PORT/small"; }
write_forward_script "$WORK/forward.lua" small
saturate() {
    local target=$1 duration=$2 out=$3
    if [ "$target" = kagami-forward ]; then
        timeout -k 5 "$WRK_TIMEOUT" wrk -t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -d"$duration" --latency -s "$WORK/forward.lua" "http://127.0.0.1:$PROXY_PORT/" > "$out"
    else
        timeout -k 5 "$WRK_TIMEOUT" wrk -t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -d"$duration" --latency "$(target_url "$target")" > "$out"
    fi
}
at_rate() {
    local target=$1 rate=$2 out=$3 proxy=()
    [ "$target" = kagami-forward ] && proxy=(-x "http://127.0.0.1:$PROXY_PORT")
    local per_worker
    per_worker=$(python3 -c "print(max(1, round($rate / $RATE_WORKERS)))")
    timeout -k 5 "$WRK_TIMEOUT" hey -c "$RATE_WORKERS" -q "$per_worker" -z "$DURATION" "${proxy[@]}" "$(target_url "$target")" > "$out"
}
# wrk's percentile (ms) and req/s; hey's percentile (ms) and req/s.
wrk_rate() { awk '/Requests\/sec/ { print $2 }' "$1"; }
wrk_p99_ms() {
    awk '$1 == "99%" { v = $2; if (v ~ /us$/) { sub(/us$/, "", v); v /= 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v) } else if (v ~ /s$/) { sub(/s$/, "", v); v *= 1000 } print v }' "$1"
}
hey_rate() { awk '/Requests\/sec:/ { print $2 }' "$1"; }
hey_ms() { awk -v p="$2%" '$1 == p && $2 == "in" { print $3 * 1000 }' "$1"; }

RESULTS="$WORK/results.tsv"
: > "$RESULTS"
RATE_USED="${RATE:-}"
for round in $(seq 1 "$ROUNDS"); do
    shift_by=$(( (round - 1) % ${#TARGETS[@]} ))
    ORDER=("${TARGETS[@]:shift_by}" "${TARGETS[@]:0:shift_by}")
    # The rate comes from nio-proxy's saturation in the first round.
    if [ -z "$RATE_USED" ]; then ORDER=(nio-proxy "${ORDER[@]/nio-proxy}"); fi
    for target in "${ORDER[@]}"; do
        [ -n "$target" ] || continue
        run="r$round-$target"
        start_target "$target" "$run"
        echo "round $round: $target (load $(cut -d' ' -f1-3 /proc/loadavg))"
        saturate "$target" "$WARMUP" "$WORK/$run.warmup" || true
        saturate "$target" "$DURATION" "$WORK/$run.wrk"
        if [ -z "$RATE_USED" ]; then
            RATE_USED=$(python3 -c "print(int(float('$(wrk_rate "$WORK/$run.wrk")') / 2))")
            echo "  fixed rate: $RATE_USED req/s (half of nio-proxy's $(wrk_rate "$WORK/$run.wrk"))"
        fi
        at_rate "$target" "$RATE_USED" "$WORK/$run.hey"
        stop_target
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$target" "$(wrk_rate "$WORK/$run.wrk")" "$(wrk_p99_ms "$WORK/$run.wrk")" \
            "$(hey_rate "$WORK/$run.hey")" "$(hey_ms "$WORK/$run.hey" 50)" "$(hey_ms "$WORK/$run.hey" 90)" "$(hey_ms "$WORK/$run.hey" 99)" >> "$RESULTS"
        tail -1 "$RESULTS"
    done
done

: > "$WORK/table.txt"
python3 - "$RESULTS" "$RATE_USED" >> "$WORK/table.txt" <<'PY'
import sys, statistics
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
rate = sys.argv[2]
by = {}
for r in rows: by.setdefault(r[1], []).append(r)
def median_row(rs):
    rs = sorted(rs, key=lambda r: float(r[7] or "inf"))
    return rs[(len(rs) - 1) // 2]
chosen = {t: median_row(rs) for t, rs in by.items()}
base = float(chosen["nio-proxy"][7]) if "nio-proxy" in chosen else None
print(f"fixed rate asked: {rate} req/s ({len(rows)} runs; each target's run with its median p99 at that rate)")
print()
print(f"{'target':<16} {'sat. req/s':>10} {'sat. p99 ms':>11} | {'rate req/s':>10} {'p50 ms':>7} {'p90 ms':>7} {'p99 ms':>7} {'p99 - nio':>10}")
for t, r in chosen.items():
    p99 = float(r[7])
    delta = f"{p99 - base:+.2f}" if base is not None else "-"
    print(f"{t:<16} {float(r[2]):>10.0f} {float(r[3]):>11.2f} | {float(r[4]):>10.0f} {float(r[5]):>7.2f} {float(r[6]):>7.2f} {p99:>7.2f} {delta:>10}")
print()
print("every run (round, target, sat. req/s, sat. p99 ms, rate req/s, p50, p90, p99 ms):")
for r in rows: print("  " + "  ".join(r))
PY
cat "$WORK/table.txt"
write_table_result "Latency at a fixed rate, $(date -u +%F)" \
    "\`$COMMAND_LINE\` — Kagami: $KAGAMI_BUILD; hey -c $RATE_WORKERS at a fixed total rate, wrk -t$WRK_THREADS -c$WRK_CONNECTIONS for saturation, $DURATION each; load before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores."
