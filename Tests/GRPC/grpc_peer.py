"""A gRPC server and client (grpcio, generic handlers: no .proto) for the proxy's HTTP/2 tests.

server: listens on 127.0.0.1, port 0, in clear text (h2c), prints "port N", serves until stdin
        closes. Service kagami.test.Echo:
          Unary          returns the request reversed
          ServerStream   returns the request's bytes one message each
          ClientStream   returns every request message joined with b"|"
          Bidi           answers each message with b"echo:" + message
          Empty          returns an empty message
          Fail           aborts with NOT_FOUND and a message with non-ASCII text
          Slow           answers when the server stops (the client gives up first)
call --target HOST:PORT [--proxy http://HOST:PORT] [--only unary,fail]: makes every call (or
        the ones named), through an HTTP proxy when given, and prints one JSON line: each call's messages (hex, or the SHA-256 of a long one),
        status code name, details and trailing metadata.
"""
import hashlib
import json
import sys
import threading
import time

import grpc

SERVICE = "kagami.test.Echo"
identity = lambda b: b


stopping = threading.Event()


def serve():
    def unary(request, context):
        context.set_trailing_metadata((("x-trailer", "unary"),))
        return request[::-1]

    def server_stream(request, context):
        for byte in request:
            yield bytes([byte])

    def client_stream(iterator, context):
        return b"|".join(iterator)

    def bidi(iterator, context):
        for message in iterator:
            yield b"echo:" + message

    def empty(request, context):
        return b""

    def fail(request, context):
        context.abort(grpc.StatusCode.NOT_FOUND, "no note 7 — gone")

    def slow(request, context):
        stopping.wait(30)
        return request

    handlers = {
        "Unary": grpc.unary_unary_rpc_method_handler(unary, identity, identity),
        "ServerStream": grpc.unary_stream_rpc_method_handler(server_stream, identity, identity),
        "ClientStream": grpc.stream_unary_rpc_method_handler(client_stream, identity, identity),
        "Bidi": grpc.stream_stream_rpc_method_handler(bidi, identity, identity),
        "Empty": grpc.unary_unary_rpc_method_handler(empty, identity, identity),
        "Fail": grpc.unary_unary_rpc_method_handler(fail, identity, identity),
        "Slow": grpc.unary_unary_rpc_method_handler(slow, identity, identity),
    }
    from concurrent import futures
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print("port", port, flush=True)
    sys.stdin.read()
    stopping.set()
    server.stop(0)


def call(target, proxy=None, only=None):
    # Through an HTTP proxy, grpc opens a CONNECT tunnel and speaks h2c inside it.
    options = [("grpc.enable_http_proxy", 1), ("grpc.http_proxy", proxy)] if proxy else [("grpc.enable_http_proxy", 0)]
    channel = grpc.insecure_channel(target, options=options)
    grpc.channel_ready_future(channel).result(timeout=20)
    method = lambda kind, name: getattr(channel, kind)("/%s/%s" % (SERVICE, name), request_serializer=identity, response_deserializer=identity)
    report = {}

    def record(name, fn):
        try:
            messages, call_ = fn()
            report[name] = {
                "messages": [m.hex() if len(m) <= 64 else "sha256:" + hashlib.sha256(m).hexdigest() for m in messages],
                "code": call_.code().name,
                "details": call_.details(),
                "trailers": sorted([k, v] for k, v in (call_.trailing_metadata() or ()) if not k.startswith("grpc-")),
            }
        except grpc.RpcError as error:
            report[name] = {"messages": [], "code": error.code().name, "details": error.details(), "trailers": []}

    def unary():
        response, call_ = method("unary_unary", "Unary").with_call(b"\x08\x96\x01\x12\x05hello", timeout=20)
        return [response], call_

    def server_stream():
        it = method("unary_stream", "ServerStream")(b"abc", timeout=20)
        return list(it), it

    def client_stream():
        response, call_ = method("stream_unary", "ClientStream").with_call(iter([b"one", b"two", b"", b"three"]), timeout=20)
        return [response], call_

    def bidi():
        it = method("stream_stream", "Bidi")(iter([b"a", b"bb", b"x" * 100000]), timeout=20)
        return list(it), it

    def empty():
        response, call_ = method("unary_unary", "Empty").with_call(b"", timeout=20)
        return [response], call_

    def fail():
        response, call_ = method("unary_unary", "Fail").with_call(b"7", timeout=20)
        return [response], call_

    def slow():
        response, call_ = method("unary_unary", "Slow").with_call(b"zz", timeout=1)
        return [response], call_

    for name, fn in [("unary", unary), ("serverStream", server_stream), ("clientStream", client_stream),
                     ("bidi", bidi), ("empty", empty), ("fail", fail), ("cancelled", slow)]:
        if only is None or name in only:
            record(name, fn)
    channel.close()
    print(json.dumps(report, sort_keys=True), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "server":
        serve()
    else:
        option = lambda name: sys.argv[sys.argv.index(name) + 1] if name in sys.argv else None
        call(option("--target"), proxy=option("--proxy"), only=option("--only") and option("--only").split(","))
