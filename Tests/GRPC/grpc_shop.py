"""A gRPC service with a schema (Tests/GRPC/proto/kagami/shop.proto) for the schema tests: grpcio's
server and client, the message classes made at run time from the descriptor set protoc writes.

server [--reflection v1|v1alpha] [--gzip] [--echo-request]: listens on 127.0.0.1, port 0, in clear
        text (h2c), prints "port N", serves kagami.shop.Shop until stdin closes; with
        --reflection, also server reflection (grpc_reflection serves v1alpha; v1 is the same
        servicer under the v1 name); with --gzip, its answers are compressed (grpc-encoding:
        gzip); with --echo-request, GetOrder answers an Order whose id is the hex of the request
        bytes it received (a server with a newer .proto sees every field the client sent).
          GetOrder     an Order for the request's id with one Item of every kind of field
          WatchOrders  two Orders, ids "<id>-1" and "<id>-2"
          PlaceItems   an Order holding the items it received, in order
call --target HOST:PORT [--proxy URL] [--id ID]: makes the three calls and prints one JSON
        line: each call's answers in the proto3 JSON mapping (json_format.MessageToDict).
send --target HOST:PORT --method PATH --json TEXT [--gzip] [--header NAME:VALUE]...: one call
        (unary or server-streaming) whose request is the JSON given, as grpcurl -d sends it,
        compressed with --gzip; prints {"answers": [...], "code": STATUS NAME, "message": ...}.
big --target HOST:PORT --size N: one GetOrder call whose id is N bytes long; the server answers
        with that id; prints {"sent": N, "same": whether the answer's id is what was sent}.
raw --target HOST:PORT --method PATH --hex BYTES: one unary call whose request message is the
        bytes given, whatever the method's type; prints {"code": STATUS NAME, "size": answer bytes,
        "hex": the answer's bytes}.
"""
import json
import os
import subprocess
import sys
import tempfile
import threading

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = os.path.join(HERE, "proto")


def load_pool():
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "shop.pb")
        subprocess.run(["protoc", "--include_imports", "--descriptor_set_out=" + out, "--proto_path=" + PROTO, "kagami/shop.proto"], check=True)
        with open(out, "rb") as f:
            files = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    return pool


POOL = load_pool()
message = lambda name: message_factory.GetMessageClass(POOL.FindMessageTypeByName(name))
Order, Item, OrderRequest = message("kagami.shop.Order"), message("kagami.shop.Item"), message("kagami.shop.OrderRequest")


def sample_item():
    item = json_format.ParseDict({
        "name": "tea", "priceCents": "-1200", "colour": "GREEN", "sizes": [1, 2, 300], "stock": {"a": 4}, "code": "X",
        "note": {"text": "hi", "blob": "AQI="}, "added": "2023-11-14T22:13:20.500Z", "shelfLife": "90.000001s",
        "attributes": {"k": [1.5, True, None]}, "stockLimit": 9, "weight": 0.25, "fragile": True, "delta": -3,
    }, Item(), descriptor_pool=POOL)
    return item


# Messages of any size (grpcio refuses those over 4 MiB by default), for the large message test.
UNLIMITED = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]


def serve(reflection, gzip=False, echo_request=False):
    def get_order(request, context):
        if echo_request:
            return Order(id=request.hex())
        return Order(id=request.id, items=[sample_item()], total_cents=18446744073709551615)

    def watch_orders(request, context):
        for n in (1, 2):
            yield Order(id="%s-%d" % (request.id, n))

    def place_items(iterator, context):
        return Order(id="placed", items=list(iterator))

    handlers = {
        "GetOrder": grpc.unary_unary_rpc_method_handler(get_order, bytes if echo_request else OrderRequest.FromString, Order.SerializeToString),
        "WatchOrders": grpc.unary_stream_rpc_method_handler(watch_orders, OrderRequest.FromString, Order.SerializeToString),
        "PlaceItems": grpc.stream_unary_rpc_method_handler(place_items, Item.FromString, Order.SerializeToString),
    }
    from concurrent import futures
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), options=UNLIMITED, compression=grpc.Compression.Gzip if gzip else None)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("kagami.shop.Shop", handlers),))
    if reflection:
        from grpc_reflection.v1alpha import reflection as alpha, reflection_pb2
        names = ["kagami.shop.Shop"]
        servicer = alpha.ReflectionServicer(names, pool=POOL)
        service = "grpc.reflection.v1alpha.ServerReflection" if reflection == "v1alpha" else "grpc.reflection.v1.ServerReflection"
        handler = grpc.stream_stream_rpc_method_handler(
            servicer.ServerReflectionInfo, reflection_pb2.ServerReflectionRequest.FromString, reflection_pb2.ServerReflectionResponse.SerializeToString)
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, {"ServerReflectionInfo": handler}),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print("port", port, flush=True)
    sys.stdin.read()
    server.stop(0)


