#!/usr/bin/env bash
# schemathesis (PyPI, in .venv-tests) against `kagami mock` serving each public OpenAPI document
# of bench/infer/specs: the examples, coverage and fuzzing phases, every check but the stateful
# ones docs/MOCK.md leaves out, a fixed seed, bounded examples per operation and a time limit per
# document. Each run is in a network namespace of its own where only loopback exists (the mock on
# 127.0.0.1, schemathesis pointed at it): nothing can leave the machine.
# Usage: bench/mock/schemathesis.sh [SPEC.yaml ...]
#   env KAGAMI=path        the kagami binary (default: .build/debug/kagami)
#       MAX_EXAMPLES=10    cases per operation and phase
#       TIME_LIMIT=240     seconds per document
# Prints a table: document, operations tested, cases generated, failures by kind, schemathesis's
# exit status; the full output of each run is kept in bench/results/tmp/schemathesis/NAME/run.out.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
KAGAMI="${KAGAMI:-$ROOT/.build/debug/kagami}"
SCHEMATHESIS="$ROOT/.venv-tests/bin/schemathesis"
PYTHON="$ROOT/.venv-tests/bin/python"
MAX_EXAMPLES="${MAX_EXAMPLES:-10}"
TIME_LIMIT="${TIME_LIMIT:-240}"
[ -x "$SCHEMATHESIS" ] || { echo "schemathesis is missing: python3 -m venv .venv-tests && .venv-tests/bin/pip install -r Tests/requirements.txt" >&2; exit 2; }
[ -x "$KAGAMI" ] || { echo "no kagami binary at $KAGAMI (swift build, or KAGAMI=path)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "needs root for its network namespace (unshare -n)" >&2; exit 2; }
# The checks a stateless mock cannot pass (docs/MOCK.md, "Checked with schemathesis").
STATEFUL="use_after_free,ensure_resource_availability"
WORK="$ROOT/bench/results/tmp/schemathesis"
mkdir -p "$WORK"
if [ "$#" -gt 0 ]; then SPECS=("$@"); else SPECS=(bench/infer/specs/*.yaml); fi

# run_one SPEC: the mock and schemathesis inside a namespace with loopback only.
run_one() {
    local spec="$1" name base
    name=$(basename "$spec" .yaml)
    # The path of the first server's URL: the mock serves the operations under it.
    base=$("$PYTHON" - "$spec" <<'PY'
import sys, urllib.parse, yaml
document = yaml.safe_load(open(sys.argv[1]))
servers = document.get("servers") or [{"url": ""}]
print(urllib.parse.urlsplit(servers[0].get("url", "")).path.rstrip("/"))
PY
)
    rm -rf "${WORK:?}/$name"
    mkdir -p "$WORK/$name"
    unshare -n bash -s "$KAGAMI" "$SCHEMATHESIS" "$ROOT/$spec" "$base" "$WORK/$name" "$MAX_EXAMPLES" "$TIME_LIMIT" "$STATEFUL" <<'INNER'
set -u
kagami="$1" schemathesis="$2" spec="$3" base="$4" dir="$5" examples="$6" limit="$7" stateful="$8"
ip link set lo up
"$kagami" mock "$spec" --host 127.0.0.1 --port 0 >"$dir/mock.out" 2>"$dir/mock.err" &
mock=$!
port=""
for _ in $(seq 1 300); do
    port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$dir/mock.out" 2>/dev/null | grep -o '[0-9]*$' || true)
    [ -n "$port" ] && break
    sleep 0.1
done
if [ -z "$port" ]; then echo "mock did not start" >"$dir/run.out"; kill "$mock" 2>/dev/null; exit 0; fi
cd "$dir"
HOME="$dir" NO_COLOR=1 timeout "$((limit + 30))" "$schemathesis" run "$spec" \
    --url "http://127.0.0.1:$port$base" \
    --checks all --exclude-checks "$stateful" \
    --phases examples,coverage,fuzzing \
    --max-examples "$examples" --seed 1 --workers 1 --max-time "$limit" \
    --generation-database none --request-timeout 10 \
    --no-color >"$dir/run.out" 2>&1
echo "$?" >"$dir/status"
kill "$mock" 2>/dev/null
wait "$mock" 2>/dev/null
exit 0
INNER
}

for spec in "${SPECS[@]}"; do
    echo "schemathesis: $spec" >&2
    run_one "$spec"
done

# The table, from each run's summary: operations tested, cases generated, failures by kind.
"$PYTHON" - "$WORK" "${SPECS[@]}" >"$WORK/table.md" <<'PY'
import os, re, sys
work, specs = sys.argv[1], sys.argv[2:]
print("| document | operations | cases | failures by kind | exit |")
print("| --- | --- | --- | --- | --- |")
for spec in specs:
    name = os.path.basename(spec)[:-len(".yaml")]
    folder = os.path.join(work, name)
    text = open(os.path.join(folder, "run.out"), errors="replace").read() if os.path.exists(os.path.join(folder, "run.out")) else ""
    tested = re.search(r"Tested: (\d+)", text)
    cases = re.search(r"(\d+) generated", text)
    kinds = re.findall(r"❌ (ST\d+ [^:\n]+): (\d+)", text.split("Failures:", 1)[1]) if "Failures:" in text else []
    status_file = os.path.join(folder, "status")
    status = open(status_file).read().strip() if os.path.exists(status_file) else "-"
    failures = "; ".join(f"{kind} {count}" for kind, count in kinds) or "none"
    print(f"| {name} | {tested.group(1) if tested else '-'} | {cases.group(1) if cases else '-'} | {failures} | {status} |")
PY
cat "$WORK/table.md"
