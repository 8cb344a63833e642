# Sourced by the test scripts: makes .venv-tests with the packages in Tests/requirements.txt,
# again only when that list changed.
if ! python3 -c "import ensurepip" >/dev/null 2>&1; then
    echo "installing: python3-venv"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
fi
if [ ! -x .venv-tests/bin/python ] || ! cmp -s Tests/requirements.txt .venv-tests/requirements.installed; then
    python3 -m venv .venv-tests
    .venv-tests/bin/pip install -q -r Tests/requirements.txt
    cp Tests/requirements.txt .venv-tests/requirements.installed
fi
