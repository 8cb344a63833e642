# Sourced by the test scripts, from the repository root: what they share in setting up a machine.

# Installs the Debian packages named (none: nothing to do), saying which.
apt_install() {
    [ $# -gt 0 ] || return 0
    echo "installing: $*"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
