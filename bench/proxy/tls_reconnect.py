"""Opens COUNT connections one after the other through an HTTP proxy to an HTTPS origin: each a
CONNECT, a TLS handshake (Python's ssl, OpenSSL) and one GET read to its end. With --resume each
connection offers the session of the one before, as browsers and most HTTP libraries do; without,
each makes a full handshake. Prints how many requests got 200, how many sessions were resumed
and the seconds all took. The client writes without TCP_NODELAY, as Python's socket does.
Used by https.sh to measure what a resumed session saves the proxy; talks to 127.0.0.1 only."""
import argparse, socket, ssl, time

parser = argparse.ArgumentParser()
parser.add_argument("--proxy-port", type=int, required=True)
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--cafile", required=True)
parser.add_argument("--count", type=int, default=1000)
parser.add_argument("--resume", action="store_true")
arguments = parser.parse_args()
HOST = "127.0.0.1"
context = ssl.create_default_context(cafile=arguments.cafile)


def read_head(sock):
    head = b""
    while b"\r\n\r\n" not in head:
        byte = sock.recv(1)
        if not byte:
            raise SystemExit("connection closed in a response head: %r" % head)
        head += byte
    return head


def fetch(session):
    raw = socket.create_connection(("127.0.0.1", arguments.proxy_port), timeout=20)
    raw.sendall(b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (HOST.encode(), arguments.port, HOST.encode(), arguments.port))
    if not read_head(raw).startswith(b"HTTP/1.1 200"):
        raise SystemExit("CONNECT refused")
    tls = context.wrap_socket(raw, server_hostname=HOST, session=session)
    tls.sendall(b"GET /small HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (HOST.encode(), arguments.port))
    head = read_head(tls)
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
    body = b""
    while len(body) < length:
        body += tls.recv(length - len(body))
    ok, reused, session = head.startswith(b"HTTP/1.1 200"), tls.session_reused, tls.session
    tls.close()
    return ok, reused, session


ok_count = reused_count = 0
session = None
started = time.monotonic()
for _ in range(arguments.count):
    ok, reused, latest = fetch(session if arguments.resume else None)
    ok_count += ok
    reused_count += reused
    session = latest
print(f"{ok_count} {reused_count} {time.monotonic() - started:.3f}")
