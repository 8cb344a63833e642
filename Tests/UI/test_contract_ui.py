"""Browser test of the contract check in the web UI: a real `kagami proxy --contract`, an origin
that deviates from its OpenAPI description on purpose, curl traffic, and headless Chromium.
Checks the row badges (arriving live, after the row itself), the `contract:` filter, the
inspector's Contract tab with the offending value highlighted, the coverage view, and a broken
edit of the description reported while the last good version stays in force.

Usage: python Tests/UI/test_contract_ui.py [path/to/kagami]
"""
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.dirname(__file__))
from page import ROOT, Page, run_suite  # noqa: E402
from test_ui import Kagami, curl  # noqa: E402

DESCRIPTION = os.path.join(ROOT, "Tests", "KagamiContractCheckTests", "Fixtures", "notes.yaml")

NOTES = {
    "/v1/notes/1": (200, {"id": 1, "title": "Buy milk", "done": False}),
    "/v1/notes/3": (200, {"id": "three", "title": "x"}),
    "/v1/nope": (200, {}),
}


class Notes(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def do_GET(self):
        path = self.path.split("://", 1)[-1]
        path = path[path.find("/"):].split("?", 1)[0]
        status, document = NOTES.get(path, (404, {"message": "not found"}))
        body = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Suite(Page):
    def __init__(self, binary):
        self.workdir = tempfile.mkdtemp(prefix="kagami-contract-ui-")
        self.origin = ThreadingHTTPServer(("127.0.0.1", 0), Notes)
        self.origin.daemon_threads = True
        threading.Thread(target=self.origin.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.origin.server_address[1]}"
        self.binary = binary
        self.kagami = None
        self.description = os.path.join(self.workdir, "notes.yaml")
        super().__init__()

    def rows(self):
        return self.js("return [...document.querySelectorAll('#sequence-spacer .row:not([hidden])')]"
                       ".sort((a, b) => a.dataset.position - b.dataset.position)"
                       ".map(r => ({text: r.innerText.replace(/\\n/g, ' '), badge: (r.querySelector('.badge.contract') || {}).className || '',"
                       " badgeText: (r.querySelector('.badge.contract') || {}).textContent || ''}))")

    def fresh(self, seed=True):
        """A Kagami of the test's own (a new session, the description as shipped, coverage from
        nothing) and its page; with `seed`, the three exchanges each test reads."""
        if self.kagami:
            self.kagami.stop()
        workdir = tempfile.mkdtemp(dir=self.workdir)
        # A copy, so a test can break it.
        self.description = os.path.join(workdir, "notes.yaml")
        shutil.copy(DESCRIPTION, self.description)
        self.kagami = Kagami(self.binary, workdir, extra=["--contract", f"{self.description}={self.base}/v1"])
        self.driver.get(self.kagami.ui)
        self.until(lambda: "Live" in self.driver.find_element(By.ID, "connection").text, "connected")
        if seed:
            self.seed()

    def seed(self):
        for path in ["/v1/notes/1", "/v1/notes/3", "/v1/nope"]:
            curl(self.kagami.proxy, f"{self.base}{path}")
        self.until(lambda: len(self.rows()) == 3 and sum(1 for r in self.rows() if r["badge"]) == 2, "three rows, two with badges")

    # -- tests: each starts from `fresh` --
    def test_badges_arrive_live(self):
        self.fresh(seed=False)
        self.seed()
        # The row comes when the exchange is recorded; the badge when the check has seen it.
        self.until(lambda: len(self.rows()) == 3 and sum(1 for r in self.rows() if r["badge"]) == 2, "three rows, two with badges")
        by_path = {path: next(r for r in self.rows() if path in r["text"]) for path in ["/v1/notes/1", "/v1/notes/3", "/v1/nope"]}
        assert by_path["/v1/notes/1"]["badge"] == "", by_path["/v1/notes/1"]
        assert "contract-error" in by_path["/v1/notes/3"]["badge"] and "1" in by_path["/v1/notes/3"]["badgeText"], by_path["/v1/notes/3"]
        assert "contract-warning" in by_path["/v1/nope"]["badge"], by_path["/v1/nope"]
        self.shot("contract-badges")

    def test_contract_filter(self):
        self.fresh()
        self.filter("contract:violations")
        self.until(lambda: len(self.rows()) == 2, "two exchanges with violations")
        self.filter("contract:errors")
        self.until(lambda: len(self.rows()) == 1 and "/v1/notes/3" in self.rows()[0]["text"], "one with errors")
        self.filter("-contract:violations")
        self.until(lambda: len(self.rows()) == 1 and "/v1/notes/1" in self.rows()[0]["text"], "one clean")

    def test_contract_tab_highlights_the_value(self):
        self.fresh()
        self.filter("contract:errors")
        self.until(lambda: len(self.rows()) == 1, "one row")
        self.driver.find_element(By.CSS_SELECTOR, "#sequence-spacer .row:not([hidden])").click()
        self.until(lambda: self.js("const t = document.getElementById('tab-contract'); if (t) t.click(); return !!t"), "contract tab")
        self.until(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#contract-violations li"), "violations listed")
        text = self.driver.find_element(By.ID, "contract-violations").text
        assert "expected integer, found string" in text, text
        assert "GET /notes/{id} (getNote)" in text, text
        assert "/id" in text and "schema" in text.lower(), text
        assert "/paths/~1notes~1{id}/get/responses/200/content/application~1json/schema/properties/id/type" in text, text
        excerpt = self.driver.find_element(By.CSS_SELECTOR, ".schema-excerpt").text
        assert '"type": "integer"' in excerpt, excerpt
        self.until(lambda: self.driver.find_elements(By.CSS_SELECTOR, "mark.offending"), "offending value highlighted")
        assert self.driver.find_element(By.CSS_SELECTOR, "mark.offending").text == '"three"'
        self.shot("contract-inspector")
        self.filter("")

    def test_coverage_view(self):
        self.fresh()
        self.driver.find_element(By.ID, "view-contract").click()
        self.until(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#contract-coverage table.coverage tbody tr"), "coverage table")
        text = self.driver.find_element(By.ID, "contract-coverage").text
        assert "Operations 1/4 (25%)" in text, text
        assert "Undocumented exchanges 1" in text, text
        seen = self.js("return [...document.querySelectorAll('#contract-coverage tr.seen td:first-child')].map(td => td.textContent)")
        assert seen == ["GET /notes/{id}"], seen
        self.shot("contract-coverage")

    def test_broken_edit_is_reported_and_the_last_good_version_kept(self):
        self.fresh()
        self.driver.find_element(By.ID, "view-contract").click()
        self.until(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#contract-coverage table.coverage"), "coverage shown")
        with open(self.description, "a") as file:
            file.write("  broken: [\n")
        # The file is watched every 300 ms; the view refreshes as exchanges arrive.
        deadline = time.time() + 10
        while time.time() < deadline:
            curl(self.kagami.proxy, f"{self.base}/v1/notes/3")
            if self.driver.find_elements(By.CSS_SELECTOR, ".reload-errors"):
                break
            time.sleep(0.5)
        errors = self.driver.find_element(By.CSS_SELECTOR, ".reload-errors").text
        assert "last good version" in errors and f"{self.description}:" in errors, errors
        # Still checked with the last good version: the new exchange has its badge too.
        self.driver.find_element(By.ID, "view-sequence").click()
        self.filter("contract:errors")
        self.until(lambda: len(self.rows()) >= 2, "the exchanges after the broken edit are checked too")
        self.filter("")

    def run(self):
        tests = [self.test_badges_arrive_live, self.test_contract_filter, self.test_contract_tab_highlights_the_value,
                 self.test_coverage_view, self.test_broken_edit_is_reported_and_the_last_good_version_kept]
        self.run_tests(tests, "contract-ui")


def main():
    run_suite(Suite, "contract ui")


if __name__ == "__main__":
    main()
