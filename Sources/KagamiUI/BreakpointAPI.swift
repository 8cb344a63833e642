// `/api/breakpoints`: the breakpoint list, the exchanges held at them, and the decisions on them.
import Foundation
import Hummingbird
import KagamiFlow
import KagamiJSON
import KagamiControl
import KagamiGRPC
import KagamiRules
import Synchronization

struct BreakpointAPI: Sendable {
    /// The proxy's breakpoints; nil without a proxy.
    let breakpoints: Breakpoints?
    /// Where a held gRPC call's messages get their types, to be shown and edited as JSON.
    var grpcSchemas: GRPCSchemas?

    func register(on router: Router<some RequestContext>) {
        router.get("/api/breakpoints") { _, _ in try Self.settingsResponse(try self.live().settings) }
        router.put("/api/breakpoints") { request, _ in
            let text = try await Self.text(of: request)
            let breakpoints = try self.live()
            let settings: BreakpointSettings
            do {
                settings = try BreakpointSettings(parsing: text, file: "request body")
            } catch {
                throw APIError(.badRequest, "\(error)")
            }
            breakpoints.replace(with: settings)
            return try Self.settingsResponse(settings)
        }
        registerHeld(on: router)
    }

    /// The held exchanges and the decisions on them alone: what a mock's admin API serves for
    /// its loading holds.
    func registerHeld(on router: Router<some RequestContext>) {
        router.get("/api/breakpoints/held") { _, _ in
            var list: [JSONValue] = []
            for held in try self.live().held { list.append(held.json(grpcSchema: await self.schema(for: held))) }
            return jsonResponse(["held": .array(list)])
        }
        router.get("/api/breakpoints/held/:id") { _, context in
            let id = context.parameters.get("id")
            let breakpoints = try self.live()
            guard let uuid = id.flatMap(UUID.init(uuidString:)), let held = breakpoints.held(id: uuid) else {
                throw Self.notHeld(id)
            }
            return jsonResponse(held.json(grpcSchema: await self.schema(for: held)))
        }
        router.post("/api/breakpoints/held/:id") { request, context in
            let id = context.parameters.get("id")
            let text = try await Self.text(of: request)
            let breakpoints = try self.live()
            var schema: ProtobufSchema?
            if let uuid = id.flatMap(UUID.init(uuidString:)), let held = breakpoints.held(id: uuid) { schema = await self.schema(for: held) }
            return try Self.decide(id: id, text: text, breakpoints: breakpoints, grpcSchema: schema)
        }
    }

    func live() throws(APIError) -> Breakpoints {
        guard let breakpoints else { throw APIError.noProxy }
        return breakpoints
    }

    static func notHeld(_ id: String?) -> APIError {
        guard let uuid = id.flatMap(UUID.init(uuidString:)) else {
            return APIError(.notFound, "\(id ?? "") is not a held exchange's id (expected a UUID from /api/breakpoints/held)")
        }
        return APIError(.notFound, BreakpointError.notHeld(uuid).description)
    }

    static func text(of request: Request) async throws -> String {
        let buffer = try await request.body.collect(upTo: 64 << 20)
        return String(buffer: buffer)
    }

