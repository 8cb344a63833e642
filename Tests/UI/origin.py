"""The testing origin for the browser tests: JSON, an image, text, form posts, any status."""
import json
import struct
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def png(width=24, height=16):
    """A small real PNG (a gradient), so the page has an image to show."""
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + b"".join(bytes((x * 10 % 256, y * 15 % 256, 200)) for x in range(width)) for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


USERS = {"users": [{"id": 1, "name": "Ada", "roles": ["admin", "dev"], "address": {"city": "London"}},
                   {"id": 2, "name": "Grace", "roles": ["dev"], "address": {"city": "Arlington"}}],
         "total": 2}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes

    def log_message(self, *args):
        pass

    def send(self, status, body, content_type, extra=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        path = self.path.split("://", 1)[-1]
        path = path[path.find("/"):] if "/" in path else "/"
        route = path.split("?", 1)[0]
        if route == "/api/users.json":
            self.send(200, json.dumps(USERS).encode(), "application/json", [("Set-Cookie", "session=s3cr3t; Path=/; HttpOnly")])
        elif route == "/images/logo.png":
            self.send(200, png(), "image/png")
        elif route.startswith("/status/"):
            code = int(route.rsplit("/", 1)[1])
            self.send(code, f"status {code}\n".encode(), "text/plain")
        else:
            self.send(200, f"hello from {route}\n".encode(), "text/plain; charset=utf-8")

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        self.send(201, json.dumps({"received": body.decode("utf-8", "replace")}).encode(), "application/json")


def start():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
