"""What the browser suites share: headless Chromium, a suite's steps on Kagami's page (scripts,
waits, the Sequence rows, the filter box, inspector tabs, screenshots), running each test and the
suite, and the frame-by-frame scroll of the list that the scale test and bench/ui/measure.py time.
"""
import os
import shutil
import sys
import tempfile
import time
import traceback

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.support.ui import WebDriverWait

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# Screenshots go to an ignored folder; KAGAMI_SCREENSHOTS=docs/screenshots regenerates the
# documentation's on purpose.
SHOTS = os.path.join(ROOT, os.environ.get("KAGAMI_SCREENSHOTS", ".build/ui-screenshots"))

# Scrolls the Sequence list from top to bottom in `steps` steps, one per frame: the gaps between
# frames (ms), the rows in the page at the end and the text of the last one.
SCROLL = """
const [steps, done] = [arguments[0], arguments[arguments.length - 1]];
const scroll = document.getElementById('sequence-scroll');
scroll.scrollTop = 0;
const gaps = []; let step = 0, last = 0;
function next(now) {
  if (last) gaps.push(now - last);
  last = now;
  if (step > steps) {
    const lastRow = [...document.querySelectorAll('#sequence-spacer .row:not([hidden])')].sort((a, b) => b.dataset.position - a.dataset.position)[0];
    done({ gaps, domRows: document.querySelectorAll('#sequence-spacer .row').length, lastRow: lastRow ? lastRow.innerText : '' });
    return;
  }
  scroll.scrollTop = (scroll.scrollHeight - scroll.clientHeight) * step / steps;
  step++;
  requestAnimationFrame(next);
}
requestAnimationFrame(next);
"""


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1440,900"]:
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


def scroll_frames(driver, steps):
    """The list scrolled top to bottom, a step a frame: {gaps, domRows, lastRow} (see SCROLL)."""
    return driver.execute_async_script(SCROLL, steps)


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


# Seconds a step waits for the page before it fails: generous, since two lanes of suites share
# two cores with their Kagamis and servers, and on a busy machine a step that takes a second
# alone can take ten.
WAIT_SECONDS = 45


class Page:
    """A browser suite's headless Chromium on Kagami's page, and the steps its tests share. The
    suite sets `workdir`, `origin` (a server to shut down) and `kagami` (a Kagami, or None), which
    `close` takes down with the browser."""
    # Seconds the list is given to redraw after the filter box is typed into.
    filter_settle = 0.3

    def __init__(self, timeout=WAIT_SECONDS):
        self.driver = browser()
        self.wait = WebDriverWait(self.driver, timeout)
        self.passed, self.failed = 0, []

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def until(self, condition, message):
        """Waits for `condition`; `message` (text, or a function giving it) says what timed out."""
        try:
            return self.wait.until(lambda d: condition())
        except TimeoutException:
            raise TimeoutException(message() if callable(message) else message) from None

    def rows(self):
        return self.js("return [...document.querySelectorAll('#sequence-spacer .row:not([hidden])')]"
                       ".sort((a, b) => a.dataset.position - b.dataset.position).map(r => r.innerText.replace(/\\n/g, ' '))")

    def count_text(self):
        return self.driver.find_element(By.ID, "counts").text

    def text_of(self, element_id):
        """Read in one step: panels redraw, so a found element may be gone before its text is read."""
        return self.js("const e = document.getElementById(arguments[0]); return e ? e.textContent : ''", element_id)

    def shot(self, name):
        os.makedirs(SHOTS, exist_ok=True)
        self.driver.save_screenshot(os.path.join(SHOTS, f"{name}.png"))

    def type_into(self, element, text):
        """Replaces what `element` holds with `text`, as one who types it."""
        element.send_keys(Keys.CONTROL, "a")
        element.send_keys(Keys.DELETE)
        if text:
            element.send_keys(text)

    def field(self, scope, name):
        """The input of the field whose JSON path is `name` (data-field on its label)."""
        return scope.find_element(By.CSS_SELECTOR, f'[data-field="{name}"] input, [data-field="{name}"] select, [data-field="{name}"] textarea')

    def filter(self, text):
        self.type_into(self.driver.find_element(By.ID, "filter"), text)
        self.until(lambda: self.js("return document.getElementById('filter').value") == text, "filter typed")
        if self.filter_settle:
            time.sleep(self.filter_settle)

    def tab(self, name):
        # Found and clicked in one step: the inspector redraws its tabs when the exchange loads.
        self.until(lambda: self.js("const t = document.getElementById(arguments[0]); if (t) t.click(); return !!t", f"tab-{name}"), f"tab {name}")

    def run_tests(self, tests, suite):
        """Runs `tests` (see run_each), adding to the suite's counts."""
        passed, failed = run_each(tests, self.driver, suite)
        self.passed += passed
        self.failed += failed

    def close(self):
        self.driver.quit()
        if self.kagami:
            self.kagami.stop()
        self.origin.shutdown()
        shutil.rmtree(self.workdir, ignore_errors=True)


def note_failure(suite, name, error):
    """A failed test's name and error, one line, added to the file KAGAMI_UI_FAILURES names (when
    set): scripts/test-ui.sh and scripts/test.sh print it last, where a long run's end shows it."""
    path = os.environ.get("KAGAMI_UI_FAILURES")
    if not path:
        return
    text = " ".join(str(error).split())
    with open(path, "a", encoding="utf-8") as out:
        out.write(f"{suite} {name}: {text[:600]}\n")


def run_each(tests, driver, suite):
    """Runs every test, printing each result; a failure is reported (with a screenshot of the
    page in the temporary folder, and a line in KAGAMI_UI_FAILURES) and the next test still runs.
    Returns (passed, failed names)."""
    passed, failed = 0, []
    for test in tests:
        started = time.time()
        try:
            test()
            passed += 1
            print(f"  ok    {test.__name__} ({time.time() - started:.1f} s)")
        except Exception as error:  # noqa: BLE001 - every failure is reported
            failed.append(test.__name__)
            print(f"  FAIL  {test.__name__}: {error}")
            note_failure(suite, test.__name__, error)
            traceback.print_exc(limit=2)
            try:
                driver.save_screenshot(os.path.join(tempfile.gettempdir(), f"kagami-{suite}-failure-{test.__name__}.png"))
            except Exception:  # noqa: BLE001
                pass
    return passed, failed


def run_suite(make_suite, label):
    """Runs a browser suite on the kagami binary named on the command line (the debug build by
    default): its tests, its timings, a line of counts, the failed tests' names; exits non-zero
    when one failed. Every test file's entry point."""
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "debug", "kagami")
    started = time.time()
    try:
        suite = make_suite(binary)
        try:
            suite.run()
        finally:
            suite.close()
    except Exception as error:
        note_failure(label, "(the suite itself)", error)
        raise
    for name, value in getattr(suite, "timings", {}).items():
        print(f"{label} timing {name}: {value}")
    print(f"{label} tests: {suite.passed} passed, {len(suite.failed)} failed ({time.time() - started:.0f} s)")
    for name in suite.failed:
        print(f"  failed: {name}")
    sys.exit(1 if suite.failed else 0)
