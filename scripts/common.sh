# Sourced by the test scripts, from the repository root: what they share in setting up a machine.

# Installs the Debian packages named (none: nothing to do), saying which.
apt_install() {
    [ $# -gt 0 ] || return 0
    echo "installing: $*"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# Prints the failed browser tests' lines (Tests/UI/page.py writes them to the file named by
# KAGAMI_UI_FAILURES), when there are any.
print_browser_failures() {
    [ -s "${KAGAMI_UI_FAILURES:-/nonexistent}" ] || return 0
    echo "failed browser tests:"
    sed 's/^/  /' "$KAGAMI_UI_FAILURES"
}
