import Foundation
import Hummingbird
import HTTPTypes
import KagamiFlow
import KagamiGRPC
import KagamiContentCoding
import KagamiHAR
import KagamiJSON
import KagamiControl
import KagamiStore

/// The JSON admin API under `/api`; the page uses nothing else, and scripts can use it too.
struct FlowAPI: Sendable {
    let store: any FlowStore
    let hub: FlowHub
    /// Where imported exchanges are recorded.
    let recorder: any FlowSink
    /// The proxy's open WebSockets, for messages of Kagami's own; nil without a proxy.
    let webSockets: (any WebSocketSending)?
    /// The proxy's breakpoints, whose events ride on the event stream; nil without a proxy.
    let breakpoints: Breakpoints?
    /// What `/api/status` reports, the HAR creator's version, the event stream's heartbeat.
    let configuration: UIServer.Configuration

    func register(on router: Router<some RequestContext>) {
        router.get("/api/status") { _, _ in try await self.status() }
        router.get("/api/flows") { request, _ in try await self.list(request) }
        router.delete("/api/flows") { _, _ in
            try await self.store.removeAll()
            return jsonResponse(["cleared": true])
        }
        router.get("/api/flows/:id") { _, context in
            jsonResponse(try await self.store.flow(named: context.parameters.get("id")).detailJSON)
        }
        router.get("/api/flows/:id/:part/body") { request, context in
            try await self.body(request, id: context.parameters.get("id"), part: context.parameters.get("part"))
        }
        router.get("/api/flows/:id/messages") { request, context in
            try await self.messages(request, id: context.parameters.get("id"))
        }
        router.post("/api/flows/:id/messages") { request, context in
            try await self.inject(request, id: context.parameters.get("id"))
        }
        router.get("/api/flows/:id/grpc") { _, context in
            try await self.grpc(id: context.parameters.get("id"))
        }
        router.get("/api/events") { _, _ in self.events() }
        router.get("/api/export.har") { _, _ in try await self.har() }
        router.post("/api/export.har") { request, _ in try await self.harOfSelected(request) }
        router.post("/api/import.har") { request, _ in try await self.importHAR(request) }
    }

    func status() async throws -> Response {
        jsonResponse([
            "proxy": .string(configuration.proxyAddress),
            "session": .string(configuration.sessionPath),
            "caURL": "http://kagami.ssl/",
            "version": .string(configuration.version),
            "flows": .integer(try await store.count()),
        ])
    }

    /// A page of the session's exchanges: `?limit=` (1,000 by default, at most 10,000),
    /// `?order=newest` (newest first; capture order otherwise), `?after=` the `next` of the page
    /// before, `?filter=` the filter box's text. The store applies the filter's words on the
    /// host, method, status, error and URL; the others come back in `unapplied` for the page to
    /// apply to the rows it gets. Flushes first, so a list asked for after an event includes that
    /// event's flow.
    func list(_ request: Request) async throws -> Response {
        let parameters = request.uri.queryParameters
        var query = FlowQuery(limit: min(10_000, max(1, parameters.get("limit", as: Int.self) ?? 1_000)))
        switch parameters.get("order") {
        case nil, "oldest": query.order = .oldestFirst
        case "newest": query.order = .newestFirst
        case let other?: throw APIError(.badRequest, "order=\(other): expected newest or oldest")
        }
        if let after = parameters.get("after") {
            guard let position = Int64(after) else { throw APIError(.badRequest, "after=\(after): expected the next of an earlier page") }
            query.after = position
        }
        query.filter = FlowFilter(parsing: parameters.get("filter") ?? "")
        try await store.flush()
        let page = try await store.flows(query)
        let total = try await store.count()
        return jsonResponse([
            "total": .integer(total),
            "flows": .array(page.flows.map(\.summaryJSON)),
            "next": page.next.map { .string(String($0)) } ?? .null,
            "unapplied": .array(query.filter.unapplied.map { .string($0) }),
        ])
    }

    /// The WebSocket messages of an exchange, in the order they passed, from `?offset=`
    /// (at most `?limit=`, 1,000 by default): text as text, other payloads in base64.
    func messages(_ request: Request, id: String?) async throws -> Response {
        let flow = try await store.flow(named: id)
        let query = request.uri.queryParameters
        let offset = max(0, query.get("offset", as: Int.self) ?? 0)
        let limit = min(10_000, max(0, query.get("limit", as: Int.self) ?? 1_000))
        let messages = try await store.messages(of: flow.id, offset: offset, limit: limit)
        return jsonResponse([
            "offset": .integer(offset),
            "messages": .array(messages.map(\.json)),
        ])
    }

