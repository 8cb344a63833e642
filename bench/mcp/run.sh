#!/usr/bin/env bash
# `kagami mcp`'s read tools on a session of COUNT exchanges (1,000,000): the session is built as
# bench/ui/run.sh builds its own (`kagami import` of bench/ui/har.py's archives, CHUNK at a time:
# 20 hosts, /items/N?page=N%50, every 1000th a 404), then `mcp-bench` (bench/mcp/Sources) calls the
# tools in process through the tool layer (arguments checked, the store read, the answer built;
# no transport): the newest page, a cursor page, host, status, text and path filters, an
# exchange read, the session's count; then a few of the same calls through `kagami mcp` over
# stdio with the official Python MCP client (bench/mcp/measure.py). Target: the newest page in ≤ 100 ms. Release build; no
# network.
# Usage: bench/mcp/run.sh
# Environment: COUNT (1000000), CHUNK (100000), RUNS (7 timed calls each), SESSION (a session
#   file to use, or to build and keep when missing), KAGAMI and MCP_BENCH (built binaries; skip
#   the release build), OUT (bench/results/mcp-DATE.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
COUNT="${COUNT:-1000000}"
CHUNK="${CHUNK:-100000}"
RUNS="${RUNS:-7}"
DATE=$(date -u +%Y-%m-%d)
OUT="${OUT:-bench/results/mcp-$DATE.md}"
if [ -z "${KAGAMI:-}" ] || [ -z "${MCP_BENCH:-}" ]; then
    swift build -c release --product kagami >/dev/null
    swift build -c release --product mcp-bench >/dev/null
    BIN=$(swift build -c release --show-bin-path)
    KAGAMI="${KAGAMI:-$BIN/kagami}"
    MCP_BENCH="${MCP_BENCH:-$BIN/mcp-bench}"
fi
WORK=$(mktemp -d /tmp/kagami-bench-mcp.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
SESSION="${SESSION:-$WORK/session.sqlite}"
BUILD_SECONDS="(given)"
if [ ! -s "$SESSION" ]; then
    echo "building a session of $COUNT exchanges in $SESSION ($CHUNK per import)"
    started=$(date +%s)
    done_count=0
    while [ "$done_count" -lt "$COUNT" ]; do
        n=$(( COUNT - done_count < CHUNK ? COUNT - done_count : CHUNK ))
        python3 bench/ui/har.py "$n" "$WORK/chunk.har" --start "$done_count"
        timeout 3600 "$KAGAMI" import "$WORK/chunk.har" --session "$SESSION" >/dev/null
        done_count=$(( done_count + n ))
        echo "  $done_count imported"
    done
    rm -f "$WORK/chunk.har"
    BUILD_SECONDS=$(( $(date +%s) - started ))
fi
SESSION_BYTES=$(du -cb "$SESSION"* | tail -1 | cut -f1)
TABLE=$("$MCP_BENCH" "$SESSION" "$RUNS")
# The same calls as an agent makes them: kagami mcp over stdio, the official Python client.
. scripts/python-env.sh
STDIO=$(.venv-tests/bin/python bench/mcp/measure.py "$KAGAMI" "$SESSION" "$RUNS")
mkdir -p bench/results
{
    echo "# kagami mcp read tools on a session of $COUNT exchanges — $DATE"
    echo
    echo "- Machine: nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(date -u '+%F %H:%M UTC'), load at end $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- kagami at $(git rev-parse --short HEAD 2>/dev/null || echo unknown), release build; session file $(( SESSION_BYTES / 1000000 )) MB, built in $BUILD_SECONDS s"
    echo "- Command: \`bench/mcp/run.sh\` (COUNT=$COUNT, RUNS=$RUNS); target: the newest page in ≤ 100 ms"
    echo
    echo "## Through the tool layer, in process (\`mcp-bench\`)"
    echo
    echo "$TABLE"
    echo
    echo "## Through \`kagami mcp --session FILE\` over stdio (the official Python MCP client, bench/mcp/measure.py)"
    echo
    echo "$STDIO"
} >"$OUT"
cat "$OUT"
