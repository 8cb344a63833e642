"""A WebSocket echo server and a client that checks what comes back, both from the
`websockets` package, for the proxy tests (Tests/KagamiProxyTests/WebSocketThroughProxyTests).

  ws_peer.py server [--cert CERT --key KEY]
      Echoes every message on 127.0.0.1, port 0; prints "port N" once listening, then runs
      until its standard input closes. A text message "close:CODE:REASON" makes it close the
      connection with that code and reason.

  ws_peer.py client URL [--proxy URL] [--ca CAFILE] [--big BYTES] [--no-compression]
      Sends text, binary, a fragmented message, a ping and a large binary message, checks each
      echo is byte-identical, then asks the server to close with 4001 "done". Prints one JSON
      line describing what it sent (the test compares it with what Kagami captured); exits 1 on
      any mismatch.

  ws_peer.py talk URL [--proxy URL] [--send TEXT]... [--expect TEXT]... [--no-compression]
      Sends each --send message (text; "b64:..." sends the decoded bytes as a binary
      message), then receives as many messages as there are --expect and checks they are those,
      in order (binary ones compared as "b64:..."). For the message tools: rules, breakpoints
      and messages injected by the proxy change what comes back. Prints one JSON line with what
      it received; exits 1 on any difference.

  ws_peer.py pings URL [--proxy URL] --count N
      Sends N pings (each awaiting its pong, 100 at a time), then one text message it expects
      echoed, then closes. Prints one JSON line with the pongs it had back.

  ws_peer.py absolute PROXY_PORT SERVER_PORT
      The handshake as an absolute-form request through a forward proxy on a plain socket,
      then one masked text frame and a close, frame by frame; checks the 101 arrives exactly
      as a 101 (no body framing after it) and the echo follows. Prints one JSON line. With
      --pause it prints "open" after the first echo and sends one more message once a line
      arrives on its standard input.
"""

import argparse
import asyncio
import base64
import hashlib
import json
import os
import socket
import ssl
import sys

from websockets.asyncio.client import connect
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed


async def echo(connection):
    try:
        async for message in connection:
            if isinstance(message, str) and message.startswith("close:"):
                _, code, reason = message.split(":", 2)
                await connection.close(int(code), reason)
                return
            await connection.send(message)
    except ConnectionClosed:
        pass


async def run_server(arguments):
    context = None
    if arguments.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(arguments.cert, arguments.key)
    async with serve(echo, "127.0.0.1", 0, ssl=context, max_size=None) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"port {port}", flush=True)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, sys.stdin.read)


