"""An HTTP/2 origin (hypercorn) and an HTTP/2 client (httpx) for the proxy's tests.

server [--cert FILE --key FILE]: serves on 127.0.0.1, port 0 (TLS with h2 and http/1.1 by ALPN
        when given a certificate, else h2c and HTTP/1.1), prints "port N", serves until stdin
        closes. Every request is answered with JSON: the HTTP version it arrived in, method,
        path, headers, and the SHA-256 of its body.
client --url URL [--proxy URL] [--cacert FILE] [--data N]: one request with httpx (http2=True),
        prints one JSON line: the response's HTTP version, status and body.
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


if __name__ == "__main__":
    if sys.argv[1] == "server":
        serve(sys.argv[2:])
    else:
        client(sys.argv[2:])
