"""A WebSocket message of a gigabyte, by raw sockets on both ends (no library would hold less
than the whole message): the client sends one binary frame of 2**30 bytes in 1 MiB writes, then
a close; the server reads the frame's bytes as they come, without keeping them, and answers the
close with code 1000 when it got exactly the bytes sent, 4000 otherwise.

server: serves one connection on 127.0.0.1, port 0, prints "port N", exits after it.
client PORT: connects to 127.0.0.1:PORT, prints the close code the server answered with.
server --to-client: sends the gigabyte to the client instead, until the client goes away.
client PORT --never-read SECONDS: opens the socket, then reads nothing for SECONDS and leaves.

--size BYTES (on both ends) sends a message of that size instead of 2**30.
"""
import base64
import hashlib
import os
import socket
import struct
import sys

SIZE = int(sys.argv[sys.argv.index("--size") + 1]) if "--size" in sys.argv else 1 << 30
CHUNK = bytes(range(256)) * 4096  # 1 MiB
GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC11B65"


def read_head(connection):
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = connection.recv(4096)
        if not chunk:
            raise EOFError("closed during the handshake")
        head += chunk
    return head


def read_exactly(connection, count, keep=True):
    data, got = b"", 0
    while got < count:
        chunk = connection.recv(min(count - got, 1 << 20))
        if not chunk:
            raise EOFError(f"closed after {got} of {count} bytes")
        got += len(chunk)
        if keep:
            data += chunk
        elif chunk != CHUNK[: len(chunk)] and not keep_check(chunk, got - len(chunk)):
            return None
    return data if keep else got


def keep_check(chunk, offset):
    # The payload is CHUNK repeated (mask key 0): each byte is its offset modulo 256.
    start = offset % 256
    expected = (bytes(range(256)) * ((len(chunk) // 256) + 2))[start:start + len(chunk)]
    return chunk == expected


def serve():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    print("port", listener.getsockname()[1], flush=True)
    connection, _ = listener.accept()
    head = read_head(connection).decode("latin-1")
    key = [line.split(":", 1)[1].strip() for line in head.split("\r\n") if line.lower().startswith("sec-websocket-key:")][0]
    accept = base64.b64encode(hashlib.sha1(key.encode() + GUID).digest()).decode()
    connection.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        f"Sec-WebSocket-Accept: {accept}\r\n\r\n").encode())
    if "--to-client" in sys.argv:
        try:
            connection.sendall(bytes([0x82, 0x7F]) + struct.pack(">Q", SIZE))
            for _ in range(SIZE // len(CHUNK)):
                connection.sendall(CHUNK)
        except OSError:
            pass
        connection.close()
        return
    header = read_exactly(connection, 14)
    ok = header[0] == 0x82 and header[1] == 0xFF and struct.unpack(">Q", header[2:10])[0] == SIZE
    got = read_exactly(connection, SIZE, keep=False)
    ok = ok and got == SIZE
    close = read_exactly(connection, 8)
    ok = ok and close[0] == 0x88
    connection.sendall(bytes([0x88, 0x02]) + struct.pack(">H", 1000 if ok else 4000))
    connection.close()


def client(port):
    connection = socket.create_connection(("127.0.0.1", port), timeout=300)
    key = base64.b64encode(os.urandom(16)).decode()
    connection.sendall((f"GET /gigabyte HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = read_head(connection)
    assert head.startswith(b"HTTP/1.1 101"), head[:100]
    if "--never-read" in sys.argv:
        import time
        time.sleep(float(sys.argv[sys.argv.index("--never-read") + 1]))
        print("left", flush=True)
        return
    # FIN + binary, masked, 64-bit length, mask key 0 (the payload goes as it is).
    connection.sendall(bytes([0x82, 0xFF]) + struct.pack(">Q", SIZE) + b"\0\0\0\0")
    for _ in range(SIZE // len(CHUNK)):
        connection.sendall(CHUNK)
    connection.sendall(bytes([0x88, 0x82, 0, 0, 0, 0, 0x03, 0xE8]))
    reply = read_exactly(connection, 4)
    print(struct.unpack(">H", reply[2:4])[0], flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "server":
        serve()
    else:
        client(int(sys.argv[2]))
