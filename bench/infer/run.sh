#!/usr/bin/env bash
# Accuracy of `kagami infer` against the descriptions in bench/infer/specs, beside
# mitmproxy2swagger on the same recorded traffic. For each description:
#   kagami mock SPEC (127.0.0.1, port 0)  ←  generated curl requests  ←  kagami proxy --upstream-allow loopback
#   → kagami export (HAR) → kagami infer (OpenAPI, and API Blueprint) → score against SPEC;
#   mitmproxy2swagger on the same HAR → score.
# Everything listens on and talks to 127.0.0.1 only; every request has a 10 s limit and each
# request script 300 s.
# Usage: bench/infer/run.sh [SPEC...]   (default: every file in bench/infer/specs)
# Environment: KAGAMI, INFER_BENCH (built binaries; skips the build), SEED (default 17).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
SEED="${SEED:-17}"
M2S_VERSION=0.14.0
COMMAND_LINE="bench/infer/run.sh $*"

if [ -z "${KAGAMI:-}" ] || [ -z "${INFER_BENCH:-}" ]; then
    echo "building kagami and infer-bench (debug)"
    swift build --product kagami >/dev/null
    swift build --product infer-bench >/dev/null
    KAGAMI="$(swift build --show-bin-path)/kagami"
    INFER_BENCH="$(swift build --show-bin-path)/infer-bench"
fi
if [ ! -x bench/.venv/bin/mitmproxy2swagger ]; then
    echo "installing mitmproxy2swagger $M2S_VERSION into bench/.venv"
    [ -x bench/.venv/bin/python ] || python3 -m venv bench/.venv
    bench/.venv/bin/pip install -q "mitmproxy2swagger==$M2S_VERSION"
fi
M2S="$ROOT/bench/.venv/bin/mitmproxy2swagger"
export KAGAMI_UPSTREAM_ALLOW=loopback

WORK=$(mktemp -d /tmp/kagami-bench-infer.XXXXXX)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]:-}"; do [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

# Waits (at most 30 s) for "…http://127.0.0.1:PORT…" in a log and prints PORT.
port_in() {
    local log=$1 port=""
    for _ in $(seq 300); do
        port=$(grep -oE 'http://127\.0\.0\.1:[0-9]+' "$log" 2>/dev/null | head -1 | sed 's/.*://') || true
        [ -n "$port" ] && { echo "$port"; return 0; }
        sleep 0.1
    done
    echo "no port in $log: $(cat "$log")" >&2
    return 1
}

stop() {
    local pid=$1
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
}

