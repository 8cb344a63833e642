"""Sessions shared by a team, end to end: two `kagami proxy --store postgres://…` processes record
into one PostgreSQL database while `kagami serve` shows both sessions in headless Chromium, live.
Then one proxy is killed with SIGKILL while its clients are sending: every exchange a client
received complete is in the database. Then the database is stopped and started again while the
other proxy's client goes on: the proxy answers it throughout, and every exchange is in the
database once the server is back (spooled on the proxy's machine meanwhile).

The database is the one scripts/test.sh started (KAGAMI_TEST_POSTGRES_URL and
KAGAMI_TEST_POSTGRES_DIR, which it may stop and start), or a throwaway cluster of the suite's own
(scripts/postgres-cluster.sh). Everything listens on 127.0.0.1, on ports the system chooses.
Prints `team ui tests: N passed, M failed`.

Usage: python Tests/UI/test_team.py [path/to/kagami]
"""
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

from selenium.webdriver.common.by import By
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, os.path.dirname(__file__))
import origin  # noqa: E402
import test_ui  # noqa: E402
from test_ui import ROOT, SHOTS, browser, curl, run_each  # noqa: E402

CLUSTER = os.path.join(ROOT, "scripts", "postgres-cluster.sh")


class Cluster:
    """The PostgreSQL server of the suite: scripts/test.sh's when it says where its data is (so
    that it can be stopped and started), else one of the suite's own, removed at the end."""

    def __init__(self):
        url, folder = os.environ.get("KAGAMI_TEST_POSTGRES_URL"), os.environ.get("KAGAMI_TEST_POSTGRES_DIR")
        self.own = not (url and folder and os.path.isdir(folder))
        if self.own:
            output = subprocess.run(["bash", CLUSTER, "start"], check=True, capture_output=True, text=True, timeout=120).stdout
            found = dict(re.findall(r"export (\w+)=(\S+)", output))
            url, folder = found["KAGAMI_TEST_POSTGRES_URL"], found["KAGAMI_TEST_POSTGRES_DIR"]
        self.url, self.folder = url, folder
        self.paused = False
        print(f"PostgreSQL: {url}{' (the suite’s own)' if self.own else ''}")

    def pause(self):
        """Stops the server, keeping its data and port."""
        self.paused = True
        subprocess.run(["bash", CLUSTER, "pause", self.folder], check=True, capture_output=True, timeout=120)

    def resume(self):
        subprocess.run(["bash", CLUSTER, "resume", self.folder], check=True, capture_output=True, timeout=120)
        self.paused = False

    def close(self):
        """Removes the suite's own cluster; scripts/test.sh's is left running, as it was given."""
        if self.paused and not self.own:
            self.resume()
        if self.own:
            subprocess.run(["bash", CLUSTER, "stop", self.folder], capture_output=True, timeout=120)


def started(arguments, pattern, environment, log):
    """A kagami process and the address its banner gives (its standard error goes to `log`)."""
    process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=open(log, "w"), text=True, env=environment)
    deadline = time.time() + 60
    while time.time() < deadline:
        line = process.stdout.readline()
        if not line:
            with open(log) as file:
                raise RuntimeError(f"{' '.join(arguments[:2])} exited ({process.wait()}): {file.read()}")
        if m := re.search(pattern, line):
            threading.Thread(target=process.stdout.read, daemon=True).start()
            return process, m.group(1)
    process.kill()
    raise RuntimeError(f"{' '.join(arguments[:2])} did not print its address")


