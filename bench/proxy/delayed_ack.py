"""Times exchanges where a peer writes without TCP_NODELAY (Nagle), through a proxy on
127.0.0.1 and, for comparison, straight to the server. The servers are Python's http.server
echoing a POST (HTTP/1.1 kept alive, its head and body sent in two writes, as werkzeug and many
development servers answer); the clients are bare sockets. A delayed ACK adds 40 ms or more to
each exchange it holds. Prints each pattern's median in ms, through the proxy and direct, as a
Markdown table (Tests/KagamiProxyTests/DelayedAcknowledgementTests.swift reads it).
Usage: python3 bench/proxy/delayed_ack.py --proxy-port PORT [--count 15]"""
import argparse, http.server, socket, statistics, threading, time

parser = argparse.ArgumentParser()
parser.add_argument("--proxy-port", type=int, required=True)
parser.add_argument("--count", type=int, default=15)
arguments = parser.parse_args()


def origin(nagle):
    class Origin(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = not nagle

        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Origin)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def connect(port, nodelay):
    sock = socket.create_connection(("127.0.0.1", port), timeout=20)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, int(nodelay))
    return sock


def exchange(sock, port, proxied, apart):
    target = "http://127.0.0.1:%d/echo" % port if proxied else "/echo"
    head = ("POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 5\r\n\r\n" % (target, port)).encode()
    started = time.monotonic()
    if apart:
        sock.sendall(head)
        sock.sendall(b"hello")
    else:
        sock.sendall(head + b"hello")
    data = b""
    while not data.endswith(b"\r\n\r\nhello"):
        chunk = sock.recv(4096)
        if not chunk:
            raise SystemExit("closed after %r" % data)
        data += chunk
    return (time.monotonic() - started) * 1000


def pattern(name, server_nagle, client_nagle, kept_alive):
    port = origin(server_nagle)
    results = {}
    for proxied in (True, False):
        times, sock = [], None
        for _ in range(arguments.count):
            if sock is None or not kept_alive:
                if sock:
                    sock.close()
                sock = connect(arguments.proxy_port if proxied else port, not client_nagle)
            times.append(exchange(sock, port, proxied, client_nagle))
        sock.close()
        results[proxied] = statistics.median(times)
    print("| %s | %.1f | %.1f |" % (name, results[True], results[False]))


print("| pattern | through the proxy, ms | direct, ms |")
print("|---|--:|--:|")
pattern("both with TCP_NODELAY, kept alive", False, False, True)
pattern("server without TCP_NODELAY, a new client connection each", True, False, False)
pattern("server without TCP_NODELAY, one kept-alive client connection", True, False, True)
pattern("client without TCP_NODELAY (head and body apart), kept alive", False, True, True)
pattern("both without TCP_NODELAY, kept alive", True, True, True)