    /// `{"direction": "send" | "receive", "text": ...}` (or `"base64"` for a binary message): a
    /// message of Kagami's own into the open WebSocket of the exchange, to the server (`send`)
    /// or to the client (`receive`), at the next gap between messages going that way.
    func inject(_ request: Request, id: String?) async throws -> Response {
        guard let webSockets else { throw APIError.noProxy }
        guard let id, let uuid = UUID(uuidString: id) else { throw APIError.missing(id) }
        let text = String(buffer: try await request.body.collect(upTo: 64 << 20))
        let message: WebSocketMessage
        do {
            let body = try HeldEdit.object(text)
            guard let name = body["direction"]?.stringValue, let direction = WebSocketMessage.Direction(rawValue: name) else {
                throw HeldEditError(field: "direction", message: "expected \"send\" (to the server) or \"receive\" (to the client)")
            }
            message = try HeldEdit.newMessage(body, field: "", direction: direction)
        } catch let error as HeldEditError {
            throw APIError(.badRequest, error.description)
        }
        do {
            try await webSockets.inject(message, into: uuid)
        } catch let error as WebSocketInjectionError {
            if case .notOpen = error { throw APIError(.notFound, error.description) }
            throw APIError(.conflict, error.description)
        }
        return jsonResponse(["flowId": .string(uuid.uuidString), "direction": .string(message.direction.rawValue), "size": .integer(message.data.count)])
    }

    /// A gRPC call's messages, read with the method's types when a schema (given, or the
    /// server's reflection) has it, else without a `.proto`, and its status; 404 when the
    /// exchange is not a gRPC call.
    func grpc(id: String?) async throws -> Response {
        let flow = try await store.flow(named: id)
        guard GRPCExchange.isGRPC(contentType: flow.request.headers["content-type"]) else {
            throw APIError(.notFound, "exchange \(flow.id) is not a gRPC call (its request is not application/grpc)")
        }
        let schema = await configuration.grpcSchemas?.schema(for: flow)
        guard var exchange = GRPCExchange(flow: flow, responseTrailers: flow.response?.trailers, schema: schema) else {
            throw APIError(.notFound, "exchange \(flow.id) is not a gRPC call (its request is not application/grpc)")
        }
        if exchange.method == nil, case .failed(let reason)? = await configuration.grpcSchemas?.reflected(for: flow) {
            exchange.schemaNote = reason
        }
        return jsonResponse(exchange.json)
    }

    /// The body as received, or decoded with `?decode=1`. Served with the message's own
    /// Content-Type (so images show inline) but sandboxed: a captured HTML page can't run here.
    func body(_ request: Request, id: String?, part: String?) async throws -> Response {
        let flow = try await store.flow(named: id)
        let message: (body: FlowBody, headers: HeaderFields)
        switch part {
        case "request": message = (flow.request.body, flow.request.headers)
        case "response":
            guard let response = flow.response else { throw APIError(.notFound, "exchange \(flow.id) has no response") }
            message = (response.body, response.headers)
        default: throw APIError(.notFound, "body part must be request or response, not \(part ?? "")")
        }
        var headers: HTTPFields = [
            .contentType: message.headers["Content-Type"] ?? "application/octet-stream",
            .contentSecurityPolicy: "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'",
            .contentTypeOptions: "nosniff",
            .cacheControl: "no-store",
            .kagami("Body-Size"): String(message.body.size),
            .kagami("Body-Truncated"): message.body.isTruncated ? "true" : "false",
        ]
        var data = message.body.data
        if request.uri.queryParameters.get("decode") == "1", let encoding = message.headers["Content-Encoding"] {
            do {
                data = try ContentCoding.decode(data, contentEncoding: encoding)
                headers[.kagami("Decoded")] = encoding
            } catch {
                headers[.kagami("Decode-Error")] = error.description
            }
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// Server-Sent Events: `hello` once subscribed, `flow` per recorded exchange (its summary),
    /// `note` per note added to the session (`/api/notes`),
    /// `missed` when this client fell behind and lost some (re-read `/api/flows`), `held` and
    /// `released` as breakpoints pause and let go of exchanges, and a comment line every
    /// heartbeat interval so dead connections are noticed.
    func events() -> Response {
        let subscription = hub.subscribe(bufferLimit: 4096)
        let interval = configuration.heartbeatInterval
        let ticker = Task {
            while !Task.isCancelled {
                try await Task.sleep(for: .seconds(interval))
                subscription.heartbeat()
            }
        }
        let breakpointEvents = BreakpointEventQueue(subscription: subscription, breakpoints: breakpoints)
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"], body: ResponseBody { writer in
            defer {
                ticker.cancel()
                breakpointEvents.cancel()
                subscription.cancel()
            }
            try await writer.write(ByteBuffer(string: "retry: 2000\nevent: hello\ndata: {}\n\n"))
            for await delivery in subscription {
                for event in breakpointEvents.take() { try await writer.write(ByteBuffer(string: event)) }
                let text: String
                switch delivery {
                case .flow(let flow): text = "event: flow\ndata: \(flow.summaryJSON.serialized())\n\n"
                case .note(let note): text = "event: note\ndata: \(note.json.serialized())\n\n"
                case .missed(let count): text = "event: missed\ndata: {\"count\":\(count)}\n\n"
                case .heartbeat: text = ": heartbeat\n\n"
                }
                try await writer.write(ByteBuffer(string: text))
            }
            try await writer.finish(nil)
        })
    }