async def run_client(arguments):
    context = None
    if arguments.url.startswith("wss:"):
        context = ssl.create_default_context(cafile=arguments.ca)
    big = (bytes(range(251)) * (arguments.big // 251 + 1))[: arguments.big]
    text = "Hello, Kagami — ハロー"
    binary = bytes(range(256)) * 4
    fragments = ["frag-one ", "frag-two ", "frag-three"]
    report = {"ok": True, "problems": []}

    def check(name, sent, received):
        if sent != received:
            report["ok"] = False
            report["problems"].append(f"{name}: echo differs ({len(received)} bytes back for {len(sent)})")

    async with connect(
        arguments.url,
        proxy=arguments.proxy,
        ssl=context,
        max_size=None,
        compression=None if arguments.no_compression else "deflate",
        open_timeout=20,
        close_timeout=20,
    ) as connection:
        await connection.send(text)
        check("text", text, await connection.recv())
        await connection.send(binary)
        check("binary", binary, await connection.recv())
        await connection.send(fragments)
        check("fragmented", "".join(fragments), await connection.recv())
        pong = await connection.ping(b"are you there")
        await asyncio.wait_for(pong, 20)
        await connection.send(big)
        check("big", big, await connection.recv())
        await connection.send("close:4001:done")
        try:
            await connection.recv()
            report["ok"] = False
            report["problems"].append("the server did not close")
        except ConnectionClosed as closed:
            report["closeCode"] = closed.rcvd.code if closed.rcvd else None
            report["closeReason"] = closed.rcvd.reason if closed.rcvd else None
            if report["closeCode"] != 4001 or report["closeReason"] != "done":
                report["ok"] = False
                report["problems"].append(f"closed with {report['closeCode']} {report['closeReason']!r}")
        report["compressed"] = connection.protocol.extensions != []
    report["text"] = text
    report["binaryBase64Size"] = len(binary)
    report["fragmented"] = "".join(fragments)
    report["bigSize"] = len(big)
    report["bigSHA256"] = hashlib.sha256(big).hexdigest()
    print(json.dumps(report), flush=True)
    return 0 if report["ok"] else 1


async def run_talk(arguments):
    report = {"ok": True, "problems": [], "received": []}

    def shown(message):
        return message if isinstance(message, str) else "b64:" + base64.b64encode(message).decode()

    async with connect(
        arguments.url,
        proxy=arguments.proxy,
        max_size=None,
        compression=None if arguments.no_compression else "deflate",
        open_timeout=20,
        close_timeout=20,
    ) as connection:
        report["compressed"] = connection.protocol.extensions != []
        for text in arguments.send:
            await connection.send(base64.b64decode(text[4:]) if text.startswith("b64:") else text)
        for expected in arguments.expect:
            try:
                message = await asyncio.wait_for(connection.recv(), 60)
            except (asyncio.TimeoutError, ConnectionClosed) as error:
                report["ok"] = False
                report["problems"].append(f"waiting for {expected!r}: {type(error).__name__}")
                break
            report["received"].append(shown(message))
            if shown(message) != expected:
                report["ok"] = False
                report["problems"].append(f"expected {expected!r}, received {shown(message)!r}")
    print(json.dumps(report), flush=True)
    return 0 if report["ok"] else 1


async def run_pings(arguments):
    async with connect(arguments.url, proxy=arguments.proxy, compression=None, open_timeout=20, close_timeout=20) as connection:
        pongs = 0
        for start in range(0, arguments.count, 100):
            waiters = [await connection.ping() for _ in range(min(100, arguments.count - start))]
            await asyncio.wait_for(asyncio.gather(*waiters), 60)
            pongs += len(waiters)
        await connection.send("after the pings")
        echoed = await asyncio.wait_for(connection.recv(), 60)
    report = {"ok": pongs == arguments.count and echoed == "after the pings", "pongs": pongs}
    print(json.dumps(report), flush=True)
    return 0 if report["ok"] else 1


def read_exactly(sock, count):
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise EOFError(f"connection closed after {len(data)} of {count} bytes")
        data += chunk
    return data


def masked_frame(opcode, payload):
    mask = os.urandom(4)
    return bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def run_absolute(arguments):
    report = {"ok": True, "problems": []}
    key = base64.b64encode(os.urandom(16)).decode()
    with socket.create_connection(("127.0.0.1", arguments.proxy_port), timeout=20) as sock:
        sock.sendall((
            f"GET http://127.0.0.1:{arguments.server_port}/absolute HTTP/1.1\r\n"
            f"Host: 127.0.0.1:{arguments.server_port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode())
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            head += read_exactly(sock, 1)
        report["head"] = head.decode("latin-1")
        lines = head.decode("latin-1").split("\r\n")
        if not lines[0].startswith("HTTP/1.1 101"):
            report["ok"] = False
            report["problems"].append(f"status line {lines[0]!r}")
        if any(line.lower().startswith(("transfer-encoding", "content-length")) for line in lines):
            report["ok"] = False
            report["problems"].append("the 101 came with body framing")
        text = "absolute hello".encode()
        sock.sendall(masked_frame(1, text))
        echo = read_exactly(sock, 2 + len(text))
        if echo != bytes([0x81, len(text)]) + text:
            report["ok"] = False
            report["problems"].append(f"echo {echo!r}")
        if arguments.pause:
            # The socket stays open until a line arrives on standard input, then one more.
            print("open", flush=True)
            sys.stdin.readline()
            again = "absolute again".encode()
            sock.sendall(masked_frame(1, again))
            if read_exactly(sock, 2 + len(again)) != bytes([0x81, len(again)]) + again:
                report["ok"] = False
                report["problems"].append("second echo differs")
        sock.sendall(masked_frame(8, (1000).to_bytes(2, "big") + b"bye"))
        close = read_exactly(sock, 2)
        close += read_exactly(sock, close[1] & 0x7F)
        report["closeCode"] = int.from_bytes(close[2:4], "big") if len(close) >= 4 else None
        if close[0] != 0x88:
            report["ok"] = False
            report["problems"].append(f"close frame {close!r}")
    print(json.dumps(report), flush=True)
    return 0 if report["ok"] else 1


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    server = sub.add_parser("server")
    server.add_argument("--cert")
    server.add_argument("--key")
    client = sub.add_parser("client")
    client.add_argument("url")
    client.add_argument("--proxy")
    client.add_argument("--ca")
    client.add_argument("--big", type=int, default=20 * 1024 * 1024)
    client.add_argument("--no-compression", action="store_true")
    talk = sub.add_parser("talk")
    talk.add_argument("url")
    talk.add_argument("--proxy")
    talk.add_argument("--send", action="append", default=[])
    talk.add_argument("--expect", action="append", default=[])
    talk.add_argument("--no-compression", action="store_true")
    pings = sub.add_parser("pings")
    pings.add_argument("url")
    pings.add_argument("--proxy")
    pings.add_argument("--count", type=int, required=True)
    absolute = sub.add_parser("absolute")
    absolute.add_argument("proxy_port", type=int)
    absolute.add_argument("server_port", type=int)
    absolute.add_argument("--pause", action="store_true")
    arguments = parser.parse_args()
    if arguments.command == "absolute":
        return run_absolute(arguments)
    if arguments.command == "talk":
        return asyncio.run(run_talk(arguments))
    if arguments.command == "pings":
        return asyncio.run(run_pings(arguments))
    if arguments.command == "server":
        asyncio.run(run_server(arguments))
        return 0
    return asyncio.run(run_client(arguments))


if __name__ == "__main__":
    sys.exit(main())
