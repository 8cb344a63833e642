"""Chromium through Kagami as a forward proxy, trusting Kagami's CA from an NSS database as a user
would (certutil into the profile's ~/.pki/nssdb, no certificate-error flags): an HTTPS page from
nginx with `http2`, which Chromium must load over h2 (the page's Navigation Timing
`nextHopProtocol`), and a `new WebSocket('wss://…')` from that page to a Python `websockets`
echo server. Kagami records both: the page as HTTP/2 on both legs, the socket with its messages.
Everything is on 127.0.0.1.

Prints `chromium protocol tests: N passed, M failed`; exits non-zero on any failure.
Usage: python Tests/UI/test_chromium_protocols.py [path/to/kagami]
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, os.path.dirname(__file__))
import test_ui  # noqa: E402
from page import run_each  # noqa: E402
from test_ui import api  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

PAGE = """<!doctype html>
<title>h2 through Kagami</title>
<script>
window.socketResult = null;
window.openSocket = function (url) {
  const socket = new WebSocket(url);
  const got = [];
  socket.onopen = () => { socket.send("hello from chromium"); socket.send(new Uint8Array([1, 2, 3])); };
  socket.onmessage = async (event) => {
    got.push(typeof event.data === "string" ? event.data : Array.from(new Uint8Array(await event.data.arrayBuffer())).join(","));
    if (got.length === 2) socket.close(1000, "done");
  };
  socket.onclose = (event) => { window.socketResult = {code: event.code, got: got}; };
  socket.onerror = () => { window.socketResult = window.socketResult || {error: true, got: got}; };
};
</script>
<p id="loaded">loaded</p>
"""


def run(command, **kwargs):
    subprocess.run(command, check=True, capture_output=True, **kwargs)


def make_origin_certificates(directory):
    """A CA and a certificate for localhost and 127.0.0.1 signed by it, with openssl."""
    ca_key, ca_cert = os.path.join(directory, "origin-ca.key"), os.path.join(directory, "origin-ca.pem")
    key, csr, cert = (os.path.join(directory, name) for name in ("origin.key", "origin.csr", "origin.pem"))
    run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", ca_key, "-out", ca_cert, "-days", "2", "-subj", "/CN=Kagami test origin CA"])
    run(["openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", key, "-out", csr, "-subj", "/CN=localhost"])
    extensions = os.path.join(directory, "san.cnf")
    with open(extensions, "w") as file:
        file.write("subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    run(["openssl", "x509", "-req", "-in", csr, "-CA", ca_cert, "-CAkey", ca_key, "-CAcreateserial",
         "-out", cert, "-days", "2", "-extfile", extensions])
    return ca_cert, cert, key


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, process, what):
    import socket
    deadline = time.time() + 30
    while time.time() < deadline:
        if process.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on {port}")


class Nginx:
    """nginx serving `www` over TLS with h2 and http/1.1 offered by ALPN."""

    def __init__(self, directory, www, cert, key):
        for _ in range(5):
            self.port = free_port()
            configuration = os.path.join(directory, "nginx.conf")
            with open(configuration, "w") as file:
                file.write(f"""daemon off; master_process off; pid {directory}/nginx.pid; error_log {directory}/error.log;
events {{}}
http {{
    access_log off;
    client_body_temp_path {directory}/body; proxy_temp_path {directory}/proxy;
    fastcgi_temp_path {directory}/fastcgi; uwsgi_temp_path {directory}/uwsgi; scgi_temp_path {directory}/scgi;
    types {{ text/html html; }}
    server {{
        listen 127.0.0.1:{self.port} ssl http2;
        ssl_certificate {cert};
        ssl_certificate_key {key};
        root {www};
    }}
}}
""")
            self.process = subprocess.Popen(["nginx", "-c", configuration, "-p", directory, "-e", f"{directory}/error.log"],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if wait_for_port(self.port, self.process, "nginx"):
                return
        raise RuntimeError("nginx did not start: " + open(f"{directory}/error.log").read())

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


class Kagami(test_ui.Kagami):
    """`kagami proxy` intercepting HTTPS with a CA of its own, trusting the origin's CA."""

    def __init__(self, binary, directory, upstream_ca):
        self.ca_dir = os.path.join(directory, "kagami-ca")
        super().__init__(binary, directory, extra=["--ca-dir", self.ca_dir, "--upstream-ca", upstream_ca], ssl_proxying=True)

    @property
    def ca_certificate(self):
        return os.path.join(self.ca_dir, "kagami-ca.pem")

    def flows(self):
        status, body = api(self.ui, "GET", "/api/flows")
        assert status == 200, body
        return body["flows"]


