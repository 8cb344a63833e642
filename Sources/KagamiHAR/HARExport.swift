import Foundation
import KagamiContentCoding
import KagamiFlow
import KagamiJSON

/// Writes flows as an HTTP Archive (HAR 1.2), the format browsers and Charles exchange.
/// Everything HAR defines is filled in from the flow; Kagami's own facts go in `_` fields
/// (docs/HAR.md lists them).
public enum HARExport {
    /// `webSocketMessages`: the messages of WebSocket flows, by flow id, exported as Chrome
    /// DevTools does (`_resourceType: "websocket"`, `_webSocketMessages`).
    /// `grpc`: gRPC calls' messages read with their schema, by flow id (`_grpc`).
    /// `notes`: the session's notes (`log._notes`).
    public static func archive(
        _ flows: [Flow], webSocketMessages: [UUID: [WebSocketMessage]] = [:], grpc: [UUID: JSONValue] = [:], notes: [SessionNote] = [],
        creatorVersion: String
    ) -> JSONValue {
        var log = HARLogFields()
        for flow in flows { log.add(flow) }
        var object = log.object(creatorVersion: creatorVersion, notes: notes)
        object["entries"] = .array(flows.map { entry($0, webSocketMessages: webSocketMessages[$0.id], grpc: grpc[$0.id]) })
        return ["log": .object(object)]
    }

    /// One entry: what Kagami derives from the flow, then any fields an imported archive
    /// carried that the flow doesn't reproduce.
    public static func entry(_ flow: Flow, webSocketMessages: [WebSocketMessage]? = nil, grpc: JSONValue? = nil) -> JSONValue {
        var writer = JSONTextWriter(capacity: 2048)
        write(flow, webSocketMessages: webSocketMessages, grpc: grpc, to: &writer)
        var entry = (try? JSONValue(parsing: writer.bytes)) ?? .object([:])
        for field in flow.archiveFields ?? [] where field.path.first != "log" {
            entry.replace(at: field.path[...], with: field.json.flatMap { try? JSONValue(parsing: $0) })
        }
        return entry
    }

    /// The entry's text, pretty printed `depth` levels down in an archive, appended to `text`:
    /// written straight from the flow unless an imported archive's fields go into it.
    static func append(_ flow: Flow, webSocketMessages: [WebSocketMessage]?, grpc: JSONValue?, to text: inout [UInt8], depth: Int) {
        guard !(flow.archiveFields ?? []).contains(where: { $0.path.first != "log" }) else {
            entry(flow, webSocketMessages: webSocketMessages, grpc: grpc).write(to: &text, options: [.prettyPrinted], depth: depth)
            return
        }
        var writer = JSONTextWriter(capacity: 2048, prettyAt: depth)
        write(flow, webSocketMessages: webSocketMessages, grpc: grpc, to: &writer)
        text += writer.bytes
    }

