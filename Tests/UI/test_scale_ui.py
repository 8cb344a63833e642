"""Browser tests of the web UI with a big session: 100,000 exchanges (`kagami import` of a
generated HTTP Archive before the proxy starts, kept in the ignored .build/ui-scale/ for the next
run) and live ones on top, in headless Chromium. Opening the session shows the newest rows from
the first page the API gives; the list holds at most its bound of rows (older ones are read in the
background, beyond the bound when asked); filtering asks the server when the page doesn't hold
every exchange. Scrolling from top to bottom is timed frame by frame (requestAnimationFrame), and
filtering as one types. Only generous bounds are asserted; the figures are printed.
Prints `scale ui tests: N passed, M failed`.

Usage: python Tests/UI/test_scale_ui.py [path/to/kagami]
Environment: KAGAMI_UI_SCALE_COUNT (100000) exchanges in the session.
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.dirname(__file__))
import origin  # noqa: E402
from page import ROOT, Page, percentile, run_suite, scroll_frames  # noqa: E402
from test_ui import Kagami, curl  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "bench", "ui"))
import har  # noqa: E402

COUNT = int(os.environ.get("KAGAMI_UI_SCALE_COUNT", "100000"))
HOSTS = 20
# The list's bound for the test of opening a session bigger than it (localStorage kagami.listBound).
SMALL_BOUND = max(1000, COUNT * 3 // 10)
LIVE = 20


def session_file(binary):
    """A session of COUNT generated exchanges, imported once and kept under .build/ui-scale/."""
    with open(har.__file__, "rb") as file:
        digest = hashlib.sha256(file.read()).hexdigest()[:12]
    folder = os.path.join(ROOT, ".build", "ui-scale")
    kept = os.path.join(folder, f"session-{COUNT}-{digest}.sqlite")
    if os.path.exists(kept):
        return kept
    os.makedirs(folder, exist_ok=True)
    work = tempfile.mkdtemp(prefix="kagami-scale-har-")
    try:
        started = time.time()
        archive = os.path.join(work, "session.har")
        har.write(COUNT, archive, hosts=HOSTS)
        partial = os.path.join(work, "session.sqlite")
        subprocess.run([binary, "import", archive, "--session", partial], check=True, capture_output=True, timeout=600)
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(partial + suffix):
                shutil.copyfile(partial + suffix, kept + ".part" + suffix)
        for suffix in ("-wal", "-shm", ""):
            if os.path.exists(kept + ".part" + suffix):
                os.replace(kept + ".part" + suffix, kept + suffix)
        print(f"imported {COUNT} exchanges in {time.time() - started:.1f} s (kept in {kept})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return kept


PAGE_STATE = """
const done = arguments[arguments.length - 1];
import(new URL('store.js', document.baseURI).href).then(({ state }) => done({
  flows: state.flows.length, visible: state.visible.length, loading: state.loading,
  query: state.list.query, older: state.list.older, reading: state.list.reading, total: state.list.total }));
