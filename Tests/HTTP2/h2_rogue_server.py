"""An HTTP/2 server in clear text (prior knowledge) that misbehaves on request, frame by frame.

Serves on 127.0.0.1, port 0, prints "port N", serves until stdin closes. Each connection gets the
server's SETTINGS, then each request (its header block decoded with `hpack`) is answered by path:
  /bad-hpack       a response HEADERS block referring to HPACK index 0, which does not exist
  /settings-flood  a million SETTINGS frames, while reading nothing more from the client
  anything else    200 with the body "fine"
"""
import socket
import struct
import sys
import threading

import hpack

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, SETTINGS = 0, 1, 4
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def read_exactly(connection, count):
    data = b""
    while len(data) < count:
        chunk = connection.recv(count - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def serve(connection):
    decoder, encoder = hpack.Decoder(), hpack.Encoder()
    try:
        read_exactly(connection, len(PREFACE))
        connection.sendall(frame(SETTINGS, 0, 0))
        while True:
            header = read_exactly(connection, 9)
            length = int.from_bytes(header[:3], "big")
            kind, flags = header[3], header[4]
            stream = int.from_bytes(header[5:9], "big") & 0x7FFFFFFF
            payload = read_exactly(connection, length)
            if kind == SETTINGS and not flags & ACK:
                connection.sendall(frame(SETTINGS, ACK, 0))
            if kind != HEADERS:
                continue
            fields = dict(decoder.decode(payload))
            path = fields.get(":path") or fields.get(b":path")
            path = path.decode() if isinstance(path, bytes) else path
            if path == "/bad-hpack":
                connection.sendall(frame(HEADERS, END_HEADERS | END_STREAM, stream, b"\x80"))
            elif path == "/settings-flood":
                flood = frame(SETTINGS, 0, 0) * 10_000
                for _ in range(100):
                    connection.sendall(flood)
                threading.Event().wait(60)
                return
            else:
                block = encoder.encode([(":status", "200"), ("content-type", "text/plain")])
                connection.sendall(frame(HEADERS, END_HEADERS, stream, block) + frame(DATA, END_STREAM, stream, b"fine"))
    except (EOFError, OSError):
        pass
    finally:
        connection.close()


def main():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    print("port", listener.getsockname()[1], flush=True)

    def accept():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(connection,), daemon=True).start()
    threading.Thread(target=accept, daemon=True).start()
    sys.stdin.read()
    listener.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["server"]:
        main()
