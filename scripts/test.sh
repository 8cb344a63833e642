#!/usr/bin/env bash
# Passes every test on a fresh machine: installs what the tests need when it is missing,
# then builds and runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

need_apt=()
command -v curl >/dev/null 2>&1 || need_apt+=(curl)
command -v sqlite3 >/dev/null 2>&1 || need_apt+=(sqlite3)
# GRDB links the system SQLite.
dpkg -s libsqlite3-dev >/dev/null 2>&1 || need_apt+=(libsqlite3-dev)
# The UI decodes gzip/deflate bodies with the system zlib.
dpkg -s zlib1g-dev >/dev/null 2>&1 || need_apt+=(zlib1g-dev)
# nginx with http2 is an origin of the HTTP/2 tests (and of the browser's h2 page).
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need_apt+=(nginx)
# protoc compiles the gRPC tests' .proto files (and kagami proxy --proto-path).
command -v protoc >/dev/null 2>&1 || need_apt+=(protobuf-compiler)
# The store suite runs against a throwaway PostgreSQL server as well as SQLite.
if [ -z "${KAGAMI_TEST_POSTGRES_URL:-}" ] && ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
    need_apt+=(postgresql)
fi
apt_install "${need_apt[@]}"

# Python clients and servers the tests drive (websockets, junitparser, selenium) in .venv-tests.
. scripts/python-env.sh

# Every proxy a test starts, in-process or as `kagami proxy`, connects to loopback only; the
# test harnesses say so too, this catches any that forget.
export KAGAMI_UPSTREAM_ALLOW=loopback

# The external suites live beside the checkout (../shared/conformance) unless told otherwise.
export KAGAMI_CONFORMANCE_DIR="${KAGAMI_CONFORMANCE_DIR:-$(cd .. && pwd)/shared/conformance}"

# Whatever the tests, their servers and the browser leave in temporary folders goes with the
# run: one scratch folder of its own as TMPDIR, removed on exit.
# Others may pass through it (not list it): the PostgreSQL server runs as its own user.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/kagami-run.XXXXXX")
chmod 0711 "$scratch"
export TMPDIR="$scratch"
finish() {
    # The run's cluster, and any a crashed test started and could not stop.
    local cluster
    for cluster in "$scratch"/kagami-postgres.*; do
        if [ -d "$cluster" ]; then scripts/postgres-cluster.sh stop "$cluster"; fi
    done
    rm -rf "$scratch"
}
trap finish EXIT

# A PostgreSQL cluster of the tests' own (temporary folder, 127.0.0.1, a free port), stopped and
# removed on exit; a server given in KAGAMI_TEST_POSTGRES_URL is used as it is.
if [ -z "${KAGAMI_TEST_POSTGRES_URL:-}" ]; then
    postgres_env=$(scripts/postgres-cluster.sh start)
    eval "$postgres_env"
    echo "PostgreSQL for the store tests: $KAGAMI_TEST_POSTGRES_URL"
fi

swift build --build-tests
status=0
# Every part's result, printed last so the end of the output says which part failed.
results=()
part() {
    local name=$1 started=$SECONDS result=0
    shift
    "$@" || result=$?
    results+=("$name: $([ $result -eq 0 ] && echo pass || echo "FAIL (exit $result)") in $((SECONDS - started)) s")
    [ $result -eq 0 ] || status=1
}
# A crash prints one backtrace of every thread, without registers or images, and a run that
# hangs is stopped: timeout signals its whole process group, servers the tests started too.
export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=yes,interactive=no,threads=all,registers=none,images=none}"
part "swift test" timeout --kill-after=30 "${KAGAMI_TEST_TIMEOUT:-1500}" swift test --skip-build "$@"
if [ $# -eq 0 ]; then
    # The tests that compare times, by themselves on a machine the other tests no longer keep
    # busy (KAGAMI_TEST_ALONE; a few seconds).
    part "timing" env KAGAMI_TEST_ALONE=1 timeout --kill-after=30 300 swift test --skip-build --filter "DelayedAcknowledgementTests|aClientWithNagleIsAnsweredWithoutWaitingForADelayedACK"
    # KagamiKit's public API stays free of SwiftNIO types (docs/LIBRARY.md).
    part "public API" ./scripts/check-public-api.sh
    # `kagami mcp` driven by the official Python MCP client over standard input and output
    # (Tests/MCP: a real proxy records, the client reads and adds a rule; a few seconds).
    part "MCP" timeout --kill-after=15 300 .venv-tests/bin/python Tests/MCP/test_mcp.py "$(swift build --show-bin-path)/kagami"
    # The install check: the debug build packaged by scripts/package.sh, its .deb unpacked into a
    # temporary folder, and the kagami there run (version, man page, completions, proxy, web UI).
    part "package" timeout --kill-after=15 300 ./scripts/test-package.sh
    # The web UI in a real browser, run even when a Swift test failed; the command fails if
    # either did. It has the cores to itself: a build beside it makes every step of the page
    # several times slower.
    kagami="$(swift build --show-bin-path)/kagami"
    export KAGAMI_UI_FAILURES="$scratch/browser-failures"
    part "browser" ./scripts/test-ui.sh "$kagami"
    # An app's own test suite using Kagami in-process and a generated client (docs/LIBRARY.md).
    part "examples" ./scripts/test-examples.sh
fi
echo
echo "scripts/test.sh:"
printf '  %s\n' "${results[@]}"
# The browser tests that failed, with their errors, where the end of a long run's output shows them.
print_browser_failures
exit $status