    /// What Kagami derives from the flow, member by member.
    static func write(_ flow: Flow, webSocketMessages: [WebSocketMessage]?, grpc: JSONValue?, to json: inout JSONTextWriter) {
        let timings = HARTimings(flow.timings)
        json.beginObject()
        json.key("startedDateTime"); json.string(HARDate.format(flow.timings.start))
        json.key("time"); HARTimings.write(timings.total, to: &json)
        json.key("request"); request(flow.request, to: &json)
        json.key("response"); response(flow.response, to: &json)
        json.key("cache"); json.beginObject(); json.endObject()
        json.key("timings"); timings.write(to: &json)
        if let server = flow.serverAddress {
            json.key("serverIPAddress"); json.string(Authority.split(server)?.host ?? server)
        }
        if let client = flow.clientAddress, let port = Authority.split(client)?.port {
            json.key("connection"); json.string(String(port))
        }
        json.key("_id"); json.string(flow.id.canonicalText)
        json.key("_mode"); json.string(flow.mode.rawValue)
        if let client = flow.clientAddress { json.key("_clientAddress"); json.string(client) }
        if let server = flow.serverAddress { json.key("_serverAddress"); json.string(server) }
        if let repeatOf = flow.repeatOf { json.key("_repeatOf"); json.string(repeatOf.canonicalText) }
        if let streamID = flow.streamID { json.key("_streamId"); json.integer(streamID) }
        if let tls = flow.tls { json.key("_tls"); json.value(JSONValue(encoding: tls)) }
        if let error = flow.error { json.key("_error"); json.value(JSONValue(encoding: error)) }
        if !flow.violations.isEmpty { json.key("_contractViolations"); json.value(JSONValue(encoding: flow.violations)) }
        if !flow.appliedRules.isEmpty {
            json.key("_appliedRules"); json.value(JSONValue(encoding: flow.appliedRules))
            // Which state of which scenario answered, for whoever reads a shared capture.
            if let mark = flow.appliedRules.lazy.compactMap(\.scenarioMark).first {
                json.key("_scenario")
                json.value(["name": .string(mark.scenario), "operation": .string(mark.operation), "state": .string(mark.state)])
            }
        }
        if let grpc { json.key("_grpc"); json.value(grpc) }
        if flow.isWebSocket {
            json.key("_resourceType"); json.string("websocket")
            json.key("_webSocketMessages")
            json.beginArray()
            for message in webSocketMessages ?? [] { json.value(webSocketMessage(message)) }
            json.endArray()
        }
        json.endObject()
    }

    /// As Chrome writes them: text as is, other payloads in base64.
    static func webSocketMessage(_ message: WebSocketMessage) -> JSONValue {
        var object: JSONObject = [
            "type": .string(message.direction.rawValue),
            "time": .number(message.time.timeIntervalSince1970),
            "opcode": .integer(Int(message.opcode.rawValue)),
            "data": .string(message.text ?? message.data.base64EncodedString()),
        ]
        if message.isTruncated { object["_size"] = .integer(message.size) }
        if message.isCompressed { object["_compressed"] = true }
        if let note = message.note { object["_note"] = .string(note) }
        return .object(object)
    }

    static func request(_ request: FlowRequest, to json: inout JSONTextWriter) {
        json.beginObject()
        json.key("method"); json.string(request.method)
        json.key("url"); json.string(url(request))
        json.key("httpVersion"); json.string(HARHTTPVersion.written(request.version))
        json.key("cookies"); list(HARCookie.requestCookies(request.headers), to: &json)
        json.key("headers"); headers(request.headers, to: &json)
        json.key("queryString"); list(HARFormParameters.urlEncoded(request.query), to: &json)
        if request.body.keptCount > 0 || request.body.isTruncated {
            json.key("postData"); json.value(postData(request))
        }
        // Request line (`METHOD target VERSION\r\n`), fields, and the blank line.
        json.key("headersSize"); json.integer(request.method.utf8.count + request.target.utf8.count + request.version.utf8.count + 4 + request.headers.wireSize + 2)
        json.key("bodySize"); json.integer(request.body.size)
        json.endObject()
    }

    /// A CONNECT tunnel's URL names the authority it reached, under the scheme it carried.
    static func url(_ request: FlowRequest) -> String {
        request.method == "CONNECT" ? "\(request.scheme)://\(request.target)" : request.url
    }

    static func postData(_ request: FlowRequest) -> JSONValue {
        let mimeType = request.headers["Content-Type"] ?? ""
        var object: JSONObject = ["mimeType": .string(mimeType)]
        let text = String(data: request.body.data, encoding: .utf8)
        let lowered = mimeType.lowercased()
        if lowered.hasPrefix("application/x-www-form-urlencoded"), let text {
            object["params"] = .array(HARFormParameters.urlEncoded(text))
        } else if lowered.hasPrefix("multipart/form-data"), let params = HARFormParameters.multipart(request.body.data, contentType: mimeType) {
            object["params"] = .array(params)
        }
        if let text {
            object["text"] = .string(text)
        } else {
            // HAR 1.2 has no encoding for postData; the field mirrors content's.
            object["text"] = .string(request.body.data.base64EncodedString())
            object["_encoding"] = "base64"
        }
        if request.body.isTruncated { object["_truncated"] = true }
        return .object(object)
    }