if [ $# -gt 0 ]; then SPECS=("$@"); else SPECS=(bench/infer/specs/*.yaml bench/infer/specs/*.apib); fi
SCORES="$WORK/scores.jsonl"
: > "$SCORES"
for spec in "${SPECS[@]}"; do
    name=$(basename "$spec"); name="${name%.*}"
    echo "== $name"
    "$KAGAMI" mock "$spec" --port 0 --session "$WORK/$name.mock.sqlite" > "$WORK/$name.mock.log" 2>&1 &
    mock=$!; PIDS+=("$mock")
    "$KAGAMI" proxy --port 0 --no-ui --no-ssl-proxying --upstream-allow loopback --session "$WORK/$name.sqlite" > "$WORK/$name.proxy.log" 2>&1 &
    proxy=$!; PIDS+=("$proxy")
    mock_port=$(port_in "$WORK/$name.mock.log")
    proxy_port=$(port_in "$WORK/$name.proxy.log")

    "$INFER_BENCH" requests "$spec" "http://127.0.0.1:$mock_port" "http://127.0.0.1:$proxy_port" "$SEED" > "$WORK/$name.requests.sh"
    timeout 300 bash "$WORK/$name.requests.sh" > "$WORK/$name.requests.log" 2>&1 || echo "   request script ended early: $(tail -1 "$WORK/$name.requests.log")"
    echo "   $(tail -1 "$WORK/$name.requests.log"); statuses: $(grep -E '^[0-9]{3} ' "$WORK/$name.requests.log" | awk '{print $1}' | sort | uniq -c | tr -s ' \n' ' ')"
    stop "$proxy"; stop "$mock"

    "$KAGAMI" export --session "$WORK/$name.sqlite" --format har -o "$WORK/$name.har"
    exchanges=$("$KAGAMI" flows --session "$WORK/$name.sqlite" | grep -c . || true)
    "$KAGAMI" infer --har "$WORK/$name.har" -o "$WORK/$name.kagami.yaml" 2> "$WORK/$name.infer.log" || echo "   kagami infer failed: $(tail -3 "$WORK/$name.infer.log")"
    "$KAGAMI" lint "$WORK/$name.kagami.yaml" > "$WORK/$name.lint.log" 2>&1 || echo "   kagami lint: $(head -3 "$WORK/$name.lint.log")"
    "$KAGAMI" infer --har "$WORK/$name.har" --format apib -o "$WORK/$name.kagami.apib" 2> "$WORK/$name.infer-apib.log" || echo "   kagami infer --format apib failed: $(tail -3 "$WORK/$name.infer-apib.log")"
    "$KAGAMI" lint "$WORK/$name.kagami.apib" > "$WORK/$name.lint-apib.log" 2>&1 || echo "   kagami lint (apib): $(head -3 "$WORK/$name.lint-apib.log")"

    # mitmproxy2swagger as its README says: a first pass lists paths as "ignore:" entries,
    # a person removes the prefix from those to keep (here: all of them), a second pass writes
    # the schemas. -s leaves out paths that still hold concrete values.
    m2s_out="$WORK/$name.m2s.yaml"
    rm -f "$m2s_out"
    if timeout 300 "$M2S" -i "$WORK/$name.har" -o "$m2s_out" -p "http://127.0.0.1:$mock_port" -f har -s > "$WORK/$name.m2s.log" 2>&1; then
        sed -i 's/^\(\s*\)- ignore:/\1- /' "$m2s_out"
        timeout 300 "$M2S" -i "$WORK/$name.har" -o "$m2s_out" -p "http://127.0.0.1:$mock_port" -f har -s >> "$WORK/$name.m2s.log" 2>&1 || echo "   mitmproxy2swagger second pass failed: $(tail -2 "$WORK/$name.m2s.log")"
    else
        echo "   mitmproxy2swagger failed: $(tail -2 "$WORK/$name.m2s.log")"
    fi
    # How much of the traffic each draft accepts: kagami validate, every warning counted.
    valid_share() {
        [ -s "$1" ] || { echo -1; return; }
        "$KAGAMI" validate --contract "$1" --har "$WORK/$name.har" --format json --fail-on warnings --fail-on undocumented > "$1.validate.json" 2>/dev/null || true
        python3 -c 'import json,sys
try:
    report = json.load(open(sys.argv[1]))
except Exception:
    print(-1); sys.exit()
checked = report["summary"]["checked"]
bad = {v["flowId"] for v in report["violations"] if v["severity"] in ("error", "warning")}
print(round((checked - len(bad)) / checked, 4) if checked else -1)' "$1.validate.json"
    }
    kagami_valid=$(valid_share "$WORK/$name.kagami.yaml")
    apib_valid=$(valid_share "$WORK/$name.kagami.apib")
    m2s_valid=$(valid_share "$m2s_out")
    echo "   traffic valid against the draft: kagami $kagami_valid (apib $apib_valid), mitmproxy2swagger $m2s_valid"
    "$INFER_BENCH" score "$name" "$spec" "$WORK/$name.kagami.yaml" "$m2s_out" "$exchanges" "$kagami_valid" "$m2s_valid" \
        "$WORK/$name.kagami.apib" "$apib_valid" >> "$SCORES"
done

DATE=$(date -u +%Y-%m-%d)
RESULT="bench/results/infer-$DATE.md"
{
    echo "# Inference accuracy: kagami infer vs mitmproxy2swagger ($DATE)"
    echo
    echo "\`$COMMAND_LINE\` (seed $SEED), $(uname -srm), $(nproc) cores; kagami $("$KAGAMI" --version), mitmproxy2swagger $M2S_VERSION."
    echo "Each description served by \`kagami mock\`, driven through \`kagami proxy\` by generated requests (every operation eight times"
    echo "with varied ids and optional fields, plus one request per documented status), the HAR scored for both tools. See docs/INFER.md for the metrics."
    "$INFER_BENCH" report "$SCORES"
} > "$RESULT"
cat "$RESULT"
echo
echo "saved $RESULT (work files in $WORK)"
