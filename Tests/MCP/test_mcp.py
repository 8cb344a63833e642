"""`kagami mcp` driven by the official Python MCP client (`mcp` on PyPI) over standard input and
output. A real `kagami proxy` (loopback only, a contract check, a Map Local folder) records curl
requests to an origin on 127.0.0.1 port 0; `kagami mcp` serves that session: its tools are
listed, the session searched, an exchange read, the contract violations listed, arguments
outside a tool's schema refused naming the field; each change a write tool makes listed as a
note of the session (list_notes); without --allow-write no write tool is
served, and with it a Map Local rule added through the proxy's admin API answers the next curl
and a breakpoint added holds the next exchange until it is released with an edit; and the same
tools over Streamable HTTP (`kagami mcp --http`), there with a token asked when given; the live
proxy's session read through its admin API alone (`kagami mcp --proxy URL --token T`, no
session file); and a session of a PostgreSQL store (`--store`, skipped with the reason when no
PostgreSQL is installed).
Prints `mcp tests: N passed, M failed`; exits non-zero on any failure.

Usage: python Tests/MCP/test_mcp.py [path/to/kagami]
"""
import asyncio
import glob
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
import traceback
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.exceptions import McpError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The proxy as the browser suites start it (Tests/UI/test_ui.py).
sys.path.insert(0, os.path.join(ROOT, "Tests", "UI"))
from test_ui import Kagami  # noqa: E402
from test_team import Cluster  # noqa: E402

# The origin's users have string ids; the description says integers: one violation each.
DESCRIPTION = """openapi: 3.0.3
info: {title: Users, version: "1"}
paths:
  /users/{id}:
    get:
      parameters: [{name: id, in: path, required: true, schema: {type: integer}}]
      responses:
        "200":
          description: a user
          content:
            application/json:
              schema:
                type: object
                required: [id, name]
                properties: {id: {type: integer}, name: {type: string}}
"""

WRITE_TOOLS = {"add_rule", "set_rule_enabled", "remove_rule", "repeat_exchange", "release_breakpoint", "list_rules", "list_held",
               "list_scenarios", "use_scenario"}


