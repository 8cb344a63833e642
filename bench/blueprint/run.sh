#!/usr/bin/env bash
# API Blueprint parsing speed and memory: `kagami lint` (release build) on the generated 5 MB
# Blueprint, best of N runs, next to drafter's reference figures on the same file.
# Usage: bench/blueprint/run.sh [RUNS]   (env SHARED_DIR: folder holding bench/gen_big_apib.py)
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS="${1:-5}"
SHARED_DIR="${SHARED_DIR:-$(cd .. && pwd)/shared}"
DRAFTER_MBPS=0.28
DRAFTER_RSS_MB=1000

if [ ! -x /usr/bin/time ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null
fi

swift build -c release --product kagami >/dev/null
BIN="$(swift build -c release --show-bin-path)/kagami"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
python3 "$SHARED_DIR/bench/gen_big_apib.py" "$WORK/big.apib" >/dev/null
BYTES=$(stat -c %s "$WORK/big.apib")

best_seconds=""
peak_rss=""
for _ in $(seq "$RUNS"); do
    /usr/bin/time -f "%e %M" -o "$WORK/time.txt" "$BIN" lint "$WORK/big.apib" >"$WORK/lint.txt"
    read -r seconds rss <"$WORK/time.txt"
    if [ -z "$best_seconds" ] || awk "BEGIN{exit !($seconds < $best_seconds)}"; then best_seconds=$seconds; fi
    if [ -z "$peak_rss" ] || [ "$rss" -gt "$peak_rss" ]; then peak_rss=$rss; fi
done

awk -v bytes="$BYTES" -v s="$best_seconds" -v rss="$peak_rss" -v dm="$DRAFTER_MBPS" -v dr="$DRAFTER_RSS_MB" -v runs="$RUNS" -v problems="$(wc -l <"$WORK/lint.txt")" 'BEGIN {
    mb = bytes / 1000000; mbps = mb / s; rssmb = rss / 1024
    printf "input: %.2f MB generated Blueprint (%d lint lines)\n", mb, problems
    printf "kagami lint: %.2f s best of %d, %.2f MB/s, peak RSS %.0f MB\n", s, runs, mbps, rssmb
    printf "drafter reference: %.2f MB/s, peak RSS %d MB\n", dm, dr
    printf "ratio: %.1fx drafter speed (target >= 10x), %.2f of drafter memory (target <= 0.20)\n", mbps / dm, rssmb / dr
}'