    static func response(_ response: FlowResponse?, to json: inout JSONTextWriter) {
        guard let response else {
            // HAR requires a response; an exchange that got none has status 0, as browsers write.
            json.value([
                "status": 0, "statusText": "", "httpVersion": "", "cookies": [], "headers": [],
                "content": ["size": 0, "mimeType": ""], "redirectURL": "", "headersSize": -1, "bodySize": -1,
            ])
            return
        }
        var content: JSONObject = [
            "size": .integer(response.body.size),
            "mimeType": .string(response.headers["Content-Type"] ?? ""),
        ]
        if response.body.keptCount > 0 {
            // HAR's text is the body as the page saw it: Content-Encoding undone, as browsers and
            // HAR viewers expect. The bytes as they were sent stay in `_encodedText` (base64).
            var shown = response.body.data
            let contentEncoding = response.headers["Content-Encoding"]
            if ContentCoding.isEncoded(contentEncoding), !response.body.isTruncated,
               let decoded = try? ContentCoding.decode(response.body.data, contentEncoding: contentEncoding) {
                shown = decoded
                content["size"] = .integer(decoded.count)
                content["compression"] = .integer(decoded.count - response.body.keptCount)
                content["_encodedText"] = .string(response.body.data.base64EncodedString())
            }
            if let text = String(data: shown, encoding: .utf8) {
                content["text"] = .string(text)
            } else {
                content["text"] = .string(shown.base64EncodedString())
                content["encoding"] = "base64"
            }
        }
        if response.body.isTruncated { content["_truncated"] = true }
        json.beginObject()
        json.key("status"); json.integer(response.status)
        json.key("statusText"); json.string(response.reason)
        json.key("httpVersion"); json.string(HARHTTPVersion.written(response.version))
        json.key("cookies"); list(HARCookie.responseCookies(response.headers), to: &json)
        json.key("headers"); headers(response.headers, to: &json)
        json.key("content"); json.value(.object(content))
        json.key("redirectURL"); json.string(response.headers["Location"] ?? "")
        // Status line (`VERSION status reason\r\n`), fields, and the blank line.
        json.key("headersSize")
        json.integer(response.version.utf8.count + 1 + String(response.status).utf8.count + 1 + response.reason.utf8.count + 2 + response.headers.wireSize + 2)
        json.key("bodySize"); json.integer(response.body.size)
        json.endObject()
    }

    static func headers(_ fields: HeaderFields, to json: inout JSONTextWriter) {
        json.beginArray()
        for field in fields {
            json.beginObject()
            json.key("name"); json.string(field.name)
            json.key("value"); json.string(field.value)
            json.endObject()
        }
        json.endArray()
    }

    private static func list(_ items: [JSONValue], to json: inout JSONTextWriter) {
        json.beginArray()
        for item in items { json.value(item) }
        json.endArray()
    }
}

extension JSONValue {
    /// A Codable model value as JSON (the flow model's TLS info, errors, violations).
    init(encoding value: some Encodable) {
        let data = (try? JSONEncoder().encode(value)) ?? Data("null".utf8)
        self = (try? JSONValue(parsing: data)) ?? .null
    }

    /// Sets (or with nil removes) the member at `path`, creating objects on the way.
    mutating func replace(at path: ArraySlice<String>, with value: JSONValue?) {
        guard let key = path.first else {
            if let value { self = value }
            return
        }
        var object = objectValue ?? [:]
        if path.count == 1 {
            if let value { object[key] = value } else { object.removeValue(forKey: key) }
        } else {
            var child = object[key] ?? .object([:])
            child.replace(at: path.dropFirst(), with: value)
            object[key] = child
        }
        self = .object(object)
    }
}
