"""Browser test of the web UI's Draft description: traffic through a real `kagami proxy`, then the
button drafts OpenAPI and API Blueprint descriptions of it, of the chosen exchanges, and with a
path hint. Screenshots go where test_ui.py puts them. Prints `draft ui tests: N passed, M failed`; exits non-zero on any failure.

Usage: python Tests/UI/test_draft.py [path/to/kagami]
"""
import json
import os
import shutil
import sys
import tempfile

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

sys.path.insert(0, os.path.dirname(__file__))
import origin  # noqa: E402
from test_ui import ROOT, SHOTS, WAIT_SECONDS, Kagami, api, browser, curl, run_each  # noqa: E402


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "debug", "kagami")
    workdir = tempfile.mkdtemp(prefix="kagami-draft-ui-")
    rules = os.path.join(workdir, "rules.json")
    with open(rules, "w") as f:
        f.write("{}")
    server = origin.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    kagami = Kagami(binary, workdir, rules)
    driver = browser()
    passed, failed = 0, []
    try:
        curl(kagami.proxy, f"{base}/api/users.json")
        for item in (101, 202, 303):
            curl(kagami.proxy, f"{base}/items/{item}", "-H", "Content-Type: application/json",
                 "--data-binary", json.dumps({"name": f"item {item}", "password": "hunter2"}))
        curl(kagami.proxy, f"{base}/repos/apple/swift")
        curl(kagami.proxy, f"{base}/repos/swiftlang/swift-nio")
        wait = WebDriverWait(driver, WAIT_SECONDS)

        def fresh():
            """Each test opens the page afresh: the session (read only by the tests) and nothing else."""
            driver.get(kagami.ui)
            wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#sequence .row[data-id]")) >= 6)

        def text():
            return driver.find_element(By.ID, "draft-text").get_attribute("value")

        def test_drafts_the_session_as_openapi():
            fresh()
            driver.find_element(By.CSS_SELECTOR, "#session-menu > summary").click()
            driver.find_element(By.ID, "draft-description").click()
            wait.until(lambda d: "/items/{itemId}" in text())
            assert text().startswith('openapi: "3.1.0"'), text()[:200]
            assert "/api/users.json" in text()
            assert "hunter2" not in text() and "s3cr3t" not in text(), [line for line in text().splitlines() if "s3cr3t" in line or "hunter2" in line]
            note = driver.find_element(By.ID, "draft-note").text
            assert "from 6 exchanges" in note, note
            href = driver.find_element(By.ID, "draft-download").get_attribute("href")
            assert href.startswith("blob:"), href
            assert driver.find_element(By.ID, "draft-download").get_attribute("download") == "api.yaml"

        def test_blueprint_and_a_path_hint_draft_again():
            fresh()
            driver.find_element(By.CSS_SELECTOR, "#session-menu > summary").click()
            driver.find_element(By.ID, "draft-description").click()
            wait.until(lambda d: "/items/{itemId}" in text())
            Select(driver.find_element(By.ID, "draft-format")).select_by_value("apib")
            wait.until(lambda d: text().startswith("FORMAT: 1A"))
            assert "## /items/{itemId} [/items/{itemId}]" in text(), text()
            hints = driver.find_element(By.ID, "draft-paths")
            hints.send_keys("/repos/{owner}/{repo}")
            driver.find_element(By.ID, "draft-again").click()
            wait.until(lambda d: "/repos/{owner}/{repo}" in text())
            assert driver.find_element(By.ID, "draft-download").get_attribute("download") == "api.apib"
            os.makedirs(SHOTS, exist_ok=True)
            driver.save_screenshot(os.path.join(SHOTS, "draft-description.png"))
            hints.send_keys(Keys.ESCAPE)
            driver.execute_script("document.getElementById('draft-dialog').close()")

        def test_chosen_exchanges_only():
            fresh()
            rows = driver.find_elements(By.CSS_SELECTOR, "#sequence .row[data-id]")
            users = next(row for row in rows if "users.json" in row.text)
            item = next(row for row in rows if "/items/101" in row.text)
            users.click()
            driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true, ctrlKey: true}))", item)
            wait.until(lambda d: "(2)" in d.find_element(By.ID, "export-selected").get_attribute("textContent"))
            driver.find_element(By.CSS_SELECTOR, "#session-menu > summary").click()
            driver.find_element(By.ID, "draft-description").click()
            wait.until(lambda d: "from 2 exchanges" in d.find_element(By.ID, "draft-note").text)
            assert "/api/users.json" in text() and "/items/" in text() and "/repos/" not in text(), text()

        def test_bad_requests_say_why():
            status, answer = api(kagami.ui, "POST", "/api/draft", {"format": "xml"})
            assert status == 400 and "format" in answer["error"], answer
            status, answer = api(kagami.ui, "POST", "/api/draft", {"paths": ["repos/{owner}"]})
            assert status == 400 and "paths[0]" in answer["error"], answer

        passed, failed = run_each([test_drafts_the_session_as_openapi, test_blueprint_and_a_path_hint_draft_again, test_chosen_exchanges_only, test_bad_requests_say_why], driver, "draft")
    finally:
        driver.quit()
        kagami.stop()
        server.shutdown()
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"draft ui tests: {passed} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
