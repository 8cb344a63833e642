"""Checks of Kagami that need addresses of this host other than 127.0.0.1, run inside a private
network namespace (`unshare -n`, made by the calling test): nothing here can reach any other
machine. Two addresses are put on the namespace's loopback device, 10.77.0.1 (the proxy's
"network" address) and 10.77.0.2 (a "device" on that network).

    unshare -n python host_addresses.py KAGAMI

1. The admin API is not reachable through the proxy at an interface address of this host
   (http://10.77.0.1:UIPORT through the proxy), even with an allow list that admits it.
2. A client address that was not allowed is held: answered 403, shown in /api/clients, never
   relayed; once allowed from the admin API it is served; this machine always is; a network
   given with --allow-client is served from the start.

Prints one line per check and "ok" at the end; exits non-zero on the first failure.
"""
import http.client
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

PROXY_ADDRESS, DEVICE, PRE_ALLOWED = "10.77.0.1", "10.77.0.2", "10.77.0.3"


def run(command):
    subprocess.run(command, check=True, capture_output=True)


def setup_addresses():
    run(["ip", "link", "set", "lo", "up"])
    for address in (PROXY_ADDRESS, DEVICE, PRE_ALLOWED):
        run(["ip", "addr", "add", f"{address}/24", "dev", "lo"])


class Origin(http.server.BaseHTTPRequestHandler):
    hits = []

    def do_GET(self):
        Origin.hits.append(self.path)
        body = f"origin saw {self.path}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *arguments):
        pass


def start_origin():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Origin)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def start_kagami(binary, workdir, extra):
    environment = dict(os.environ, KAGAMI_HOME=os.path.join(workdir, "home"))
    process = subprocess.Popen(
        [binary, "proxy", "--host", "0.0.0.0", "--port", "0", "--ui-host", "0.0.0.0", "--ui-port", "0", "--no-ssl-proxying",
         "--session", os.path.join(workdir, "session.sqlite"), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment)
    banner, deadline = "", time.time() + 60
    while time.time() < deadline and "Web UI:" not in banner:
        line = process.stdout.readline()
        if not line:
            raise SystemExit(f"kagami proxy exited: {banner}")
        banner += line
    threading.Thread(target=process.stdout.read, daemon=True).start()
    proxy_port = int(re.search(r"listening on http://[\d.]+:(\d+)", banner).group(1))
    ui = re.search(r"Web UI: http://[\d.]+:(\d+)/\?token=(\w+)", banner)
    return process, proxy_port, int(ui.group(1)), ui.group(2), banner


def through_proxy(source, proxy_port, method, url, headers=None, body=None):
    """A request sent from `source` to the proxy at 10.77.0.1 (absolute form): (status, text)."""
    connection = http.client.HTTPConnection(PROXY_ADDRESS, proxy_port, timeout=20, source_address=(source, 0))
    try:
        connection.request(method, url, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        connection.close()


def admin(ui_port, token, method, path, body=None):
    connection = http.client.HTTPConnection("127.0.0.1", ui_port, timeout=20)
    try:
        headers = {"Authorization": f"Bearer {token}"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        connection.close()


def check(condition, message):
    if not condition:
        raise SystemExit(f"FAILED: {message}")
    print("ok:", message.split(":")[0], flush=True)


def main():
    binary = sys.argv[1]
    setup_addresses()
    origin_port = start_origin()
    origin_url = f"http://127.0.0.1:{origin_port}"
    workdir = tempfile.mkdtemp(prefix="kagami-host-addresses-")
    process, proxy_port, ui_port, token, banner = start_kagami(
        binary, workdir, ["--upstream-allow", "loopback", "--upstream-allow", "10.77.0.0/24", "--allow-client", PRE_ALLOWED])
    try:
        check("any other device is held" in banner, f"the banner says who may use the proxy: {banner}")
        # 1. The admin API at this host's interface address, through the proxy (from this machine).
        status, text = through_proxy("127.0.0.1", proxy_port, "GET", f"http://{PROXY_ADDRESS}:{ui_port}/api/rules",
                                     {"Authorization": f"Bearer {token}"})
        check(status == 403 and "is Kagami itself" in text, f"admin API at {PROXY_ADDRESS} through the proxy refused: {status} {text}")
        status, text = through_proxy("127.0.0.1", proxy_port, "GET", f"http://{PROXY_ADDRESS}:{proxy_port}/")
        check(status == 403, f"the proxy at {PROXY_ADDRESS} through itself refused: {status} {text}")

        # 2. Who may use the proxy.
        status, text = through_proxy("127.0.0.1", proxy_port, "GET", f"{origin_url}/from-this-machine")
        check(status == 200 and "origin saw /from-this-machine" in text, f"this machine is served: {status} {text}")
        status, text = through_proxy(PRE_ALLOWED, proxy_port, "GET", f"{origin_url}/from-an-allowed-network")
        check(status == 200, f"--allow-client {PRE_ALLOWED} is served: {status} {text}")
        status, text = through_proxy(DEVICE, proxy_port, "GET", f"{origin_url}/from-a-new-device")
        check(status == 403 and "has not been allowed for 10.77.0.2" in text, f"a new device is held with a 403 page: {status} {text}")
        check("/from-a-new-device" not in Origin.hits, "the held request was not relayed")
        status, clients = admin(ui_port, token, "GET", "/api/clients")
        pending = [client["address"] for client in clients["pending"]]
        check(status == 200 and pending == [DEVICE], f"the device waits in /api/clients: {clients}")
        check("from-a-new-device" in (clients["pending"][0]["lastRequest"] or ""), f"its request line is shown: {clients}")
        status, clients = admin(ui_port, token, "POST", "/api/clients", {"address": DEVICE, "decision": "allow"})
        check(status == 200 and DEVICE in clients["allowed"] and not clients["pending"], f"allowed from the admin API: {clients}")
        status, text = through_proxy(DEVICE, proxy_port, "GET", f"{origin_url}/after-allowing")
        check(status == 200 and "origin saw /after-allowing" in text, f"the allowed device is served: {status} {text}")
        status, clients = admin(ui_port, token, "POST", "/api/clients", {"address": DEVICE, "decision": "deny"})
        status, text = through_proxy(DEVICE, proxy_port, "GET", f"{origin_url}/after-denying")
        check(status == 403 and "denied" in text, f"a denied device gets a 403 page: {status} {text}")
        check("/after-denying" not in Origin.hits, "the denied request was not relayed")
        # The admin API beyond loopback wants its token too.
        connection = http.client.HTTPConnection(PROXY_ADDRESS, ui_port, timeout=20, source_address=(DEVICE, 0))
        connection.request("GET", "/api/rules")
        check(connection.getresponse().status == 401, "the admin API refuses a device without the token")
        connection.close()
    finally:
        process.terminate()
        process.wait(20)
    print("ok")


if __name__ == "__main__":
    main()
