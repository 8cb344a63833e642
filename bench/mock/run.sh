#!/usr/bin/env bash
# Requests/s of `kagami mock` on a simple GET vs a bare Hummingbird route, same wrk settings.
# Usage: bench/mock/run.sh   (writes bench/results/mock-YYYY-MM-DD.md; KAGAMI=path skips the release build)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 2; }

if [ -z "${KAGAMI:-}" ]; then
    swift build -c release --product kagami
    KAGAMI="$root/.build/release/kagami"
fi
(cd bench/HummingbirdBaseline && swift build -c release)
kagami="$KAGAMI"
baseline="$root/bench/HummingbirdBaseline/.build/release/HummingbirdBaseline"

work="$(mktemp -d)"
trap 'kill ${mock_pid:-} ${hb_pid:-} 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
cat > "$work/api.apib" <<'APIB'
FORMAT: 1A
# Bench API
## Note [/notes/{id}]
+ Parameters
    + id (number)
### Retrieve a Note [GET]
+ Response 200 (application/json)

        {"id": 1, "title": "Buy milk"}
APIB

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
mock_port=$(free_port); hb_port=$(free_port)
"$kagami" mock "$work/api.apib" --port "$mock_port" --session "$work/session.sqlite" > "$work/mock.log" &
mock_pid=$!
"$baseline" "$hb_port" > "$work/hb.log" 2>&1 &
hb_pid=$!
for port in "$mock_port" "$hb_port"; do
    for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/notes/1" >/dev/null && break; sleep 0.1; done
done

run() { wrk -t2 -c50 -d10s --latency "$1"; }
mock_out="$(run "http://127.0.0.1:$mock_port/notes/1")"
hb_out="$(run "http://127.0.0.1:$hb_port/notes/1")"
rps() { awk '/Requests\/sec/ {print $2}' <<<"$1"; }
p99() { awk '$1 == "99%" {print $2}' <<<"$1"; }
mock_rps="$(rps "$mock_out")"; hb_rps="$(rps "$hb_out")"
ratio="$(awk -v a="$mock_rps" -v b="$hb_rps" 'BEGIN { printf "%.0f", 100 * a / b }')"

report="$(cat <<MD
# Mock server vs bare Hummingbird ($(date -u +%Y-%m-%d))

wrk -t2 -c50 -d10s, loopback, release builds; $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')), load at end $(cut -d' ' -f1-3 /proc/loadavg); kagami at $(git rev-parse --short HEAD). The mock records every exchange into a SQLite session.
Command: \`bench/mock/run.sh\`; wrk and the server share the same cores.

| server | req/s | p99 |
| --- | --- | --- |
| kagami mock (GET /notes/1) | $mock_rps | $(p99 "$mock_out") |
| Hummingbird 2.28.1, one route | $hb_rps | $(p99 "$hb_out") |

Ratio: $ratio% (target ≥ 70%).
MD
)"
echo "$report"
mkdir -p bench/results
echo "$report" > "bench/results/mock-$(date -u +%Y-%m-%d).md"
