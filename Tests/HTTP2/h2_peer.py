"""An HTTP/2 origin (hypercorn) and an HTTP/2 client (httpx) for the proxy's tests.

server [--cert FILE --key FILE]: serves on 127.0.0.1, port 0 (TLS with h2 and http/1.1 by ALPN
        when given a certificate, else h2c and HTTP/1.1), prints "port N", serves until stdin
        closes. Every request is answered with JSON: the HTTP version it arrived in, method,
        path, headers, and the SHA-256 of its body.
client --url URL [--proxy URL] [--cacert FILE] [--data N]: one request with httpx (http2=True),
        prints one JSON line: the response's HTTP version, status and body.
h2c-proxy --proxy-port N --url URL: one GET with the h2 library over clear-text HTTP/2 with prior
        knowledge to a forward proxy on 127.0.0.1, naming the server in :authority and the path
        in :path (RFC 9113 §8.3.1); prints one JSON line: status and body.
"""
import asyncio
import hashlib
import json
import socket
import ssl
import sys


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    digest = hashlib.sha256()
    more = True
    while more:
        message = await receive()
        digest.update(message.get("body", b""))
        more = message.get("more_body", False)
    body = json.dumps({
        "version": scope["http_version"],
        "method": scope["method"],
        "path": scope["raw_path"].decode() + ("?" + scope["query_string"].decode() if scope["query_string"] else ""),
        "headers": [[k.decode(), v.decode()] for k, v in scope["headers"]],
        "bodySHA256": digest.hexdigest(),
    }).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"set-cookie", b"a=1"), (b"set-cookie", b"b=2")]})
    await send({"type": "http.response.body", "body": body})


def serve(arguments):
    from hypercorn.asyncio import serve as hypercorn_serve
    from hypercorn.config import Config
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.set_inheritable(True)
    config = Config()
    config.bind = ["fd://%d" % listener.fileno()]
    config.accesslog = None
    config.errorlog = None
    if "--cert" in arguments:
        config.certfile = arguments[arguments.index("--cert") + 1]
        config.keyfile = arguments[arguments.index("--key") + 1]
        config.alpn_protocols = ["h2", "http/1.1"]
    print("port", listener.getsockname()[1], flush=True)

    async def main():
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_reader(sys.stdin.fileno(), lambda: stop.set() if not sys.stdin.buffer.read1(4096) else None)
        await hypercorn_serve(app, config, shutdown_trigger=stop.wait)

    asyncio.run(main())


def client(arguments):
    import httpx
    option = lambda name: arguments[arguments.index(name) + 1] if name in arguments else None
    verify = option("--cacert") or True
    with httpx.Client(http2=True, proxy=option("--proxy"), verify=verify, timeout=30) as session:
        data = b"x" * int(option("--data")) if option("--data") else None
        response = session.request("POST" if data else "GET", option("--url"), content=data,
                                   headers=[("cookie", "a=1"), ("cookie", "b=2")])
        print(json.dumps({"version": response.http_version, "status": response.status_code, "body": response.text}), flush=True)


def h2c_through_proxy(arguments):
    import urllib.parse
    import h2.config
    import h2.connection
    import h2.events
    option = lambda name: arguments[arguments.index(name) + 1]
    url = urllib.parse.urlsplit(option("--url"))
    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    connection.initiate_connection()
    path = url.path + ("?" + url.query if url.query else "")
    connection.send_headers(1, [(":method", "GET"), (":scheme", "http"), (":authority", url.netloc), (":path", path),
                                ("accept", "application/json")], end_stream=True)
    sock = socket.create_connection(("127.0.0.1", int(option("--proxy-port"))), timeout=30)
    sock.sendall(connection.data_to_send())
    status, body, ended = None, b"", False
    while not ended:
        data = sock.recv(65536)
        if not data:
            break
        for event in connection.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived):
                status = int(dict(event.headers)[":status"])
            elif isinstance(event, h2.events.DataReceived):
                body += event.data
                connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset)):
                ended = True
        sock.sendall(connection.data_to_send())
    sock.close()
    print(json.dumps({"status": status, "body": body.decode("utf-8", "replace")}), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "server":
        serve(sys.argv[2:])
    elif sys.argv[1] == "h2c-proxy":
        h2c_through_proxy(sys.argv[2:])
    else:
        client(sys.argv[2:])
