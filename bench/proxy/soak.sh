#!/usr/bin/env bash
# A session of a million exchanges: `kagami proxy --reverse` in front of an nginx origin records
# COUNT exchanges for each body size (wrk, 50 connections, in runs of STEP seconds until the
# session holds COUNT or LIMIT seconds passed), sampling the proxy's resident memory every second. Then, on the session of the
# last size, what a user does with a big session:
#   - the web UI's first page (the newest 200 rows), a host filter and a text filter, each timed
#     from curl against `kagami proxy`'s admin API on the recorded session;
#   - `kagami export` of the whole session as HAR to /dev/null, its peak RSS and time;
#   - `kagami import` of a HAR of IMPORT_COUNT entries (exported from the session) into a new
#     session, its time.
# Resident memory is reported whole and as its anonymous part (the heap: what the session's size
# could grow; the rest is the executable's and libraries' pages mapped from disk), and both parts
# once the proxy listens, before any load.
# Everything listens on and talks to 127.0.0.1 only; every load is bounded in count and time.
# Usage: bench/proxy/soak.sh
# Environment: KAGAMI (a built binary; skips the release build), COUNT (1000000),
#   SIZES ("100 10240"), LIMIT (seconds per size, 900), STEP (seconds per wrk run, 5),
#   IMPORT_COUNT (50000), KEEP (a folder: the session of the last size is copied there, to
#   measure other readers on it later), OUT (the results file, bench/results/soak-DATE.md).
# The packaged binary (static Swift runtime, stripped): see bench/README.md.
set -euo pipefail

COUNT="${COUNT:-1000000}"
SIZES="${SIZES:-100 10240}"
LIMIT="${LIMIT:-900}"
STEP="${STEP:-5}"
IMPORT_COUNT="${IMPORT_COUNT:-50000}"
MITMPROXY_VERSION=11.0.2
BENCH_NAME=soak
NEEDED_APT="nginx wrk curl"
source "$(dirname "$0")/common.sh"

DATE=$(date +%Y-%m-%d)
for size in $SIZES; do www_file "b$size" "$size"; done
start_origin

# Peak seconds of a command (wall clock) and its peak RSS in MB, as "seconds mb".
measure() {
    python3 - "$@" <<'PY'
import resource, subprocess, sys, time
started = time.monotonic()
result = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
elapsed = time.monotonic() - started
if result.returncode != 0:
    sys.stderr.write(result.stderr.decode(errors="replace")[-2000:])
    sys.exit(result.returncode)
print(f"{elapsed:.2f} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f}")
PY
}

# Milliseconds curl takes for URL (the whole answer read).
timed_get() {
    curl -s -H "Authorization: Bearer $TOKEN" -o "$WORK/answer.json" -w '%{time_total}' "$1" | awk '{ printf "%.0f", $1 * 1000 }'
}

# The admin API's token, from the web UI's address in the proxy's banner (LOG).
ui_token() {
    for _ in $(seq 100); do
        token=$(grep -o 'Web UI: http://[^ ]*?token=[0-9A-Za-z_-]*' "$1" | head -1 | sed 's/.*?token=//')
        [ -n "$token" ] && { echo "$token"; return; }
        sleep 0.1
    done
}

TABLE="$WORK/table.md"
{
    echo "| body | exchanges | req/s | idle RSS MB: file / anonymous | RSS MB at 10% / 50% / 90% / end | peak RSS MB | of which anonymous, peak MB | session bytes per exchange |"
    echo "|--:|--:|--:|--|--|--:|--:|--:|"
} > "$TABLE"

