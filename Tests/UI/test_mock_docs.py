"""The mock server's docs page in headless Chromium: for each API Blueprint example shared with
the conformance data, start `kagami mock FILE --port 0`, open its docs page, and check that every
action of the description (as `kagami contract --json` reads it) is listed with its method, URI
template and a "Try it" curl line, and that the page reads without JavaScript. Saves
docs/screenshots/mock-docs.png. Prints `mock docs tests: N passed, M failed`.

Usage: python Tests/UI/test_mock_docs.py path/to/kagami
"""
import glob
import json
import os
import re
import signal
import subprocess
import sys
import traceback

from test_ui import ROOT, SHOTS, browser

CONFORMANCE = os.environ.get("KAGAMI_CONFORMANCE_DIR", os.path.join(ROOT, "..", "shared", "conformance"))


def contract_actions(binary, path):
    result = subprocess.run([binary, "contract", path, "--json"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"kagami contract {path}: {result.stderr}"
    contract = json.loads(result.stdout)
    actions = []

    def walk(node):
        if isinstance(node, dict):
            if "method" in node and "uriTemplate" in node:
                actions.append((node["method"], node["uriTemplate"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(contract)
    return actions


# The official example misses a comma in a JSON body (line 30): lint reports it and the mock
# refuses the file, so its docs page is checked on a corrected copy (as the Swift mock tests do).
CORRECTIONS = {
    "14. JSON Schema.md": [('"This is the note content."\n                "tags"', '"This is the note content.",\n                "tags"')],
}


def served_copy(path, workdir):
    """The path to serve: the example itself, or a corrected copy of it."""
    fixes = CORRECTIONS.get(os.path.basename(path))
    if not fixes:
        return path
    with open(path, encoding="utf-8") as file:
        text = file.read()
    for old, new in fixes:
        assert old in text, f"{path}: the text to correct is gone; update CORRECTIONS"
        text = text.replace(old, new)
    copy = os.path.join(workdir, os.path.basename(path))
    with open(copy, "w", encoding="utf-8") as file:
        file.write(text)
    return copy


class Mock:
    def __init__(self, binary, path, session):
        self.process = subprocess.Popen([binary, "mock", path, "--port", "0", "--session", session],
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.docs = None
        for line in self.process.stdout:
            if m := re.search(r"Docs: (http://\S+)", line):
                self.docs = m.group(1)
                break
        assert self.docs, f"kagami mock {path} printed no docs address"

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def main():
    binary = sys.argv[1]
    examples = sorted(glob.glob(os.path.join(CONFORMANCE, "api-blueprint", "examples", "*.md")))
    examples = [p for p in examples if not os.path.basename(p).startswith("README")]
    assert examples, f"no API Blueprint examples under {CONFORMANCE}"
    driver = browser()
    passed, failed, total_actions = 0, [], 0
    workdir = subprocess.run(["mktemp", "-d"], capture_output=True, text=True).stdout.strip()
    try:
        for path in examples:
            name = os.path.basename(path)
            path = served_copy(path, workdir)
            mock = Mock(binary, path, os.path.join(workdir, f"{passed + len(failed)}.sqlite"))
            try:
                expected = contract_actions(binary, path)
                driver.get(mock.docs)
                listed = driver.execute_script("""
                    return [...document.querySelectorAll('article.action')].map(a => ({
                      method: a.querySelector('h4 .method').textContent.trim(),
                      template: a.querySelector('h4 code').textContent.trim(),
                      visible: a.getBoundingClientRect().height > 0,
                      tryIt: (a.querySelector('.try code') || {}).textContent || ''}))""")
                assert len(listed) == len(expected), f"{len(listed)} actions on the page, {len(expected)} in the description"
                for (method, template), shown in zip(expected, listed):
                    assert shown["method"] == method and shown["template"] == template, f"{method} {template} shown as {shown}"
                    assert shown["visible"], f"{method} {template} is not visible"
                    assert shown["tryIt"].startswith("curl "), f"{method} {template}: no curl line"
                    if method != "GET":
                        assert f"-X {method}" in shown["tryIt"], shown["tryIt"]
                scripts = driver.execute_script("return document.scripts.length")
                assert scripts == 0, "the docs page needs no JavaScript"
                if name == "Polls API.md":
                    os.makedirs(SHOTS, exist_ok=True)
                    driver.save_screenshot(os.path.join(SHOTS, "mock-docs.png"))
                passed += 1
                total_actions += len(expected)
            except Exception as error:  # noqa: BLE001 - every failure is reported
                failed.append(name)
                print(f"  FAIL  {name}: {error}")
                traceback.print_exc(limit=1)
            finally:
                mock.stop()
    finally:
        driver.quit()
        subprocess.run(["rm", "-rf", workdir])
    print(f"mock docs tests: {passed} passed, {len(failed)} failed ({total_actions} actions checked in the page)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
