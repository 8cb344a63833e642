#!/bin/sh
# `kagami diff` on two sessions of COUNT exchanges each (bench/diff/Sources: an app's API traffic
# as two builds record it, ~40 operations, JSON bodies of 0.3 to 6 KB): wall time, CPU time (what
# to compare on a busy machine) and peak RSS of the whole command (opening both sessions, reading every exchange with its bodies, comparing,
# writing the JSON report), over RUNS runs, release build. Target: 100,000 each in ≤ 10 s at
# ≤ 300 MB. No network: the sessions are written straight to files.
# Usage: bench/diff/run.sh [COUNT]   (default 100,000)
# Environment: RUNS (default 3); SESSIONS=DIRECTORY keeps the generated sessions there and
# reuses them when they hold COUNT exchanges; KAGAMI=binary skips the build of kagami.
# Writes bench/results/diff-YYYY-MM-DD.md (a later run of the day is added to it as a section).
set -e
cd "$(dirname "$0")/../.."
COUNT=${1:-100000}
RUNS=${RUNS:-3}
swift build -c release --product diff-bench >/dev/null
if [ -z "${KAGAMI:-}" ]; then
    swift build -c release --product kagami >/dev/null
    KAGAMI=.build/release/kagami
fi
WORK=$(mktemp -d /tmp/kagami-bench-diff.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
SESSIONS=${SESSIONS:-$WORK/sessions}
if [ ! -f "$SESSIONS/count" ] || [ "$(cat "$SESSIONS/count")" != "$COUNT" ]; then
    echo "generating two sessions of $COUNT exchanges in $SESSIONS"
    GENERATED=$(.build/release/diff-bench "$SESSIONS" "$COUNT")
    echo "$COUNT" >"$SESSIONS/count"
    echo "$GENERATED" >"$SESSIONS/generated"
fi
GENERATED=$(cat "$SESSIONS/generated")
echo "$GENERATED"

ROWS=""
for run in $(seq "$RUNS"); do
    sync
    # No --fail-on: anything but 0 is the command failing, not a finding.
    if ! /usr/bin/time -f "%e %M %U %S" -o "$WORK/time" "$KAGAMI" diff "$SESSIONS/before.sqlite" "$SESSIONS/after.sqlite" --format json --output "$WORK/report.json" 2>"$WORK/stderr"; then
        echo "kagami diff failed in run $run:" >&2
        cat "$WORK/stderr" >&2
        exit 1
    fi
    read -r SECONDS_TAKEN KILOBYTES USER_SECONDS SYSTEM_SECONDS <"$WORK/time"
    FINDINGS=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); s=r["summary"]; print("%d findings, %d operations (%d added, %d removed)" % (s["findings"], s["operations"], s["added"], s["removed"]))' "$WORK/report.json")
    LOAD=$(cut -d' ' -f1 /proc/loadavg)
    echo "run $run: $SECONDS_TAKEN s ($USER_SECONDS s user, $SYSTEM_SECONDS s system, load $LOAD), peak RSS $((KILOBYTES / 1024)) MB; $FINDINGS"
    ROWS="$ROWS| $run | $SECONDS_TAKEN | $USER_SECONDS + $SYSTEM_SECONDS | $LOAD | $((KILOBYTES / 1024)) | $FINDINGS |
"
done
KINDS=$(python3 -c 'import json,sys; print(", ".join(f"{k} {v}" for k, v in json.load(open(sys.argv[1]))["summary"]["kinds"].items()))' "$WORK/report.json")
# A session is its file and the files beside it (the body log).
SIZES="$(du -ch "$SESSIONS"/before.sqlite* | tail -n 1 | cut -f1)/$(du -ch "$SESSIONS"/after.sqlite* | tail -n 1 | cut -f1)"

DATE=$(date -u +%F)
mkdir -p bench/results
{
    echo "# kagami diff on two sessions of $COUNT exchanges, $DATE"
    echo
    echo "- Machine: nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(date -u '+%F %H:%M UTC'), load at end $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- kagami at $(git rev-parse --short HEAD 2>/dev/null || echo unknown), **release build**"
    echo "- Command: \`bench/diff/run.sh $COUNT\`: \`kagami diff before.sqlite after.sqlite --format json --output report.json\` under \`/usr/bin/time\` (wall time, user + system CPU seconds, peak RSS; the load is the 1-minute average at each run's end), $RUNS run$([ "$RUNS" = 1 ] || echo s)"
    echo "- Sessions (bench/diff/Sources, session files of $SIZES): $(echo "$GENERATED" | tr '\n' ';' | sed 's/;$//; s/;/; /g')"
    echo "- Target: ≤ 10 s and ≤ 300 MB for 100,000 exchanges each"
    echo
    echo "| run | seconds | CPU seconds (user + system) | load | peak RSS (MB) | report |"
    echo "|--:|--:|--:|--:|--:|---|"
    printf "%s" "$ROWS"
    echo
    echo "Findings of the last run by kind: $KINDS."
} >"$WORK/section.md"
cat "$WORK/section.md"
# A day's file keeps every run: a later run is added as a section of its own.
OUT="bench/results/diff-$DATE.md"
if [ -s "$OUT" ]; then
    { echo; sed '1s/^# .*/## Run of '"$(date -u +%H:%M)"' UTC/' "$WORK/section.md"; } >> "$OUT"
else
    cp "$WORK/section.md" "$OUT"
fi
