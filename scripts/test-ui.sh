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
    echo "browser suite ${*: -2:1}: $((SECONDS - started)) s"
    return $result
}
suite .venv-tests/bin/python Tests/UI/test_ui.py "$kagami" || status=1
PATH="$PATH:/usr/sbin" suite .venv-tests/bin/python Tests/UI/test_daily_ui.py "$kagami" || status=1
suite .venv-tests/bin/python Tests/UI/test_mock_docs.py "$kagami" || status=1
suite .venv-tests/bin/python Tests/UI/test_contract_ui.py "$kagami" || status=1
suite .venv-tests/bin/python Tests/UI/test_draft.py "$kagami" || status=1
suite .venv-tests/bin/python Tests/UI/test_diff.py "$kagami" || status=1
suite .venv-tests/bin/python Tests/UI/test_scale_ui.py "$kagami" || status=1
PATH="$PATH:/usr/sbin" suite .venv-tests/bin/python Tests/UI/test_chromium_protocols.py "$kagami" || status=1
# Two proxies and `kagami serve` sharing a PostgreSQL server: scripts/test.sh's, or a throwaway one.
suite .venv-tests/bin/python Tests/UI/test_team.py "$kagami" || status=1
exit $status
