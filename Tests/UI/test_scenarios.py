"""Browser test of the web UI's Scenarios panel: a real `kagami proxy --scenarios FILE`, the
scenario in force named in the toolbar, switched from the panel, and each switch seen by curl on
the very next request through the proxy. Prints `scenarios ui tests: N passed, M failed`; exits
non-zero on any failure.

Usage: python Tests/UI/test_scenarios.py [path/to/kagami]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, os.path.dirname(__file__))
import origin  # noqa: E402
from test_ui import ROOT, SHOTS, WAIT_SECONDS, Kagami, api, browser, run_each  # noqa: E402

SCENARIOS = """
scenarios:
  - name: empty-users
    states:
      - operation: GET /api/users.json
        state: empty
  - name: users-fail
    states:
      - operation: GET /api/users.json
        state: error
        status: 503
  - name: users-slow
    states:
      - operation: GET /api/users.json
        state: slow
        profile: 3G
  - name: users-loading
    states:
      - operation: GET /api/users.json
        state: loading
"""


def fetch(proxy, url):
    """The status and body curl gets through the proxy."""
    result = subprocess.run(["curl", "-s", "-x", proxy, "--max-time", "10", "-w", "\n%{http_code}", url],
                            capture_output=True, text=True, timeout=20)
    body, _, status = result.stdout.rpartition("\n")
    return int(status or 0), body


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "debug", "kagami")
    workdir = tempfile.mkdtemp(prefix="kagami-scenarios-ui-")
    scenarios = os.path.join(workdir, "scenarios.yaml")
    with open(scenarios, "w") as f:
        f.write(SCENARIOS)
    server = origin.start()
    users = f"http://127.0.0.1:{server.server_address[1]}/api/users.json"
    kagami = Kagami(binary, workdir, extra=["--scenarios", scenarios, "--scenario", "empty-users"])
    driver = browser()
    # The panel and the toolbar are drawn again after each switch: every wait looks elements up
    # afresh and takes a redraw between lookup and use as "not yet".
    wait = WebDriverWait(driver, WAIT_SECONDS, ignored_exceptions=[StaleElementReferenceException])

    def badge():
        element = driver.find_element(By.ID, "scenario-active")
        return "" if element.get_attribute("hidden") is not None else element.text

    def test_switching_from_the_panel_acts_on_the_next_request():
        driver.get(kagami.ui)
        # The toolbar names the scenario in force from the start.
        wait.until(lambda d: badge() == "empty-users")
        status, body = fetch(kagami.proxy, users)
        assert status == 200 and json.loads(body) == {"users": [], "total": 2}, (status, body)

        driver.find_element(By.ID, "view-scenarios").click()
        failing = "#scenarios section[data-scenario='users-fail']"
        wait.until(lambda d: [row.text for row in d.find_elements(By.CSS_SELECTOR, failing + " tr")] == ["GET /api/users.json error 503"])
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, failing + " button").click() is None)
        wait.until(lambda d: d.find_element(By.ID, "scenarios-state").text == "In force: users-fail")
        wait.until(lambda d: badge() == "users-fail")
        status, body = fetch(kagami.proxy, users)
        assert status == 503 and "Scenario users-fail puts GET /api/users.json in its error state." in body, (status, body)
        os.makedirs(SHOTS, exist_ok=True)
        driver.save_screenshot(os.path.join(SHOTS, "scenarios-panel.png"))

        wait.until(lambda d: d.find_element(By.ID, "scenario-off").click() is None)
        wait.until(lambda d: d.find_element(By.ID, "scenarios-state").text == "No scenario in force")
        wait.until(lambda d: badge() == "")
        status, body = fetch(kagami.proxy, users)
        assert status == 200 and len(json.loads(body)["users"]) == 2, (status, body)
        code, answer = api(kagami.ui, "GET", "/api/scenarios")
        assert code == 200 and answer["active"] is None, answer

        # A slow state: the profile named in the panel, the real answer after its latency.
        section = "#scenarios section[data-scenario='users-slow']"
        wait.until(lambda d: [row.text for row in d.find_elements(By.CSS_SELECTOR, section + " tr")] == ["GET /api/users.json slow (3G)"])
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, section + " button").click() is None)
        wait.until(lambda d: d.find_element(By.ID, "scenarios-state").text == "In force: users-slow")
        started = time.monotonic()
        status, body = fetch(kagami.proxy, users)
        assert status == 200 and len(json.loads(body)["users"]) == 2, (status, body)
        assert time.monotonic() - started >= 0.2, "answered before the 3G profile's 200 ms latency"

    def test_a_loading_request_is_released_from_the_panel():
        code, _ = api(kagami.ui, "PUT", "/api/scenarios/active", {"active": "users-loading"})
        assert code == 200
        driver.get(kagami.ui)
        wait.until(lambda d: badge() == "users-loading")
        driver.find_element(By.ID, "view-scenarios").click()
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#scenario-held h3").get_attribute("textContent") == "Loading now (0)")
        client = subprocess.Popen(["curl", "-s", "-x", kagami.proxy, "--max-time", "30", "-w", "\n%{http_code}", users],
                                  stdout=subprocess.PIPE, text=True)
        try:
            row = "#scenario-held .loading-hold"
            wait.until(lambda d: "scenario users-loading: loading" in d.find_element(By.CSS_SELECTOR, row).text)
            assert "GET " + users in driver.find_element(By.CSS_SELECTOR, row).text
            # Held for the lists, not for the breakpoint editor: no dialog pops up.
            assert not driver.find_element(By.ID, "held-dialog").get_attribute("open")
            assert client.poll() is None, "answered while loading"
            os.makedirs(SHOTS, exist_ok=True)
            driver.save_screenshot(os.path.join(SHOTS, "scenarios-loading.png"))
            # The Breakpoints view's held list shows it too, with its reason and Release.
            driver.find_element(By.ID, "view-breakpoints").click()
            wait.until(lambda d: "scenario users-loading: loading" in d.find_element(By.CSS_SELECTOR, "#held-queue .loading-hold").text)
            assert driver.find_element(By.CSS_SELECTOR, "#held-queue .loading-hold button").text == "Release"
            driver.find_element(By.ID, "view-scenarios").click()
            wait.until(lambda d: d.find_element(By.CSS_SELECTOR, row + " button").click() is None)
            output, _ = client.communicate(timeout=20)
        finally:
            if client.poll() is None:
                client.kill()
        body, _, status = output.rpartition("\n")
        assert status == "200" and len(json.loads(body)["users"]) == 2, (status, body)
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#scenario-held h3").get_attribute("textContent") == "Loading now (0)")
        code, answer = api(kagami.ui, "GET", "/api/breakpoints/held")
        assert code == 200 and answer["held"] == [], answer
        api(kagami.ui, "PUT", "/api/scenarios/active", {"active": None})

    tests = [test_switching_from_the_panel_acts_on_the_next_request, test_a_loading_request_is_released_from_the_panel]
    only = os.environ.get("KAGAMI_UI_ONLY")
    try:
        passed, failed = run_each([test for test in tests if not only or only in test.__name__], driver, "scenarios")
    finally:
        driver.quit()
        kagami.stop()
        server.shutdown()
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"scenarios ui tests: {passed} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