    static func settingsResponse(_ settings: BreakpointSettings) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Response(
            status: .ok,
            headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(settings))))
    }

    /// `{"action": "execute", "request": {...}}`, `{"action": "execute", "response": {...}}`,
    /// `{"action": "execute", "message": {"text": ...}}`, `{"action": "abort"}` (a held message
    /// is dropped) or `{"action": "cancel"}`. A gRPC call's messages may be given as JSON
    /// (`"grpc": {"messages": [...]}`), written with `grpcSchema`.
    static func decide(id: String?, text: String, breakpoints: Breakpoints, grpcSchema: ProtobufSchema? = nil) throws(APIError) -> Response {
        guard let id, let uuid = UUID(uuidString: id), let held = breakpoints.held(id: uuid) else {
            throw notHeld(id)
        }
        let resolution: BreakpointResolution
        do {
            let body = try HeldEdit.object(text)
            switch body["action"]?.stringValue {
            case "abort": resolution = .abort
            case "cancel": resolution = .cancel
            case "execute":
                switch held.phase {
                case .request:
                    if body["response"] != nil { throw HeldEditError(field: "response", message: "this exchange is held at its request: send \"request\"") }
                    resolution = .executeRequest(try HeldEdit.request(body["request"], over: held.request, grpcSchema: grpcSchema))
                case .response:
                    if body["request"] != nil { throw HeldEditError(field: "request", message: "this exchange is held at its response: send \"response\"") }
                    resolution = .executeResponse(try HeldEdit.response(
                        body["response"], over: held.response ?? FlowResponse(status: 200), request: held.request, grpcSchema: grpcSchema))
                case .message:
                    guard let message = held.message else { throw HeldEditError(field: "", message: "the held message is gone") }
                    if body["request"] != nil || body["response"] != nil {
                        throw HeldEditError(field: "", message: "this exchange is held at a WebSocket message: send \"message\"")
                    }
                    resolution = .executeMessage(try HeldEdit.message(body["message"], over: message))
                }
            default:
                throw HeldEditError(field: "action", message: "expected \"execute\", \"abort\" or \"cancel\"")
            }
        } catch {
            throw APIError(.badRequest, "\(error)")
        }
        do {
            try breakpoints.resolve(uuid, with: resolution)
        } catch {
            // Decided elsewhere (another window, the auto-continue time) in the meantime.
            throw APIError(.conflict, error.description)
        }
        return jsonResponse(["id": .string(uuid.uuidString), "flowId": .string(held.flowID.uuidString), "action": .string(resolution.name)])
    }
}

/// Why an edit of a held exchange was refused, with the field to fix.
struct HeldEditError: Error, CustomStringConvertible {
    var field: String
    var message: String
    var description: String { field.isEmpty ? message : "\(field): \(message)" }
}

/// Edits sent for a held exchange: each field given replaces the held one; fields left out keep it.
enum HeldEdit {
    /// A request body that must be a JSON object.
    static func object(_ text: String) throws(HeldEditError) -> JSONValue {
        let body: JSONValue
        do {
            body = try JSONValue(parsing: text)
        } catch {
            throw HeldEditError(field: "", message: "not JSON: \(error)")
        }
        guard body.objectValue != nil else { throw HeldEditError(field: "", message: "expected a JSON object, found \(body.typeName)") }
        return body
    }

    static func request(_ json: JSONValue?, over held: FlowRequest, grpcSchema: ProtobufSchema? = nil) throws(HeldEditError) -> FlowRequest {
        guard let json, !json.isNull else { return held }
        guard json.objectValue != nil else { throw HeldEditError(field: "request", message: "expected an object, found \(json.typeName)") }
        var request = held
        if let method = json["method"] {
            guard let text = method.stringValue, !text.isEmpty, text.utf8.allSatisfy(isTokenByte) else {
                throw HeldEditError(field: "request.method", message: "expected a method name such as GET or POST")
            }
            request.method = text
        }
        if let url = json["url"] {
            guard let text = url.stringValue else { throw HeldEditError(field: "request.url", message: "expected text, found \(url.typeName)") }
            let target: ProxyTarget
            do {
                target = try ProxyTarget(absoluteURL: text)
            } catch {
                throw HeldEditError(field: "request.url", message: "\(error)")
            }
            request.scheme = target.scheme
            request.host = target.host
            request.port = target.port
            request.target = target.path
        }
        if let headers = json["headers"] { request.headers = try fields(headers, field: "request.headers") }
        if let body = try self.body(json, field: "request") { request.body = FlowBody(data: body) }
        if let body = try HeldGRPC.body(json, field: "request", request: request, headers: request.headers, schema: grpcSchema) {
            request.body = FlowBody(data: body)
        }
        return request
    }

