"""Browser tests of Kagami's web UI: a real `kagami proxy`, a testing origin, curl traffic, and
headless Chromium driven by selenium. Every test starts from the same place: the rules and
breakpoints as the suite began, an empty session (with the six exchanges of `seed` when the test
reads them) and a page opened afresh, so each can run alone or in any order. Prints
`ui tests: N passed, M failed`; exits non-zero on any failure. Screenshots of each view go to the
ignored .build/ui-screenshots/ (KAGAMI_SCREENSHOTS=docs/screenshots regenerates the documentation's).

Usage: python Tests/UI/test_ui.py [path/to/kagami]
"""
import http.client
import json
import urllib.parse
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

sys.path.insert(0, os.path.dirname(__file__))
import origin  # noqa: E402
# The suites' shared pieces, also taken from here by the other test files.
from page import ROOT, SHOTS, WAIT_SECONDS, Page, browser, run_each, run_suite  # noqa: E402, F401

BULK = 10_000
# Only /ruled/ paths are touched, so the other tests see the origin's own answers.
STARTING_RULES = {"rewrite": [{"name": "tagging", "locations": [{"path": "/ruled/*"}],
                               "rules": [{"type": "Add Header", "where": "response", "replace": {"name": "X-Tagged", "value": "yes"}}]}]}


def authorization(ui):
    """The admin API's token from the UI's printed address (`?token=`), as a header."""
    token = urllib.parse.parse_qs(urllib.parse.urlsplit(ui).query).get("token", [""])[0]
    return {"Authorization": f"Bearer {token}"}


def api(ui, method, path, body=None):
    """Calls the admin API with its token; returns (status, parsed JSON or text)."""
    address = ui.split("//", 1)[1].split("/", 1)[0]
    host, port = address.rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=20)
    try:
        data = body if body is None or isinstance(body, (bytes, str)) else json.dumps(body)
        headers = {"Content-Type": "application/json"} if data else {}
        connection.request(method, path, body=data, headers={**headers, **authorization(ui)})
        response = connection.getresponse()
        text = response.read().decode("utf-8", "replace")
        try:
            return response.status, json.loads(text)
        except ValueError:
            return response.status, text
    finally:
        connection.close()


