#!/usr/bin/env bash
# HTTP/2 through the proxies with h2load (Debian nghttp2-client): many multiplexed streams over
# a few connections, in clear text with prior knowledge (h2c), against one nginx origin:
#   nginx-direct   h2load → the origin's HTTP/2 listener
#   nginx-proxy    h2load → an nginx whose HTTP/2 listener proxies to the origin over HTTP/1.1
#   mitmdump       h2load → mitmdump --mode reverse:… over TLS (h2 by ALPN): mitmproxy does not
#                  accept h2c with prior knowledge (0 of the requests succeed), so it gets the
#                  TLS it needs for HTTP/2, which costs it a handshake per connection (10 here)
#   kagami         h2load → kagami proxy --reverse … (every stream recorded into its session)
# Each proxy talks HTTP/1.1 to the origin, so what differs is the proxy. Everything is on
# 127.0.0.1. The ratios are printed and kept in bench/results/h2-DATE.md.
# Usage: bench/proxy/h2.sh
# Environment: KAGAMI (a built binary; skips the release build), REQUESTS per run (20000),
#   CLIENTS connections (10), STREAMS concurrent streams per connection (10), SIZE bytes (100).
set -euo pipefail

REQUESTS="${REQUESTS:-20000}"
CLIENTS="${CLIENTS:-10}"
STREAMS="${STREAMS:-10}"
SIZE="${SIZE:-100}"
MITMPROXY_VERSION=11.0.2
BENCH_NAME=h2
NEEDED_APT="nginx h2load"
# h2load comes in nghttp2-client.
if ! command -v h2load >/dev/null; then NEEDED_APT="nginx nghttp2-client"; fi
source "$(dirname "$0")/common.sh"
command -v h2load >/dev/null || { echo "h2load is missing (Debian package nghttp2-client)" >&2; exit 1; }

www_file small "$SIZE"
ORIGIN_H2_PORT=$(free_port)
# nginx 1.22 (Debian 12): `listen … http2` on a plain port is HTTP/2 with prior knowledge.
start_origin "listen 127.0.0.1:$ORIGIN_H2_PORT http2;"
wait_for_port "$ORIGIN_H2_PORT"
start_nginx_proxy http2


# h2load's summary: requests a second, and how many succeeded.
measure() {
    local port=$1 scheme=${2:-http} out
    out=$(timeout 600 h2load -n "$REQUESTS" -c "$CLIENTS" -m "$STREAMS" "$scheme://127.0.0.1:$port/small" 2>&1) || true
    echo "$out" > "$WORK/h2load-$port.txt"
    local rate succeeded
    rate=$(awk '/^finished in/ { gsub(",", "", $4); print $4 }' <<<"$out")
    succeeded=$(awk '/^requests:/ { for (i = 1; i <= NF; i++) if ($(i+1) == "succeeded,") print $i }' <<<"$out")
    echo "${rate:-0} ${succeeded:-0}"
}

RESULT="bench/results/h2-$(date +%Y-%m-%d).md"
mkdir -p bench/results
row '%-14s %12s %12s %14s %22s\n' target "req/s" succeeded "peak RSS (MB)" "flows recorded"
declare -A RATES
read -r rate ok <<<"$(measure "$ORIGIN_H2_PORT")"
RATES[nginx-direct]=$rate
row '%-14s %12s %12s %14s %22s\n' nginx-direct "$rate" "$ok" "" ""
read -r rate ok <<<"$(measure "$NGINX_PROXY_PORT")"
RATES[nginx-proxy]=$rate
row '%-14s %12s %12s %14s %22s\n' nginx-proxy "$rate" "$ok" "" ""
for target in mitmdump kagami; do
    start_reverse_proxy "$target" "$ORIGIN_PORT"
    scheme=http
    [ "$target" = mitmdump ] && scheme=https
    read -r rate ok <<<"$(measure "$PROXY_PORT" "$scheme")"
    RATES[$target]=$rate
    peak=$(( $(process_kb VmHWM "$PROXY_PID") / 1024 ))
    kill "$PROXY_PID" 2>/dev/null || true
    wait "$PROXY_PID" 2>/dev/null || true
    recorded=""
    if [ "$target" = kagami ]; then
        recorded=$(sqlite3 "$WORK"/kagami-*.sqlite "SELECT count(*) FROM flow" 2>/dev/null || echo "?")
    fi
    row '%-14s %12s %12s %14s %22s\n' "$target" "$rate" "$ok" "$peak" "$recorded"
done
python3 - "${RATES[kagami]}" "${RATES[mitmdump]}" "${RATES[nginx-proxy]}" <<'PY' | tee -a "$WORK/table.txt"
import sys
kagami, mitmdump, nginx = (float(x or 0) for x in sys.argv[1:])
print()
print(f"kagami (h2c) / mitmdump (h2 over TLS): {kagami / mitmdump:.1f}x (goal 20x)" if mitmdump else "kagami / mitmdump: mitmdump served nothing")
print(f"kagami / nginx-proxy: {kagami / nginx:.2f}x" if nginx else "kagami / nginx-proxy: nginx served nothing")
PY
row '\n%s\n' "$(nproc) cores; h2load -n $REQUESTS -c $CLIENTS -m $STREAMS, $SIZE-byte file, h2c with prior knowledge; kagami: $KAGAMI_BUILD at $(git rev-parse --short HEAD)"
write_table_result "HTTP/2 (h2load) through the proxies" \
    "\`bench/proxy/h2.sh\` on $(uname -srm), $(date -u '+%Y-%m-%d %H:%M UTC'); $(swift --version 2>&1 | head -1); $(h2load --version 2>&1 | head -1); nginx $("$NGINX" -v 2>&1 | awk -F/ '{print $2}'); mitmproxy $("$MITMDUMP" --version | awk '/Mitmproxy/ { print $2 }')"
