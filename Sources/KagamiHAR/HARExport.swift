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
    public static func archive(_ flows: [Flow], webSocketMessages: [UUID: [WebSocketMessage]] = [:], grpc: [UUID: JSONValue] = [:], creatorVersion: String) -> JSONValue {
        var log = HARLogFields()
        for flow in flows { log.add(flow) }
        var object = log.object(creatorVersion: creatorVersion)
        object["entries"] = .array(flows.map { entry($0, webSocketMessages: webSocketMessages[$0.id], grpc: grpc[$0.id]) })
        return ["log": .object(object)]
    }

    /// One entry: what Kagami derives from the flow, then any fields an imported archive
    /// carried that the flow doesn't reproduce.
    public static func entry(_ flow: Flow, webSocketMessages: [WebSocketMessage]? = nil, grpc: JSONValue? = nil) -> JSONValue {
        var entry = derivedEntry(flow)
        if let grpc, case .object(var object) = entry {
            object["_grpc"] = grpc
            entry = .object(object)
        }
        if flow.isWebSocket, case .object(var object) = entry {
            object["_resourceType"] = "websocket"
            object["_webSocketMessages"] = .array((webSocketMessages ?? []).map(webSocketMessage))
            entry = .object(object)
        }
        for field in flow.archiveFields ?? [] where field.path.first != "log" {
            entry.replace(at: field.path[...], with: field.json.flatMap { try? JSONValue(parsing: $0) })
        }
        return entry
    }

    static func derivedEntry(_ flow: Flow) -> JSONValue {
        let timings = HARTimings(flow.timings)
        var entry: JSONObject = [
            "startedDateTime": .string(HARDate.format(flow.timings.start)),
            "time": HARTimings.json(timings.total),
            "request": request(flow.request),
            "response": response(flow.response),
            "cache": [:],
            "timings": timings.json,
        ]
        if let server = flow.serverAddress {
            entry["serverIPAddress"] = .string(Authority.split(server)?.host ?? server)
        }
        if let client = flow.clientAddress, let port = Authority.split(client)?.port {
            entry["connection"] = .string(String(port))
        }
        entry["_id"] = .string(flow.id.uuidString)
        entry["_mode"] = .string(flow.mode.rawValue)
        if let client = flow.clientAddress { entry["_clientAddress"] = .string(client) }
        if let server = flow.serverAddress { entry["_serverAddress"] = .string(server) }
        if let repeatOf = flow.repeatOf { entry["_repeatOf"] = .string(repeatOf.uuidString) }
        if let streamID = flow.streamID { entry["_streamId"] = .integer(streamID) }
        if let tls = flow.tls { entry["_tls"] = JSONValue(encoding: tls) }
        if let error = flow.error { entry["_error"] = JSONValue(encoding: error) }
        if !flow.violations.isEmpty { entry["_contractViolations"] = JSONValue(encoding: flow.violations) }
        if !flow.appliedRules.isEmpty {
            entry["_appliedRules"] = JSONValue(encoding: flow.appliedRules)
            // Which state of which scenario answered, for whoever reads a shared capture.
            if let mark = flow.appliedRules.lazy.compactMap(\.scenarioMark).first {
                entry["_scenario"] = ["name": .string(mark.scenario), "operation": .string(mark.operation), "state": .string(mark.state)]
            }
        }
        return .object(entry)
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

    static func request(_ request: FlowRequest) -> JSONValue {
        var object: JSONObject = [
            "method": .string(request.method),
            "url": .string(url(request)),
            "httpVersion": .string(request.version),
            "cookies": .array(HARCookie.requestCookies(request.headers)),
            "headers": headers(request.headers),
            "queryString": .array(HARFormParameters.urlEncoded(request.query)),
        ]
        if request.body.keptCount > 0 || request.body.isTruncated {
            object["postData"] = postData(request)
        }
        // Request line (`METHOD target VERSION\r\n`), fields, and the blank line.
        object["headersSize"] = .integer(request.method.utf8.count + request.target.utf8.count + request.version.utf8.count + 4 + request.headers.wireSize + 2)
        object["bodySize"] = .integer(request.body.size)
        return .object(object)
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

    static func response(_ response: FlowResponse?) -> JSONValue {
        guard let response else {
            // HAR requires a response; an exchange that got none has status 0, as browsers write.
            return [
                "status": 0, "statusText": "", "httpVersion": "", "cookies": [], "headers": [],
                "content": ["size": 0, "mimeType": ""], "redirectURL": "", "headersSize": -1, "bodySize": -1,
            ]
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
        return [
            "status": .integer(response.status),
            "statusText": .string(response.reason),
            "httpVersion": .string(response.version),
            "cookies": .array(HARCookie.responseCookies(response.headers)),
            "headers": headers(response.headers),
            "content": .object(content),
            "redirectURL": .string(response.headers["Location"] ?? ""),
            // Status line (`VERSION status reason\r\n`), fields, and the blank line.
            "headersSize": .integer(response.version.utf8.count + 1 + String(response.status).utf8.count + 1 + response.reason.utf8.count + 2 + response.headers.wireSize + 2),
            "bodySize": .integer(response.body.size),
        ]
    }

    static func headers(_ fields: HeaderFields) -> JSONValue {
        .array(fields.map { ["name": .string($0.name), "value": .string($0.value)] })
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