class Kagami:
    def __init__(self, binary, workdir, rules=None, extra=(), ssl_proxying=False, env=None):
        self.session = os.path.join(workdir, "session.sqlite")
        self.process = subprocess.Popen(
            [binary, "proxy", "--port", "0", "--ui-port", "0", "--session", self.session,
             *([] if ssl_proxying else ["--no-ssl-proxying"]), "--upstream-allow", "loopback",
             *(["--rules", rules] if rules else []), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        self.proxy = self.ui = None
        deadline = time.time() + 60
        while time.time() < deadline and not (self.proxy and self.ui):
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"kagami proxy exited: {self.process.wait()}")
            if m := re.search(r"listening on (http://[\d.]+:\d+)", line):
                self.proxy = m.group(1)
            if m := re.search(r"Web UI: (http://\S+)", line):
                self.ui = m.group(1)
        if not (self.proxy and self.ui):
            raise RuntimeError("kagami proxy did not print its addresses")
        threading.Thread(target=self.process.stdout.read, daemon=True).start()
        print(f"proxy {self.proxy}, UI {self.ui}")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()


def curl(proxy, url, *extra):
    result = subprocess.run(["curl", "-s", "-S", "-x", proxy, "--max-time", "10", *extra, url],
                            capture_output=True, text=True, timeout=20)
    assert result.returncode == 0, f"curl {url}: {result.stderr}"
    return result.stdout


class Suite(Page):
    def __init__(self, binary):
        self.workdir = tempfile.mkdtemp(prefix="kagami-ui-")
        self.origin = origin.start()
        self.base = f"http://127.0.0.1:{self.origin.server_address[1]}"
        rules = os.path.join(self.workdir, "rules.json")
        with open(rules, "w") as file:
            json.dump(STARTING_RULES, file)
        self.binary = binary
        self.kagami = Kagami(binary, self.workdir, rules)
        super().__init__()
        self.timings = {}

    # -- helpers --
    def select_row(self, path_part):
        self.filter(path_part)
        self.until(lambda: len(self.rows()) == 1, f"one row for {path_part}")
        self.driver.find_element(By.CSS_SELECTOR, "#sequence-spacer .row:not([hidden])").click()
        # The inspector keeps the tab that was open (as Charles does): go back to the overview.
        self.until(lambda: self.driver.find_elements(By.ID, "tab-overview"), "inspector open")
        self.tab("overview")
        self.until(lambda: path_part in self.js("const u = document.getElementById('overview-url'); return u ? u.textContent : ''"),
                   f"inspector shows {path_part}")

    def fresh(self, seed=False):
        """The suite's starting point: its rules, no breakpoints, an empty session (or the six
        exchanges of `seed`), a new page with nothing selected, the light theme."""
        status, answer = api(self.kagami.ui, "PUT", "/api/rules", STARTING_RULES)
        assert status == 200, answer
        status, answer = api(self.kagami.ui, "PUT", "/api/breakpoints", {"breakpoints": []})
        assert status == 200, answer
        status, answer = api(self.kagami.ui, "DELETE", "/api/flows")
        assert status == 200, answer
        if seed:
            self.seed()
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "light"}]})
        self.driver.get(self.kagami.ui)
        self.until(lambda: "Live" in self.driver.find_element(By.ID, "connection").text, "connected")
        expected = 6 if seed else 0
        self.until(lambda: self.js("return document.body.dataset.loading") == "false" and self.count_text().startswith(f"{expected} "),
                   lambda: f"{expected} exchanges listed, not {self.count_text()!r}")

    def seed(self):
        """The six exchanges most tests read: JSON, an image, a query with cookies, a form, a 404, a 503."""
        proxy = self.kagami.proxy
        curl(proxy, f"{self.base}/api/users.json")
        curl(proxy, f"{self.base}/images/logo.png", "-o", os.devnull)
        curl(proxy, f"{self.base}/search?q=mirror&lang=en", "-H", "Cookie: theme=dark; session=abc")
        curl(proxy, f"{self.base}/forms/signup", "-d", "name=Ada+Lovelace&lang=en")
        curl(proxy, f"{self.base}/status/404")
        curl(proxy, f"{self.base}/status/503")

    # -- tests: each starts from `fresh` (see `run`) --
    def test_empty_state(self):
        self.driver.get(self.kagami.ui)
        self.until(lambda: self.driver.find_element(By.ID, "empty").is_displayed(), "empty state shown")
        text = self.driver.find_element(By.ID, "empty").text
        assert "No exchanges yet" in text, text
        assert self.kagami.proxy.replace("http://", "").split(":")[1] in text, "empty state names the proxy port"
        assert "http://kagami.ssl/" in text, "empty state links the CA page"
        self.until(lambda: "listens on this machine only" in self.driver.find_element(By.ID, "empty").text, "the empty state says a device can't reach it yet")
        self.until(lambda: "Live" in self.driver.find_element(By.ID, "connection").text, "connected")
        # At 1440 px the toolbar is one row, and the list's column header is at the top, the
        # empty state under it.
        centres = self.js("""return [...document.querySelectorAll('header.toolbar > *')].filter(e => e.offsetParent)
                             .map(e => { const r = e.getBoundingClientRect(); return r.top + r.height / 2; })""")
        assert self.js("return window.innerWidth") >= 1440 and max(centres) - min(centres) < 8, f"toolbar in one row: {centres}"
        head = self.js("return document.getElementById('sequence-head').getBoundingClientRect().top")
        empty = self.js("return document.getElementById('empty').getBoundingClientRect().top")
        bar = self.js("return document.querySelector('header.toolbar').getBoundingClientRect().bottom")
        assert abs(head - bar) < 4 and empty > head, f"column header under the toolbar ({head} vs {bar}), empty state under it ({empty})"
        self.shot("empty")

    def test_rows_appear_live(self):
        self.seed()
        self.until(lambda: len(self.rows()) == 6, "six rows, without reloading the page")
        rows = self.rows()
        assert "/api/users.json" in rows[0] and "200" in rows[0] and "GET" in rows[0], rows[0]
        assert "POST" in rows[3] and "201" in rows[3], rows[3]
        assert "404" in rows[4], rows[4]
        assert "application/json" in rows[0], rows[0]
        assert self.driver.find_element(By.ID, "empty").is_displayed() is False
        self.shot("sequence")

    def test_filter_narrows(self):
        cases = {"status:4xx": ["/status/404"], "status:5xx": ["/status/503"], "method:POST": ["/forms/signup"],
                 "type:json": ["/api/users.json", "/forms/signup"], "type:image": ["/images/logo.png"],
                 "search": ["/search"], "-status:2xx": ["/status/404", "/status/503"], "host:127.0.0.1 status:404": ["/status/404"],
                 # host: and path: with *, ? or [ are location wildcards for the whole host or path (the query apart).
                 "path:/status/*": ["/status/404", "/status/503"], "host:*.example": [], "path:/s*": ["/search", "/status/404", "/status/503"],
                 "host:127.0.0.? path:/[a-i]*": ["/api/users.json", "/images/logo.png", "/forms/signup"], "-path:/*/*": ["/search"],
                 "path:earch": ["/search"]}
        def shows(expected):
            rows = self.rows()
            return len(rows) == len(expected) and all(part in row for row, part in zip(rows, expected))
        for text, expected in cases.items():
            self.filter(text)
            # The rows of the filter before may still be on screen, so the wait reads what they say.
            self.until(lambda: shows(expected), lambda: f"{text}: {expected} expected, shown {self.rows()}")
        self.filter("status:404")
        self.until(lambda: "1 of 6" in self.count_text(), lambda: f"status:404 counted: {self.count_text()}")
        self.shot("filter")
        self.filter("")
        self.until(lambda: len(self.rows()) == 6, "all rows back")

    def test_inspector_headers_and_json_tree(self):
        self.select_row("users.json")
        overview = self.driver.find_element(By.ID, "inspector").text
        assert f"{self.base}/api/users.json" in overview, overview
        assert self.driver.find_elements(By.CSS_SELECTOR, "#waterfall .waterfall span"), "timings waterfall"
        self.tab("response")
        self.until(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#response-headers"), "response headers")
        headers = self.driver.find_element(By.ID, "response-headers").text
        assert "Content-Type" in headers and "application/json" in headers, headers
        cookies = self.driver.find_element(By.ID, "response-cookies").text
        assert "session" in cookies and "s3cr3t" in cookies, cookies
        self.until(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#response-body .json-tree"), "JSON tree")
        tree = self.driver.find_element(By.CSS_SELECTOR, "#response-body .json-tree").text
        assert '"users"' in tree and '"Ada"' in tree, tree
        # Deep nodes start closed and open on click.
        closed = [s for s in self.driver.find_elements(By.CSS_SELECTOR, "#response-body .json-tree details:not([open]) > summary")
                  if s.text.startswith('"address"')]
        assert len(closed) == 2, "nested objects start collapsed"
        assert '"London"' not in self.driver.find_element(By.CSS_SELECTOR, "#response-body .json-tree").text
        closed[0].click()
        self.until(lambda: '"London"' in self.driver.find_element(By.CSS_SELECTOR, "#response-body .json-tree").text, "opened node shows its members")
        self.shot("inspector-json")
        self.driver.find_element(By.CSS_SELECTOR, "#response-body .mode-hex").click()
        self.until(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#response-body .hex"), "hex view")
        hex_text = self.driver.find_element(By.CSS_SELECTOR, "#response-body .hex").text
        assert hex_text.startswith("00000000  7b 22 75 73 65 72 73 22"), hex_text[:80]
        self.shot("inspector-hex")

    def test_inspector_request_params_and_cookies(self):
        self.select_row("/search")
        self.tab("request")
        self.until(lambda: self.driver.find_elements(By.ID, "query-params"), "query parameters")
        query = self.driver.find_element(By.ID, "query-params").text
        assert "q mirror" in query.replace("\n", " ") and "lang en" in query.replace("\n", " "), query
        cookies = self.driver.find_element(By.ID, "request-cookies").text.replace("\n", " ")
        assert "theme dark" in cookies and "session abc" in cookies, cookies
        headers = self.driver.find_element(By.ID, "request-headers").text
        assert "Cookie" in headers, headers
        self.select_row("/forms/signup")
        self.tab("request")
        self.until(lambda: "Ada Lovelace" in self.driver.find_element(By.ID, "form-params").text, "form parameters decoded")

    def test_inspector_image(self):
        self.select_row("logo.png")
        self.tab("response")
        self.until(lambda: self.js("const i = document.querySelector('#response-body img'); return !!i && i.complete && i.naturalWidth > 0"), "image shown")
        assert self.js("return document.querySelector('#response-body img').naturalWidth") == 24
        self.shot("inspector-image")

    def test_copy_curl_repeats_the_request(self):
        self.select_row("/search")
        self.driver.find_element(By.ID, "copy-curl").click()
        self.until(lambda: self.js("return document.getElementById('tool-dialog').open"), "cURL dialog")
        command = self.js("return document.getElementById('tool-text').value")
        flow_id = self.js("return document.querySelector('#sequence-spacer .row.selected').dataset.id")
        status, expected = api(self.kagami.ui, "GET", f"/api/flows/{flow_id}/curl")
        assert status == 200 and command == expected.rstrip("\n"), f"page: {command!r}\nAPI: {expected!r}"
        assert command.startswith("curl ") and f"'{self.base}/search?q=mirror&lang=en'" in command, command
        assert "--header 'Cookie: theme=dark; session=abc'" in command, command
        self.shot("copy-curl")
        self.driver.find_element(By.CSS_SELECTOR, "#tool-dialog button[value=close]").click()
        # Running the command through the proxy records the same request again.
        result = subprocess.run(command + f" -s -x {self.kagami.proxy}", shell=True, capture_output=True, text=True, timeout=20)
        assert result.returncode == 0 and "hello from /search" in result.stdout, result
        self.filter("/search")
        self.until(lambda: len(self.rows()) == 2, "the repeated request appears")
        self.filter("")

    def test_structure_groups(self):
        curl(self.kagami.proxy, f"{self.base}/search?q=again")
        self.until(lambda: self.count_text().startswith("7 "), "the seventh exchange listed")
        self.driver.find_element(By.ID, "view-structure").click()
        origin_label = self.base
        self.until(lambda: origin_label in self.driver.find_element(By.ID, "structure").text, "origin node")
        top = self.driver.find_element(By.CSS_SELECTOR, "#structure > details > summary")
        assert f"{origin_label} (7)" in top.text.replace("\n", " "), top.text
        top.click()
        self.until(lambda: "status (2)" in self.driver.find_element(By.ID, "structure").text.replace("\n", " "), "path segments grouped")
        text = self.driver.find_element(By.ID, "structure").text.replace("\n", " ")
        for node in ["api (1)", "images (1)", "forms (1)", "search (2)"]:
            assert node in text, f"{node} in {text}"
        # A leaf's name and time stand apart.
        next(s for s in self.driver.find_elements(By.CSS_SELECTOR, "#structure summary") if s.text.startswith("search")).click()
        leaves = "return [...document.querySelectorAll('#structure .leaf')].map(l => l.innerText)"
        self.until(lambda: any(re.search(r"q=again \d", t) for t in self.js(leaves)), lambda: f"the leaf's time apart from its name: {self.js(leaves)}")
        self.shot("structure")
        self.driver.find_element(By.ID, "view-sequence").click()

    def test_export_selected_rows(self):
        self.filter("")
        self.until(lambda: len(self.rows()) >= 6, "rows listed")

        def row(position):
            return self.driver.find_element(By.CSS_SELECTOR, f'#sequence-spacer .row[data-position="{position}"]')
        row(1).click()
        ActionChains(self.driver).key_down(Keys.CONTROL).click(row(3)).key_up(Keys.CONTROL).perform()
        self.until(lambda: self.driver.find_element(By.ID, "export-selected").get_attribute("textContent") == "Export selected (2)", "two rows chosen")
        assert self.driver.find_element(By.CSS_SELECTOR, "#session-menu > summary").text == "Session (2)"
        ActionChains(self.driver).key_down(Keys.SHIFT).click(row(5)).key_up(Keys.SHIFT).perform()
        self.until(lambda: self.driver.find_element(By.ID, "export-selected").get_attribute("textContent") == "Export selected (3)", "Shift-click takes the range")
        expected = [row(p).get_attribute("data-id") for p in (3, 4, 5)]
        assert len(self.driver.find_elements(By.CSS_SELECTOR, "#sequence-spacer .row.marked")) == 3
        self.shot("export-selected")
        # The page asks the API for exactly those exchanges, in list order.
        self.js("""window.exportBodies = []; const original = window.fetch;
                   window.fetch = (url, init) => { if (String(url).includes('export.har') && init && init.method === 'POST') window.exportBodies.push(init.body);
                                                   return original(url, init); };""")
        self.driver.find_element(By.CSS_SELECTOR, "#session-menu > summary").click()
        self.shot("session-menu")
        self.driver.find_element(By.ID, "export-selected").click()
        self.until(lambda: self.js("return window.exportBodies.length") == 1, "export requested")
        assert not self.js("return document.getElementById('session-menu').open"), "the menu closes once an action is chosen"
        asked = json.loads(self.js("return window.exportBodies[0]"))["ids"]
        assert asked == expected, (asked, expected)
        connection = http.client.HTTPConnection(self.kagami.ui.split("//")[1].split("/")[0], timeout=10)
        connection.request("POST", "/api/export.har", body=json.dumps({"ids": asked}),
                           headers={"Content-Type": "application/json", **authorization(self.kagami.ui)})
        har = json.loads(connection.getresponse().read())
        assert len(har["log"]["entries"]) == 3, len(har["log"]["entries"])
        row(1).click()
        self.until(lambda: self.driver.find_element(By.ID, "export-selected").get_attribute("textContent") == "Export selected", "a plain click chooses one row")

    def test_dark_theme(self):
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        background = self.js("return getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(23, 25, 30)", background
        self.select_row("users.json")
        self.filter("")
        self.shot("sequence-dark")
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "light"}]})
        assert self.js("return getComputedStyle(document.body).backgroundColor") == "rgb(255, 255, 255)"

    def test_rule_badges_and_applied_rules(self):
        headers = curl(self.kagami.proxy, f"{self.base}/ruled/page", "-D", "-", "-o", os.devnull)
        assert "X-Tagged: yes" in headers, headers
        self.filter("has:rule")
        self.until(lambda: len(self.rows()) == 1, "has:rule keeps only the ruled exchange")
        assert "/ruled/page" in self.rows()[0], self.rows()
        badges = self.js("return [...document.querySelectorAll('#sequence-spacer .row:not([hidden]) .c-rules .badge')].map(b => b.textContent)")
        assert badges == ["Rewrite 'tagging'"], badges
        self.shot("rule-badges")
        self.select_row("/ruled/page")
        applied = self.driver.find_element(By.ID, "applied-rules").text
        assert "Rewrite 'tagging'" in applied and "X-Tagged" in applied, applied
        self.shot("inspector-applied-rules")
        self.filter("")

    def test_import_har(self):
        before = int(self.count_text().split()[0])
        status, archive = api(self.kagami.ui, "GET", "/api/export.har")
        assert status == 200, archive
        entry = next(e for e in archive["log"]["entries"] if e["request"]["url"].endswith("/api/users.json"))
        entry["request"]["url"] = "http://imported.example/har/users.json"
        entry.pop("_id", None)
        good = os.path.join(self.workdir, "good.har")
        with open(good, "w") as file:
            json.dump({"log": {**archive["log"], "entries": [entry]}}, file)
        bad_entry = json.loads(json.dumps(entry))
        bad_entry["request"]["headers"] = "not a list"
        bad = os.path.join(self.workdir, "bad.har")
        with open(bad, "w") as file:
            json.dump({"log": {**archive["log"], "entries": [bad_entry]}}, file)
        # An archive with nothing readable is refused, naming where the problem is.
        self.driver.find_element(By.ID, "import-file").send_keys(bad)
        self.until(lambda: self.driver.find_element(By.ID, "banner").is_displayed(), "import error shown")
        message = self.driver.find_element(By.ID, "banner").text
        assert "log.entries[0].request.headers" in message, message
        time.sleep(0.5)
        assert self.count_text().startswith(f"{before} "), f"nothing imported: {self.count_text()}"
        status, answer = api(self.kagami.ui, "POST", "/api/import.har", open(bad, "rb").read())
        assert status == 400 and answer["path"] == "log.entries[0].request.headers", (status, answer)
        self.driver.find_element(By.ID, "banner-close").click()
        # One unreadable entry among readable ones is skipped and named; the others come in.
        mixed_entry = json.loads(json.dumps(entry))
        mixed_entry["request"]["url"] = "http://mixed.example/har/users.json"
        mixed = os.path.join(self.workdir, "mixed.har")
        with open(mixed, "w") as file:
            json.dump({"log": {**archive["log"], "entries": [mixed_entry, bad_entry]}}, file)
        self.driver.find_element(By.ID, "import-file").send_keys(mixed)
        self.until(lambda: "Imported 1 exchange" in self.driver.find_element(By.ID, "banner").text, "partial import reported")
        message = self.driver.find_element(By.ID, "banner").text
        assert "Skipped 1 entry" in message and "log.entries[1].request.headers" in message, message
        self.until(lambda: self.count_text().startswith(f"{before + 1} "), "the readable entry added")
        self.driver.find_element(By.ID, "banner-close").click()
        # A good one joins the session live, and importing it twice adds it twice.
        self.driver.find_element(By.ID, "import-file").send_keys(good)
        self.until(lambda: "Imported 1 exchange" in self.driver.find_element(By.ID, "banner").text, "import reported")
        self.filter("imported.example")
        self.until(lambda: len(self.rows()) == 1, "the imported exchange appears live")
        assert "/har/users.json" in self.rows()[0] and "200" in self.rows()[0], self.rows()
        self.shot("import-har")
        self.select_row("imported.example")
        self.tab("response")
        self.until(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#response-body .json-tree"), "imported body shown")
        self.driver.find_element(By.ID, "banner-close").click()
        self.filter("")
        self.until(lambda: self.count_text().startswith(f"{before + 2} "), "one exchange added by each import")

    # -- form helpers (and Page's type_into and field) --
    def press(self, element):
        """Clicks after centring the element: the panels' sticky heads cover what sits at their top."""
        self.js("arguments[0].scrollIntoView({block: 'center'})", element)
        element.click()

    def choose(self, element, value):
        self.js("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('change'))", element, value)

    def test_rules_panel_changes_the_next_response(self):
        self.driver.find_element(By.ID, "view-rules").click()
        panel = self.driver.find_element(By.ID, "rules")
        self.until(lambda: panel.find_elements(By.CSS_SELECTOR, '[data-field="rewrite[0]"]'), "the rules in force are shown")
        assert self.field(panel, "rewrite[0].name").get_attribute("value") == "tagging"
        headings = self.js("return [...document.querySelectorAll('#rules .section-head h3')].map(h => h.textContent)")
        for section in ["Block List", "Allow List", "Map Local", "Map Remote", "Rewrite", "No Caching", "Throttling"]:
            assert any(h.startswith(section) for h in headings), f"{section} editor in {headings}"
        # An invalid regular expression: the server's error lands next to its field.
        self.driver.find_element(By.ID, "add-blockList").click()
        self.type_into(self.field(panel, "blockList[0].name"), "no admin")
        self.type_into(self.field(panel, "blockList[0].locations[0].path"), "/blocked-by-ui/*")
        add_rule = panel.find_element(By.CSS_SELECTOR, '[data-field="rewrite[0]"] .add-rewrite-rule')
        self.press(add_rule)
        self.choose(self.field(panel, "rewrite[0].rules[1].type"), "Body")
        self.choose(self.field(panel, "rewrite[0].rules[1].where"), "response")
        self.type_into(self.field(panel, "rewrite[0].rules[1].match.value"), "hello (from")
        self.press(self.field(panel, "rewrite[0].rules[1].match.regex"))
        self.type_into(self.field(panel, "rewrite[0].rules[1].replace.value"), "rewritten in the UI")
        self.driver.find_element(By.ID, "rules-save").click()
        self.until(lambda: self.driver.find_elements(By.CSS_SELECTOR, ".field-error"), "validation error shown")
        error = self.driver.find_element(By.CSS_SELECTOR, ".field-error")
        placed = self.js("const e = document.querySelector('.field-error'); return e.previousElementSibling.dataset.field")
        assert placed == "rewrite[0].rules[1].match.value", f"error next to {placed}: {error.text}"
        assert self.field(panel, "rewrite[0].rules[1].match.value").get_attribute("aria-invalid") == "true"
        self.shot("rules-error")
        # Nothing changed while the document was refused.
        assert "hello from /ruled/again" in curl(self.kagami.proxy, f"{self.base}/ruled/again")
        # Fix it, change the header, pick a throttling preset (off), move the body rule first, and save.
        self.type_into(self.field(panel, "rewrite[0].rules[1].match.value"), "hello (from)")
        self.type_into(self.field(panel, "rewrite[0].rules[0].replace.value"), "edited-in-ui")
        self.press(panel.find_element(By.CSS_SELECTOR, '[data-field="rewrite[0].rules[1]"] .list-controls button[title="Move this rule up"]'))
        assert self.field(panel, "rewrite[0].rules[0].type").get_attribute("value") == "Body", "moved up"
        # Map Local: a file answers one path.
        with open(os.path.join(self.workdir, "user.json"), "w") as file:
            file.write('{"name": "from a local file"}')
        self.press(self.driver.find_element(By.ID, "add-mapLocal"))
        self.type_into(self.field(panel, "mapLocal[0].name"), "fixture")
        self.type_into(self.field(panel, "mapLocal[0].from.path"), "/mapped/user.json")
        self.type_into(self.field(panel, "mapLocal[0].local"), os.path.join(self.workdir, "user.json"))
        self.press(self.driver.find_element(By.ID, "add-preset"))
        self.type_into(self.field(panel, "throttling.presets[0].name"), "Hotel WiFi")
        self.type_into(self.field(panel, "throttling.presets[0].downloadKbps"), "900")
        self.type_into(self.field(panel, "throttling.presets[0].uploadKbps"), "120")
        self.type_into(self.field(panel, "throttling.presets[0].latencyMs"), "350")
        self.choose(self.field(panel, "throttling.preset"), "3G")
        self.until(lambda: "780 kbps" in self.driver.find_element(By.ID, "throttle-profile").text, "the preset's numbers shown")
        profile = self.driver.find_element(By.ID, "throttle-profile").text
        assert "330 kbps" in profile and "200 ms" in profile, profile
        self.driver.find_element(By.ID, "rules-save").click()
        self.until(lambda: "Saved" in self.text_of("rules-state"), "saved")
        assert not self.driver.find_elements(By.CSS_SELECTOR, ".field-error")
        self.shot("rules")
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        assert self.js("return getComputedStyle(document.querySelector('#rules .card')).backgroundColor") == "rgb(31, 34, 41)"
        self.shot("rules-dark")
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "light"}]})
        headers = curl(self.kagami.proxy, f"{self.base}/ruled/next", "-D", "-")
        assert "X-Tagged: edited-in-ui" in headers and "rewritten in the UI /ruled/next" in headers, headers
        blocked = subprocess.run(["curl", "-s", "-o", os.devnull, "-w", "%{http_code}", "-x", self.kagami.proxy, f"{self.base}/blocked-by-ui/x"],
                                 capture_output=True, text=True, timeout=20)
        assert blocked.stdout == "403", blocked
        assert curl(self.kagami.proxy, f"{self.base}/mapped/user.json") == '{"name": "from a local file"}'
        # The saved custom preset joins the picker.
        self.choose(self.field(panel, "throttling.preset"), "Hotel WiFi")
        self.until(lambda: "900 kbps" in self.text_of("throttle-profile"), "the custom preset's numbers")
        assert "350 ms" in self.text_of("throttle-profile")
        # Disabling the block rule lets the path through again.
        self.press(self.field(panel, "blockList[0].enabled"))
        self.driver.find_element(By.ID, "rules-save").click()
        self.until(lambda: "Saved" in self.text_of("rules-state"), "saved again")
        assert "hello from /blocked-by-ui/x" in curl(self.kagami.proxy, f"{self.base}/blocked-by-ui/x")
        status, document = api(self.kagami.ui, "GET", "/api/rules")
        assert document["blockList"][0]["enabled"] is False and document["throttling"]["preset"] == "Hotel WiFi", document
        assert document["throttling"]["presets"][0]["downloadKbps"] == 900, document
        self.driver.find_element(By.ID, "view-sequence").click()

    def test_breakpoints_edit_what_the_client_receives(self):
        self.driver.find_element(By.ID, "view-breakpoints").click()
        panel = self.driver.find_element(By.ID, "breakpoints")
        self.until(lambda: panel.find_elements(By.ID, "add-breakpoint"), "breakpoints editor")
        self.driver.find_element(By.ID, "add-breakpoint").click()
        self.type_into(self.field(panel, "breakpoints[0].location.path"), "/held/*")
        self.press(self.field(panel, "breakpoints[0].request"))  # off: stop at the response only
        self.press(self.field(panel, "breakpoints[0].response"))
        self.driver.find_element(By.ID, "breakpoints-save").click()
        self.until(lambda: "In force" in self.text_of("breakpoints-state"), "breakpoints saved")
        status, document = api(self.kagami.ui, "GET", "/api/breakpoints")
        assert document["breakpoints"][0]["response"] is True and document["breakpoints"][0]["request"] is False, document
        # Named after its location by the proxy; the editor shows the name and keeps it on the next save.
        assert document["breakpoints"][0]["name"] == "*://*/held/*", document
        self.until(lambda: self.field(panel, "breakpoints[0].name").get_attribute("value") == "*://*/held/*", "the name given shown")
        self.type_into(self.field(panel, "breakpoints[0].name"), "held pages")
        self.driver.find_element(By.ID, "breakpoints-save").click()
        self.until(lambda: api(self.kagami.ui, "GET", "/api/breakpoints")[1]["breakpoints"][0].get("name") == "held pages", "the name typed saved")
        self.shot("breakpoints")
        self.driver.find_element(By.ID, "view-sequence").click()

        results = {}

        def fetch(name):
            result = subprocess.run(["curl", "-s", "-i", "-x", self.kagami.proxy, "--max-time", "30", f"{self.base}/held/{name}"],
                                    capture_output=True, text=True, timeout=40)
            results[name] = result.stdout

        dialog = self.driver.find_element(By.ID, "held-dialog")
        one = threading.Thread(target=fetch, args=("one",))
        one.start()
        self.until(lambda: self.js("return document.getElementById('held-dialog').open"), "the held response pops up")
        assert "response held" in dialog.text, dialog.text
        body = self.field(dialog, "response.body")
        assert body.get_attribute("value") == "hello from /held/one\n", body.get_attribute("value")
        self.type_into(body, "changed at a breakpoint")
        self.type_into(self.field(dialog, "response.status"), "202")
        self.driver.find_element(By.ID, "held-execute").click()
        one.join(30)
        assert "202" in results["one"].split("\r\n", 1)[0] and results["one"].endswith("changed at a breakpoint"), results["one"]
        self.until(lambda: not self.js("return document.getElementById('held-dialog').open"), "the editor closes")
        # Two held at once queue; each is decided on its own.
        threads = [threading.Thread(target=fetch, args=(name,)) for name in ("two", "three")]
        for thread in threads:
            thread.start()
            time.sleep(0.3)
        self.until(lambda: len(dialog.find_elements(By.CSS_SELECTOR, "#held-dialog-queue button")) == 2, "two held exchanges queue")
        assert self.driver.find_element(By.ID, "held-count").text == "2"
        self.shot("breakpoint-held")
        self.driver.find_element(By.ID, "held-abort").click()
        self.until(lambda: len(dialog.find_elements(By.CSS_SELECTOR, "#held-dialog-queue button")) == 0 and dialog.is_displayed(), "one left")
        self.driver.find_element(By.ID, "held-cancel").click()
        for thread in threads:
            thread.join(30)
        assert " 502 " in results["two"].split("\r\n", 1)[0], results["two"]
        assert " 200 " in results["three"].split("\r\n", 1)[0] and results["three"].endswith("hello from /held/three\n"), results["three"]
        self.until(lambda: not self.js("return document.getElementById('held-dialog').open"), "queue empty")
        # At the request: the URL and a header edited in the UI reach the server.
        self.driver.find_element(By.ID, "view-breakpoints").click()
        self.press(self.field(panel, "breakpoints[0].request"))
        self.press(self.field(panel, "breakpoints[0].response"))
        self.driver.find_element(By.ID, "breakpoints-save").click()
        self.until(lambda: "In force" in self.text_of("breakpoints-state"), "request breakpoint saved")
        self.driver.find_element(By.ID, "view-sequence").click()
        four = threading.Thread(target=fetch, args=("four",))
        four.start()
        self.until(lambda: self.js("return document.getElementById('held-dialog').open"), "the held request pops up")
        assert "request held" in dialog.text, dialog.text
        url = self.field(dialog, "request.url")
        assert url.get_attribute("value") == f"{self.base}/held/four", url.get_attribute("value")
        self.type_into(url, f"{self.base}/held/edited-in-the-ui")
        self.shot("breakpoint-request")
        self.driver.find_element(By.ID, "held-execute").click()
        four.join(30)
        assert results["four"].endswith("hello from /held/edited-in-the-ui\n"), results["four"]
        self.until(lambda: not self.js("return document.getElementById('held-dialog').open"), "request released")
        # Off again, so later traffic is not held.
        self.driver.find_element(By.ID, "view-breakpoints").click()
        self.press(panel.find_element(By.CSS_SELECTOR, '[data-field="breakpoints[0]"] .list-controls .danger'))
        self.driver.find_element(By.ID, "breakpoints-save").click()
        self.until(lambda: "In force" in self.text_of("breakpoints-state"), "breakpoint removed")
        self.driver.find_element(By.ID, "view-sequence").click()

    def test_repeat_and_repeat_advanced(self):
        self.select_row("/api/users.json")
        self.driver.find_element(By.ID, "repeat").click()
        self.until(lambda: "Repeat:" in self.driver.find_element(By.ID, "banner").text, "repeat summary shown")
        self.filter("/api/users.json")
        self.until(lambda: len(self.rows()) == 2, "the repeat is recorded")
        assert "Repeat" in self.rows()[1], self.rows()
        self.driver.find_element(By.ID, "banner-close").click()
        self.driver.find_element(By.CSS_SELECTOR, "#sequence-spacer .row:not([hidden])").click()
        self.until(lambda: self.driver.find_element(By.ID, "repeat-advanced").is_enabled(), "inspector ready")
        self.driver.find_element(By.ID, "repeat-advanced").click()
        self.until(lambda: self.js("return document.getElementById('repeat-dialog').open"), "Repeat Advanced dialog")
        for name, value in (("repeat-count", "4"), ("repeat-concurrency", "2"), ("repeat-delay", "20")):
            self.type_into(self.driver.find_element(By.ID, name), value)
        self.driver.find_element(By.ID, "repeat-start").click()
        self.until(lambda: "Sent: 4" in self.driver.find_element(By.ID, "repeat-summary").text, "summary")
        summary = self.driver.find_element(By.ID, "repeat-summary").text
        assert "200: 4" in summary and "Failed: 0" in summary, summary
        self.shot("repeat-advanced")
        self.driver.find_element(By.ID, "repeat-close").click()
        self.until(lambda: len(self.rows()) == 6, "four more rows")
        self.filter("")

    def test_grpc_tab(self):
        # grpcio's client through a proxy that reads its tunnels (a CONNECT tunnel with HTTP/2
        # inside) to its server; that proxy's own page is opened for the test, then this one's again.
        peer = os.path.join(ROOT, "Tests", "GRPC", "grpc_peer.py")
        server = subprocess.Popen([sys.executable, peer, "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        workdir = tempfile.mkdtemp(prefix="kagami-grpc-ui-")
        reading = Kagami(self.binary, workdir, ssl_proxying=True)
        try:
            self.driver.get(reading.ui)
            port = int(server.stdout.readline().split()[1])
            done = subprocess.run([sys.executable, peer, "call", "--target", f"127.0.0.1:{port}", "--proxy", reading.proxy,
                                   "--only", "unary,fail"], capture_output=True, text=True, timeout=60)
            report = json.loads(done.stdout.strip().splitlines()[-1])
            assert report["unary"]["code"] == "OK" and report["fail"]["code"] == "NOT_FOUND", (report, done.stderr)
            self.select_row("/kagami.test.Echo/Unary")
            self.tab("grpc")
            self.until(lambda: "OK (0)" in self.driver.find_element(By.ID, "grpc-status").text, "the call's status from its trailers")
            request = self.driver.find_element(By.ID, "grpc-request").text
            assert "150" in request and '"hello"' in request, request
            response = self.driver.find_element(By.ID, "grpc-response").text
            assert '"olleh"' not in response and "Message 1" in response, response
            self.shot("inspector-grpc")
            self.tab("response")
            self.until(lambda: "x-trailer" in self.driver.find_element(By.ID, "response-trailers").text, "the response's trailers shown")
            self.select_row("/kagami.test.Echo/Fail")
            self.tab("grpc")
            self.until(lambda: "NOT_FOUND (5): no note 7 — gone" in self.driver.find_element(By.ID, "grpc-status").text, "a trailers-only error's status")
        finally:
            server.stdin.close()
            server.wait(timeout=30)
            reading.stop()
            self.driver.get(self.kagami.ui)

    def test_grpc_tab_with_schema(self):
        # grpcio's shop client through a proxy given the shop's .proto folder (compiled by protoc):
        # the tab shows the method with its types and each message with names, enums by name,
        # well-known types as JSON, as the client itself decoded them.
        shop = os.path.join(ROOT, "Tests", "GRPC", "grpc_shop.py")
        server = subprocess.Popen([sys.executable, shop, "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        workdir = tempfile.mkdtemp(prefix="kagami-grpc-schema-ui-")
        reading = Kagami(self.binary, workdir, ssl_proxying=True, extra=["--proto-path", os.path.join(ROOT, "Tests", "GRPC", "proto")])
        try:
            self.driver.get(reading.ui)
            port = int(server.stdout.readline().split()[1])
            done = subprocess.run([sys.executable, shop, "call", "--target", f"127.0.0.1:{port}", "--proxy", reading.proxy],
                                  capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
            report = json.loads(done.stdout.strip().splitlines()[-1])
            self.select_row("/kagami.shop.Shop/GetOrder")
            self.tab("grpc")
            self.until(lambda: "kagami.shop.Order" in self.driver.find_element(By.ID, "grpc-method").text, "the method with its types")
            method = self.driver.find_element(By.ID, "grpc-method").text
            assert method == "kagami.shop.Shop/GetOrder(kagami.shop.OrderRequest) → kagami.shop.Order", method
            response = self.driver.find_element(By.CSS_SELECTOR, "#grpc-response .grpc-json").text
            assert json.loads(response) == report["getOrder"][0], (response, report)
            assert '"colour": "GREEN"' in response and '"added": "2023-11-14T22:13:20.500Z"' in response, response
            self.shot("inspector-grpc-schema")
            # The admin API gives the same to scripts.
            flows = api(reading.ui, "GET", "/api/flows")[1]
            get = next(f for f in flows["flows"] if f["path"].endswith("/GetOrder"))
            status, call = api(reading.ui, "GET", f"/api/flows/{get['id']}/grpc")
            assert status == 200 and call["response"]["messages"][0]["json"] == report["getOrder"][0], call
        finally:
            server.stdin.close()
            server.wait(timeout=30)
            reading.stop()
            self.driver.get(self.kagami.ui)

    def test_grpc_breakpoint_edits_messages_as_json_and_copies_grpcurl(self):
        # A held gRPC request shows its message as JSON; the JSON typed in the editor is what
        # grpcio's server receives (it answers with the id it got). The row's menu then copies
        # the call as a grpcurl command, the one the admin API gives.
        shop = os.path.join(ROOT, "Tests", "GRPC", "grpc_shop.py")
        server = subprocess.Popen([sys.executable, shop, "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        workdir = tempfile.mkdtemp(prefix="kagami-grpc-edit-ui-")
        editing = Kagami(self.binary, workdir, ssl_proxying=True, extra=["--proto-path", os.path.join(ROOT, "Tests", "GRPC", "proto")])
        try:
            self.driver.get(editing.ui)
            port = int(server.stdout.readline().split()[1])
            status, _ = api(editing.ui, "PUT", "/api/breakpoints", {"breakpoints": [{"location": {"path": "/kagami.shop.Shop/GetOrder"}}]})
            assert status == 200
            results = {}

            def send():
                done = subprocess.run([sys.executable, shop, "send", "--target", f"127.0.0.1:{port}", "--proxy", editing.proxy,
                                       "--method", "/kagami.shop.Shop/GetOrder", "--json", '{"id": "o1"}'], capture_output=True, text=True, timeout=60)
                results["send"] = done

            client = threading.Thread(target=send)
            client.start()
            dialog = self.driver.find_element(By.ID, "held-dialog")
            self.until(lambda: self.js("return document.getElementById('held-dialog').open"), "the held gRPC request pops up")
            messages = self.field(dialog, "request.grpc.text")
            assert json.loads(messages.get_attribute("value")) == [{"id": "o1"}], messages.get_attribute("value")
            assert "kagami.shop.OrderRequest" in dialog.text, dialog.text
            self.type_into(messages, '[{"id": 5}]')
            self.driver.find_element(By.ID, "held-execute").click()
            self.until(lambda: "expected a string, found integer" in dialog.text, "the refused edit says where")
            self.type_into(self.field(dialog, "request.grpc.text"), '[{"id": "edited-in-the-ui"}]')
            self.shot("breakpoint-grpc")
            self.driver.find_element(By.ID, "held-execute").click()
            client.join(60)
            done = results["send"]
            assert done.returncode == 0, done.stderr
            answer = json.loads(done.stdout.strip().splitlines()[-1])
            assert answer["code"] == "OK" and answer["answers"][0]["id"] == "edited-in-the-ui", answer
            self.filter("/GetOrder")
            self.until(lambda: len(self.rows()) == 1, "the call's row")
            row = self.driver.find_element(By.CSS_SELECTOR, "#sequence-spacer .row:not([hidden])")
            self.js("window.copied = []; navigator.clipboard.writeText = (text) => { window.copied.push(text); return Promise.resolve(); };")
            ActionChains(self.driver).context_click(row).perform()
            self.until(lambda: self.js("const b = document.getElementById('menu-copy-grpcurl'); return !!b && !b.disabled"), "Copy as grpcurl")
            self.driver.find_element(By.ID, "menu-copy-grpcurl").click()
            self.until(lambda: self.js("return window.copied.length") == 1, "the grpcurl command copied")
            command = self.js("return window.copied[0]")
            self.until(lambda: "Copied grpcurl command" in self.text_of("banner"), "the banner says what was copied")
            flow_id = self.js("return document.querySelector('#sequence-spacer .row:not([hidden])').dataset.id")
            status, expected = api(editing.ui, "GET", f"/api/flows/{flow_id}/grpcurl")
            assert status == 200 and command == expected.rstrip("\n"), f"page: {command!r}\nAPI: {expected!r}"
            assert command.startswith("grpcurl -plaintext") and "-d '{\"id\":\"edited-in-the-ui\"}'" in command, command
            assert command.endswith(f"127.0.0.1:{port} kagami.shop.Shop/GetOrder"), command
            self.filter("")
        finally:
            server.stdin.close()
            server.wait(timeout=30)
            editing.stop()
            self.driver.get(self.kagami.ui)

    def test_websocket_messages_tab(self):
        # A websockets echo server, and a handshake plus frames sent through the proxy by a
        # client that keeps the socket open until told to go on.
        peer = os.path.join(ROOT, "Tests", "WebSocket", "ws_peer.py")
        server = subprocess.Popen([sys.executable, peer, "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        client = None
        try:
            port = int(server.stdout.readline().split()[1])
            proxy_port = self.kagami.proxy.rsplit(":", 1)[1]
            client = subprocess.Popen([sys.executable, peer, "absolute", proxy_port, str(port), "--pause"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert client.stdout.readline().strip() == "open", "the client's socket is open"
            self.select_row("/absolute")
            self.tab("messages")
            rows = "return [...document.querySelectorAll('#messages-table tbody tr')].map(r => r.innerText)"
            self.until(lambda: len(self.js(rows)) == 2, "the first message and its echo listed")
            # The tab follows the open socket: the next messages and the close appear by themselves.
            client.stdin.write("\n")
            client.stdin.flush()
            output = client.communicate(timeout=30)[0]
            assert client.returncode == 0, output
            self.until(lambda: len(self.js(rows)) == 6, "six messages listed live")
        finally:
            if client and client.poll() is None:
                client.kill()
            server.stdin.close()
            server.wait(timeout=10)
        texts = self.js(rows)
        assert "↑" in texts[0] and "absolute hello" in texts[0] and "text" in texts[0], texts
        assert "↓" in texts[1] and "absolute hello" in texts[1], texts
        assert "absolute again" in texts[2] and "absolute again" in texts[3], texts
        assert "close" in texts[4] and "1000 bye" in texts[4], texts
        self.shot("websocket-messages")
        box = self.driver.find_element(By.ID, "messages-filter")
        box.send_keys("hello")
        self.until(lambda: len(self.js(rows)) == 2, "the filter keeps the two hello messages")
        self.choose(self.driver.find_element(By.ID, "messages-direction"), "receive")
        self.until(lambda: len(self.js(rows)) == 1 and "↓" in self.js(rows)[0], "one received hello")
        self.filter("")

    def test_websocket_message_breakpoint_and_inject(self):
        # A second Kagami in reverse mode before a websockets echo server; its page is opened
        # for the test. A message breakpoint set in the page holds the client's message, which
        # is edited there; then a message typed in the Messages tab reaches the client.
        peer = os.path.join(ROOT, "Tests", "WebSocket", "ws_peer.py")
        server = subprocess.Popen([sys.executable, peer, "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        workdir = tempfile.mkdtemp(prefix="kagami-ws-ui-")
        reverse = None
        client = None
        try:
            port = int(server.stdout.readline().split()[1])
            reverse = Kagami(self.binary, workdir, extra=["--reverse", f"http://127.0.0.1:{port}"])
            self.driver.get(reverse.ui)
            self.driver.find_element(By.ID, "view-breakpoints").click()
            panel = self.driver.find_element(By.ID, "breakpoints")
            self.until(lambda: panel.find_elements(By.ID, "add-breakpoint"), "breakpoints editor")
            self.driver.find_element(By.ID, "add-breakpoint").click()
            self.type_into(self.field(panel, "breakpoints[0].location.path"), "/chat")
            self.press(self.field(panel, "breakpoints[0].request"))
            self.choose(self.field(panel, "breakpoints[0].messages"), "send")
            self.type_into(self.field(panel, "breakpoints[0].messageText"), "hold")
            self.driver.find_element(By.ID, "breakpoints-save").click()
            self.until(lambda: "In force" in self.text_of("breakpoints-state"), "breakpoints saved")
            status, document = api(reverse.ui, "GET", "/api/breakpoints")
            assert document["breakpoints"][0].get("messages") == "send" and document["breakpoints"][0]["request"] is False, document
            self.driver.find_element(By.ID, "view-sequence").click()
            client = subprocess.Popen(
                [sys.executable, peer, "talk", f"ws://127.0.0.1:{reverse.proxy.rsplit(':', 1)[1]}/chat",
                 "--send", "hello", "--send", "hold this", "--expect", "hello", "--expect", "edited in the ui", "--expect", "from the ui"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            dialog = self.driver.find_element(By.ID, "held-dialog")
            self.until(lambda: self.js("return document.getElementById('held-dialog').open"), "the held message pops up")
            assert "WebSocket message held" in dialog.text and "client → server" in dialog.text, dialog.text
            self.until(lambda: self.field(dialog, "message").get_attribute("value") == "hold this", "the held text to edit")
            self.type_into(self.field(dialog, "message"), "edited in the ui")
            self.shot("breakpoint-websocket-message")
            self.driver.find_element(By.ID, "held-execute").click()
            self.until(lambda: not self.js("return document.getElementById('held-dialog').open"), "the message is sent on")
            self.select_row("/chat")
            self.tab("messages")
            rows = "return [...document.querySelectorAll('#messages-table tbody tr')].map(r => r.innerText)"
            self.until(lambda: len(self.js(rows)) == 4, "the messages so far listed")
            self.type_into(self.driver.find_element(By.ID, "inject-text"), "from the ui")
            self.choose(self.driver.find_element(By.ID, "inject-direction"), "receive")
            self.driver.find_element(By.ID, "inject-send").click()
            self.until(lambda: self.text_of("inject-outcome") == "Sent.", lambda: f"the message is sent (page says {self.text_of('inject-outcome')!r})")
            output, errors = client.communicate(timeout=60)
            assert client.returncode == 0, (output, errors)
            self.until(lambda: any("injected" in row for row in self.js(rows)), "the injected message listed with its note")
            texts = self.js(rows)
            assert any("edited in the ui" in row and "then edited" in row for row in texts), texts
            self.shot("websocket-messages-tools")
        finally:
            if client and client.poll() is None:
                client.kill()
            server.stdin.close()
            server.wait(timeout=10)
            if reverse:
                reverse.stop()
            self.driver.get(self.kagami.ui)

    def test_ten_thousand_exchanges(self):
        host, port = self.kagami.proxy.replace("http://", "").split(":")
        errors = []

        def send(worker, count):
            connection = http.client.HTTPConnection(host, int(port), timeout=10)
            try:
                for n in range(count):
                    connection.request("GET", f"{self.base}/bulk/{worker}/{n}?page={n % 50}")
                    response = connection.getresponse()
                    response.read()
                    if response.status != 200:
                        errors.append(response.status)
            except Exception as error:  # noqa: BLE001 - reported below
                errors.append(repr(error))
            finally:
                connection.close()

        workers = 4
        already = int(self.count_text().split()[0])
        started = time.time()
        threads = [threading.Thread(target=send, args=(w, BULK // workers)) for w in range(workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        sent = time.time() - started
        assert not errors, errors[:5]
        total = already + BULK
        self.until(lambda: self.count_text().startswith(f"{total} "), f"{total} rows arrived live")
        live = time.time() - started
        # A fresh page reads all of them through the API.
        started = time.time()
        self.driver.refresh()
        self.until(lambda: self.count_text().startswith(f"{total} ") and len(self.rows()) > 10, "reloaded list rendered")
        reload_seconds = time.time() - started
        dom_rows = self.js("return document.querySelectorAll('#sequence-spacer .row').length")
        assert dom_rows < 200, f"only rows in sight are in the page, not {dom_rows}"
        # Scroll from top to bottom in 40 steps, one per frame, and time the slowest frame.
        frames = self.driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            const scroll = document.getElementById('sequence-scroll');
            const steps = 40, gaps = []; let step = 0, last = performance.now();
            function next() {
              const now = performance.now(); gaps.push(now - last); last = now;
              if (step > steps) { done({max: Math.max(...gaps.slice(1)), total: gaps.slice(1).reduce((a, b) => a + b, 0),
                                         firstRow: document.querySelector('#sequence-spacer .row:not([hidden])').innerText}); return; }
              scroll.scrollTop = (scroll.scrollHeight - scroll.clientHeight) * step / steps; step++;
              requestAnimationFrame(next);
            }
            requestAnimationFrame(next);""")
        # Frame times are reported below, not asserted: a busy machine makes them what it likes.
        started = time.time()
        self.filter("page=7")
        self.until(lambda: self.count_text().startswith(f"{BULK // 50} of {total}"), "filter over 10,000 rows")
        filter_seconds = time.time() - started - 0.3
        self.shot("sequence-10k")
        self.filter("")
        self.timings = {"send_10k_through_proxy_s": round(sent, 2), "live_rows_after_sending_start_s": round(live, 2),
                        "reload_and_render_10k_s": round(reload_seconds, 2),
                        "scroll_40_frames_max_ms": round(frames["max"], 1), "scroll_40_frames_total_ms": round(frames["total"], 1),
                        "filter_10k_s": round(filter_seconds, 2)}

    def test_disconnected_banner(self):
        # A Kagami of its own, stopped under the page.
        own = Kagami(self.binary, tempfile.mkdtemp(prefix="kagami-stopped-"))
        self.driver.get(own.ui)
        self.until(lambda: "Live" in self.driver.find_element(By.ID, "connection").text, "connected")
        curl(own.proxy, f"{self.base}/before/stopping")
        self.until(lambda: len(self.rows()) == 1, "one exchange listed")
        own.stop()
        self.until(lambda: self.driver.find_element(By.ID, "banner").is_displayed(), "banner when Kagami goes away")
        assert "Lost the connection to Kagami" in self.driver.find_element(By.ID, "banner").text
        assert "Disconnected" in self.driver.find_element(By.ID, "connection").text
        assert len(self.rows()) > 0, "what was captured stays on screen"
        self.shot("disconnected")

    def run(self):
        # Each test starts from `fresh`; those that read the six seed exchanges get them.
        seeded = {"test_filter_narrows", "test_inspector_headers_and_json_tree", "test_inspector_request_params_and_cookies",
                  "test_inspector_image", "test_copy_curl_repeats_the_request", "test_structure_groups", "test_export_selected_rows",
                  "test_dark_theme", "test_import_har", "test_repeat_and_repeat_advanced"}

        def from_fresh(test):
            def run():
                self.fresh(seed=test.__name__ in seeded)
                test()
            run.__name__ = test.__name__
            return run
        tests = [self.test_empty_state, self.test_rows_appear_live, self.test_filter_narrows,
                 self.test_inspector_headers_and_json_tree, self.test_inspector_request_params_and_cookies,
                 self.test_inspector_image, self.test_copy_curl_repeats_the_request, self.test_structure_groups,
                 self.test_export_selected_rows, self.test_dark_theme, self.test_rule_badges_and_applied_rules, self.test_import_har,
                 self.test_rules_panel_changes_the_next_response, self.test_breakpoints_edit_what_the_client_receives,
                 self.test_repeat_and_repeat_advanced, self.test_websocket_messages_tab,
                 self.test_websocket_message_breakpoint_and_inject, self.test_grpc_tab, self.test_grpc_tab_with_schema,
                 self.test_grpc_breakpoint_edits_messages_as_json_and_copies_grpcurl,
                 self.test_ten_thousand_exchanges, self.test_disconnected_banner]
        only = os.environ.get("KAGAMI_UI_ONLY")
        tests = [from_fresh(test) for test in tests if not only or only in test.__name__]
        self.run_tests(tests, "ui")


def main():
    run_suite(Suite, "ui")


if __name__ == "__main__":
    main()