SESSION=""
for size in $SIZES; do
    SESSION="$WORK/soak-$size.sqlite"
    port=$(free_port)
    ui_port=$(free_port)
    "$KAGAMI" proxy --reverse "http://127.0.0.1:$ORIGIN_PORT" --port "$port" --ui-port "$ui_port" \
        --session "$SESSION" >"$WORK/kagami-$size.log" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    wait_for_port "$port"
    TOKEN=$(ui_token "$WORK/kagami-$size.log")
    # Idle: listening, its session open, nothing asked of it yet.
    sleep 1
    idle="$(process_kb RssFile "$pid") $(process_kb RssAnon "$pid")"
    : > "$WORK/rss-$size"
    : > "$WORK/anon-$size"
    ( while kill -0 "$pid" 2>/dev/null; do
        process_kb VmRSS "$pid" >> "$WORK/rss-$size"
        process_kb RssAnon "$pid" >> "$WORK/anon-$size"
        sleep 1
      done ) &
    sampler=$!
    echo "recording $COUNT exchanges of $size bytes"
    # wrk runs in steps of STEP seconds until the session holds COUNT exchanges or LIMIT passed.
    started=$(date +%s)
    stored=0
    : > "$WORK/wrk-$size"
    while [ "$stored" -lt "$COUNT" ] && [ $(( $(date +%s) - started )) -lt "$LIMIT" ]; do
        timeout $((STEP + 30)) wrk -t2 -c50 -d"${STEP}s" "http://127.0.0.1:$port/b$size" >> "$WORK/wrk-$size" || true
        stored=$(curl -s -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$ui_port/api/status" | python3 -c 'import json,sys; print(json.load(sys.stdin)["flows"])')
    done
    elapsed=$(( $(date +%s) - started ))
    rate=$(( stored / (elapsed > 0 ? elapsed : 1) ))
    if [ "$size" = "$(echo $SIZES | awk '{ print $NF }')" ]; then
        # The web UI's questions, asked of the session just recorded (the proxy idle).
        newest=$(timed_get "http://127.0.0.1:$ui_port/api/flows?order=newest&limit=200")
        newest_rows=$(python3 -c 'import json; print(len(json.load(open("'"$WORK/answer.json"'"))["flows"]))')
        # Asked again: the first answer waited for the writer to commit what the load left queued.
        newest_again=$(timed_get "http://127.0.0.1:$ui_port/api/flows?order=newest&limit=200")
        by_host=$(timed_get "http://127.0.0.1:$ui_port/api/flows?order=newest&limit=200&filter=host:127.0.0.1")
        host_rows=$(python3 -c 'import json; print(len(json.load(open("'"$WORK/answer.json"'"))["flows"]))')
        by_text=$(timed_get "http://127.0.0.1:$ui_port/api/flows?order=newest&limit=200&filter=no-such-path")
        text_rows=$(python3 -c 'import json; print(len(json.load(open("'"$WORK/answer.json"'"))["flows"]))')
    fi
    kill "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    wait "$sampler" 2>/dev/null || true
    # The session file and whatever lies beside it (write-ahead log, body log).
    bytes=$(du -cb "$SESSION"* | awk 'END { print $1 }')
    python3 - "$WORK/rss-$size" "$size" "$stored" "$rate" "$bytes" "$WORK/anon-$size" "$idle" >> "$TABLE" <<'PY'
import sys
samples = [int(line) for line in open(sys.argv[1]) if line.strip()]
anonymous = [int(line) for line in open(sys.argv[6]) if line.strip()] or [0]
size, stored, rate, total = sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
def at(fraction): return f"{samples[min(len(samples) - 1, int(len(samples) * fraction))] / 1024:.0f}"
points = " / ".join(at(f) for f in (0.1, 0.5, 0.9, 1.0))
idle = " / ".join(f"{int(kb) / 1024:.0f}" for kb in sys.argv[7].split())
print(f"| {size} B | {stored:,} | {rate} | {idle} | {points} | {max(samples) / 1024:.0f} | {max(anonymous) / 1024:.0f} | {total / max(stored, 1):,.0f} |")
PY
done

if [ -n "${KEEP:-}" ]; then
    mkdir -p "$KEEP"
    cp "$SESSION"* "$KEEP"/
    echo "the session is kept in $KEEP/$(basename "$SESSION")"
fi
echo "exporting the whole session as HAR"
read -r export_s export_mb < <(measure "$KAGAMI" export --session "$SESSION" -o /dev/null)
echo "exporting $IMPORT_COUNT exchanges and importing them"
"$KAGAMI" export --session "$SESSION" --limit "$IMPORT_COUNT" -o "$WORK/part.har"
read -r import_s import_mb < <(measure "$KAGAMI" import "$WORK/part.har" --session "$WORK/imported.sqlite")
imported=$("$KAGAMI" flows --session "$WORK/imported.sqlite" | wc -l)

RESULT="${OUT:-bench/results/soak-$DATE.md}"
{
    echo "# Soak: a session of $COUNT exchanges ($DATE)"
    echo
    echo "\`bench/proxy/soak.sh\` ($KAGAMI_BUILD) on $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)."
    echo "\`kagami proxy --reverse\` recording every exchange into a session file, in front of nginx; wrk -t2 -c50."
    echo
    cat "$TABLE"
    echo
    echo "On the session of the last size ($(echo $SIZES | awk '{ print $NF }') B bodies):"
    echo
    echo "| what | answer | time |"
    echo "|--|--|--:|"
    echo "| web UI's first page: newest 200 rows (\`/api/flows?order=newest&limit=200\`), right after the load (waits for the writer's queue) | $newest_rows rows | $newest ms |"
    echo "| the same page asked again | $newest_rows rows | $newest_again ms |"
    echo "| host filter (\`&filter=host:127.0.0.1\`, every row matches) | $host_rows rows | $by_host ms |"
    echo "| text filter matching nothing (\`&filter=no-such-path\`, every row searched) | $text_rows rows | $by_text ms |"
    echo "| \`kagami export\` of the whole session as HAR to /dev/null | peak RSS $export_mb MB | ${export_s} s |"
    echo "| \`kagami import\` of a HAR of $IMPORT_COUNT entries into a new session | $imported exchanges, peak RSS $import_mb MB | ${import_s} s |"
} > "$RESULT"
cat "$RESULT"
