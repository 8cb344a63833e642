# Sourced by the test scripts: makes .venv-tests with the packages in Tests/requirements.txt,
# again only when that list changed.
. scripts/common.sh
python3 -c "import ensurepip" >/dev/null 2>&1 || apt_install python3-venv
if [ ! -x .venv-tests/bin/python ] || ! cmp -s Tests/requirements.txt .venv-tests/requirements.installed; then
    python3 -m venv .venv-tests
    .venv-tests/bin/pip install -q -r Tests/requirements.txt
    cp Tests/requirements.txt .venv-tests/requirements.installed
fi
