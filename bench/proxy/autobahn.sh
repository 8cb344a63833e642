#!/usr/bin/env bash
# The Autobahn WebSocket test suite (autobahntestsuite from PyPI, its fuzzing client) against a
# conformant echo server (Python `websockets`, Tests/WebSocket/ws_peer.py) straight, and through
# proxies in reverse mode in front of it: Kagami relaying bytes, Kagami with message tools
# covering every message (so each data message is read whole and sent in a frame of Kagami's
# own), and mitmdump. A proxy passes a case when its outcome is the same as going straight.
# Everything is on 127.0.0.1.
# Usage: bench/proxy/autobahn.sh [CASES]   (CASES: JSON list of case patterns, default ["*"];
#   e.g. '["1.*","5.*"]'). Environment: KAGAMI (a built binary; skips the release build),
#   TARGETS (default "direct kagami kagami-tools mitmdump"), REPORTS (a folder to keep the
#   fuzzing client's per-case reports in).
# autobahntestsuite runs on Python 2.7 only: it is installed into .build/autobahn with the
# first python2.7 found (PYTHON2, pyenv's 2.7, or python2.7 on PATH).
set -euo pipefail
CASES="${1:-[\"*\"]}"
TARGETS="${TARGETS:-direct kagami kagami-tools mitmdump}"
MITMPROXY_VERSION=11.0.2
BENCH_NAME=autobahn
NEEDED_APT=""
source "$(dirname "$0")/common.sh"
. scripts/python-env.sh

PYTHON2="${PYTHON2:-}"
for candidate in "$PYTHON2" "$HOME/.pyenv/versions/2.7.18/bin/python" "$(command -v python2.7 || true)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then PYTHON2=$candidate; break; fi
done
[ -x "$PYTHON2" ] || { echo "autobahntestsuite needs Python 2.7: set PYTHON2 to a python2.7" >&2; exit 2; }
AUTOBAHN="$ROOT/.build/autobahn"
if [ ! -d "$AUTOBAHN/autobahntestsuite" ]; then
    echo "installing autobahntestsuite into $AUTOBAHN (Python 2.7)"
    "$PYTHON2" -m pip install -q --disable-pip-version-check --target "$AUTOBAHN" autobahntestsuite 2>&1 | grep -v DEPRECATION || true
    # zope is a namespace package whose .pth file a --target install doesn't run.
    touch "$AUTOBAHN/zope/__init__.py"
fi

"$ROOT/.venv-tests/bin/python" Tests/WebSocket/ws_peer.py server < <(sleep 86400) > "$WORK/server.out" 2>&1 &
PIDS+=("$!")
for _ in $(seq 100); do grep -q port "$WORK/server.out" 2>/dev/null && break; sleep 0.1; done
ECHO_PORT=$(awk '/port/ { print $2 }' "$WORK/server.out")

# Message tools on every message, changing none: a breakpoint on messages both ways whose text
# never occurs, and a Rewrite Body rule that never matches.
cat > "$WORK/breakpoints.yaml" <<'YAML'
breakpoints:
  - location: {}
    request: false
    messages: both
    messageText: "no message ever holds this text 7f3a"
YAML
cat > "$WORK/rules.yaml" <<'YAML'
rewrite:
  - name: never
    rules:
      - type: Body
        where: both
        match: {value: "no message ever holds this text 7f3a"}
        replace: {value: "x"}
YAML

servers=()
for target in $TARGETS; do
    case "$target" in
        direct) port=$ECHO_PORT ;;
        kagami|mitmdump) start_reverse_proxy "$target" "$ECHO_PORT"; port=$PROXY_PORT ;;
        kagami-tools)
            port=$(free_port)
            "$KAGAMI" proxy --reverse "http://127.0.0.1:$ECHO_PORT" --port "$port" --no-ui \
                --session "$WORK/kagami-tools.sqlite" --breakpoints "$WORK/breakpoints.yaml" --rules "$WORK/rules.yaml" \
                >"$WORK/kagami-tools.log" 2>&1 &
            PIDS+=("$!")
            wait_for_port "$port"
            ;;
        *) echo "unknown target $target" >&2; exit 2 ;;
    esac
    servers+=("{\"agent\": \"$target\", \"url\": \"ws://127.0.0.1:$port\"}")
done
(IFS=,; echo "{\"outdir\": \"$WORK/reports\", \"servers\": [${servers[*]}], \"cases\": $CASES, \"exclude-cases\": [], \"exclude-agent-cases\": {}}") > "$WORK/spec.json"

echo "running the Autobahn fuzzing client (cases $CASES) against: $TARGETS"
started=$(date +%s)
(cd "$WORK" && PYTHONPATH="$AUTOBAHN" timeout 5400 "$PYTHON2" -m autobahntestsuite.wstest -m fuzzingclient -s spec.json > "$WORK/wstest.log" 2>&1) \
    || { tail -20 "$WORK/wstest.log"; exit 1; }
seconds=$(( $(date +%s) - started ))
if [ -n "${REPORTS:-}" ]; then mkdir -p "$REPORTS" && cp -r "$WORK/reports/." "$REPORTS/"; fi

RESULT="bench/results/autobahn-$(date +%Y-%m-%d).md"
mkdir -p bench/results
python3 - "$WORK/reports/index.json" "$RESULT" "$seconds" "$CASES" "$KAGAMI_BUILD" <<'PY'
import json, sys, collections, platform, subprocess
index, result, seconds, cases, build = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
report = json.load(open(index))
agents = list(report)
direct = report.get("direct", {})
def key(case):
    return tuple(int(part) for part in case.split("."))
lines = [f"# Autobahn WebSocket test suite through the proxies", "",
         f"`bench/proxy/autobahn.sh` on {platform.platform()}, cases {cases}, {seconds} s; kagami: {build}", "",
         "Each case's outcome (OK, NON-STRICT, INFORMATIONAL, UNIMPLEMENTED, FAILED) as the fuzzing client judged the",
         "server behind the proxy; a proxy **matches** a case when the outcome is the one of going straight to the server.", "",
         "| agent | cases | OK | NON-STRICT | INFORMATIONAL | UNIMPLEMENTED | FAILED | same as direct |", "|---|--:|--:|--:|--:|--:|--:|--:|"]
differences = {}
for agent in agents:
    cases_ = report[agent]
    counts = collections.Counter(entry["behavior"] for entry in cases_.values())
    same = sum(1 for case, entry in cases_.items() if direct.get(case, {}).get("behavior") == entry["behavior"]) if direct else 0
    lines.append(f"| {agent} | {len(cases_)} | {counts['OK']} | {counts['NON-STRICT']} | {counts['INFORMATIONAL']} | {counts['UNIMPLEMENTED']} | {counts['FAILED']} | {same if direct else '—'} |")
    if direct and agent != "direct":
        differences[agent] = sorted((case for case, entry in cases_.items() if direct.get(case, {}).get("behavior") != entry["behavior"]), key=key)
for agent, cases_ in differences.items():
    if cases_:
        lines += ["", f"{agent}: {len(cases_)} case(s) differ from direct: " + ", ".join(
            f"{case} ({report[agent][case]['behavior']} vs {direct[case]['behavior']})" for case in cases_[:60]) + (" …" if len(cases_) > 60 else "")]
text = "\n".join(lines) + "\n"
print(text)
open(result, "w").write(text)
PY
echo "kept in $RESULT"
