#!/usr/bin/env bash
# The web UI on a session of a million exchanges: the session is built by `kagami import` of
# generated HTTP Archives (bench/ui/har.py, CHUNK exchanges each, over 20 hosts), then
# `kagami proxy` serves it and headless Chromium (selenium, as the browser tests) opens the page and
# measures (bench/ui/measure.py):
#   - time to the newest rows drawn (from the page's start), and the newest page's API time;
#   - a host filter and two text filters (a rare URL, a common query word): the server's answer
#     drawn, from the filter's text given to the page;
#   - scrolling the list from top to bottom in steps, one per frame: frame times p50/p95/max;
#   - the rows the page holds (its bound) and its JavaScript heap.
# Everything listens on and talks to 127.0.0.1 only; every wait is bounded.
# Usage: bench/ui/run.sh
# Environment: KAGAMI (a built binary; skips the release build), COUNT (1000000), CHUNK (100000),
#   SESSION (a session file to use, or to build and keep when missing), OUT (the results file,
#   bench/results/ui-DATE.md).
set -euo pipefail

COUNT="${COUNT:-1000000}"
CHUNK="${CHUNK:-100000}"
DATE=$(date +%Y-%m-%d)
OUT="${OUT:-bench/results/ui-$DATE.md}"
BENCH_NAME=ui
NEEDED_APT=""
# The kagami binary, scratch space ($WORK) and the cleanup of the processes in PIDS.
source "$(dirname "$0")/../proxy/common.sh"
. scripts/python-env.sh

SESSION="${SESSION:-$WORK/session.sqlite}"
BUILD_SECONDS="(given)"
if [ ! -s "$SESSION" ]; then
    echo "building a session of $COUNT exchanges in $SESSION ($CHUNK per import)"
    started=$(date +%s.%N)
    done_count=0
    while [ "$done_count" -lt "$COUNT" ]; do
        n=$(( COUNT - done_count < CHUNK ? COUNT - done_count : CHUNK ))
        python3 bench/ui/har.py "$n" "$WORK/chunk.har" --start "$done_count"
        timeout 3600 "$KAGAMI" import "$WORK/chunk.har" --session "$SESSION" >/dev/null
        done_count=$(( done_count + n ))
        echo "  $done_count imported"
    done
    rm -f "$WORK/chunk.har"
    BUILD_SECONDS=$(python3 -c "import time; print(round(time.time() - $started))")
fi

"$KAGAMI" proxy --port 0 --ui-port 0 --session "$SESSION" --no-ssl-proxying --upstream-allow loopback > "$WORK/proxy.log" 2>&1 &
PROXY_PID=$!
PIDS+=("$PROXY_PID")
UI=""
for _ in $(seq 600); do
    UI=$(grep -o 'Web UI: http://[^ ]*' "$WORK/proxy.log" | head -1 | cut -d' ' -f3 || true)
    [ -n "$UI" ] && break
    kill -0 "$PROXY_PID" 2>/dev/null || { cat "$WORK/proxy.log"; exit 1; }
    sleep 0.1
done
[ -n "$UI" ] || { echo "kagami proxy did not start"; cat "$WORK/proxy.log"; exit 1; }

SESSION_BYTES=$(du -cb "$SESSION"* | tail -1 | cut -f1)
.venv-tests/bin/python bench/ui/measure.py --ui "$UI" --count "$COUNT" --out "$OUT" \
    --kagami "$KAGAMI_BUILD ($("$KAGAMI" --version 2>/dev/null || echo unknown))" --session-bytes "$SESSION_BYTES" --build-seconds "$BUILD_SECONDS"
