#!/usr/bin/env bash
# Where a proxy's CPU goes under the load of bench/proxy/run.sh: one target in front of the
# nginx origin, wrk with the same settings, `perf record -g` of the proxy alone during the run;
# prints CPU per exchange and where it went (bench/proxy/profile_report.py): by thread, kernel
# against user space, Kagami's own functions, the symbols with most samples of their own.
# Usage: bench/proxy/profile.sh [TARGET] [FILE]
#   TARGET: kagami-reverse (default), kagami-forward, kagami-rules20, kagami-contract, nio-proxy; FILE: small (default) or large.
# Environment: KAGAMI, NIO_PROXY (built binaries), SESSION (the session to record into; a new
#   one by default), PERF_FREQUENCY (499), and wrk's settings as
#   in run.sh. Writes perf.data and the reports into OUT (default: a scratch folder, printed).
set -euo pipefail

TARGET="${1:-kagami-reverse}"
FILE="${2:-small}"
NEEDED_APT="nginx wrk"
BENCH_NAME=profile
source "$(dirname "$0")/common.sh"
command -v perf >/dev/null || { echo "perf is needed (Debian: linux-perf)" >&2; exit 1; }
OUT="${OUT:-$WORK/out}"
mkdir -p "$OUT"

www_file small "${SMALL_BYTES:-100}"
www_file large "${LARGE_BYTES:-1048576}" random
start_origin

port=$(free_port)
case "$TARGET" in
    kagami-reverse)
        "$KAGAMI" proxy --reverse "http://127.0.0.1:$ORIGIN_PORT" --port "$port" --session "${SESSION:-$WORK/s.sqlite}" >"$WORK/proxy.log" 2>&1 & ;;
    kagami-forward)
        "$KAGAMI" proxy --port "$port" --session "${SESSION:-$WORK/s.sqlite}" >"$WORK/proxy.log" 2>&1 & ;;
    kagami-rules20)
        # As run.sh: 20 enabled rules of five tools whose locations match nothing the benchmark sends.
        write_rules20 "$WORK/rules20.yaml" "$WORK/www"
        "$KAGAMI" proxy --reverse "http://127.0.0.1:$ORIGIN_PORT" --port "$port" --session "${SESSION:-$WORK/s.sqlite}" \
            --rules "$WORK/rules20.yaml" >"$WORK/proxy.log" 2>&1 & ;;
    kagami-contract)
        write_bench_api "$WORK/bench-api.yaml"
        "$KAGAMI" proxy --reverse "http://127.0.0.1:$ORIGIN_PORT" --port "$port" --session "${SESSION:-$WORK/s.sqlite}" \
            --contract "$WORK/bench-api.yaml=http://127.0.0.1:$ORIGIN_PORT" >"$WORK/proxy.log" 2>&1 & ;;
    nio-proxy)
        "${NIO_PROXY:?NIO_PROXY: a built bench/NIOProxyBaseline}" "$port" "$ORIGIN_PORT" >"$WORK/proxy.log" 2>&1 & ;;
    *) echo "unknown target $TARGET" >&2; exit 2 ;;
esac
PROXY_PID=$!
PIDS+=("$PROXY_PID")
wait_for_port "$port"

url="http://127.0.0.1:$port/$FILE"
script=()
if [ "$TARGET" = kagami-forward ]; then
    write_forward_script "$WORK/forward.lua" "$FILE"
    script=(-s "$WORK/forward.lua")
fi
wrk -t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -d"$WARMUP" "${script[@]}" "$url" >/dev/null
before=$(cpu_ticks "$PROXY_PID")
perf record -F "${PERF_FREQUENCY:-499}" -g -p "$PROXY_PID" -o "$OUT/perf.data" -- sleep "${WRK_DURATION%s}" 2>"$OUT/perf.log" &
perf_pid=$!
timeout -k 5 "$WRK_TIMEOUT" wrk -t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -d"$WRK_DURATION" "${script[@]}" "$url" > "$OUT/wrk.txt"
wait "$perf_pid" || true
ticks=$(( $(cpu_ticks "$PROXY_PID") - before ))
requests=$(awk '/requests in/ { print $1 }' "$OUT/wrk.txt")
rate=$(awk '/Requests\/sec/ { print $2 }' "$OUT/wrk.txt")
hz=$(getconf CLK_TCK)
echo "$TARGET $FILE: $rate req/s, $(python3 -c "print(f'{$ticks / $hz / $requests * 1e6:.1f}')") µs CPU per exchange (load $(cut -d' ' -f1-3 /proc/loadavg))" | tee "$OUT/summary.txt"
perf script -i "$OUT/perf.data" -F comm,tid,ip,sym,dso > "$OUT/script.txt" 2>"$OUT/script.log"
per_exchange=$(python3 -c "print(f'{$ticks / $hz / $requests * 1e6:.2f}')")
python3 "$ROOT/bench/proxy/profile_report.py" "$OUT/script.txt" "$per_exchange" | tee "$OUT/report.txt"
if [ "$OUT" = "$WORK/out" ]; then
    rm -rf /tmp/kagami-profile-last
    cp -r "$OUT" /tmp/kagami-profile-last
    echo "(perf.data and the reports kept in /tmp/kagami-profile-last)"
fi