    static func response(
        _ json: JSONValue?, over held: FlowResponse, request: FlowRequest? = nil, grpcSchema: ProtobufSchema? = nil
    ) throws(HeldEditError) -> FlowResponse {
        guard let json, !json.isNull else { return held }
        guard json.objectValue != nil else { throw HeldEditError(field: "response", message: "expected an object, found \(json.typeName)") }
        var response = held
        if let status = json["status"] {
            guard let code = status.intValue, (100...999).contains(code) else {
                throw HeldEditError(field: "response.status", message: "expected a status code from 100 to 999")
            }
            if code != response.status, json["reason"] == nil { response.reason = "" }
            response.status = code
        }
        if let reason = json["reason"] {
            guard let text = reason.stringValue, !text.contains(where: { $0 == "\r" || $0 == "\n" }) else {
                throw HeldEditError(field: "response.reason", message: "expected one line of text")
            }
            response.reason = text
        }
        if let headers = json["headers"] { response.headers = try fields(headers, field: "response.headers") }
        if let body = try self.body(json, field: "response") { response.body = FlowBody(data: body) }
        if let trailers = json["trailers"] { response.trailers = trailers.isNull ? nil : try fields(trailers, field: "response.trailers") }
        if let request, let body = try HeldGRPC.body(json, field: "response", request: request, headers: response.headers, schema: grpcSchema) {
            response.body = FlowBody(data: body)
        }
        return response
    }

    /// `{"text": ...}` for a text message, `{"base64": ...}` for a binary one: the payload to
    /// send instead; the message kept when neither is given.
    static func message(_ json: JSONValue?, over held: WebSocketMessage) throws(HeldEditError) -> WebSocketMessage {
        guard let json, !json.isNull else { return held }
        return try newMessage(json, field: "message", direction: held.direction, default: held)
    }

    /// A message from `{"text": ...}` or `{"base64": ...}` (with `"direction"` when there is no
    /// held message to follow).
    static func newMessage(
        _ json: JSONValue, field: String, direction: WebSocketMessage.Direction, default held: WebSocketMessage? = nil
    ) throws(HeldEditError) -> WebSocketMessage {
        guard json.objectValue != nil else { throw HeldEditError(field: field, message: "expected an object, found \(json.typeName)") }
        var message = held ?? WebSocketMessage(direction: direction, time: Date(), opcode: .text, data: Data(), size: 0)
        switch (json["text"], json["base64"]) {
        case (let text?, nil):
            guard let value = text.stringValue else { throw HeldEditError(field: "\(field).text", message: "expected text, found \(text.typeName)") }
            message.opcode = .text
            message.data = Data(value.utf8)
        case (nil, let base64?):
            guard let value = base64.stringValue, let data = Data(base64Encoded: value) else {
                throw HeldEditError(field: "\(field).base64", message: "expected the payload in base64")
            }
            message.opcode = .binary
            message.data = data
        case (nil, nil):
            if held == nil { throw HeldEditError(field: field, message: "give the payload as \"text\" or \"base64\"") }
        default:
            throw HeldEditError(field: field, message: "give \"text\" or \"base64\", not both")
        }
        message.size = message.data.count
        message.isCompressed = false
        message.isTruncated = false
        message.time = Date()
        return message
    }

    /// `[["Name", "value"], ...]`, as the API gives headers.
    static func fields(_ json: JSONValue, field: String) throws(HeldEditError) -> HeaderFields {
        guard let list = json.arrayValue else { throw HeldEditError(field: field, message: "expected a list of [name, value] pairs") }
        var fields = HeaderFields()
        for (index, pair) in list.enumerated() {
            guard let items = pair.arrayValue, items.count == 2, let name = items[0].stringValue, let value = items[1].stringValue else {
                throw HeldEditError(field: "\(field)[\(index)]", message: "expected [name, value] with two strings")
            }
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else {
                throw HeldEditError(field: "\(field)[\(index)]", message: "\"\(name)\" is not a valid header name")
            }
            guard !value.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
                throw HeldEditError(field: "\(field)[\(index)]", message: "a header value can't hold CR, LF or NUL")
            }
            fields.add(name, value)
        }
        return fields
    }

    /// `body` as text, or base64 when `bodyEncoding` is `base64`; nil when not given.
    static func body(_ json: JSONValue, field: String) throws(HeldEditError) -> Data? {
        guard let body = json["body"] else { return nil }
        guard let text = body.stringValue else { throw HeldEditError(field: "\(field).body", message: "expected text, found \(body.typeName)") }
        switch json["bodyEncoding"]?.stringValue ?? "text" {
        case "text": return Data(text.utf8)
        case "base64":
            guard let data = Data(base64Encoded: text) else { throw HeldEditError(field: "\(field).body", message: "not valid base64") }
            return data
        case let other: throw HeldEditError(field: "\(field).bodyEncoding", message: "expected \"text\" or \"base64\", not \"\(other)\"")
        }
    }

    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