def channel_for(target, proxy, gzip=False):
    options = UNLIMITED + ([("grpc.enable_http_proxy", 1), ("grpc.http_proxy", proxy)] if proxy else [("grpc.enable_http_proxy", 0)])
    channel = grpc.insecure_channel(target, options=options, compression=grpc.Compression.Gzip if gzip else None)
    grpc.channel_ready_future(channel).result(timeout=20)
    return channel


def as_json(m):
    return json_format.MessageToDict(m, descriptor_pool=POOL)


def call(target, proxy=None, order_id="o1"):
    channel = channel_for(target, proxy)
    get = channel.unary_unary("/kagami.shop.Shop/GetOrder", request_serializer=OrderRequest.SerializeToString, response_deserializer=Order.FromString)
    watch = channel.unary_stream("/kagami.shop.Shop/WatchOrders", request_serializer=OrderRequest.SerializeToString, response_deserializer=Order.FromString)
    place = channel.stream_unary("/kagami.shop.Shop/PlaceItems", request_serializer=Item.SerializeToString, response_deserializer=Order.FromString)
    report = {
        "getOrder": [as_json(get(OrderRequest(id=order_id), timeout=20))],
        "watchOrders": [as_json(m) for m in watch(OrderRequest(id=order_id), timeout=20)],
        "placeItems": [as_json(place(iter([Item(name="cup", price_cents=300), Item(name="pot")]), timeout=20))],
    }
    channel.close()
    print(json.dumps(report, sort_keys=True), flush=True)


def send(target, method, text, proxy=None, gzip=False, headers=()):
    channel = channel_for(target, proxy, gzip)
    service, name = method.strip("/").split("/")
    rpc = POOL.FindServiceByName(service).FindMethodByName(name)
    request_type = message_factory.GetMessageClass(rpc.input_type)
    response_type = message_factory.GetMessageClass(rpc.output_type)
    make = channel.unary_stream if rpc.server_streaming else channel.unary_unary
    stub = make(method, request_serializer=request_type.SerializeToString, response_deserializer=response_type.FromString)
    metadata = [tuple(h.split(":", 1)) for h in headers]
    report = {"answers": [], "code": "OK", "message": None}
    try:
        answer = stub(json_format.Parse(text, request_type(), descriptor_pool=POOL), timeout=20, metadata=metadata)
        for m in (answer if rpc.server_streaming else [answer]):
            report["answers"].append(as_json(m))
    except grpc.RpcError as error:
        report["code"], report["message"] = error.code().name, error.details()
    channel.close()
    print(json.dumps(report, sort_keys=True), flush=True)


def big(target, size, proxy=None):
    channel = channel_for(target, proxy)
    get = channel.unary_unary("/kagami.shop.Shop/GetOrder", request_serializer=OrderRequest.SerializeToString, response_deserializer=Order.FromString)
    sent = "".join(chr(97 + n % 26) for n in range(26)) * (size // 26) + "a" * (size % 26)
    answer = get(OrderRequest(id=sent), timeout=300)
    channel.close()
    print(json.dumps({"sent": len(sent), "same": answer.id == sent}), flush=True)


def raw(target, method, hex_bytes, proxy=None):
    channel = channel_for(target, proxy)
    stub = channel.unary_unary(method)
    try:
        answer = stub(bytes.fromhex(hex_bytes), timeout=20)
        report = {"code": "OK", "size": len(answer), "hex": answer.hex()}
    except grpc.RpcError as error:
        report = {"code": error.code().name, "size": None, "hex": None}
    channel.close()
    print(json.dumps(report, sort_keys=True), flush=True)


if __name__ == "__main__":
    option = lambda name: sys.argv[sys.argv.index(name) + 1] if name in sys.argv else None
    if sys.argv[1] == "server":
        serve(option("--reflection"), gzip="--gzip" in sys.argv, echo_request="--echo-request" in sys.argv)
    elif sys.argv[1] == "big":
        big(option("--target"), int(option("--size")), proxy=option("--proxy"))
    elif sys.argv[1] == "raw":
        raw(option("--target"), option("--method"), option("--hex"), proxy=option("--proxy"))
    elif sys.argv[1] == "send":
        headers = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--header"]
        send(option("--target"), option("--method"), option("--json"), proxy=option("--proxy"), gzip="--gzip" in sys.argv, headers=headers)
    else:
        call(option("--target"), proxy=option("--proxy"), order_id=option("--id") or "o1")
