#!/usr/bin/env bash
# Browser tests of the web UI: headless Chromium (Debian's chromium and chromium-driver) driven
# by selenium from PyPI in .venv-tests. scripts/test.sh runs this after the Swift tests.
# Usage: scripts/test-ui.sh [path/to/kagami]   (default: builds the debug product)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need_apt+=(chromium-driver)
# Chromium's trust store (an NSS database) takes Kagami's CA through certutil; nginx serves
# the h2 page and openssl makes its certificate.
command -v certutil >/dev/null 2>&1 || need_apt+=(libnss3-tools)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need_apt+=(nginx)
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
# The team suite records into PostgreSQL: scripts/test.sh's server, or a throwaway cluster.
if [ -z "${KAGAMI_TEST_POSTGRES_URL:-}" ] && ! command -v pg_ctl >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
    need_apt+=(postgresql)
fi
apt_install "${need_apt[@]}"
. scripts/python-env.sh
if [ $# -gt 0 ]; then
    kagami="$1"
else
    swift build --product kagami
    kagami="$(swift build --show-bin-path)/kagami"
fi
export KAGAMI_UPSTREAM_ALLOW=loopback
export KAGAMI_CONFORMANCE_DIR="${KAGAMI_CONFORMANCE_DIR:-$(cd .. && pwd)/shared/conformance}"
# The scale suite's session: 20,000 generated exchanges (bench/ui/run.sh measures a million).
export KAGAMI_UI_SCALE_COUNT="${KAGAMI_UI_SCALE_COUNT:-20000}"
status=0
# Each suite is stopped if it hangs (timeout signals its process group: browser and servers),
# and says how long it took.
suite() {
    local started=$SECONDS result=0
    timeout --kill-after=15 600 "$@" || result=$?
    local line
    line="browser suite ${*: -2:1}: $([ $result -eq 0 ] && echo pass || echo "FAIL (exit $result)") in $((SECONDS - started)) s"
    echo "$line"
    echo "$line" >>"$logs/summary"
    return $result
}
# Two lanes of suites side by side, about two minutes each: every suite starts its own Kagami,
# servers and Chromium on free ports in folders of its own, and each lane has its own
# KAGAMI_HOME (CA, admin token). A lane's output is printed once it is done.
export PATH="$PATH:/usr/sbin"
lane() {
    local result=0 script
    KAGAMI_HOME="$(mktemp -d)/home"
    export KAGAMI_HOME
    for script in "$@"; do
        suite .venv-tests/bin/python "Tests/UI/$script" "$kagami" || result=1
    done
    return $result
}
logs=$(mktemp -d)
: >"$logs/summary"
# Each failed test's name and error on a line (Tests/UI/page.py), printed after the summary;
# scripts/test.sh names its own file to print them at the very end of its output.
export KAGAMI_UI_FAILURES="${KAGAMI_UI_FAILURES:-$logs/failures}"
: >>"$KAGAMI_UI_FAILURES"
trap 'rm -rf "$logs"' EXIT
lane test_ui.py test_scale_ui.py test_chromium_protocols.py >"$logs/first" 2>&1 &
first=$!
# The team suite: two proxies and `kagami serve` sharing a PostgreSQL server (scripts/test.sh's,
# or a throwaway one).
lane test_daily_ui.py test_mock_docs.py test_contract_ui.py test_draft.py test_diff.py test_scenarios.py test_team.py >"$logs/second" 2>&1 &
second=$!
wait $first || status=1
cat "$logs/first"
wait $second || status=1
cat "$logs/second"
# Every suite's result once more, last, so the end of the output says which one failed.
echo
cat "$logs/summary"
print_browser_failures
exit $status
