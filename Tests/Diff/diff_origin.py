"""The origin of the diff tests: one small JSON API in two versions, as two builds of a backend.

Version 2 adds GET /recommendations, drops `email` from GET /users/{id}, reads `query` where
version 1 read `q` on GET /search, answers POST /orders with 202 where version 1 answered 201,
and takes 300 ms on GET /slow where version 1 took 5 ms. Both versions give every answer new
ids, times and tokens, so a diff must ignore them.

Usage: diff_origin.py VERSION   (prints "port N", serves on 127.0.0.1 until standard input closes)
"""
import json
import secrets
import sys
import threading
import time
import uuid
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

VERSION = int(sys.argv[1]) if len(sys.argv) > 1 else 1


def now():
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes

    def log_message(self, *args):
        pass

    def answer(self, status, value):
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Request-Id", str(uuid.uuid4()))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        path = url.path
        if path == "/config":
            self.answer(200, {"theme": "light", "refresh_seconds": 30, "generated_at": now(), "request_id": str(uuid.uuid4())})
        elif path == "/feed":
            items = [{"id": secrets.randbelow(10**9), "title": f"Post {n}", "published_at": now()} for n in range(3)]
            self.answer(200, {"items": items, "page": int(query.get("page", ["1"])[0]), "next_cursor": secrets.token_urlsafe(24)})
        elif path.startswith("/users/"):
            user = {"id": int(path.rsplit("/", 1)[1]), "name": "Ada", "email": "ada@example.com", "last_login": now(),
                    "avatar_url": f"https://cdn.example.com/avatars/{secrets.token_hex(8)}.png"}
            if VERSION >= 2:
                del user["email"]
            self.answer(200, user)
        elif path == "/search":
            words = query.get("query" if VERSION >= 2 else "q")
            if not words:
                self.answer(400, {"error": "missing search words"})
                return
            self.answer(200, {"query": words[0], "results": [{"id": secrets.randbelow(10**6), "name": "Running shoe"}]})
        elif path == "/slow":
            time.sleep(0.3 if VERSION >= 2 else 0.005)
            self.answer(200, {"ok": True})
        elif path == "/recommendations" and VERSION >= 2:
            self.answer(200, {"items": [{"id": str(uuid.uuid4()), "reason": "popular"}]})
        else:
            self.answer(404, {"error": "no such route"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        order = json.loads(self.rfile.read(length) or b"{}")
        if urlsplit(self.path).path != "/orders":
            self.answer(404, {"error": "no such route"})
            return
        self.answer(202 if VERSION >= 2 else 201,
                    {"order_id": str(uuid.uuid4()), "sku": order.get("sku"), "status": "queued" if VERSION >= 2 else "created", "created_at": now()})


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"port {server.server_address[1]}", flush=True)
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
