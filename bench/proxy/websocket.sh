#!/usr/bin/env bash
# WebSocket echo messages a second through `kagami proxy --reverse` (every message captured into
# its session) and through mitmdump in reverse mode, against the same echo server, with the
# same load client (bench/websocket: SwiftNIO at both ends, so neither end is what is measured);
# and the proxies' memory at the end of one long socket. Everything is on 127.0.0.1.
# Usage: bench/proxy/websocket.sh
# Environment: KAGAMI and WS_BENCH (built binaries; skip the release builds), CONNECTIONS (4),
#   MESSAGES per connection (50000), SIZE bytes (100), WINDOW in flight per connection (32),
#   LONG_MESSAGES on the one long socket (1000000; 0 skips it), LONG_TARGETS ("kagami mitmdump").
set -euo pipefail

CONNECTIONS="${CONNECTIONS:-4}"
MESSAGES="${MESSAGES:-50000}"
SIZE="${SIZE:-100}"
WINDOW="${WINDOW:-32}"
LONG_MESSAGES="${LONG_MESSAGES:-1000000}"
MITMPROXY_VERSION=11.0.2
BENCH_NAME=websocket
NEEDED_APT=""
source "$(dirname "$0")/common.sh"

if [ -z "${WS_BENCH:-}" ]; then
    echo "building ws-bench (release)"
    swift build -c release --product ws-bench >/dev/null
    WS_BENCH="$(swift build -c release --show-bin-path)/ws-bench"
fi

"$WS_BENCH" server > "$WORK/server.out" &
PIDS+=("$!")
for _ in $(seq 100); do grep -q port "$WORK/server.out" 2>/dev/null && break; sleep 0.05; done
SERVER_PORT=$(awk '/port/ { print $2 }' "$WORK/server.out")


run_client() {
    timeout 900 "$WS_BENCH" client "$1" "$2" "$3" "$SIZE" "$WINDOW" | tail -1
}

rate() { python3 -c 'import json, sys; print(json.loads(sys.argv[1])["perSecond"])' "$1"; }

RESULT="bench/results/websocket-$(date +%Y-%m-%d).md"
mkdir -p bench/results
# Every line of the table (row) goes to the terminal and to the result file.
row '%-10s %14s %14s\n' target "messages/s" "peak RSS (MB)"
direct=$(rate "$(run_client "$SERVER_PORT" "$CONNECTIONS" "$MESSAGES")")
row '%-10s %14s %14s\n' direct "$direct" ""
declare -A RATES
for target in mitmdump kagami; do
    start_reverse_proxy "$target" "$SERVER_PORT"
    result=$(run_client "$PROXY_PORT" "$CONNECTIONS" "$MESSAGES")
    RATES[$target]=$(rate "$result")
    peak=$(( $(process_kb VmHWM "$PROXY_PID") / 1024 ))
    kill "$PROXY_PID" 2>/dev/null || true
    wait "$PROXY_PID" 2>/dev/null || true
    row '%-10s %14s %14s\n' "$target" "${RATES[$target]}" "$peak"
done
python3 -c 'import sys; k, m = int(sys.argv[1]), int(sys.argv[2]); print(f"kagami / mitmdump: {k / m:.1f}x")' "${RATES[kagami]}" "${RATES[mitmdump]}" | tee -a "$WORK/table.txt"

if [ "$LONG_MESSAGES" -gt 0 ]; then
    # One socket, many messages: what the proxy holds should not grow with them.
    row '\n'
    row '%-10s %10s %16s %16s %14s\n' target messages "peak RSS after 10% (MB)" "peak RSS at end (MB)" "messages/s"
    for target in ${LONG_TARGETS:-kagami mitmdump}; do
        start_reverse_proxy "$target" "$SERVER_PORT"
        run_client "$PROXY_PORT" 1 $((LONG_MESSAGES / 10)) >/dev/null
        rss_warm=$(( $(process_kb VmHWM "$PROXY_PID") / 1024 ))
        result=$(run_client "$PROXY_PORT" 1 "$LONG_MESSAGES")
        rss_end=$(( $(process_kb VmHWM "$PROXY_PID") / 1024 ))
        kill "$PROXY_PID" 2>/dev/null || true
        wait "$PROXY_PID" 2>/dev/null || true
        row '%-10s %10s %16s %16s %14s\n' "$target" "$LONG_MESSAGES" "$rss_warm" "$rss_end" "$(rate "$result")"
    done
fi
row '\n%s\n' "$(nproc) cores; $CONNECTIONS connections x $MESSAGES messages of $SIZE bytes, $WINDOW in flight each; kagami: $KAGAMI_BUILD at $(git rev-parse --short HEAD)"
write_table_result "WebSocket echo through the proxies" \
    "\`bench/proxy/websocket.sh\` on $(uname -srm), $(date -u '+%Y-%m-%d %H:%M UTC'); $(swift --version 2>&1 | head -1); mitmproxy $("$MITMDUMP" --version | awk '/Mitmproxy/ { print $2 }')"