class Suite:
    def __init__(self, binary):
        self.directory = tempfile.mkdtemp(prefix="kagami-chromium-")
        self.passed, self.failed = 0, []
        ca_cert, cert, key = make_origin_certificates(self.directory)
        www = os.path.join(self.directory, "www")
        os.makedirs(www)
        with open(os.path.join(www, "page.html"), "w") as file:
            file.write(PAGE)
        self.nginx = Nginx(self.directory, www, cert, key)
        self.echo = subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests", "WebSocket", "ws_peer.py"), "server",
                                      "--cert", cert, "--key", key], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.echo_port = int(self.echo.stdout.readline().split()[1])
        self.kagami = Kagami(binary, self.directory, ca_cert)
        # Chromium on Linux trusts what is in the profile's NSS database: Kagami's CA goes there,
        # as a user would add it (docs/HTTPS.md), with HOME pointing at a fresh folder.
        self.home = os.path.join(self.directory, "home")
        nssdb = os.path.join(self.home, ".pki", "nssdb")
        os.makedirs(nssdb)
        run(["certutil", "-N", "-d", f"sql:{nssdb}", "--empty-password"])
        run(["certutil", "-A", "-d", f"sql:{nssdb}", "-n", "Kagami", "-t", "C,,", "-i", self.kagami.ca_certificate])
        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which("chromium")
        for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--proxy-server={self.kagami.proxy}",
                     # Chromium sends nothing for localhost through a proxy unless told to.
                     "--proxy-bypass-list=<-loopback>",
                     f"--user-data-dir={os.path.join(self.directory, 'profile')}"]:
            options.add_argument(flag)
        environment = dict(os.environ, HOME=self.home)
        self.driver = webdriver.Chrome(service=Service(shutil.which("chromedriver"), env=environment), options=options)

    def until(self, condition, what, timeout=30):
        WebDriverWait(self.driver, timeout).until(lambda _: condition(), message=what)

    def test_h2_page_and_wss_socket(self):
        page = f"https://localhost:{self.nginx.port}/page.html"
        self.driver.get(page)
        self.until(lambda: self.driver.execute_script("return document.getElementById('loaded') !== null"), "the page loaded")
        protocol = self.driver.execute_script("return performance.getEntriesByType('navigation')[0].nextHopProtocol")
        assert protocol == "h2", f"Chromium negotiated {protocol!r} with Kagami, not h2"
        self.driver.execute_script(f"openSocket('wss://localhost:{self.echo_port}/chat')")
        self.until(lambda: self.driver.execute_script("return window.socketResult") is not None, "the socket closed")
        result = self.driver.execute_script("return window.socketResult")
        assert result.get("code") == 1000 and result.get("got") == ["hello from chromium", "1,2,3"], result

        def recorded():
            flows = self.kagami.flows()
            return ([f for f in flows if f.get("path") == "/page.html" and f.get("status") == 200],
                    [f for f in flows if f.get("path") == "/chat" and f.get("status") == 101])
        self.until(lambda: all(recorded()), "the page and the socket recorded")
        pages, sockets = recorded()
        status, detail = api(self.kagami.ui, "GET", f"/api/flows/{pages[0]['id']}")
        assert status == 200, detail
        # HTTP/2 on both legs: Chromium to Kagami, and Kagami to nginx (chosen by ALPN on each).
        assert detail["request"]["version"] == "HTTP/2.0", detail["request"]
        assert detail["response"]["version"] == "HTTP/2.0", detail["response"]
        assert detail["tls"]["alpn"] == "h2", detail["tls"]
        assert detail.get("streamId", 0) % 2 == 1, detail.get("streamId")

        def messages():
            status, body = api(self.kagami.ui, "GET", f"/api/flows/{sockets[0]['id']}/messages")
            assert status == 200, body
            return body["messages"] if isinstance(body, dict) else body
        self.until(lambda: len(messages()) >= 6, "both messages, their echoes and the closes stored")
        # Opcodes as RFC 6455 numbers them: 1 text, 2 binary, 8 close.
        shown = [(m["type"], m["opcode"], m.get("text") or m.get("base64")) for m in messages()]
        for direction in ("send", "receive"):
            assert (direction, 1, "hello from chromium") in shown, shown
            assert (direction, 2, "AQID") in shown, shown
            assert any(d == direction and opcode == 8 for d, opcode, _ in shown), shown

    def run(self):
        self.passed, self.failed = run_each([self.test_h2_page_and_wss_socket], self.driver, "chromium-protocols")

    def close(self):
        for stop in (self.driver.quit, self.kagami.stop, self.nginx.stop):
            try:
                stop()
            except Exception:
                traceback.print_exc()
        self.echo.stdin.close()
        self.echo.wait(timeout=10)
        shutil.rmtree(self.directory, ignore_errors=True)


def main():
    test_ui.run_suite(Suite, "chromium protocol")


if __name__ == "__main__":
    main()
