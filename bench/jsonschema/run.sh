#!/usr/bin/env bash
# Validates a ~1 MB order feed N times with `kagami schema check` (release build) and with
# Python's jsonschema, in the same run, and records documents/s for both: once for a valid
# feed, once for the same feed with every 50th order broken (all errors collected).
# Usage: bench/jsonschema/run.sh [N_KAGAMI] [N_PYTHON] [BYTES]
# Process start, file reading and JSON parsing are outside both measurements: kagami times
# its --repeat loop, Python times its validation loop.
set -euo pipefail
cd "$(dirname "$0")/../.."

N_KAGAMI="${1:-200}"
N_PYTHON="${2:-10}"
BYTES="${3:-1000000}"
WORK=bench/results/tmp/jsonschema
mkdir -p "$WORK"

if [ ! -x bench/.venv/bin/python ] || ! bench/.venv/bin/python -c "import jsonschema" 2>/dev/null; then
    echo "installing Python jsonschema into bench/.venv"
    python3 -m venv bench/.venv
    bench/.venv/bin/pip install -q jsonschema
fi

echo "building kagami (release)"
swift build -c release --product kagami >/dev/null
KAGAMI="$(swift build -c release --show-bin-path)/kagami"

python3 bench/jsonschema/generate.py "$WORK" "$BYTES"
DOC_BYTES=$(wc -c < "$WORK/orders.json")
SCHEMA="$WORK/orders.schema.json"

# kagami: documents/s from the --repeat summary; error count from the printed violations.
kagami_rate() {
    local line
    line=$("$KAGAMI" schema check --schema "$SCHEMA" --repeat "$N_KAGAMI" "$1" 2>&1 >/dev/null || true)
    echo "$line" | sed -E 's/.*\(([0-9.]+) documents\/s\).*/\1/'
}
kagami_errors() {
    "$KAGAMI" schema check --schema "$SCHEMA" "$1" | grep -vc ": valid$" || true
}

"$KAGAMI" schema check --schema "$SCHEMA" "$WORK/orders.json" >/dev/null  # must be valid
K_VALID=$(kagami_rate "$WORK/orders.json")
K_INVALID=$(kagami_rate "$WORK/orders-invalid.json")
K_ERRORS=$(kagami_errors "$WORK/orders-invalid.json")
read -r P_VALID P_VALID_ERRORS < <(bench/.venv/bin/python bench/jsonschema/python_validate.py "$SCHEMA" "$WORK/orders.json" "$N_PYTHON")
read -r P_INVALID P_ERRORS < <(bench/.venv/bin/python bench/jsonschema/python_validate.py "$SCHEMA" "$WORK/orders-invalid.json" "$N_PYTHON")
if [ "$P_VALID_ERRORS" != "0" ]; then echo "Python jsonschema finds the valid feed invalid" >&2; exit 1; fi
PY_VERSION=$(bench/.venv/bin/python -c "import importlib.metadata as m; print(m.version('jsonschema'))")
ratio() { python3 -c "print(f'{$1 / $2:.1f}')"; }

CPU=$(grep -m1 "model name" /proc/cpuinfo 2>/dev/null | sed 's/.*: //' || sysctl -n machdep.cpu.brand_string)
CORES=$(nproc 2>/dev/null || sysctl -n hw.ncpu)
DATE=$(date -u +%F)
SWIFT=$(swift --version 2>&1 | head -1)

REPORT=$(cat <<MD
# JSON Schema validation benchmark, $DATE

- Machine: $CPU, nproc $CORES
- Toolchain: $SWIFT; Python jsonschema $PY_VERSION ($(bench/.venv/bin/python --version))
- Documents: $DOC_BYTES bytes (order feed from bench/jsonschema/generate.py); the invalid
  variant breaks every 50th order three ways. Schema 2020-12 with \$refs, patterns, enums,
  if/then, uniqueItems, integer multipleOf; format as annotation.
- Measured: validation only (each tool parses once, then validates N times collecting all errors).

| document | kagami schema check (release), docs/s | Python jsonschema, docs/s | ratio |
| --- | --- | --- | --- |
| valid ($N_KAGAMI / $N_PYTHON runs) | $K_VALID | $P_VALID | $(ratio "$K_VALID" "$P_VALID")x |
| invalid: kagami $K_ERRORS errors, Python $P_ERRORS | $K_INVALID | $P_INVALID | $(ratio "$K_INVALID" "$P_INVALID")x |

Notes: kagami settles a valid document in one pass that keeps no paths and walks an invalid one
a second time to collect errors. The schema uses an integer multipleOf because Python
jsonschema divides floats naively (it rejects 0.28 as a multiple of 0.01), so with a decimal
divisor the two would not agree on validity.
MD
)
echo "$REPORT"
mkdir -p bench/results
echo "$REPORT" > "bench/results/jsonschema-$DATE.md"
echo "recorded in bench/results/jsonschema-$DATE.md"
