#!/usr/bin/env bash
# Large descriptions: `kagami lint` and `kagami mock` start-up on a generated 27,000-path
# OpenAPI description (YAML, ~52 MB, and the same as JSON) and a ~50 MB API Blueprint
# (shared/bench/gen_big_apib.py). For each: lint seconds and peak RSS; the seconds from
# starting `kagami mock` until it is listening and has answered a GET of the last path, and
# its peak RSS then. Release build; loopback only.
# Usage: bench/descriptions/run.sh
#   env KAGAMI=path     use this binary instead of building
#       BEFORE=path     also measure this (older) binary, each run cut off after TIMEOUT s
#       TIMEOUT=200     seconds before a run is stopped and reported as "> TIMEOUT"
#       PATHS=27000 APIB_BYTES=50000000 SHARED_DIR=../shared
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
SHARED_DIR="${SHARED_DIR:-$(cd .. && pwd)/shared}"
PATHS="${PATHS:-27000}"
APIB_BYTES="${APIB_BYTES:-50000000}"
TIMEOUT="${TIMEOUT:-200}"
DATE=$(date +%Y-%m-%d)
OUT="bench/results/descriptions-$DATE.md"

if [ ! -x /usr/bin/time ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null
fi
if [ -z "${KAGAMI:-}" ]; then
    swift build -c release --product kagami >/dev/null
    KAGAMI="$(swift build -c release --show-bin-path)/kagami"
fi

# Generated inputs are kept in the ignored bench/results/tmp, reused when present.
WORK="$ROOT/bench/results/tmp/descriptions"
mkdir -p "$WORK"
[ -s "$WORK/big.yaml" ] || python3 bench/descriptions/gen_big_openapi.py "$WORK/big.yaml" --paths "$PATHS" >/dev/null
[ -s "$WORK/big.json" ] || python3 bench/descriptions/gen_big_openapi.py "$WORK/big.json" --paths "$PATHS" >/dev/null
[ -s "$WORK/big.apib" ] || python3 "$SHARED_DIR/bench/gen_big_apib.py" "$WORK/big.apib" "$APIB_BYTES" >/dev/null
MODULES_OPENAPI=$(( (PATHS + 2) / 3 ))
MODULES_APIB=$(grep -c '^# Group Module ' "$WORK/big.apib")
RUNTMP=$(mktemp -d)
MOCK_PID=""
cleanup() {
    if [ -n "$MOCK_PID" ]; then kill "$MOCK_PID" 2>/dev/null || true; fi
    rm -rf "$RUNTMP"
}
trap cleanup EXIT

# lint BINARY FILE -> "seconds rss_mb lines" (seconds "> TIMEOUT" when cut off)
lint() {
    local status=0
    timeout "$TIMEOUT" /usr/bin/time -f "%e %M" -o "$RUNTMP/time.txt" "$1" lint "$2" >"$RUNTMP/lint.txt" 2>/dev/null || status=$?
    if [ "$status" -eq 124 ] || [ ! -s "$RUNTMP/time.txt" ] || grep -q "Command terminated by signal" "$RUNTMP/time.txt"; then
        echo "> $TIMEOUT" "-" "-"
        return
    fi
    local seconds rss
    read -r seconds rss < <(tail -1 "$RUNTMP/time.txt")
    echo "$seconds" "$(( rss / 1024 ))" "$(wc -l <"$RUNTMP/lint.txt")"
}

# mock BINARY FILE PATH -> "seconds rss_mb status": until listening and GET PATH answered
mock() {
    local start now port="" status="-" rss="-"
    rm -f "$RUNTMP/mock.out" "$RUNTMP/session.kagami"
    start=$(date +%s.%N)
    "$1" mock "$2" --port 0 --session "$RUNTMP/session.kagami" >"$RUNTMP/mock.out" 2>"$RUNTMP/mock.err" &
    MOCK_PID=$!
    while :; do
        now=$(date +%s.%N)
        if awk "BEGIN{exit !($now - $start > $TIMEOUT)}"; then break; fi
        if ! kill -0 "$MOCK_PID" 2>/dev/null; then break; fi
        port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$RUNTMP/mock.out" 2>/dev/null | grep -o '[0-9]*$' || true)
        if [ -n "$port" ]; then
            status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port$3" || true)
            break
        fi
        sleep 0.1
    done
    now=$(date +%s.%N)
    if [ -n "$port" ]; then
        rss=$(( $(awk '/VmHWM/ {print $2}' "/proc/$MOCK_PID/status") / 1024 ))
        seconds=$(awk "BEGIN{printf \"%.2f\", $now - $start}")
    else
        seconds="> $TIMEOUT"
    fi
    kill "$MOCK_PID" 2>/dev/null || true
    wait "$MOCK_PID" 2>/dev/null || true
    MOCK_PID=""
    echo "$seconds" "$rss" "$status"
}

row() { # NAME BINARY FILE PATH
    local l m
    l=$(lint "$2" "$3")
    m=$(mock "$2" "$3" "$4")
    set -- "$1" "$l" "$m"
    awk -v name="$1" -v l="$2" -v m="$3" 'BEGIN {
        split(l, a, " "); split(m, b, " ")
        if (a[1] == ">") { lt = "> " a[2] " s"; lr = "-"; ll = "-" } else { lt = a[1] " s"; lr = a[2] " MB"; ll = a[3] }
        if (b[1] == ">") { mt = "> " b[2] " s"; mr = "-"; ms = "-" } else { mt = b[1] " s"; mr = b[2] " MB"; ms = b[3] }
        printf "| %s | %s | %s | %s | %s | %s | %s |\n", name, lt, lr, ll, mt, mr, ms
    }'
}

{
    echo "# Large descriptions — $DATE"
    echo
    echo "\`bench/descriptions/run.sh\` on $(uname -sm), $(nproc) cores, $(swift --version 2>/dev/null | head -1 | sed 's/ (.*//')."
    echo "Inputs: \`gen_big_openapi.py --paths $PATHS\` as YAML ($(stat -c %s "$WORK/big.yaml") bytes) and JSON"
    echo "($(stat -c %s "$WORK/big.json") bytes); \`gen_big_apib.py\` ($(stat -c %s "$WORK/big.apib") bytes, $MODULES_APIB modules)."
    echo "Lint: wall seconds and peak RSS of \`kagami lint\`, and the lines it printed. Mock: seconds from starting"
    echo "\`kagami mock FILE --port 0\` until it listened and answered a GET of the last path (status shown), and its"
    echo "peak RSS then. Runs over $TIMEOUT s are stopped."
    echo
    echo "| build / input | lint | lint peak RSS | lint lines | mock ready | mock peak RSS | answer |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
    for input in yaml json apib; do
        if [ "$input" = apib ]; then path="/m$((MODULES_APIB - 1))/widgets"; else path="/v1/mod$((MODULES_OPENAPI - 1))/items"; fi
        if [ -n "${BEFORE:-}" ]; then row "before: big.$input" "$BEFORE" "$WORK/big.$input" "$path"; fi
        row "after: big.$input" "$KAGAMI" "$WORK/big.$input" "$path"
    done
} > "$WORK/section.md"
cat "$WORK/section.md"
# A day's file keeps every run: a later run is added as a section of its own.
if [ -s "$OUT" ]; then
    { echo; sed '1s/^# .*/## Run of '"$(date -u +%H:%M)"' UTC/' "$WORK/section.md"; } >> "$OUT"
else
    cp "$WORK/section.md" "$OUT"
fi
echo "written to $OUT"