"""

# The filter box's text given as typed, one more character at a time: the time each takes until the
# list is drawn again (the page's own work; the debounce of typing is left out).
TYPE_FILTER = """
const [text, done] = [arguments[0], arguments[arguments.length - 1]];
import(new URL('api.js', document.baseURI).href).then(async ({ applyFilter }) => {
  const times = [];
  for (let i = 1; i <= text.length; i++) {
    const started = performance.now();
    applyFilter(text.slice(0, i));
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    times.push(performance.now() - started);
  }
  done(times);
});
"""


class Suite(Page):
    # The filter's timings are the page's own: no pause after typing.
    filter_settle = 0

    def __init__(self, binary):
        self.workdir = tempfile.mkdtemp(prefix="kagami-scale-ui-")
        self.origin = origin.start()
        self.base = f"http://127.0.0.1:{self.origin.server_address[1]}"
        kept = session_file(binary)
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(kept + suffix):
                shutil.copyfile(kept + suffix, os.path.join(self.workdir, "session.sqlite" + suffix))
        self.kagami = Kagami(binary, self.workdir)
        super().__init__(timeout=90)
        self.timings = {}

    # -- helpers --
    def page(self):
        return self.driver.execute_async_script(PAGE_STATE)

    def open(self, bound=None):
        """The page afresh, with the list's bound (None: the page's own)."""
        self.driver.get(self.kagami.ui)
        self.js("localStorage.clear()")
        if bound:
            self.js("localStorage.setItem('kagami.listBound', arguments[0])", str(bound))
        self.driver.get(self.kagami.ui)
        self.until(lambda: (self.js("return window.kagamiTimings && window.kagamiTimings.listShown") or None), "the list drawn")
        return self.js("return window.kagamiTimings.listShown")

    # -- tests --
    def test_opening_shows_the_newest_rows_and_holds_its_bound(self):
        newest = f"/items/{COUNT - 1}?"
        shown = self.open(bound=SMALL_BOUND)
        self.timings["first_rows_ms"] = shown["at"]
        self.until(lambda: any(newest in row for row in self.rows()), lambda: f"the newest exchange in sight: {self.rows()[-3:]}")
        assert shown["rows"] <= 1000, f"the first rows come from one page, not {shown['rows']}"
        # Older rows come in the background up to the bound, then the page says what is left.
        self.until(lambda: self.page()["flows"] >= SMALL_BOUND and not self.page()["reading"], lambda: f"older rows read: {self.page()}")
        state = self.page()
        assert state["flows"] == SMALL_BOUND, f"the list holds its bound, not {state['flows']}"
        assert any(newest in row for row in self.rows()), "the list still shows the newest rows"
        assert self.count_text() == f"{SMALL_BOUND} of {COUNT} exchanges", self.count_text()
        older = self.driver.find_element(By.ID, "older")
        assert older.is_displayed() and f"{COUNT - SMALL_BOUND} older exchanges are not in this list" in older.text, older.text
        self.shot("scale-bound")

        # A host filter is answered by the server: its newest matches, whatever the page holds.
        host = f"h{(COUNT - 1) % HOSTS}.test"
        started = time.time()
        self.filter(f"host:{host}")
        self.until(lambda: self.page()["query"] == f"host:{host}" and not self.page()["loading"], "the server's answer to the host filter")
        self.until(lambda: self.rows() and all(host in row for row in self.rows()) and any(newest in row for row in self.rows()),
                   lambda: f"the newest rows of {host}: {self.rows()[-3:]}")
        self.timings["host_filter_s"] = round(time.time() - started, 2)
        assert self.count_text().endswith(f" of {COUNT} exchanges"), self.count_text()
        # Host and path patterns are the server's too: `?` is any one character, `*` any run.
        patterns = f"host:?{host[1:]} path:/items/*{(COUNT - 1) % 10}"
        self.filter(patterns)
        self.until(lambda: self.page()["query"] == patterns and not self.page()["loading"], "the server's answer to the patterns")
        self.until(lambda: self.rows() and all(host in row and "/items/" in row for row in self.rows()) and any(newest in row for row in self.rows()),
                   lambda: f"the newest rows of {patterns}: {self.rows()[-3:]}")
        # Plain text goes to the server too: exchanges far older than the rows the page held.
        oldest = 4242 if COUNT > 50_000 else 42
        started = time.time()
        self.filter(f"items/{oldest}?")
        self.until(lambda: self.page()["query"] == f"items/{oldest}?" and not self.page()["loading"], "the server's answer to the text")
        self.until(lambda: len(self.rows()) == 1 and f"/items/{oldest}?" in self.rows()[0], lambda: f"one old exchange: {self.rows()}")
        self.timings["text_filter_s"] = round(time.time() - started, 2)
        assert self.count_text() == f"1 of {COUNT} exchanges", self.count_text()
        # `type:` is not the server's: it comes back unapplied and the page applies it.
        self.filter("type:json status:404")
        self.until(lambda: self.page()["query"] == "type:json status:404" and not self.page()["loading"], "the server's answer")
        self.until(lambda: self.rows() and all("404" in row for row in self.rows()), lambda: f"404s only: {self.rows()[-3:]}")
        # Back to every exchange: the newest again; asked, older rows past the bound.
        self.filter("")
        self.until(lambda: self.page()["query"] == "" and self.page()["flows"] >= SMALL_BOUND and not self.page()["reading"], "the list read again")
        self.until(lambda: self.driver.find_elements(By.ID, "load-older"), "Load older")
        self.driver.find_element(By.ID, "load-older").click()
        self.until(lambda: self.page()["flows"] == min(COUNT, SMALL_BOUND + 10_000) and not self.page()["reading"],
                   lambda: f"a page of older rows more: {self.page()}")

    def test_hundred_thousand_rows_scroll_and_filter(self):
        started = time.time()
        self.open()
        self.until(lambda: self.page()["flows"] == COUNT and not self.page()["reading"], lambda: f"every row read: {self.page()}")
        self.timings["read_all_rows_s"] = round(time.time() - started, 1)
        assert self.count_text() == f"{COUNT} exchanges", self.count_text()
        assert not self.driver.find_element(By.ID, "older").is_displayed(), "nothing older to read"
        # Live rows arrive on top of them, and the list follows its tail.
        for n in range(LIVE):
            curl(self.kagami.proxy, f"{self.base}/live/{n}")
        self.until(lambda: self.count_text() == f"{COUNT + LIVE} exchanges", lambda: f"live rows counted: {self.count_text()}")
        self.until(lambda: any(f"/live/{LIVE - 1}" in row for row in self.rows()), "the newest live row in sight")
        scroll = scroll_frames(self.driver, 300)
        assert scroll["domRows"] < 200, f"only rows in sight are in the page, not {scroll['domRows']}"
        assert f"/live/{LIVE - 1}" in scroll["lastRow"], scroll["lastRow"]
        gaps = scroll["gaps"]
        self.timings.update({"scroll_frames": len(gaps), "scroll_p50_ms": round(percentile(gaps, 0.5), 1), "scroll_p95_ms": round(percentile(gaps, 0.95), 1),
                             "scroll_max_ms": round(max(gaps), 1), "scroll_total_s": round(sum(gaps) / 1000, 2)})
        # Frame times are reported, not asserted (a busy machine makes them what it likes):
        # bench/ui measures them on a quiet one. The page holding only the rows in sight is
        # what keeps them flat, and that is asserted above.
        # Every exchange is in the page: the filter runs here, a keystroke at a time.
        times = self.driver.execute_async_script(TYPE_FILTER, "page=7")
        self.timings.update({"filter_keystroke_max_ms": round(max(times)), "filter_keystrokes_ms": [round(t) for t in times]})
        assert self.page()["query"] == "", "filtered in the page, not asked of the server"
        self.until(lambda: self.count_text() == f"{COUNT // 50} of {COUNT + LIVE} exchanges", lambda: self.count_text())
        # So do host and path patterns: every twentieth exchange is on h19.test and ends in 9.
        self.filter("host:h1?.test path:/items/*9")
        self.until(lambda: self.count_text() == f"{COUNT // 20} of {COUNT + LIVE} exchanges", lambda: self.count_text())
        self.filter("path:/live/*")
        self.until(lambda: self.count_text() == f"{LIVE} of {COUNT + LIVE} exchanges", lambda: self.count_text())
        assert self.page()["query"] == "", "filtered in the page, not asked of the server"
        self.shot("scale-100k")

    def run(self):
        tests = [self.test_opening_shows_the_newest_rows_and_holds_its_bound, self.test_hundred_thousand_rows_scroll_and_filter]
        self.run_tests(tests, "scale")


def main():
    run_suite(Suite, "scale ui")


if __name__ == "__main__":
    main()