def stop(process):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Clients:
    """`count` clients (threads, each with a keep-alive connection through the proxy) sending GETs
    one after another, for at most `seconds` or `limit` requests each, `pause` seconds apart.
    `completed` holds the URLs whose whole response arrived (status 200 and the origin's body);
    `failures` what went wrong. A client stops at its first failure."""

    def __init__(self, proxy, base, tag, count=1, limit=400, seconds=60, pause=0.0):
        self.proxy, self.base, self.tag = proxy, base, tag
        self.completed, self.failures = [], []
        self.lock = threading.Lock()
        self.ending = threading.Event()
        self.deadline = time.time() + seconds
        self.threads = [threading.Thread(target=self.send, args=(n, limit, pause), daemon=True) for n in range(count)]
        for thread in self.threads:
            thread.start()

    def send(self, client, limit, pause):
        host, port = self.proxy.split("//", 1)[1].rsplit(":", 1)
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        try:
            for n in range(limit):
                if self.ending.is_set() or time.time() > self.deadline:
                    return
                path = f"/{self.tag}/{client}-{n}"
                try:
                    connection.request("GET", self.base + path)
                    response = connection.getresponse()
                    body = response.read()
                except (OSError, http.client.HTTPException) as error:
                    with self.lock:
                        self.failures.append(f"{path}: {error!r}")
                    return
                if response.status != 200 or body != f"hello from {path}\n".encode():
                    with self.lock:
                        self.failures.append(f"{path}: {response.status} {body[:80]!r}")
                    return
                with self.lock:
                    self.completed.append(self.base + path)
                if pause:
                    time.sleep(pause)
        finally:
            connection.close()

    def done(self):
        with self.lock:
            return len(self.completed)

    def wait_for(self, count, seconds):
        """Waits until `count` responses arrived in all (or a client failed, or `seconds` passed)."""
        deadline = time.time() + seconds
        while time.time() < deadline and self.done() < count and not self.failures and any(t.is_alive() for t in self.threads):
            time.sleep(0.05)
        return self.done() >= count

    def stop(self):
        self.ending.set()
        for thread in self.threads:
            thread.join(40)