extension HeldExchange {
    /// The held exchange with what can be edited, bodies in full (text, or base64 when they
    /// aren't UTF-8) unless left out, as the event stream does; a gRPC call's messages as JSON
    /// too when `grpcSchema` has its method.
    func json(bodies: Bool = true, grpcSchema: ProtobufSchema? = nil) -> JSONValue {
        var object: JSONObject = [
            "id": .string(id.uuidString),
            "flowId": .string(flowID.uuidString),
            "phase": .string(phase.rawValue),
            "heldAt": .number(Flow.milliseconds(heldAt)),
            "locations": .array(locations.map { .string($0.displayString) }),
        ]
        if let reason { object["reason"] = .string(reason) }
        var request: JSONObject = [
            "method": .string(self.request.method),
            "url": .string(self.request.url),
            "version": .string(self.request.version),
            "headers": Flow.headersJSON(self.request.headers),
        ]
        Self.addBody(self.request.body.data, to: &request, included: bodies)
        if bodies, phase == .request, let view = HeldGRPC.view(of: self.request.body, headers: self.request.headers, request: self.request, isRequest: true, schema: grpcSchema) {
            request["grpc"] = view
        }
        object["request"] = .object(request)
        if let response = self.response {
            var fields: JSONObject = [
                "status": .integer(response.status),
                "reason": .string(response.reason),
                "version": .string(response.version),
                "headers": Flow.headersJSON(response.headers),
            ]
            Self.addBody(response.body.data, to: &fields, included: bodies)
            if let trailers = response.trailers { fields["trailers"] = Flow.headersJSON(trailers) }
            if bodies, phase == .response, let view = HeldGRPC.view(of: response.body, headers: response.headers, request: self.request, isRequest: false, schema: grpcSchema) {
                fields["grpc"] = view
            }
            object["response"] = .object(fields)
        } else {
            object["response"] = .null
        }
        if let message {
            var fields: JSONObject = [
                "direction": .string(message.direction.rawValue),
                "opcode": .integer(Int(message.opcode.rawValue)),
                "size": .integer(message.data.count),
            ]
            if bodies || message.data.count <= 4096 {
                if let text = message.text {
                    fields["text"] = .string(text)
                } else {
                    fields["base64"] = .string(message.data.base64EncodedString())
                }
            }
            if let note = message.note { fields["note"] = .string(note) }
            object["message"] = .object(fields)
        }
        return .object(object)
    }

    static func addBody(_ data: Data, to object: inout JSONObject, included: Bool) {
        object["bodySize"] = .integer(data.count)
        guard included else { return }
        if let text = String(data: data, encoding: .utf8) {
            object["body"] = .string(text)
            object["bodyEncoding"] = "text"
        } else {
            object["body"] = .string(data.base64EncodedString())
            object["bodyEncoding"] = "base64"
        }
    }
}

extension BreakpointEvent {
    /// For the event stream: `held` with the held exchange, `released` with how it ended.
    var serverSentEvent: String {
        switch self {
        case .held(let exchange):
            "event: held\ndata: \(exchange.json(bodies: false).serialized())\n\n"
        case .released(let id, let flowID, let how):
            "event: released\ndata: \(JSONValue.object(["id": .string(id.uuidString), "flowId": .string(flowID.uuidString), "how": .string(how)]).serialized())\n\n"
        }
    }
}

/// Breakpoint events waiting for an event stream's writer. They ride on the flow
/// subscription: each one queued wakes the writer with a heartbeat, and the writer sends the
/// queue before whatever woke it, so one loop writes everything in order.
final class BreakpointEventQueue: Sendable {
    private final class Pending: Sendable {
        let lines = Mutex<[String]>([])
    }

    private let pending = Pending()
    private let pump: Task<Void, Never>?
    static let limit = 1024

    init(subscription: FlowHub.Subscription, breakpoints: Breakpoints?) {
        guard let breakpoints else {
            pump = nil
            return
        }
        let queue = pending
        let events = breakpoints.events()
        pump = Task {
            for await event in events {
                queue.lines.withLock { pending in
                    if pending.count >= Self.limit { pending.removeFirst() }
                    pending.append(event.serverSentEvent)
                }
                subscription.heartbeat()
            }
        }
    }

    func take() -> [String] {
        pending.lines.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
    }

    func cancel() { pump?.cancel() }
}
