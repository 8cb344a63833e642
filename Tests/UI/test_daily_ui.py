"""Browser tests of the web UI's everyday tools: the Sequence columns, the row and Structure
context menus, Compose, the Raw tab, the SSL Proxying and Device setup panels and the body
viewers. A real `kagami proxy` (HTTPS interception on, with its own CA), a plain and a TLS origin
on 127.0.0.1, curl, and headless Chromium. Every test opens the page afresh (and forgets the
columns the page remembers), so each stands alone. Prints `daily ui tests: N passed, M failed`.

Usage: python Tests/UI/test_daily_ui.py [path/to/kagami]
"""
import datetime
import json
import os
import plistlib
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
from http.server import ThreadingHTTPServer

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

sys.path.insert(0, os.path.dirname(__file__))
import origin  # noqa: E402
from page import Page, run_suite  # noqa: E402
from test_ui import Kagami, api, curl  # noqa: E402

RULES = {"rewrite": [{"name": "tagging", "locations": [{"path": "/ruled/*"}],
                      "rules": [{"type": "Add Header", "where": "both", "replace": {"name": "X-Tagged", "value": "yes"}}]}]}


def tls_origin(workdir):
    """The testing origin over TLS, with a self-signed certificate made by openssl."""
    key, cert = os.path.join(workdir, "origin.key"), os.path.join(workdir, "origin.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    server = ThreadingHTTPServer(("127.0.0.1", 0), origin.Handler)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Suite(Page):
    def __init__(self, binary):
        self.workdir = tempfile.mkdtemp(prefix="kagami-daily-")
        self.origin = origin.start()
        self.base = f"http://127.0.0.1:{self.origin.server_address[1]}"
        self.tls = tls_origin(self.workdir)
        self.tls_port = self.tls.server_address[1]
        self.rules_file = os.path.join(self.workdir, "rules.json")
        with open(self.rules_file, "w") as file:
            json.dump(RULES, file)
        self.ssl_file = os.path.join(self.workdir, "ssl-proxying.json")
        # The TLS origin starts excluded, so its CONNECT is relayed untouched until the page enables it.
        self.ssl_start = {"include": [], "exclude": [f"127.0.0.1:{self.tls_port}"]}
        with open(self.ssl_file, "w") as file:
            json.dump(self.ssl_start, file)
        self.binary = binary
        self.kagami = Kagami(binary, self.workdir, self.rules_file, ssl_proxying=True,
                             extra=["--ca-dir", os.path.join(self.workdir, "ca"), "--insecure-upstream", "--ssl-proxying-file", self.ssl_file])
        super().__init__()

    # -- helpers --
    def fresh(self):
        """The suite's rules, no breakpoints, the starting SSL Proxying list, and a new page:
        nothing selected, no menu, default columns."""
        for path, document in (("/api/rules", RULES), ("/api/breakpoints", {"breakpoints": []}), ("/api/ssl-proxying", self.ssl_start)):
            status, answer = api(self.kagami.ui, "PUT", path, document)
            assert status == 200, (path, answer)
        self.driver.get(self.kagami.ui)
        self.js("localStorage.clear()")
        self.driver.get(self.kagami.ui)
        self.until(lambda: "Live" in self.driver.find_element(By.ID, "connection").text, "connected")
        self.until(lambda: self.js("return document.body.dataset.loading") == "false", "list loaded")

    def row(self, part):
        """The one row the filter `part` leaves."""
        self.filter(part)
        self.until(lambda: len(self.rows()) == 1, lambda: f"one row for {part}: {self.rows()}")
        return self.driver.find_element(By.CSS_SELECTOR, "#sequence-spacer .row:not([hidden])")

    def select(self, part):
        self.row(part).click()
        # The inspector keeps the tab that was open: back to the overview.
        self.tab("overview")
        self.until(lambda: part in self.text_of("overview-url"), f"inspector shows {part}")

    def menu(self, element, item):
        """Right-clicks `element` and chooses the menu item with id `item`."""
        ActionChains(self.driver).context_click(element).perform()
        self.until(lambda: self.js("return !document.getElementById('context-menu').hidden"), "context menu open")
        self.until(lambda: self.js("const b = document.getElementById(arguments[0]); return !!b && !b.disabled", item), f"menu item {item}")
        self.driver.find_element(By.ID, item).click()

    def capture_clipboard(self, clipboard_works=True):
        """Records what the page copies: through the Clipboard API, or (when it refuses) through
        the selected-text fallback and the browser's copy command."""
        self.js("""window.copied = [];
            if (arguments[0]) navigator.clipboard.writeText = (text) => { window.copied.push(text); return Promise.resolve(); };
            else navigator.clipboard.writeText = () => Promise.reject(new Error('denied'));
            document.execCommand = (command) => { const a = document.activeElement;
              if (command === 'copy' && a && a.value != null) window.copied.push(a.value.slice(a.selectionStart, a.selectionEnd));
              return command === 'copy'; };""", clipboard_works)

    def copied(self, count=1):
        self.until(lambda: self.js("return window.copied.length") >= count, "something copied")
        return self.js("return window.copied[arguments[0]]", count - 1)

    def flow_id(self):
        return self.js("return document.querySelector('#sequence-spacer .row.selected').dataset.id")

    def value(self, scope, name):
        return self.field(scope, name).get_attribute("value")

    # -- tests --
    def test_columns_scheme_lock_and_hover(self):
        curl(self.kagami.proxy, f"{self.base}/columns/plain?x=1")
        self.fresh()
        head = self.js("return [...document.querySelectorAll('#sequence-head .head-cell')].filter(c => c.offsetParent).map(c => c.textContent)")
        assert head == ["Time", "Method", "Status", "Scheme", "Host", "Path", "Type", "Size", "Duration", "Rules"], head
        row = self.row("/columns/plain")
        assert "http" in self.rows()[0] and not row.find_elements(By.CSS_SELECTOR, ".c-scheme svg.icon-lock"), self.rows()
        assert row.get_attribute("title") == f"GET {self.base}/columns/plain?x=1", row.get_attribute("title")
        assert row.find_element(By.CSS_SELECTOR, ".c-path").get_attribute("title") == f"{self.base}/columns/plain?x=1"
        # No header is cut short, with or without the inspector.
        clipped = "return [...document.querySelectorAll('#sequence-head .head-label')].filter(l => l.scrollWidth > l.clientWidth + 1).map(l => l.textContent)"
        assert self.js(clipped) == [], self.js(clipped)
        self.select("/columns/plain")
        assert self.js(clipped) == [], f"with the inspector open: {self.js(clipped)}"

    def test_columns_resize_hide_and_remembered(self):
        curl(self.kagami.proxy, f"{self.base}/columns/resize")
        self.fresh()
        width = lambda column: self.js("return document.querySelector('#sequence-head .c-' + arguments[0]).getBoundingClientRect().width", column)
        before = width("host")
        handle = self.driver.find_element(By.CSS_SELECTOR, "#sequence-head .c-host .col-resize")
        ActionChains(self.driver).click_and_hold(handle).move_by_offset(90, 0).release().perform()
        self.until(lambda: abs(width("host") - (before + 90)) <= 3, lambda: f"host column dragged from {before} to {width('host')}")
        row_host = self.js("return document.querySelector('#sequence-spacer .row:not([hidden]) .c-host').getBoundingClientRect().width")
        assert abs(row_host - width("host")) <= 1, (row_host, width("host"))
        self.driver.find_element(By.ID, "columns-button").click()
        self.until(lambda: self.driver.find_elements(By.ID, "column-type"), "column menu")
        self.driver.find_element(By.ID, "column-type").click()
        self.until(lambda: not self.js("return document.querySelector('#sequence-head .c-type').offsetParent"), "Type hidden")
        assert self.js("return document.querySelector('#sequence-spacer .row:not([hidden]) .c-type').offsetParent") is None
        self.shot("sequence-columns")
        # Remembered by this browser.
        self.driver.refresh()
        self.until(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#sequence-head .c-host"), "page again")
        assert abs(width("host") - (before + 90)) <= 3, width("host")
        assert self.js("return document.querySelector('#sequence-head .c-type').offsetParent") is None
        assert json.loads(self.js("return localStorage.getItem('kagami.columns')"))["hidden"] == ["type"]

    def test_inspector_split_version_column_and_svg_icons(self):
        curl(self.kagami.proxy, f"{self.base}/layout/split")
        self.fresh()
        self.select("/layout/split")
        inspector_width = lambda: self.js("return document.getElementById('inspector').getBoundingClientRect().width")
        list_width = lambda: self.js("return document.getElementById('list-pane').getBoundingClientRect().width")
        before = inspector_width()
        handle = self.driver.find_element(By.ID, "splitter")
        assert handle.is_displayed()
        ActionChains(self.driver).click_and_hold(handle).move_by_offset(250, 0).release().perform()
        self.until(lambda: abs(inspector_width() - (before - 250)) <= 4, lambda: f"inspector dragged from {before} to {inspector_width()}")
        assert list_width() > 900, list_width()
        # Host and Path are no longer cut to a few characters beside the inspector.
        host = self.driver.find_element(By.CSS_SELECTOR, "#sequence-spacer .row.selected .c-host")
        assert self.js("return arguments[0].scrollWidth <= arguments[0].clientWidth", host), host.text
        # The inspector's tabs are one row.
        tops = self.js("return [...document.querySelectorAll('#inspector .tabs > button')].map(b => Math.round(b.getBoundingClientRect().top))")
        assert len(set(tops)) == 1, tops
        # The HTTP version is an optional column, off until chosen, then remembered.
        assert self.js("return document.querySelector('#sequence-head .c-version').offsetParent") is None
        self.driver.find_element(By.ID, "columns-button").click()
        self.until(lambda: self.driver.find_elements(By.ID, "column-version"), "column menu")
        self.driver.find_element(By.ID, "column-version").click()
        self.until(lambda: self.js("return document.querySelector('#sequence-spacer .row.selected .c-version').textContent") == "1.1", "the version column shows 1.1")
        # Icons are SVG drawn with the text's colour, not emoji that need an emoji font.
        assert self.driver.find_elements(By.CSS_SELECTOR, "#columns-button svg.icon-menu")
        assert self.driver.find_elements(By.CSS_SELECTOR, "#context-menu svg.icon-check")
        self.driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
        emoji = self.js("return [...document.body.innerText].filter(c => c.codePointAt(0) >= 0x1F000).join('')")
        assert emoji == "", emoji
        self.shot("inspector-split-version-column")
        # Remembered by this browser.
        self.driver.refresh()
        self.until(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#sequence-head .c-version"), "page again")
        self.until(lambda: self.js("return document.querySelector('#sequence-head .c-version').offsetParent") is not None, "version column kept")
        self.select("/layout/split")
        assert abs(inspector_width() - (before - 250)) <= 4, (inspector_width(), before)
        assert int(float(self.js("return localStorage.getItem('kagami.inspectorWidth')"))) == round(inspector_width())

    def test_rules_column_and_applied_rules_name_the_side(self):
        headers = curl(self.kagami.proxy, f"{self.base}/ruled/page", "-D", "-", "-o", os.devnull)
        assert "X-Tagged: yes" in headers, headers
        self.fresh()
        self.select("/ruled/page")
        badge = self.driver.find_element(By.CSS_SELECTOR, "#sequence-spacer .row.selected .c-rules .badge")
        fits = self.js("""const b = arguments[0], pane = document.getElementById('list-pane').getBoundingClientRect();
                          return b.getBoundingClientRect().right <= pane.right && b.scrollWidth <= b.clientWidth + 1""", badge)
        assert fits and badge.text == "Rewrite 'tagging'", f"the Rules badge is whole beside the inspector: {badge.text!r}"
        applied = self.driver.find_element(By.ID, "applied-rules").text
        assert "added request header X-Tagged" in applied and "added response header X-Tagged" in applied, applied
        self.shot("inspector-applied-rules-sides")

    def test_filter_closes_an_exchange_it_hides(self):
        curl(self.kagami.proxy, f"{self.base}/filtered/one")
        curl(self.kagami.proxy, f"{self.base}/filtered/two")
        self.fresh()
        self.select("/filtered/one")
        self.filter("/filtered/two")
        self.until(lambda: not self.driver.find_element(By.ID, "inspector").is_displayed(), "the inspector closes")
        self.filter("/filtered/")
        assert not self.driver.find_element(By.ID, "inspector").is_displayed()

    def test_grpc_status_in_the_list_and_the_filter(self):
        # grpcio's client and server (h2c inside a CONNECT tunnel the proxy reads): one call
        # that succeeds, one the server fails with NOT_FOUND in an HTTP 200.
        peer = os.path.join(os.path.dirname(__file__), "..", "GRPC", "grpc_peer.py")
        server = subprocess.Popen([sys.executable, peer, "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            port = int(server.stdout.readline().split()[1])
            done = subprocess.run([sys.executable, peer, "call", "--target", f"127.0.0.1:{port}", "--proxy", self.kagami.proxy,
                                   "--only", "unary,fail"], capture_output=True, text=True, timeout=60)
            report = json.loads(done.stdout.strip().splitlines()[-1])
            assert report["fail"]["code"] == "NOT_FOUND", (report, done.stderr)
        finally:
            server.stdin.close()
            server.wait(timeout=30)
        curl(self.kagami.proxy, f"{self.base}/not-grpc/grpc-status")
        self.fresh()
        status = lambda part: self.row(part).find_element(By.CSS_SELECTOR, ".c-status")
        failed = status("/kagami.test.Echo/Fail")
        assert failed.text == "NOT_FOUND" and "grpc-failed" in failed.get_attribute("class"), (failed.text, failed.get_attribute("class"))
        assert failed.get_attribute("title") == "HTTP 200, gRPC NOT_FOUND (5)", failed.get_attribute("title")
        unary = status("/kagami.test.Echo/Unary")
        assert unary.text == "200" and "s2" in unary.get_attribute("class"), unary.text
        paths = lambda: sorted(self.js("return [...document.querySelectorAll('#sequence-spacer .row:not([hidden]) .c-path')].map(c => c.textContent)"))
        for words, expected in (
            ("grpc", ["/kagami.test.Echo/Fail", "/kagami.test.Echo/Unary"]),
            ("grpc.status:5", ["/kagami.test.Echo/Fail"]),
            ("grpc.status:not_found", ["/kagami.test.Echo/Fail"]),
            ("grpc -grpc.status:0", ["/kagami.test.Echo/Fail"]),
            ("grpc.method:Echo/Unary", ["/kagami.test.Echo/Unary"]),
            ("grpc.method:kagami.test.Echo/*", ["/kagami.test.Echo/Fail", "/kagami.test.Echo/Unary"]),
            ("-grpc grpc-status", ["/not-grpc/grpc-status"]),
        ):
            self.filter(words)
            self.until(lambda: paths() == expected, lambda: f"{words!r} shows {paths()}, not {expected}")
            if words == "grpc":
                self.shot("sequence-grpc-status")
        self.filter("")

    def test_placeholders_look_like_hints(self):
        self.fresh()
        self.driver.find_element(By.ID, "view-rules").click()
        self.until(lambda: self.driver.find_elements(By.ID, "add-mapLocal"), "rules editor")
        self.driver.find_element(By.ID, "add-mapLocal").click()
        path = self.driver.find_element(By.CSS_SELECTOR, '[data-field="mapLocal[0].from.path"] input')
        assert path.get_attribute("value") == "" and path.get_attribute("placeholder") == "/api/*"
        style = self.js("const s = getComputedStyle(arguments[0], '::placeholder'); return [s.fontStyle, s.opacity]", path)
        assert style[0] == "italic" and float(style[1]) < 1, style

    def test_row_menu_copies(self):
        curl(self.kagami.proxy, f"{self.base}/api/users.json?menu=copy")
        self.fresh()
        row = self.row("menu=copy")
        self.capture_clipboard()
        self.menu(row, "menu-copy-url")
        assert self.copied(1) == f"{self.base}/api/users.json?menu=copy", self.copied(1)
        self.until(lambda: "Copied URL" in self.text_of("banner"), "the banner says what was copied")
        self.menu(row, "menu-copy-curl")
        status, expected = api(self.kagami.ui, "GET", f"/api/flows/{self.flow_id()}/curl")
        assert self.copied(2) == expected.rstrip("\n"), (self.copied(2), expected)
        self.menu(row, "menu-copy-response")
        response = self.copied(3)
        assert response.startswith("HTTP/1.1 200 OK\r\n") and '"name": "Ada"' in response, response[:300]
        # The ⋯ button opens the same menu; with the Clipboard API refused, the fallback copies.
        self.capture_clipboard(clipboard_works=False)
        self.js("arguments[0].querySelector('.row-menu').click()", row)
        self.until(lambda: self.js("return !document.getElementById('context-menu').hidden"), "⋯ menu open")
        self.shot("row-menu")
        self.driver.find_element(By.ID, "menu-copy-url").click()
        assert self.copied(1) == f"{self.base}/api/users.json?menu=copy", self.copied(1)
        # The keyboard: the first item has the focus, arrows move, Enter chooses, Escape closes.
        self.capture_clipboard()
        self.js("arguments[0].querySelector('.row-menu').click()", row)
        self.until(lambda: self.js("return document.activeElement.id") == "menu-copy-url", "the first item focused")
        ActionChains(self.driver).send_keys(Keys.ARROW_DOWN).send_keys(Keys.ENTER).perform()
        assert self.copied(1) == expected.rstrip("\n"), self.copied(1)
        self.js("arguments[0].querySelector('.row-menu').click()", row)
        self.until(lambda: self.js("return !document.getElementById('context-menu').hidden"), "open again")
        ActionChains(self.driver).send_keys(Keys.ESCAPE).perform()
        self.until(lambda: self.js("return document.getElementById('context-menu').hidden"), "Escape closes it")
        # The inspector's Copy Response is one click too.
        self.capture_clipboard()
        self.select("menu=copy")
        self.driver.find_element(By.ID, "copy-response").click()
        assert self.copied(1) == response

    def test_row_menu_repeat_and_compose_from_this(self):
        curl(self.kagami.proxy, f"{self.base}/menu/repeat?n=1")
        self.fresh()
        self.menu(self.row("/menu/repeat"), "menu-repeat")
        self.filter("/menu/repeat")
        self.until(lambda: len(self.rows()) == 2 and "Repeat" in self.rows()[1], lambda: f"the repeat is listed: {self.rows()}")
        first = self.driver.find_element(By.CSS_SELECTOR, '#sequence-spacer .row[data-position="0"]')
        self.menu(first, "menu-repeat-advanced")
        self.until(lambda: self.js("return document.getElementById('repeat-dialog').open"), "Repeat Advanced opens")
        assert self.text_of("repeat-target") == f"GET {self.base}/menu/repeat?n=1", self.text_of("repeat-target")
        self.driver.find_element(By.ID, "repeat-close").click()
        self.menu(first, "menu-compose")
        self.until(lambda: self.js("return document.getElementById('compose-dialog').open"), "Compose opens")
        assert self.driver.find_element(By.ID, "compose-url").get_attribute("value") == f"{self.base}/menu/repeat?n=1"
        assert self.driver.find_element(By.ID, "compose-method").get_attribute("value") == "GET"
        assert "User-Agent: curl" in self.driver.find_element(By.ID, "compose-headers").get_attribute("value")
        self.driver.find_element(By.ID, "compose-cancel").click()
        # From a form post: the fields come back as form lines, and Send records a new exchange.
        curl(self.kagami.proxy, f"{self.base}/menu/form", "-d", "name=Ada+Lovelace&lang=en")
        self.menu(self.row("/menu/form"), "menu-compose")
        self.until(lambda: self.driver.find_elements(By.ID, "compose-form"), "a form body")
        assert self.driver.find_element(By.ID, "compose-form").get_attribute("value") == "name=Ada Lovelace\nlang=en"
        assert "Content-Length" not in self.driver.find_element(By.ID, "compose-headers").get_attribute("value")
        self.driver.find_element(By.ID, "compose-send").click()
        # The dialog stays open (modal) until the proxy has answered.
        self.until(lambda: not self.js("return document.getElementById('compose-dialog').open"), "Compose closes once answered")
        self.filter("/menu/form")
        self.until(lambda: len(self.rows()) == 2, "the composed copy is recorded")
        # Only the composed exchange is chosen and shown: the row the menu came from lets go.
        lit = ("return [...document.querySelectorAll('#sequence-spacer .row:not([hidden])')]"
               ".filter(r => r.classList.contains('selected') || r.classList.contains('marked')).map(r => r.dataset.position)")
        self.until(lambda: self.js(lit) == ["1"], lambda: f"one highlighted row, the new one: {self.js(lit)}")

    def test_row_menu_rules_open_prefilled(self):
        curl(self.kagami.proxy, f"{self.base}/menu/local.json")
        self.fresh()
        # Map Local: the location filled in; the response saved as the local file.
        self.menu(self.row("/menu/local.json"), "menu-map-local")
        rules = self.driver.find_element(By.ID, "rules")
        self.until(lambda: rules.is_displayed() and rules.find_elements(By.CSS_SELECTOR, '[data-field="mapLocal[0]"]'), "the Rules view with a new Map Local rule")
        assert self.value(rules, "mapLocal[0].from.host") == "127.0.0.1"
        assert self.value(rules, "mapLocal[0].from.port") == str(self.origin.server_address[1])
        assert self.value(rules, "mapLocal[0].from.path") == "/menu/local.json"
        assert self.value(rules, "mapLocal[0].from.protocol") == "http"
        local = os.path.join(self.workdir, "local", "answer.txt")
        self.type_into(self.field(rules, "mapLocal[0].local"), local)
        rules.find_element(By.CSS_SELECTOR, ".map-local-save").click()
        self.until(lambda: "Saved" in rules.find_element(By.CSS_SELECTOR, ".map-local-outcome").text, "the response saved as the file")
        with open(local) as file:
            assert file.read() == "hello from /menu/local.json\n"
        self.shot("map-local-from-menu")
        with open(local, "a") as file:
            file.write("and from the local file\n")
        self.driver.find_element(By.ID, "rules-save").click()
        self.until(lambda: "Saved" in self.text_of("rules-state"), "rules saved")
        assert curl(self.kagami.proxy, f"{self.base}/menu/local.json").endswith("and from the local file\n")
        # Block host, Map Remote and Breakpoint here, from a row and from a Structure node.
        self.driver.find_element(By.ID, "view-sequence").click()
        curl(self.kagami.proxy, f"{self.base}/status/404")
        self.menu(self.row("/status/404"), "menu-block-host")
        self.until(lambda: self.driver.find_elements(By.CSS_SELECTOR, '#rules [data-field="blockList[0]"]'), "a new block rule")
        rules = self.driver.find_element(By.ID, "rules")
        assert self.value(rules, "blockList[0].locations[0].host") == "127.0.0.1"
        self.driver.find_element(By.ID, "rules-revert").click()
        self.driver.find_element(By.ID, "view-structure").click()
        self.until(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#structure > details > summary"), "structure")
        self.driver.find_element(By.CSS_SELECTOR, "#structure > details > summary").click()
        node = self.until(lambda: next((s for s in self.driver.find_elements(By.CSS_SELECTOR, "#structure details details > summary")
                                        if s.text.startswith("status")), None), "the status node")
        self.menu(node, "menu-map-remote")
        self.until(lambda: self.driver.find_elements(By.CSS_SELECTOR, '#rules [data-field="mapRemote[0]"]'), "a new Map Remote rule")
        rules = self.driver.find_element(By.ID, "rules")
        assert self.value(rules, "mapRemote[0].from.path") == "/status/*", self.value(rules, "mapRemote[0].from.path")
        self.driver.find_element(By.ID, "rules-revert").click()
        self.driver.find_element(By.ID, "view-sequence").click()
        self.menu(self.row("/status/404"), "menu-breakpoint")
        panel = self.driver.find_element(By.ID, "breakpoints")
        self.until(lambda: panel.is_displayed() and panel.find_elements(By.CSS_SELECTOR, '[data-field="breakpoints[0]"]'), "a new breakpoint")
        assert self.value(panel, "breakpoints[0].location.path") == "/status/404"
        assert self.field(panel, "breakpoints[0].response").is_selected()
        self.driver.find_element(By.ID, "breakpoints-revert").click()

    def test_compose_sends_through_the_proxy(self):
        self.fresh()
        self.driver.find_element(By.ID, "compose").click()
        self.until(lambda: self.js("return document.getElementById('compose-dialog').open"), "Compose opens")
        self.type_into(self.driver.find_element(By.ID, "compose-method"), "POST")
        self.type_into(self.driver.find_element(By.ID, "compose-url"), f"{self.base}/ruled/compose")
        self.type_into(self.driver.find_element(By.ID, "compose-headers"), "X-From: the compose box")
        self.js("const s = document.getElementById('compose-body-kind'); s.value = 'json'; s.dispatchEvent(new Event('change'))")
        body = self.until(lambda: self.driver.find_element(By.ID, "compose-body"), "JSON body box")
        body.send_keys('{"name": "Ada",')
        self.until(lambda: "Not valid JSON" in self.text_of("compose-json-state"), "invalid JSON is named")
        assert not self.driver.find_element(By.ID, "compose-send").is_enabled()
        body.send_keys(' "n": 1}')
        self.until(lambda: self.text_of("compose-json-state") == "Valid JSON.", "valid JSON")
        self.shot("compose")
        self.driver.find_element(By.ID, "compose-send").click()
        self.until(lambda: not self.js("return document.getElementById('compose-dialog').open"), "sent")
        self.until(lambda: "/ruled/compose" in self.text_of("overview-url"), "the composed exchange is selected")
        assert "Composed" in self.js("return document.querySelector('#sequence-spacer .row.selected').innerText")
        self.tab("response")
        self.until(lambda: self.driver.find_elements(By.ID, "response-headers"), "response")
        # Rules acted on it (the rewrite of /ruled/*), and the origin got the JSON.
        assert "X-Tagged" in self.driver.find_element(By.ID, "response-headers").text
        self.until(lambda: "received" in self.driver.find_element(By.ID, "response-body").text, "the origin's answer")
        assert "Ada" in self.driver.find_element(By.ID, "response-body").text
        self.tab("request")
        self.until(lambda: self.driver.find_elements(By.ID, "request-headers"), "request")
        headers = self.driver.find_element(By.ID, "request-headers").text
        assert "X-From" in headers and "application/json" in headers and "X-Tagged" in headers, headers
        # A form body, and a refused URL named next to its field.
        self.driver.find_element(By.ID, "compose").click()
        self.until(lambda: self.js("return document.getElementById('compose-dialog').open"), "Compose opens again")
        self.type_into(self.driver.find_element(By.ID, "compose-url"), "ftp://127.0.0.1/x")
        self.driver.find_element(By.ID, "compose-send").click()
        self.until(lambda: "only http:// and https://" in self.text_of("compose-error"), "the refusal shown")
        self.type_into(self.driver.find_element(By.ID, "compose-method"), "POST")
        self.type_into(self.driver.find_element(By.ID, "compose-url"), f"{self.base}/forms/composed")
        self.js("const s = document.getElementById('compose-body-kind'); s.value = 'form'; s.dispatchEvent(new Event('change'))")
        self.until(lambda: self.driver.find_elements(By.ID, "compose-form"), "form box")
        self.driver.find_element(By.ID, "compose-form").send_keys("name=Grace Hopper\nlang=en")
        self.driver.find_element(By.ID, "compose-send").click()
        self.until(lambda: "/forms/composed" in self.js("const r = document.querySelector('#sequence-spacer .row.selected'); return r ? r.innerText : ''"),
                   "the form exchange selected")
        self.tab("request")
        self.until(lambda: "Grace Hopper" in self.driver.find_element(By.ID, "form-params").text, "the form fields sent")
        # A file as the body.
        upload = os.path.join(self.workdir, "upload.txt")
        with open(upload, "w") as file:
            file.write("a file from the disk")
        self.driver.find_element(By.ID, "compose").click()
        self.until(lambda: self.js("return document.getElementById('compose-dialog').open"), "Compose opens for a file")
        self.type_into(self.driver.find_element(By.ID, "compose-method"), "POST")
        self.type_into(self.driver.find_element(By.ID, "compose-url"), f"{self.base}/files/up")
        self.js("const s = document.getElementById('compose-body-kind'); s.value = 'file'; s.dispatchEvent(new Event('change'))")
        self.until(lambda: self.driver.find_elements(By.ID, "compose-file"), "file input")
        self.driver.find_element(By.ID, "compose-file").send_keys(upload)
        self.until(lambda: "upload.txt, 20 bytes" in self.text_of("compose-file-name"), "the file read")
        self.driver.find_element(By.ID, "compose-send").click()
        self.until(lambda: "/files/up" in self.js("const r = document.querySelector('#sequence-spacer .row.selected'); return r ? r.innerText : ''"),
                   "the file exchange selected")
        status, flow = api(self.kagami.ui, "GET", f"/api/flows/{self.flow_id()}/response/body")
        assert status == 200 and flow == {"received": "a file from the disk"}, (status, flow)

    def test_ipv6_hosts_are_written_in_brackets(self):
        class V6(ThreadingHTTPServer):
            address_family = socket.AF_INET6
        server = V6(("::1", 0), origin.Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            port = server.server_address[1]
            curl(self.kagami.proxy, f"http://[::1]:{port}/v6/page")
            self.fresh()
            row = self.row("/v6/page")
            assert f"[::1]:{port}" in row.text, row.text
            self.select("/v6/page")
            assert self.text_of("overview-url").startswith(f"http://[::1]:{port}/v6/page"), self.text_of("overview-url")
        finally:
            server.shutdown()
            server.server_close()

    def test_raw_tab(self):
        curl(self.kagami.proxy, f"{self.base}/forms/raw", "-d", "name=Ada+Lovelace&lang=en")
        self.fresh()
        self.select("/forms/raw")
        self.tab("raw")
        self.until(lambda: "name=Ada+Lovelace" in self.text_of("raw-request"), "the raw request")
        request = self.text_of("raw-request")
        assert request.startswith("POST /forms/raw HTTP/1.1\r\n"), request[:80]
        assert "\r\nContent-Type: application/x-www-form-urlencoded\r\n" in request and request.endswith("\r\n\r\nname=Ada+Lovelace&lang=en"), request
        self.until(lambda: "received" in self.text_of("raw-response"), "the raw response")
        response = self.text_of("raw-response")
        assert response.startswith("HTTP/1.1 201 Created\r\n") and '{"received": "name=Ada+Lovelace&lang=en"}' in response, response
        self.shot("inspector-raw")
        self.capture_clipboard()
        self.driver.find_element(By.ID, "raw-response-copy").click()
        assert self.copied(1) == response

    def test_ssl_proxying_panel_says_whether_its_file_exists(self):
        self.fresh()
        os.remove(self.ssl_file)
        self.driver.find_element(By.ID, "view-ssl").click()
        expected = f"Will be saved to {self.ssl_file} (not written yet); a change applies to the next CONNECT."
        self.until(lambda: self.text_of("ssl-file") == expected, lambda: f"the panel says the file is not written: {self.text_of('ssl-file')!r}")
        self.shot("ssl-proxying-no-file")
        self.type_into(self.driver.find_element(By.ID, "ssl-exclude"), "*.apple.com")
        self.driver.find_element(By.ID, "ssl-save").click()
        self.until(lambda: self.text_of("ssl-state") == "In force", "saved")
        assert self.text_of("ssl-file") == f"Saved to {self.ssl_file}; a change applies to the next CONNECT.", self.text_of("ssl-file")
        with open(self.ssl_file) as file:
            assert json.load(file) == {"include": [], "exclude": ["*.apple.com"]}

    def test_ssl_proxying_panel_from_a_connect_row(self):
        url = f"https://127.0.0.1:{self.tls_port}/secure/page"
        assert curl(self.kagami.proxy, url, "-k") == "hello from /secure/page\n"
        self.fresh()
        # Excluded: one CONNECT row, relayed without decrypting.
        tunnel = self.row(f"127.0.0.1:{self.tls_port} method:CONNECT")
        assert "tunnel" in self.rows()[0] and tunnel.find_elements(By.CSS_SELECTOR, ".c-scheme svg.icon-lock"), self.rows()
        title = tunnel.find_element(By.CSS_SELECTOR, ".c-scheme").get_attribute("title")
        assert title == "HTTPS tunnel, relayed without decrypting", title
        # Rules that act on requests can't act on a tunnel never decrypted: offered, but off.
        ActionChains(self.driver).context_click(tunnel).perform()
        self.until(lambda: self.js("return !document.getElementById('context-menu').hidden"), "context menu open")
        off = self.js("return ['menu-map-local', 'menu-map-remote', 'menu-breakpoint', 'menu-block-host'].map(id => document.getElementById(id).disabled)")
        assert off == [True, True, True, False], off
        self.driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
        self.menu(tunnel, "menu-ssl-include")
        panel = self.driver.find_element(By.ID, "ssl")
        self.until(lambda: panel.is_displayed() and self.driver.find_elements(By.ID, "ssl-include"), "the SSL Proxying panel")
        # The host leaves the exclude list; the include list stays empty (every host), so no
        # other host stops being decrypted.
        assert self.driver.find_element(By.ID, "ssl-include").get_attribute("value") == ""
        assert self.driver.find_element(By.ID, "ssl-exclude").get_attribute("value") == ""
        assert "Unsaved" in self.text_of("ssl-state")
        assert self.text_of("ssl-summary") == "Decrypted: every host (once saved).", self.text_of("ssl-summary")
        self.shot("ssl-proxying")
        self.driver.find_element(By.ID, "ssl-save").click()
        self.until(lambda: self.text_of("ssl-state") == "In force", "saved")
        assert self.text_of("ssl-summary") == "Decrypted: every host.", self.text_of("ssl-summary")
        with open(self.ssl_file) as file:
            assert json.load(file) == {"include": [], "exclude": []}
        # The next CONNECT is decrypted: the request itself is listed, with its lock.
        assert curl(self.kagami.proxy, url + "?again=1", "-k") == "hello from /secure/page\n"
        self.driver.find_element(By.ID, "view-sequence").click()
        self.select("again=1")
        row = self.rows()[0]
        assert "https" in row and "/secure/page?again=1" in row, row
        assert self.driver.find_elements(By.CSS_SELECTOR, "#sequence-spacer .row.selected .c-scheme svg.icon-lock"), "the lock beside https"
        self.until(lambda: "Server certificate checked" in self.driver.find_element(By.ID, "inspector").text, "TLS details")
        label = self.js("return [...document.querySelectorAll('#inspector td')].find(td => td.textContent === 'Server certificate checked')")
        # Wrapped (if at all) between words, never inside one.
        lines = self.js("""const td = arguments[0], range = document.createRange(), words = td.textContent.split(' ');
            let at = 0; const tops = [];
            for (const word of words) { range.setStart(td.firstChild, at); range.setEnd(td.firstChild, at + word.length);
              tops.push([...range.getClientRects()].map(r => Math.round(r.top))); at += word.length + 1; }
            return tops""", label)
        assert all(len(set(tops)) == 1 for tops in lines), f"a word split across lines: {lines}"
        # Over HTTP/2 (curl offers h2 inside the decrypted tunnel), Raw names the frames.
        assert curl(self.kagami.proxy, url + "?h2=1", "-k", "--http2") == "hello from /secure/page\n"
        self.select("h2=1")
        self.tab("raw")
        self.until(lambda: self.text_of("raw-request").startswith("# HTTP/2 stream"), lambda: f"an HTTP/2 frames line: {self.text_of('raw-request')[:120]!r}")
        request = self.text_of("raw-request")
        assert "HEADERS, END_STREAM\r\n:method: GET\r\n:scheme: https\r\n" in request, request
        assert f":authority: 127.0.0.1:{self.tls_port}\r\n:path: /secure/page?h2=1\r\n" in request, request
        # curl sent no Host over HTTP/2 (:authority stands for it): none is shown.
        assert "\r\nhost:" not in request.lower(), request
        self.tab("overview")
        # A refused host pattern is named.
        self.driver.find_element(By.ID, "view-ssl").click()
        self.type_into(self.driver.find_element(By.ID, "ssl-exclude"), "api.example:99999")
        self.driver.find_element(By.ID, "ssl-save").click()
        self.until(lambda: "exclude[0]" in self.text_of("ssl-error"), "the bad entry named")
        self.driver.find_element(By.ID, "ssl-revert").click()

    def test_device_setup_panel(self):
        import zxingcpp
        from PIL import Image
        self.fresh()
        self.driver.find_element(By.ID, "view-device").click()
        self.until(lambda: self.driver.find_elements(By.ID, "device-qr"), "the device panel")
        port = self.kagami.proxy.rsplit(":", 1)[1]
        assert self.text_of("device-port") == port
        # Listening on loopback only: the panel says how to listen on the network.
        assert "kagami proxy --host 0.0.0.0" in self.text_of("device-not-listening")
        text = self.driver.find_element(By.ID, "device").text
        assert "Certificate Trust Settings" in text and "Configure Proxy → Manual" in text and "Install a certificate" in text, text
        simctl = self.text_of("device-simctl")
        assert simctl == f"xcrun simctl keychain booted add-root-cert {os.path.join(self.workdir, 'ca')}/" + simctl.rsplit("/", 1)[1], simctl
        assert simctl.endswith(".pem"), simctl
        status, info = api(self.kagami.ui, "GET", "/api/status")
        qr = self.driver.find_element(By.CSS_SELECTOR, "#device-qr svg")
        self.js("arguments[0].scrollIntoView({block: 'center'})", qr)
        picture = os.path.join(self.workdir, "qr.png")
        with open(picture, "wb") as file:
            file.write(qr.screenshot_as_png)
        decoded = [result.text for result in zxingcpp.read_barcodes(Image.open(picture))]
        assert decoded == [info["caURL"]], (decoded, info["caURL"])
        self.shot("device-setup")
        # The encoder across its versions: several blocks (version 5), version information (7, 10).
        for length in (90, 150, 200):
            text = f"http://127.0.0.1:8888/{'x' * length}"[:length]
            self.driver.execute_async_script("""const [text, done] = arguments;
                import('./qr.js').then((qr) => { document.getElementById('qr-check')?.remove();
                  const holder = document.createElement('div'); holder.id = 'qr-check'; holder.style.cssText = 'position:fixed;top:0;left:0;z-index:99;background:#fff';
                  holder.append(qr.qrSVG(text, 3)); document.body.append(holder); done(); });""", text)
            with open(picture, "wb") as file:
                file.write(self.driver.find_element(By.CSS_SELECTOR, "#qr-check svg").screenshot_as_png)
            decoded = [result.text for result in zxingcpp.read_barcodes(Image.open(picture))]
            assert decoded == [text], (length, decoded)
        # A proxy listening on every interface lists the machine's addresses (nothing connects to them).
        wide = Kagami(self.binary, tempfile.mkdtemp(prefix="kagami-wide-"), extra=["--host", "0.0.0.0"])
        try:
            status, device = api(wide.ui, "GET", "/api/device")
            assert status == 200 and device["listenHost"] == "0.0.0.0", device
            assert all(not a["address"].startswith("127.") for a in device["addresses"]), device
            self.driver.get(wide.ui)
            self.until(lambda: "Live" in self.driver.find_element(By.ID, "connection").text, "connected")
            # Its empty session's first screen gives the address a device uses.
            self.until(lambda: self.driver.find_element(By.ID, "empty").is_displayed(), "the empty state")
            if device["addresses"]:
                self.until(lambda: "From a device on the network" in self.text_of("empty-proxy"), "the network address in the empty state")
                assert f"{device['addresses'][0]['address']}:{device['port']}" in self.text_of("empty-proxy"), self.text_of("empty-proxy")
            self.driver.find_element(By.ID, "view-device").click()
            if device["addresses"]:
                self.until(lambda: self.driver.find_elements(By.ID, "device-addresses"), "addresses listed")
                listed = self.text_of("device-addresses")
                for address in device["addresses"]:
                    assert f"{address['address']}:{device['port']}" in listed, listed
        finally:
            wide.stop()

    def flow_id_of(self, path):
        """The id of the newest exchange whose path is `path`, from the admin API."""
        status, body = api(self.kagami.ui, "GET", "/api/flows")
        assert status == 200, body
        ids = [flow["id"] for flow in body["flows"] if flow["path"] == path]
        assert ids, f"no exchange {path} in {[flow['path'] for flow in body['flows']]}"
        return ids[-1]

    def note(self, text, flow=None):
        status, note = api(self.kagami.ui, "POST", "/api/notes", {"text": text, "author": "daily test", **({"flow": flow} if flow else {})})
        assert status == 201, note
        return note

    def notes_shown(self):
        return self.js("return [...document.querySelectorAll('#notes .note')].map(n => n.innerText.replace(/\\n/g, ' '))")

    def test_notes_load_with_the_page_and_mark_their_exchange(self):
        curl(self.kagami.proxy, f"{self.base}/notes/loaded")
        flow = self.flow_id_of("/notes/loaded")
        note = self.note("added a Map Local rule 'loaded'", flow)
        self.fresh()
        self.until(lambda: any("added a Map Local rule 'loaded'" in n for n in self.notes_shown()), lambda: f"the note in the strip: {self.notes_shown()}")
        shown = self.js("return document.querySelector(`#notes .note[data-id='${arguments[0]}']`).innerText", note["id"])
        assert "daily test" in shown and shown[:8] == self.js("return new Date(arguments[0]).toTimeString().slice(0, 8)", note["time"]), shown
        status, listed = api(self.kagami.ui, "GET", "/api/notes")
        assert self.text_of("notes-count") == str(len(listed["notes"])), (self.text_of("notes-count"), listed)
        # A note is not a row: the list counts and shows exchanges only.
        rows = self.rows()
        assert not any("added a Map Local rule" in row for row in rows), rows
        assert self.count_text() == f"{len(rows)} exchanges", (self.count_text(), len(rows))
        # The exchange it is about carries a badge that says so.
        row = self.row("/notes/loaded")
        badge = row.find_element(By.CSS_SELECTOR, ".c-rules .note-mark")
        assert badge.text == "Note" and "added a Map Local rule 'loaded'" in badge.get_attribute("title"), badge.get_attribute("title")
        # The strip folds to a line that counts the notes, and opens again; the toolbar, with the
        # count on the Sequence tab, stays one row.
        self.filter("")
        self.driver.find_element(By.ID, "notes-toggle").click()
        self.until(lambda: not self.js("return document.querySelector('#notes .notes-list').offsetParent"), "strip folded")
        assert self.js("return document.querySelector('#notes .notes-summary').textContent").startswith(f"{len(listed['notes'])} note"), self.text_of("notes")
        self.driver.find_element(By.ID, "notes-toggle").click()
        self.until(lambda: self.js("return !!document.querySelector('#notes .notes-list').offsetParent"), "strip shown again")
        centres = self.js("""return [...document.querySelectorAll('header.toolbar > *')].filter(e => e.offsetParent)
            .map(e => { const r = e.getBoundingClientRect(); return r.top + r.height / 2; })""")
        assert max(centres) - min(centres) < 8, f"toolbar in one row: {centres}"

    def test_a_note_arrives_live_after_the_exchanges_before_it(self):
        curl(self.kagami.proxy, f"{self.base}/notes/before")
        self.fresh()
        before = len(self.notes_shown())
        self.note("put scenario 'empty' in force")
        self.until(lambda: len(self.notes_shown()) == before + 1, lambda: f"the live note: {self.notes_shown()}")
        assert "put scenario 'empty' in force" in self.notes_shown()[-1], self.notes_shown()
        assert self.text_of("notes-count") == str(before + 1), self.text_of("notes-count")
        # A later one goes after it: the strip is in time order.
        self.note("released a held exchange")
        self.until(lambda: len(self.notes_shown()) == before + 2, "the second live note")
        assert "released a held exchange" in self.notes_shown()[-1] and "put scenario 'empty' in force" in self.notes_shown()[-2], self.notes_shown()
        times = self.js("return [...document.querySelectorAll('#notes .note')].map(n => n.querySelector('.note-time').textContent)")
        assert times == sorted(times), times

    def test_clicking_a_note_selects_its_exchange(self):
        curl(self.kagami.proxy, f"{self.base}/notes/target")
        flow = self.flow_id_of("/notes/target")
        for index in range(40):
            curl(self.kagami.proxy, f"{self.base}/notes/after/{index}")
        self.note("added a breakpoint on /notes/target", flow)
        self.fresh()
        self.select("/notes/after/39")
        self.filter("")
        note = self.driver.find_element(By.CSS_SELECTOR, f"#notes .note[data-flow='{flow}']")
        note.click()
        self.until(lambda: self.js("const r = document.querySelector('#sequence-spacer .row.selected'); return r ? r.dataset.id : null") == flow,
                   "the note's exchange selected and scrolled into sight")
        self.until(lambda: "/notes/target" in self.text_of("overview-url"), "the inspector shows it")
        # A note about no exchange selects nothing.
        self.note("a note about nothing")
        self.until(lambda: any("a note about nothing" in n for n in self.notes_shown()), "the plain note")
        assert not self.js("return [...document.querySelectorAll('#notes .note')].pop().classList.contains('about')")

    def test_body_viewers(self):
        when = datetime.datetime(2026, 11, 29, 10, 0, 0)
        xml = plistlib.dumps({"name": "Ada", "roles": ["admin", "dev"], "count": 2, "ratio": 2.0, "when": when, "blob": b"\x01\x02"}, fmt=plistlib.FMT_XML)
        binary = plistlib.dumps({"device": "iPhone", "build": 42, "beta": True, "ratio": 2.0, "when": when}, fmt=plistlib.FMT_BINARY)
        files = {}
        for name, data in [("xml.plist", xml), ("binary.plist", binary), ("blob.bin", bytes(range(256))), ("note.txt", b"a note\n")]:
            files[name] = os.path.join(self.workdir, name)
            with open(files[name], "wb") as file:
                file.write(data)
        curl(self.kagami.proxy, f"{self.base}/bodies/xml-plist", "--data-binary", f"@{files['xml.plist']}", "-H", "Content-Type: application/x-plist")
        curl(self.kagami.proxy, f"{self.base}/bodies/binary-plist", "--data-binary", f"@{files['binary.plist']}", "-H", "Content-Type: application/octet-stream")
        curl(self.kagami.proxy, f"{self.base}/bodies/blob", "--data-binary", f"@{files['blob.bin']}", "-H", "Content-Type: application/octet-stream")
        curl(self.kagami.proxy, f"{self.base}/bodies/multipart", "-F", "name=Ada", "-F", f"note=@{files['note.txt']};type=text/plain")
        curl(self.kagami.proxy, f"{self.base}/bodies/form", "-d", "city=London&lang=en+GB")
        self.fresh()

        def request_body(part):
            self.select(part)
            self.tab("request")
            self.until(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#request-body .body-modes"), f"{part} body")
            return self.driver.find_element(By.ID, "request-body")

        body = request_body("/bodies/xml-plist")
        self.until(lambda: "XML property list" in body.text, "an XML plist read")
        assert '"name": "Ada"' in body.text and '"admin"' in body.text and '"count": 2 integer' in body.text, body.text
        # The plist's own types: a real is not an integer, a date and data say what they are.
        assert '"ratio": 2.0 real' in body.text and '"when": 2026-11-29T10:00:00Z date' in body.text, body.text
        assert '"blob": <0102> data' in body.text, body.text
        body = request_body("/bodies/binary-plist")
        self.until(lambda: "Binary property list" in body.text, "a binary plist read")
        assert '"device": "iPhone"' in body.text and '"build": 42 integer' in body.text and '"beta": true' in body.text, body.text
        assert '"ratio": 2.0 real' in body.text and '"when": 2026-11-29T10:00:00.000Z date' in body.text, body.text
        self.shot("inspector-plist")
        body = request_body("/bodies/blob")
        self.until(lambda: body.find_elements(By.CSS_SELECTOR, ".hex"), "binary as hex")
        assert body.find_element(By.CSS_SELECTOR, ".hex").text.startswith("00000000  00 01 02 03"), body.text[:80]
        body = request_body("/bodies/multipart")
        self.until(lambda: body.find_elements(By.CSS_SELECTOR, ".multipart .part"), "multipart parts")
        parts = [p.text for p in body.find_elements(By.CSS_SELECTOR, ".multipart .part")]
        assert len(parts) == 2 and parts[0].startswith("name") and "Ada" in parts[0], parts
        assert "file note.txt" in parts[1] and "a note" in parts[1], parts
        self.shot("inspector-multipart")
        body = request_body("/bodies/form")
        self.until(lambda: body.find_elements(By.CSS_SELECTOR, ".form-fields"), "form fields")
        assert "lang en GB" in body.find_element(By.CSS_SELECTOR, ".form-fields").text.replace("\n", " "), body.text

    def run(self):
        tests = [self.test_columns_scheme_lock_and_hover, self.test_columns_resize_hide_and_remembered,
                 self.test_rules_column_and_applied_rules_name_the_side, self.test_filter_closes_an_exchange_it_hides,
                 self.test_grpc_status_in_the_list_and_the_filter, self.test_inspector_split_version_column_and_svg_icons,
                 self.test_placeholders_look_like_hints, self.test_row_menu_copies, self.test_row_menu_repeat_and_compose_from_this,
                 self.test_row_menu_rules_open_prefilled, self.test_compose_sends_through_the_proxy, self.test_raw_tab, self.test_ipv6_hosts_are_written_in_brackets,
                 self.test_ssl_proxying_panel_from_a_connect_row, self.test_ssl_proxying_panel_says_whether_its_file_exists, self.test_device_setup_panel, self.test_body_viewers,
                 self.test_notes_load_with_the_page_and_mark_their_exchange, self.test_a_note_arrives_live_after_the_exchanges_before_it,
                 self.test_clicking_a_note_selects_its_exchange]
        only = os.environ.get("KAGAMI_UI_ONLY")
        if only:
            tests = [t for t in tests if only in t.__name__]
        self.run_tests(tests, "daily")

    def close(self):
        self.tls.shutdown()
        super().close()


def main():
    run_suite(Suite, "daily ui")


if __name__ == "__main__":
    main()