    /// The whole session as HAR, written an entry at a time as it is read, with its notes.
    func har() async throws -> Response {
        try await store.flush()
        let store = self.store
        let version = configuration.version
        let schemas = configuration.grpcSchemas
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/json; charset=utf-8",
                .contentDisposition: "attachment; filename=\"kagami.har\"",
            ],
            body: ResponseBody { body in
                var writer = HARStreamWriter(creatorVersion: version)
                try await body.write(ByteBuffer(bytes: writer.opening))
                try await store.forEachFlow(includeBodies: true) { flows in
                    let messages = try await store.webSocketMessages(of: flows)
                    let grpc = await schemas?.archiveFields(of: flows) ?? [:]
                    var text = Data()
                    for flow in flows { text += writer.entry(flow, webSocketMessages: messages[flow.id], grpc: grpc[flow.id]) }
                    try await body.write(ByteBuffer(bytes: text))
                }
                try await body.write(ByteBuffer(bytes: writer.closing(notes: try await store.notes())))
                try await body.finish(nil)
            }
        )
    }
}

extension FlowStore {
    /// The exchange with this id (the store flushed first, so a just-announced one is found);
    /// 404 when the session has none.
    func flow(named id: String?) async throws -> Flow {
        guard let id, let uuid = UUID(uuidString: id) else { throw APIError.missing(id) }
        try await flush()
        guard let flow = try await flow(id: uuid) else { throw APIError.missing(id) }
        return flow
    }
}

extension HTTPField.Name {
    /// Kagami's own response fields. The names are valid tokens, so the fallback never applies.
    static func kagami(_ suffix: String) -> HTTPField.Name { HTTPField.Name("X-Kagami-\(suffix)") ?? .via }
    static let contentTypeOptions = HTTPField.Name("X-Content-Type-Options") ?? .via
    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site") ?? .via
}

extension WebSocketMessage {
    /// For the inspector's Messages tab.
    public var json: JSONValue {
        var object: JSONObject = [
            "type": .string(direction.rawValue),
            "time": .number(time.timeIntervalSince1970),
            "opcode": .integer(Int(opcode.rawValue)),
            "size": .integer(size),
            "truncated": .bool(isTruncated),
            "compressed": .bool(isCompressed),
        ]
        // `size` counts the wire's bytes: a compressed message's payload is its inflated bytes,
        // known whole unless only its first part was kept.
        if isCompressed { object["payloadSize"] = isTruncated ? .null : .integer(data.count) }
        if let text {
            object["text"] = .string(text)
        } else {
            object["base64"] = .string(data.base64EncodedString())
        }
        if let closeCode { object["closeCode"] = .integer(Int(closeCode)) }
        if let closeReason { object["closeReason"] = .string(closeReason) }
        if let note { object["note"] = .string(note) }
        return .object(object)
    }
}