class Origin(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path.startswith("/users/"):
            body = json.dumps({"id": "user-" + self.path.rsplit("/", 1)[-1], "name": "Ada"}).encode()
        else:
            body = b'{"ok":true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def curl(proxy, url, *extra):
    result = subprocess.run(["curl", "-s", "-S", "-x", proxy, "--max-time", "10", *extra, url],
                            capture_output=True, text=True, timeout=20)
    assert result.returncode == 0, f"curl {url}: {result.stderr}"
    return result.stdout


class Proxy(Kagami):
    """`kagami proxy` on port 0 with its web UI on port 0, recording into `session`, checking
    against the users description and answering Map Local rules from `maps`."""

    def __init__(self, binary, workdir, env, base):
        self.maps = os.path.join(workdir, "maps")
        os.makedirs(self.maps)
        description = os.path.join(workdir, "users.yaml")
        with open(description, "w") as file:
            file.write(DESCRIPTION)
        scenarios = os.path.join(workdir, "scenarios.yaml")
        with open(scenarios, "w") as file:
            file.write("scenarios:\n  - name: users-down\n    states:\n      - operation: GET /users/{id}\n        state: error\n        status: 503\n")
        super().__init__(binary, workdir, env=env,
                         extra=["--map-local-root", self.maps, "--keep-rules-file", "--contract", f"{description}={base}",
                                "--scenarios", scenarios])
        # The admin API's address: the web UI's, without the page and its token.
        self.admin = re.match(r"http://[^/]+", self.ui).group(0)


async def call(session, name, arguments=None):
    """A tool's structured answer; a result marked as an error fails the test."""
    result = await asyncio.wait_for(session.call_tool(name, arguments or {}), 30)
    assert not result.isError, f"{name}: {result.content}"
    assert result.structuredContent is not None, f"{name} gave no structured content"
    assert json.loads(result.content[0].text) == result.structuredContent, f"{name}: the text is not the structured content"
    return result.structuredContent


async def eventually(what, check, attempts=100, pause=0.1):
    """`check()` until it returns something true: bounded in count, no time asserted."""
    value = None
    for _ in range(attempts):
        value = await check()
        if value:
            return value
        await asyncio.sleep(pause)
    raise AssertionError(f"{what}: never happened (last: {value!r})")


class Suite:
    def __init__(self, binary):
        self.binary = binary
        self.passed = 0
        self.failed = []
        self.skipped = []
        self.notifications = []
        self.workdir = tempfile.mkdtemp(prefix="kagami-mcp-")
        home = os.path.join(self.workdir, "home")
        os.makedirs(home, mode=0o700)
        self.env = {**os.environ, "KAGAMI_HOME": home, "KAGAMI_UPSTREAM_ALLOW": "loopback"}
        self.origin = ThreadingHTTPServer(("127.0.0.1", 0), Origin)
        threading.Thread(target=self.origin.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.origin.server_address[1]}"
        self.kagami = Proxy(binary, self.workdir, self.env, self.base)
        for path in ["/users/1", "/users/2", "/health"]:
            curl(self.kagami.proxy, self.base + path, "-H", "Authorization: Bearer secret-token-123")

    def close(self):
        self.kagami.stop()
        self.origin.shutdown()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def server(self, *extra, arguments=None, env=None):
        return stdio_client(StdioServerParameters(
            command=self.binary, args=arguments or ["mcp", "--session", self.kagami.session, *extra], env=env or self.env))

    async def connected(self, test, *extra, arguments=None, env=None):
        async with self.server(*extra, arguments=arguments, env=env) as (read, write):
            async with ClientSession(read, write, message_handler=self.on_message) as session:
                await asyncio.wait_for(session.initialize(), 30)
                await test(session)

    async def on_message(self, message):
        """Keeps what the server announces (resource updates)."""
        if isinstance(message, types.ServerNotification):
            self.notifications.append(message.root)

    async def test_read_tools(self, session):
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        for name in ["list_sessions", "search_exchanges", "get_exchange", "get_body", "contract_violations",
                     "list_operations", "draft_description", "diff_sessions", "copy_curl"]:
            assert name in tools, f"{name} not listed: {sorted(tools)}"
            assert tools[name].inputSchema.get("type") == "object", f"{name}: no input schema"
            assert tools[name].outputSchema, f"{name}: no output schema"
        assert not WRITE_TOOLS & set(tools), f"write tools without --allow-write: {WRITE_TOOLS & set(tools)}"

        async def all_three():
            page = await call(session, "search_exchanges", {"filter": "host:127.0.0.1 path:/users/*"})
            return page if len(page["exchanges"]) == 2 else None
        page = await eventually("both /users exchanges in the session", all_three)
        assert [row["path"] for row in page["exchanges"]] == ["/users/2", "/users/1"], page
        first = await call(session, "search_exchanges", {"limit": 1})
        assert first["exchanges"][0]["path"] == "/health" and first["next"], first
        second = await call(session, "search_exchanges", {"limit": 1, "cursor": first["next"]})
        assert second["exchanges"][0]["path"] == "/users/2", second

        user = page["exchanges"][1]["id"]
        exchange = await call(session, "get_exchange", {"id": user})
        assert exchange["exchange"]["url"] == self.base + "/users/1", exchange["exchange"]["url"]
        assert exchange["exchange"]["response"]["status"] == 200
        assert json.loads(exchange["responseBody"]["text"]) == {"id": "user-1", "name": "Ada"}, exchange["responseBody"]
        assert "secret-token-123" not in json.dumps(exchange), "a credential was answered"
        assert ["Authorization", "[redacted by Kagami]"] in exchange["exchange"]["request"]["headers"]
        assert exchange["exchange"]["timings"]["end"] is not None
        curl_command = await call(session, "copy_curl", {"id": user})
        assert "/users/1" in curl_command["command"] and "secret-token-123" not in curl_command["command"]

        async def both_checked():
            found = await call(session, "contract_violations", {"filter": "path:/users/*"})
            return found if len(found["exchanges"]) == 2 else None
        violations = await eventually("the proxy's contract check stored its violations", both_checked)
        first_violation = violations["exchanges"][0]["violations"][0]
        assert first_violation["instancePointer"] == "/id" and first_violation["severity"] == "error", first_violation
        # The same description checked now, by kagami mcp itself.
        description = os.path.join(self.workdir, "users.yaml")
        checked = await call(session, "contract_violations", {"contract": f"{description}={self.base}", "filter": "path:/users/*"})
        assert [e["violations"][0]["instancePointer"] for e in checked["exchanges"]] == ["/id", "/id"], checked
        undocumented = await call(session, "contract_violations", {"filter": "path:/health"})
        assert undocumented["exchanges"][0]["violations"][0]["kind"] == "undocumented-path", undocumented

        operations = await call(session, "list_operations")
        users = [op for op in operations["operations"] if op["path"].startswith("/users/")]
        assert users and users[0]["count"] == 2 and users[0]["statuses"] == {"200": 2}, operations

    async def test_arguments_outside_the_schema(self, session):
        for arguments, field in [({"limit": "ten"}, "limit"), ({"filtre": "x"}, "filtre"), ({"limit": 0}, "limit")]:
            try:
                await session.call_tool("search_exchanges", arguments)
            except McpError as error:
                assert field in str(error), f"{arguments}: {error} does not name {field}"
            else:
                raise AssertionError(f"{arguments} was accepted")
        try:
            await session.call_tool("get_exchange", {"id": "not-an-id"})
        except McpError as error:
            assert "id" in str(error), str(error)
        else:
            raise AssertionError("a malformed id was accepted")
        try:
            await session.call_tool("add_rule", {"kind": "mapLocal", "rule": {}})
        except McpError as error:
            assert "--allow-write" in str(error), str(error)
        else:
            raise AssertionError("add_rule answered without --allow-write")

    async def test_resources(self, session):
        resources = (await session.list_resources()).resources
        uris = [str(resource.uri) for resource in resources]
        assert "kagami://session" in uris, uris
        exchange = next(uri for uri in uris if uri.startswith("kagami://exchange/"))
        contents = (await session.read_resource(exchange)).contents
        assert json.loads(contents[0].text)["exchange"]["id"] == exchange.rsplit("/", 1)[-1]
        # A live session: subscribed, the next exchange the proxy records is announced.
        await session.subscribe_resource("kagami://session")
        await asyncio.to_thread(curl, self.kagami.proxy, self.base + "/users/3")

        async def announced():
            return any(isinstance(n, types.ResourceUpdatedNotification) and str(n.params.uri) == "kagami://session"
                       for n in self.notifications)
        await eventually("the new exchange announced", announced)
        session_now = json.loads((await session.read_resource("kagami://session")).contents[0].text)
        assert session_now["newest"][0]["path"] == "/users/3", session_now["newest"][0]

    async def test_rules_and_breakpoints_through_the_admin_api(self, session):
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert {"add_rule", "set_rule_enabled", "remove_rule", "repeat_exchange", "release_breakpoint"} <= tools, sorted(tools)
        local = os.path.join(self.kagami.maps, "user.json")
        with open(local, "w") as file:
            file.write('{"id": 1, "name": "from a local file"}')
        added = await call(session, "add_rule", {"kind": "mapLocal", "rule": {
            "name": "user from disk", "from": {"host": "127.0.0.1", "path": "/users/1"}, "local": local}})
        assert added["rule"]["name"] == "user from disk", added
        answer = curl(self.kagami.proxy, self.base + "/users/1")
        assert json.loads(answer) == {"id": 1, "name": "from a local file"}, answer
        await call(session, "set_rule_enabled", {"kind": "mapLocal", "name": "user from disk", "enabled": False})
        assert json.loads(curl(self.kagami.proxy, self.base + "/users/1"))["id"] == "user-1"
        try:
            await session.call_tool("add_rule", {"kind": "mapLocal", "rule": {"name": "typo", "from": {"pth": "/x"}, "local": local}})
        except McpError as error:
            assert "pth" in str(error), str(error)
        else:
            raise AssertionError("a rule the proxy refuses was accepted")
        removed = await call(session, "remove_rule", {"kind": "mapLocal", "name": "user from disk"})
        assert removed["removed"] is True
        rules = await call(session, "list_rules")
        assert rules["rules"]["mapLocal"] == [], rules

        # A breakpoint: the next request is held until released with an edited response.
        await call(session, "add_rule", {"kind": "breakpoints", "rule": {"location": {"path": "/users/9"}, "request": False, "response": True}})
        held_answer = asyncio.create_task(asyncio.to_thread(curl, self.kagami.proxy, self.base + "/users/9"))

        async def held():
            listed = await call(session, "list_held")
            return listed["held"]["held"] or None
        waiting = (await eventually("the exchange held at its response", held))[0]
        assert waiting["phase"] == "response", waiting
        await call(session, "release_breakpoint", {"id": waiting["id"], "action": "execute", "response": {"body": '{"id": 9, "name": "edited"}'}})
        assert json.loads(await asyncio.wait_for(held_answer, 20)) == {"id": 9, "name": "edited"}

        # Named after its location by the proxy, then turned off and removed by that name.
        listed = await call(session, "list_rules")
        assert [b["name"] for b in listed["breakpoints"]["breakpoints"]] == ["*://*/users/9"], listed["breakpoints"]
        await call(session, "set_rule_enabled", {"kind": "breakpoints", "name": "*://*/users/9", "enabled": False})
        assert json.loads(curl(self.kagami.proxy, self.base + "/users/9"))["id"] == "user-9", "a disabled breakpoint held"
        try:
            await session.call_tool("remove_rule", {"kind": "breakpoints", "name": "/users/9"})
        except McpError as error:
            assert "name" in str(error) and "*://*/users/9" in str(error), str(error)
        else:
            raise AssertionError("an unknown breakpoint was removed")
        await call(session, "remove_rule", {"kind": "breakpoints", "name": "*://*/users/9"})
        listed = await call(session, "list_rules")
        assert listed["breakpoints"]["breakpoints"] == [], listed["breakpoints"]

        # Every change made is a note in the proxy's session, in order, by kagami mcp.
        notes = (await call(session, "list_notes"))["notes"]
        assert all(note["author"] == "kagami mcp" for note in notes), notes
        assert [note["text"] for note in notes] == [
            "added a mapLocal rule 'user from disk'", "disabled the mapLocal rule 'user from disk'",
            "removed the mapLocal rule 'user from disk'", "added a breakpoint '*://*/users/9'",
            f"released held exchange {waiting['id']}: execute",
            "disabled the breakpoint '*://*/users/9'", "removed the breakpoint '*://*/users/9'",
        ], [note["text"] for note in notes]
        assert notes[4]["flow"] == waiting["id"], notes[4]

    async def test_scenarios_through_the_admin_api(self, session):
        listed = await call(session, "list_scenarios")
        assert [s["name"] for s in listed["scenarios"]["scenarios"]] == ["users-down"], listed
        used = await call(session, "use_scenario", {"name": "users-down"})
        assert used["scenarios"]["active"] == "users-down", used
        answer = json.loads(curl(self.kagami.proxy, self.base + "/users/5"))
        assert answer["status"] == 503 and "users-down" in answer["detail"], answer
        try:
            await session.call_tool("use_scenario", {"name": "users-dwon"})
        except McpError as error:
            assert "name" in str(error) and "users-dwon" in str(error), str(error)
        else:
            raise AssertionError("an unknown scenario was put in force")
        off = await call(session, "use_scenario", {"off": True})
        assert off["scenarios"].get("active") is None, off
        assert json.loads(curl(self.kagami.proxy, self.base + "/users/5"))["id"] == "user-5"

    def test_streamable_http(self):
        """`kagami mcp --http --port 0`: two clients, each its own MCP session, then SIGTERM."""
        process = subprocess.Popen([self.binary, "mcp", "--http", "--port", "0", "--session", self.kagami.session],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=self.env)
        try:
            match = None
            for _ in range(20):
                line = process.stdout.readline()
                if not line or (match := re.search(r"Streamable HTTP at (http://\S+/mcp)", line)):
                    break
            assert match, f"kagami mcp --http did not say where it listens (last line {line!r})"
            threading.Thread(target=process.stdout.read, daemon=True).start()

            async def client():
                async with streamablehttp_client(match.group(1)) as (read, write, _):
                    async with ClientSession(read, write) as session:
                        await asyncio.wait_for(session.initialize(), 30)
                        tools = {tool.name for tool in (await session.list_tools()).tools}
                        assert "search_exchanges" in tools and not WRITE_TOOLS & tools, sorted(tools)
                        page = await call(session, "search_exchanges", {"filter": "path:/users/*"})
                        return [row["path"] for row in page["exchanges"]]

            async def both():
                return await asyncio.gather(client(), client())
            first, second = asyncio.run(asyncio.wait_for(both(), 60))
            assert first == second == ["/users/2", "/users/1"], (first, second)
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                raise AssertionError("kagami mcp --http did not stop on SIGTERM")

    async def test_live_proxy_through_its_admin_api(self, session):
        """No session file: the proxy's exchanges, read through its admin API with the token given."""
        await asyncio.to_thread(curl, self.kagami.proxy, self.base + "/users/42?via=admin",
                                "-H", "Authorization: Bearer secret-token-456")

        async def recorded():
            page = await call(session, "search_exchanges", {"filter": "path:/users/42"})
            return page if page["exchanges"] else None
        page = await eventually("the curl through the proxy found by search", recorded)
        row = page["exchanges"][0]
        assert row["query"] == "via=admin" and row["status"] == 200, row
        listed = await call(session, "list_sessions")
        assert listed["current"]["name"].startswith("the session of the proxy at http://127.0.0.1:"), listed
        assert listed["current"]["exchanges"] == page["total"] >= 4, (listed, page["total"])
        exchange = await call(session, "get_exchange", {"id": row["id"]})
        assert json.loads(exchange["responseBody"]["text"]) == {"id": "user-42?via=admin", "name": "Ada"}, exchange["responseBody"]
        assert "secret-token-456" not in json.dumps(exchange), "a credential was answered"
        curl_command = await call(session, "copy_curl", {"id": row["id"]})
        assert "via=admin" in curl_command["command"] and "secret-token-456" not in curl_command["command"]

        async def checked():
            found = await call(session, "contract_violations", {"filter": "path:/users/42"})
            return found if found["exchanges"] else None
        violations = await eventually("the proxy's contract violations read through its admin API", checked)
        assert violations["exchanges"][0]["violations"][0]["instancePointer"] == "/id", violations
        operations = await call(session, "list_operations")
        assert any(op["path"].startswith("/users/") for op in operations["operations"]), operations

        uris = [str(resource.uri) for resource in (await session.list_resources()).resources]
        assert f"kagami://exchange/{row['id']}" in uris, uris
        self.notifications.clear()
        await session.subscribe_resource("kagami://session")
        await asyncio.to_thread(curl, self.kagami.proxy, self.base + "/users/43")

        async def announced():
            return any(isinstance(n, types.ResourceUpdatedNotification) for n in self.notifications)
        await eventually("the live proxy's new exchange announced", announced)

    def test_a_wrong_token_is_refused_at_start(self):
        result = subprocess.run([self.binary, "mcp", "--proxy", self.kagami.admin, "--token", "not-the-token"],
                                capture_output=True, text=True, timeout=60, env=self.env, stdin=subprocess.DEVNULL)
        assert result.returncode != 0, "kagami mcp served a proxy that refused its token"
        assert self.kagami.admin in result.stderr and "/api/status" in result.stderr, result.stderr

    def test_store_session(self):
        """The proxy's session pushed into a PostgreSQL store twice, served from there."""
        if not os.environ.get("KAGAMI_TEST_POSTGRES_URL") and not any(
                os.path.exists(os.path.join(folder, "pg_ctl")) for folder in glob.glob("/usr/lib/postgresql/*/bin")) \
                and not shutil.which("pg_ctl"):
            return "no PostgreSQL installed (apt-get install postgresql, or set KAGAMI_TEST_POSTGRES_URL)"
        cluster = Cluster()
        try:
            for name in ["mcp-before", "mcp-after"]:
                pushed = subprocess.run([self.binary, "push", self.kagami.session, "--store", cluster.url, "--session", name],
                                        capture_output=True, text=True, timeout=120, env=self.env)
                assert pushed.returncode == 0, pushed.stderr

            async def test(session):
                listed = await call(session, "list_sessions")
                assert listed["current"]["name"].startswith("mcp-before"), listed
                assert "mcp-after" in listed["others"], listed
                page = await call(session, "search_exchanges", {"filter": "path:/users/*"})
                paths = [row["path"] for row in page["exchanges"]]
                assert "/users/1" in paths and "/users/2" in paths, paths
                exchange = await call(session, "get_exchange", {"id": page["exchanges"][-1]["id"]})
                assert "secret-token-123" not in json.dumps(exchange), "a credential was answered"
                diff = await call(session, "diff_sessions", {"before": {}, "after": {"session": "mcp-after"}})
                assert isinstance(diff["findings"], list), diff
            asyncio.run(asyncio.wait_for(self.connected(
                test, arguments=["mcp", "--store", cluster.url, "--session", "mcp-before"]), 120))
        finally:
            cluster.close()
        return None

    def test_streamable_http_with_a_token(self):
        """`kagami mcp --http --token T` asks every client for the token, on loopback too."""
        token = "mcp-http-token-789"
        process = subprocess.Popen([self.binary, "mcp", "--http", "--port", "0", "--session", self.kagami.session, "--token", token],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=self.env)
        try:
            match = None
            for _ in range(20):
                line = process.stdout.readline()
                if not line or (match := re.search(r"Streamable HTTP at (http://\S+/mcp)", line)):
                    break
            assert match, f"kagami mcp --http did not say where it listens (last line {line!r})"
            threading.Thread(target=process.stdout.read, daemon=True).start()
            url = match.group(1)
            initialize = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}).encode()
            for headers in [{}, {"Authorization": "Bearer not-the-token"}]:
                request = urllib.request.Request(url, data=initialize, method="POST", headers={
                    "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
                try:
                    urllib.request.urlopen(request, timeout=20)
                except urllib.error.HTTPError as error:
                    assert error.code == 401, f"{headers}: {error.code}"
                else:
                    raise AssertionError(f"{headers}: served without the token")

            async def client():
                async with streamablehttp_client(url, headers={"Authorization": f"Bearer {token}"}) as (read, write, _):
                    async with ClientSession(read, write) as session:
                        await asyncio.wait_for(session.initialize(), 30)
                        page = await call(session, "search_exchanges", {"filter": "path:/users/1"})
                        return [row["path"] for row in page["exchanges"]]
            assert asyncio.run(asyncio.wait_for(client(), 60))[-1] == "/users/1"
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()

    def run(self):
        tests = [
            ("read tools over a recorded session", self.test_read_tools, ()),
            ("arguments outside a tool's schema", self.test_arguments_outside_the_schema, ()),
            ("resources", self.test_resources, ()),
            ("rules and breakpoints through the admin API", self.test_rules_and_breakpoints_through_the_admin_api, ("--allow-write", "--proxy", self.kagami.admin)),
            ("scenarios through the admin API", self.test_scenarios_through_the_admin_api, ("--allow-write", "--proxy", self.kagami.admin)),
        ]
        # Another installation's home, without the proxy's admin token: only --token lets it in.
        elsewhere = os.path.join(self.workdir, "elsewhere")
        os.makedirs(elsewhere, mode=0o700)
        with open(os.path.join(self.env["KAGAMI_HOME"], "admin-token")) as file:
            token = file.read().strip()
        attached = {"arguments": ["mcp", "--proxy", self.kagami.admin, "--token", token], "env": {**self.env, "KAGAMI_HOME": elsewhere}}
        started = time.time()
        try:
            self.test_streamable_http()
            self.passed += 1
            print(f"ok: Streamable HTTP ({time.time() - started:.1f} s)")
        except BaseException:  # noqa: BLE001
            self.failed.append("Streamable HTTP")
            print("FAILED: Streamable HTTP")
            traceback.print_exc()
        for name, test, extra in tests + [("a live proxy through its admin API alone", self.test_live_proxy_through_its_admin_api, attached)]:
            started = time.time()
            try:
                if isinstance(extra, dict):
                    asyncio.run(asyncio.wait_for(self.connected(test, **extra), 120))
                else:
                    asyncio.run(asyncio.wait_for(self.connected(test, *extra), 120))
                self.passed += 1
                print(f"ok: {name} ({time.time() - started:.1f} s)")
            except BaseException:  # noqa: BLE001 — every failure is reported, the suite goes on
                self.failed.append(name)
                print(f"FAILED: {name}")
                traceback.print_exc()
        for name, test in [("a wrong token refused at start", self.test_a_wrong_token_is_refused_at_start),
                           ("Streamable HTTP with a token", self.test_streamable_http_with_a_token),
                           ("a session of a PostgreSQL store", self.test_store_session)]:
            started = time.time()
            try:
                reason = test()
                if reason:
                    self.skipped.append(name)
                    print(f"SKIPPED: {name}: {reason}")
                    continue
                self.passed += 1
                print(f"ok: {name} ({time.time() - started:.1f} s)")
            except BaseException:  # noqa: BLE001
                self.failed.append(name)
                print(f"FAILED: {name}")
                traceback.print_exc()


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "debug", "kagami")
    started = time.time()
    suite = Suite(binary)
    try:
        suite.run()
    finally:
        suite.close()
    skipped = f", {len(suite.skipped)} skipped ({', '.join(suite.skipped)})" if suite.skipped else ""
    print(f"mcp tests: {suite.passed} passed, {len(suite.failed)} failed{skipped} ({time.time() - started:.0f} s)")
    sys.exit(1 if suite.failed else 0)


if __name__ == "__main__":
    main()
