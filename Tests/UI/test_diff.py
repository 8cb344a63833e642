"""Browser test of the web UI's Diff view: two builds of Tests/Diff/diff_origin.py recorded through
real `kagami proxy` runs (httpx from Tests/Diff/diff_client.py, and curl), the first into a
session file beside the second's; then the page compares them (another session of the folder
against this one, two filters of this one, chosen rows), opens a finding's exchanges side by side
with the lines that differ marked, and says why when a side has nothing to compare.
Prints `diff ui tests: N passed, M failed`; exits non-zero on any failure.

Usage: python Tests/UI/test_diff.py [path/to/kagami]
"""
import os
import re
import subprocess
import sys
import tempfile
import threading

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

sys.path.insert(0, os.path.dirname(__file__))
from page import ROOT, Page, run_suite  # noqa: E402
from test_ui import Kagami, api, curl  # noqa: E402

DIFF = os.path.join(ROOT, "Tests", "Diff")


class Origin:
    """diff_origin.py serving one version until stopped."""

    def __init__(self, version):
        self.process = subprocess.Popen([sys.executable, os.path.join(DIFF, "diff_origin.py"), str(version)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{self.process.stdout.readline().split()[-1]}"

    def shutdown(self):
        self.process.stdin.close()
        self.process.wait(10)


def record(proxy, version):
    """The app of that version through `proxy`, against the origin of that version."""
    origin = Origin(version)
    try:
        subprocess.run([sys.executable, os.path.join(DIFF, "diff_client.py"), str(version), proxy, origin.url],
                       check=True, capture_output=True, timeout=120)
        curl(proxy, f"{origin.url}/users/{7 if version == 1 else 8001}")
        curl(proxy, f"{origin.url}/orders", "-H", "Content-Type: application/json", "--data", '{"sku":"A-1","quantity":2}')
    finally:
        origin.shutdown()


def record_alone(binary, session, version):
    """A `kagami proxy` without a UI recording one build into `session`, stopped after."""
    process = subprocess.Popen([binary, "proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--upstream-allow", "loopback", "--session", session],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        proxy = None
        while proxy is None:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"kagami proxy exited: {process.wait()}")
            if m := re.search(r"listening on (http://[\d.]+:\d+)", line):
                proxy = m.group(1)
        threading.Thread(target=process.stdout.read, daemon=True).start()
        record(proxy, version)
    finally:
        process.terminate()
        process.wait(20)


class Suite(Page):
    def __init__(self, binary):
        super().__init__()
        self.workdir = tempfile.mkdtemp(prefix="kagami-diff-ui-")
        self.origin = None
        self.kagami = None
        # Build 1 beside the session the page shows, which build 2 is recorded into.
        record_alone(binary, os.path.join(self.workdir, "v1.sqlite"), 1)
        self.kagami = Kagami(binary, self.workdir)
        record(self.kagami.proxy, 2)

    def close(self):
        self.driver.quit()
        if self.kagami:
            self.kagami.stop()
        import shutil
        shutil.rmtree(self.workdir, ignore_errors=True)

    def open_diff(self):
        self.driver.get(self.kagami.ui)
        self.until(lambda: "Live" in self.driver.find_element(By.ID, "connection").text, "connected")
        self.until(lambda: self.count_text().startswith("11 "), lambda: f"11 exchanges of build 2 listed, not {self.count_text()!r}")
        self.driver.find_element(By.ID, "view-diff").click()
        self.until(lambda: self.js("return [...document.querySelectorAll('#diff-before-session option')].map(o => o.value).includes('v1.sqlite')"),
                   "v1.sqlite offered")

    def compare(self):
        self.driver.find_element(By.ID, "diff-run").click()
        self.until(lambda: self.js("return !document.getElementById('diff-run').disabled && document.getElementById('diff-summary').textContent !== 'Comparing…'"),
                   "the diff answered")

    def findings(self):
        """(operation, kind, location) of every finding row shown."""
        return self.js("""return [...document.querySelectorAll('.diff-finding')].map(r =>
            [r.closest('.diff-operation').dataset.operation, r.dataset.kind, r.dataset.location])""")

    def test_another_session_against_this_one(self):
        self.open_diff()
        # The other session comes first by default, this one after.
        assert Select(self.driver.find_element(By.ID, "diff-before-session")).first_selected_option.get_attribute("value") == "v1.sqlite"
        assert Select(self.driver.find_element(By.ID, "diff-after-session")).first_selected_option.get_attribute("value") == ""
        self.compare()
        found = self.findings()
        for expected in (["GET /recommendations", "added-operation", ""],
                         ["GET /users/{userId}", "removed-field", "response 200 body /email"],
                         ["GET /search", "removed-parameter", "request query ?q"],
                         ["GET /search", "added-parameter", "request query ?query"],
                         ["POST /orders", "status", ""]):
            assert expected in found, (expected, found)
        assert not any(location.endswith(("/id", "/last_login", "/generated_at", "/request_id", "/next_cursor")) for _, _, location in found), found
        assert self.js("return document.querySelector('.diff-operation[data-operation=\"GET /recommendations\"]').classList.contains('added')")
        summary = self.text_of("diff-summary")
        assert "v1.sqlite (10 exchanges) → this session (11 exchanges)" in summary, summary
        self.shot("diff")

    def test_a_finding_side_by_side(self):
        self.open_diff()
        self.compare()
        self.until(lambda: self.js("""const row = [...document.querySelectorAll('.diff-finding')].find(r => r.dataset.kind === 'removed-field');
            if (row) row.querySelector('.diff-open').click(); return !!row"""), "the removed field's row")
        self.until(lambda: self.js("return !!document.querySelector('#diff-left pre')"), "the exchanges side by side")
        left, right = self.text_of("diff-left"), self.text_of("diff-right")
        assert "/users/7" in left and "/users/8001" in right, (left[:300], right[:300])
        removed = self.js("return [...document.querySelectorAll('#diff-left .line.del')].map(l => l.textContent)")
        assert any('"email": "ada@example.com"' in line for line in removed), removed
        assert "ada@example.com" not in right
        added = self.js("return [...document.querySelectorAll('#diff-right .line.ins')].map(l => l.textContent)")
        assert any("8001" in line for line in added), added
        self.shot("diff-side-by-side")

    def test_two_filters_of_this_session(self):
        self.open_diff()
        Select(self.driver.find_element(By.ID, "diff-before-session")).select_by_value("")
        self.type_into(self.driver.find_element(By.ID, "diff-before-filter"), "-path:/recommendations")
        self.compare()
        assert self.findings() == [["GET /recommendations", "added-operation", ""]], self.findings()

    def test_chosen_rows_against_a_filter(self):
        self.driver.get(self.kagami.ui)
        self.until(lambda: self.count_text().startswith("11 "), "11 exchanges listed")
        # The count is shown before every row is drawn.
        row = "return [...document.querySelectorAll('#sequence .row[data-id]')].find(r => r.innerText.includes(arguments[0])) || null"
        config = self.until(lambda: self.js(row, "/config"), lambda: f"the /config row drawn, not {self.rows()}")
        search = self.until(lambda: self.js(row, "/search"), lambda: f"the /search row drawn, not {self.rows()}")
        config.click()
        self.js("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true, ctrlKey: true}))", search)
        self.until(lambda: "(2)" in self.driver.find_element(By.ID, "export-selected").get_attribute("textContent"), "two rows chosen")
        self.driver.find_element(By.ID, "view-diff").click()
        self.until(lambda: self.js("return document.querySelectorAll('#diff-before-session option').length") == 2, "the sessions listed")
        Select(self.driver.find_element(By.ID, "diff-before-session")).select_by_value("")
        self.driver.find_element(By.ID, "diff-before-chosen").click()
        assert "(2)" in self.text_of("diff-before-chosen-count")
        self.type_into(self.driver.find_element(By.ID, "diff-after-filter"), "path:/config")
        self.compare()
        assert self.findings() == [["GET /search", "removed-operation", ""]], self.findings()

    def test_a_side_with_nothing_says_so(self):
        self.open_diff()
        self.type_into(self.driver.find_element(By.ID, "diff-after-filter"), "host:nowhere.example")
        self.compare()
        self.until(lambda: not self.driver.find_element(By.ID, "diff-error").get_attribute("hidden"), "an error shown")
        message = self.text_of("diff-error")
        assert "this session (host:nowhere.example) has no exchanges to compare" in message, message
        assert self.findings() == [] and not self.driver.find_elements(By.ID, "diff-none")

    def test_the_api_refuses_what_it_cannot_compare(self):
        status, answer = api(self.kagami.ui, "POST", "/api/diff", {"before": {"session": "../session.sqlite"}, "after": {}})
        assert status == 404 and "no session named" in answer["error"], answer
        status, answer = api(self.kagami.ui, "POST", "/api/diff", {"before": "v1", "after": {}})
        assert status == 400 and answer["error"].startswith("before:"), answer
        status, answer = api(self.kagami.ui, "POST", "/api/diff", {"before": {"filter": "type:json"}, "after": {}})
        assert status == 400 and "type:json" in answer["error"], answer
        status, answer = api(self.kagami.ui, "GET", "/api/diff/sessions")
        assert status == 200 and answer["sessions"] == ["v1.sqlite"], answer

    def run(self):
        self.run_tests([self.test_another_session_against_this_one, self.test_a_finding_side_by_side, self.test_two_filters_of_this_session,
                        self.test_chosen_rows_against_a_filter, self.test_a_side_with_nothing_says_so,
                        self.test_the_api_refuses_what_it_cannot_compare], "diff")


if __name__ == "__main__":
    run_suite(Suite, "diff ui")