class Suite:
    def __init__(self, binary):
        self.binary = binary
        self.workdir = tempfile.mkdtemp(prefix="kagami-team-ui-")
        try:
            self.start(binary)
        except BaseException:
            self.close()
            raise

    def start(self, binary):
        self.cluster = Cluster()
        self.origin = origin.start()
        # Connections cut by the proxy killed mid-exchange are expected: no trace of them printed.
        self.origin.handle_error = lambda request, address: None
        self.base = f"http://127.0.0.1:{self.origin.server_address[1]}"
        self.environment = dict(os.environ, KAGAMI_HOME=os.path.join(self.workdir, "home"), KAGAMI_UPSTREAM_ALLOW="loopback")
        suffix = uuid.uuid4().hex[:8]
        self.names = {"A": f"team-a-{suffix}", "B": f"team-b-{suffix}"}
        self.proxies, self.addresses = {}, {}
        for key in self.names:
            self.start_proxy(key)
        self.serve, self.ui = started([binary, "serve", "--store", self.cluster.url, "--port", "0"],
                                      r"serving the sessions in .* at (http://\S+)", self.environment,
                                      os.path.join(self.workdir, "serve.log"))
        # The address carries the server's token; the browser keeps it as a cookie from the first page on.
        address, self.token = self.ui.split("/?token=", 1)
        self.ui = address.rstrip("/")
        print(f"proxies {self.addresses}, serve {self.ui}")
        self.driver = browser()
        self.driver.get(f"{self.ui}/?token={self.token}")
        self.tabs = {}
        self.passed, self.failed, self.timings = 0, [], {}

    def start_proxy(self, key):
        self.proxies[key], self.addresses[key] = started(
            [self.binary, "proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--upstream-allow", "loopback",
             "--store", self.cluster.url, "--session", self.names[key]],
            r"listening on (http://[\d.]+:\d+)", self.environment, self.log(key))

    def serve_log(self):
        with open(os.path.join(self.workdir, "serve.log")) as file:
            return file.read()

    def log(self, key):
        return os.path.join(self.workdir, f"proxy-{key}.log")

    def stderr_of(self, key):
        with open(self.log(key)) as file:
            return file.read()

    # -- helpers --
    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def until(self, condition, message, seconds=60):
        try:
            return WebDriverWait(self.driver, seconds).until(lambda d: condition())
        except TimeoutException:
            raise TimeoutException(message() if callable(message) else message) from None

    def listing(self):
        """The session list page's rows: name → (recorded by, exchanges)."""
        self.driver.get(self.ui + "/")
        rows = self.js("return [...document.querySelectorAll('#sessions tbody tr')].map(r => [...r.cells].map(c => c.innerText))")
        return {row[0]: (row[1], int(row[3])) for row in rows}

    def open_session(self, key):
        """Session `key`'s page in a tab of its own (clicked from the list), connected."""
        if self.tabs:
            self.driver.switch_to.new_window("tab")
        self.driver.get(self.ui + "/")
        self.driver.find_element(By.LINK_TEXT, self.names[key]).click()
        self.tabs[key] = self.driver.current_window_handle
        self.until(lambda: "Live" in self.driver.find_element(By.ID, "connection").text, f"session {key}'s page connected")

    def count_in_page(self, key):
        """The count session `key`'s page shows, and the paths of its rows."""
        self.driver.switch_to.window(self.tabs[key])
        text = self.driver.find_element(By.ID, "counts").text
        count = int(text.split()[0].replace(",", "")) if text and text.split()[0].replace(",", "").isdigit() else -1
        return count, text

    def rows(self, key):
        self.driver.switch_to.window(self.tabs[key])
        return self.js("return [...document.querySelectorAll('#sequence-spacer .row:not([hidden])')].map(r => r.innerText.replace(/\\n/g, ' '))")

    def stored_urls(self, key):
        """The URLs of the exchanges of session `key` in the database (`kagami export --store`)."""
        result = subprocess.run([self.binary, "export", "--store", self.cluster.url, "--session", self.names[key], "--format", "har"],
                                capture_output=True, timeout=120, env=self.environment)
        assert result.returncode == 0, f"export of {key}: {result.stderr.decode(errors='replace')}"
        return [entry["request"]["url"] for entry in json.loads(result.stdout)["log"]["entries"]]

    def until_stored(self, key, urls, seconds=90):
        """Waits until every URL of `urls` is in session `key`; gives the URLs it holds."""
        deadline, stored = time.time() + seconds, []
        while time.time() < deadline:
            stored = self.stored_urls(key)
            if set(urls) <= set(stored):
                break
            time.sleep(0.5)
        missing = set(urls) - set(stored)
        assert not missing, f"{len(missing)} exchanges a client saw complete are not in session {key}: {sorted(missing)[:5]}"
        return stored

    def shot(self, name):
        os.makedirs(SHOTS, exist_ok=True)
        self.driver.save_screenshot(os.path.join(SHOTS, f"{name}.png"))

    # -- tests, in order --
    def test_serve_lists_both_sessions_and_follows_them_live(self):
        for key in self.names:
            for n in range(3):
                curl(self.addresses[key], f"{self.base}/first/{key}/{n}", "-H", "Authorization: Bearer s3cret")
        sessions = self.listing()
        for key, name in self.names.items():
            assert name in sessions, f"{name} listed: {sessions}"
            recorded_by, count = sessions[name]
            assert count == 3, f"{name}: {count} exchanges listed"
            assert "@" in recorded_by, recorded_by
        self.shot("team-sessions")
        for key in self.names:
            self.open_session(key)
            self.until(lambda: self.count_in_page(key)[0] == 3, lambda: f"{key}: 3 exchanges, not {self.count_in_page(key)[1]!r}")
        # New exchanges reach both pages without a reload.
        for n in range(5):
            for key in self.names:
                curl(self.addresses[key], f"{self.base}/live/{key}/{n}")
        for key in self.names:
            self.until(lambda: self.count_in_page(key)[0] == 8, lambda: f"{key}: 8 exchanges live, not {self.count_in_page(key)[1]!r}")
            self.until(lambda: any(f"/live/{key}/4" in row for row in self.rows(key)), lambda: f"{key}'s newest row: {self.rows(key)[-3:]}")
            other = "B" if key == "A" else "A"
            assert not any(f"/{other}/" in row for row in self.rows(key)), f"only {key}'s exchanges in its page"
        self.shot("team-session-live")
        # Credentials were redacted before they reached the database.
        result = subprocess.run([self.binary, "export", "--store", self.cluster.url, "--session", self.names["A"], "--format", "har"],
                                capture_output=True, timeout=120, env=self.environment)
        text = result.stdout.decode()
        assert "s3cret" not in text and "[redacted by Kagami]" in text, "Authorization redacted in the shared store"

    def test_sigkill_under_load_loses_no_exchange_a_client_saw_complete(self):
        key = "A"
        before = len(self.stored_urls(key))
        clients = Clients(self.addresses[key], self.base, "load", count=4, limit=500, seconds=60)
        try:
            assert clients.wait_for(40, 60), f"40 exchanges before the kill, not {clients.done()}: {clients.failures[:3]}"
            self.proxies[key].send_signal(signal.SIGKILL)
            self.proxies[key].wait(15)
        finally:
            clients.stop()
        completed = list(clients.completed)
        self.timings["exchanges_before_sigkill"] = len(completed)
        stored = self.until_stored(key, completed)
        # Some exchanges may have been committed with their client cut off before the end: never fewer.
        assert len(stored) >= before + len(completed), f"{len(stored)} stored, {before} + {len(completed)} expected"
        assert len(stored) == len(set(stored)), "no exchange stored twice"
        # The page shows what the database holds.
        self.until(lambda: self.count_in_page(key)[0] == len(stored),
                   lambda: f"{key}'s page shows {len(stored)} exchanges, not {self.count_in_page(key)[1]!r}; "
                           f"kagami serve said: {self.serve_log()[-1500:]!r}")

    def test_database_restart_mid_run_loses_nothing(self):
        key = "B"
        before = len(self.stored_urls(key))
        clients = Clients(self.addresses[key], self.base, "restart", count=2, limit=2000, seconds=120, pause=0.02)
        try:
            assert clients.wait_for(20, 60), f"20 exchanges before the restart, not {clients.done()}: {clients.failures[:3]}"
            self.cluster.pause()
            paused_at, stopped = time.time(), clients.done()
            # The proxy goes on answering while the server is away, and says so.
            assert clients.wait_for(stopped + 40, 60), f"answered while the database is down: {clients.done() - stopped}, {clients.failures[:3]}"
            self.until(lambda: " is away (" in self.stderr_of(key), lambda: f"the proxy reports the outage: {self.stderr_of(key)!r}")
            # Down for a few seconds at least, so that the proxy and serve back off between attempts.
            time.sleep(max(0.0, 4 - (time.time() - paused_at)))
            during = clients.done() - stopped
            self.cluster.resume()
            resumed = clients.done()
            assert clients.wait_for(resumed + 40, 60), f"answered after the restart: {clients.done() - resumed}, {clients.failures[:3]}"
        finally:
            clients.stop()
            if self.cluster.paused:
                self.cluster.resume()
        assert not clients.failures, f"every client was answered: {clients.failures[:3]}"
        completed = list(clients.completed)
        self.timings["exchanges_while_database_down"] = during
        self.timings["exchanges_through_restart"] = len(completed)
        stored = self.until_stored(key, completed)
        assert len(stored) == before + len(completed), f"{len(stored)} stored, {before} + {len(completed)} sent"
        self.until(lambda: " is back after " in self.stderr_of(key), lambda: f"the proxy reports the server back: {self.stderr_of(key)!r}")
        spools = os.path.join(self.environment["KAGAMI_HOME"], "spool")
        self.until(lambda: not [f for f in (os.listdir(spools) if os.path.isdir(spools) else []) if f.endswith(".spool")],
                   lambda: f"the spool is removed once written: {os.listdir(spools)}")
        # serve follows the writers again: the page holds every exchange, and new ones arrive live.
        self.until(lambda: self.count_in_page(key)[0] == len(stored),
                   lambda: f"{key}'s page shows {len(stored)} exchanges, not {self.count_in_page(key)[1]!r}; "
                           f"kagami serve said: {self.serve_log()[-1500:]!r}")
        # serve said it lost the writers and follows them again.
        assert "stopped following the writers" in self.serve_log() and "following the writers again" in self.serve_log(), self.serve_log()
        curl(self.addresses[key], f"{self.base}/after-restart")
        self.until(lambda: self.count_in_page(key)[0] == len(stored) + 1 and any("/after-restart" in row for row in self.rows(key)),
                   lambda: f"{key}'s page live after the restart: {self.count_in_page(key)[1]!r}")
        self.shot("team-after-restart")

    def run(self):
        tests = [self.test_serve_lists_both_sessions_and_follows_them_live,
                 self.test_sigkill_under_load_loses_no_exchange_a_client_saw_complete,
                 self.test_database_restart_mid_run_loses_nothing]
        passed, failed = run_each(tests, self.driver, "team")
        self.passed += passed
        self.failed += failed

    def close(self):
        """Stops whatever was started (also after a failed start)."""
        try:
            if getattr(self, "driver", None):
                self.driver.quit()
        finally:
            for process in [*getattr(self, "proxies", {}).values(), getattr(self, "serve", None)]:
                if process:
                    stop(process)
            if getattr(self, "origin", None):
                self.origin.shutdown()
            if getattr(self, "cluster", None):
                self.cluster.close()
            shutil.rmtree(self.workdir, ignore_errors=True)


def main():
    test_ui.run_suite(Suite, "team ui")


if __name__ == "__main__":
    main()
