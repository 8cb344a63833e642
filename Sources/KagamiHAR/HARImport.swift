import Foundation
import KagamiFlow
import KagamiJSON
import Synchronization

/// Reads an HTTP Archive (HAR 1.2, as browsers, Charles, mitmproxy and Kagami write it) into
/// flows. It takes what producers really write (members HAR 1.2 calls required but tools leave
/// out, such as mitmproxy's empty `content` on a failed request) and skips, with the reason, an
/// entry it can't read instead of refusing the whole archive.
public enum HARImport {
    /// What an archive holds: the flows read, the messages of those that are WebSockets
    /// (`_webSocketMessages`, as Chrome DevTools and Kagami write them) by flow id, and each
    /// entry skipped with where and why, and the session's notes (`log._notes`).
    public struct Result: Sendable {
        public var flows: [Flow]
        public var webSocketMessages: [UUID: [WebSocketMessage]]
        public var skipped: [HARImportError]
        public var notes: [SessionNote] = []

        /// Gives the flow at `index` a new id (one the session already has), its messages and
        /// the notes about it too.
        public mutating func renumber(_ index: Int) {
            let old = flows[index].id
            let new = UUID()
            flows[index].id = new
            if let messages = webSocketMessages.removeValue(forKey: old) { webSocketMessages[new] = messages }
            for note in notes.indices where notes[note].flowID == old { notes[note].flowID = new }
        }
    }

    /// The archive in the file at `path` (`file`: how errors name it, the path by default).
    /// Each entry that can't be read is handed to `skipped`; an archive none of whose entries
    /// could be read is refused.
    public static func read(
        contentsOf path: String, file: String? = nil, skipped: (HARImportError) -> Void = { _ in }
    ) throws(HARImportError) -> Result {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw HARImportError(message: "cannot read \(path): \(error.localizedDescription)")
        }
        let result = try read(from: data, file: file ?? path)
        for entry in result.skipped { skipped(entry) }
        if result.flows.isEmpty, !result.skipped.isEmpty {
            throw HARImportError(message: "no entry of \(file ?? path) could be read")
        }
        return result
    }

    /// Parses and reads `bytes`. Throws only when there is no archive to read (broken JSON with
    /// its line and column, or no `log.entries`); errors carry `file`.
    public static func read(from bytes: some Collection<UInt8>, file: String? = nil) throws(HARImportError) -> Result {
        let archive: JSONValue
        do {
            archive = try JSONValue(parsing: bytes)
        } catch {
            throw HARImportError(file: file, line: error.line, column: error.column, message: "not valid JSON: \(error.message)")
        }
        do {
            var result = try read(from: archive)
            for index in result.skipped.indices { result.skipped[index].file = file }
            return result
        } catch {
            var located = error
            located.file = file
            throw located
        }
    }

    public static func read(from archive: JSONValue) throws(HARImportError) -> Result {
        let log = try HARNode(archive, path: "").member("log")
        var result = Result(flows: [], webSocketMessages: [:], skipped: [])
        for entry in try log.member("entries").array() {
            do {
                let (flow, messages) = try self.flow(entry)
                result.flows.append(flow)
                if let messages { result.webSocketMessages[flow.id] = messages }
            } catch {
                result.skipped.append(error)
            }
        }
        var skippedNotes: [HARImportError] = []
        result.notes = try HARNotes.read(log) { skippedNotes.append($0) }
        result.skipped += skippedNotes
        let logFields = try self.logFields(log)
        if !logFields.isEmpty, !result.flows.isEmpty {
            result.flows[0].archiveFields = logFields + (result.flows[0].archiveFields ?? [])
        }
        return result
    }

    /// What reading an archive entry by entry found besides the flows it handed out.
    public struct Streamed: Sendable {
        public var flows: Int
        public var skipped: [HARImportError]
        /// The archive's own fields, for the caller to add to the first flow's `archiveFields`
        /// (they may come after the entries in the file).
        public var logFields: [ArchiveField]
        /// The session's notes (`log._notes`), for the caller to record.
        public var notes: [SessionNote] = []
    }

    /// Reads an archive too big to hold as a whole: each flow goes to `flow` as its entry is
    /// read, with its WebSocket messages, in the archive's order. Entries become flows on a
    /// thread of their own while the next ones are parsed: memory holds the bytes given and at
    /// most `entriesInFlight` entries. `flow` is called on that thread, one entry at a time.
    public static func read(
        from bytes: UnsafeRawBufferPointer, file: String? = nil, entriesInFlight: Int = 64,
        flow deliver: @escaping @Sendable (Flow, [WebSocketMessage]?) -> Void
    ) throws(HARImportError) -> Streamed {
        let converting = DispatchQueue(label: "kagami.har.import")
        let room = DispatchSemaphore(value: max(1, entriesInFlight))
        let outcome = Mutex(Streamed(flows: 0, skipped: [], logFields: []))
        let archive: JSONValue
        do throws(JSONParseError) {
            defer { converting.sync {} }
            archive = try JSONValue(parsing: bytes, streamingArrayAt: ["log", "entries"]) { entry, index in
                room.wait()
                converting.async {
                    defer { room.signal() }
                    do throws(HARImportError) {
                        let (flow, messages) = try self.flow(HARNode(entry, path: "log.entries[\(index)]"))
                        deliver(flow, messages)
                        outcome.withLock { $0.flows += 1 }
                    } catch {
                        var located = error
                        located.file = file
                        outcome.withLock { $0.skipped.append(located) }
                    }
                }
            }
        } catch {
            throw HARImportError(file: file, line: error.line, column: error.column, message: "not valid JSON: \(error.message)")
        }
        var streamed = outcome.withLock { $0 }
        do {
            let log = try HARNode(archive, path: "").member("log")
            _ = try log.member("entries").array()
            streamed.logFields = try logFields(log)
            var skippedNotes: [HARImportError] = []
            streamed.notes = try HARNotes.read(log) { error in
                var located = error
                located.file = file
                skippedNotes.append(located)
            }
            streamed.skipped += skippedNotes
        } catch {
            var located = error
            located.file = file
            throw located
        }
        return streamed
    }

    /// The archive's own fields (pages, browser, comment, a tool's `_` fields), which travel on
    /// the first flow, so that exporting the session writes them again.
    static func logFields(_ log: HARNode) throws(HARImportError) -> [ArchiveField] {
        var fields: [ArchiveField] = []
        for (key, value) in try log.object() where !["version", "creator", "entries", HARNotes.key].contains(key) {
            if key == "pages", value.arrayValue?.isEmpty == true { continue }
            fields.append(ArchiveField(path: ["log", key], json: value.serialized()))
        }
        return fields
    }

    static func flow(_ entry: HARNode) throws(HARImportError) -> (Flow, [WebSocketMessage]?) {
        let start = try date(entry.member("startedDateTime"))
        let request = try self.request(entry.member("request"))
        // A request that failed before any answer: some tools write no response at all.
        let (response, responseError) = try entry.optional("response").map { node throws(HARImportError) in try self.response(node) } ?? (nil, nil)
        let timings = try entry.optional("timings").map { node throws(HARImportError) in try self.timings(node, start: start) }
            ?? HARTimings(blocked: -1, dns: -1, connect: -1, ssl: -1, send: 0, wait: 0, receive: 0).flowTimings(start: start)
        let serverIP = try entry.optional("serverIPAddress")?.string().nonEmpty

        let id = try entry.optional("_id")?.string()
        var mode = request.method == "CONNECT" ? Flow.Mode.tunnel : .forward
        if let modeNode = try entry.optional("_mode") {
            guard let known = Flow.Mode(rawValue: try modeNode.string()) else {
                throw modeNode.error("expected forward, reverse or tunnel")
            }
            mode = known
        }
        let serverAddress = try entry.optional("_serverAddress")?.string()
            ?? serverIP.map { Authority(host: $0.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port: request.port).description }
        var error = try entry.optional("_error").map { node throws(HARImportError) -> FlowError in
            if case .string(let message) = node.value { return FlowError(.other, message) }
            return try decode(FlowError.self, node, what: "an error")
        }
        if error == nil, let responseError { error = FlowError(.other, responseError) }

        var flow = Flow(
            id: id.flatMap(UUID.init(uuidString:)),
            mode: mode,
            clientAddress: try entry.optional("_clientAddress")?.string(),
            serverAddress: serverAddress,
            request: request,
            response: response,
            timings: timings,
            error: error,
            tls: try entry.optional("_tls").map { node throws(HARImportError) in try decode(TLSInfo.self, node, what: "TLS information") },
            violations: try entry.optional("_contractViolations").map { node throws(HARImportError) in
                try decode([ContractViolation].self, node, what: "contract violations")
            } ?? []
        )
        if let streamNode = try entry.optional("_streamId") { flow.streamID = try streamNode.integer() }
        if let rulesNode = try entry.optional("_appliedRules") {
            flow.appliedRules = try decode([RuleApplication].self, rulesNode, what: "applied rules")
        }
        if let repeatNode = try entry.optional("_repeatOf") {
            guard let repeatOf = UUID(uuidString: try repeatNode.string()) else { throw repeatNode.error("expected the id (a UUID) of the repeated exchange") }
            flow.repeatOf = repeatOf
        }
        let messages = try entry.optional("_webSocketMessages").map { node throws(HARImportError) in try webSocketMessages(node) }
        // What the flow and its messages export as again is not kept twice.
        let derived = HARExport.entry(flow, webSocketMessages: messages).objectValue ?? [:]
        let fields = archiveFields(input: try entry.object(), derived: derived, path: [])
        flow.archiveFields = fields.isEmpty ? nil : fields
        return (flow, messages)
    }

    /// Chrome's `{type, time, opcode, data}` (and Kagami's `_size`, `_compressed`): text as is,
    /// other payloads in base64.
    static func webSocketMessages(_ node: HARNode) throws(HARImportError) -> [WebSocketMessage] {
        var messages: [WebSocketMessage] = []
        for item in try node.array() {
            let typeNode = try item.member("type")
            guard let direction = WebSocketMessage.Direction(rawValue: try typeNode.string()) else {
                throw typeNode.error("expected \"send\" or \"receive\"")
            }
            let opcodeNode = try item.member("opcode")
            guard let opcode = WebSocketMessage.Opcode(rawValue: UInt8(clamping: try opcodeNode.integer())) else {
                throw opcodeNode.error("expected a WebSocket opcode: 1 (text), 2 (binary), 8 (close), 9 (ping) or 10 (pong)")
            }
            let time = Date(timeIntervalSince1970: try item.member("time").number())
            let dataNode = try item.member("data")
            let text = try dataNode.string()
            let data: Data
            if opcode == .text {
                data = Data(text.utf8)
            } else {
                guard let decoded = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else {
                    throw dataNode.error("expected the payload in base64")
                }
                data = decoded
            }
            let size = try item.optional("_size")?.integer() ?? data.count
            let compressed = try item.optional("_compressed")?.bool() ?? false
            let note = try item.optional("_note")?.string()
            messages.append(WebSocketMessage(
                direction: direction, time: time, opcode: opcode, data: data, size: size,
                isTruncated: size > data.count, isCompressed: compressed, note: note))
        }
        return messages
    }

    static func request(_ node: HARNode) throws(HARImportError) -> FlowRequest {
        let method = try node.member("method").string()
        let urlNode = try node.member("url")
        let text = try urlNode.string()
        let url: AbsoluteURL
        do {
            url = try AbsoluteURL(parsing: text)
        } catch {
            throw urlNode.error(error.description)
        }
        let version = HARHTTPVersion.read(try node.optional("httpVersion")?.string().nonEmpty ?? "HTTP/1.1")
        let headers = try node.optional("headers").map { node throws(HARImportError) in try self.headers(node) } ?? HeaderFields()
        let bodySize = try node.optional("bodySize")?.number()
        var body = FlowBody()
        if let postData = try node.optional("postData") {
            var params: [(name: String, value: String)] = []
            for param in try postData.optional("params")?.array() ?? [] {
                let name = try param.member("name").string()
                let value = try param.optional("value")?.string() ?? ""
                params.append((name, value))
            }
            var encoding = try postData.optional("encoding")?.string()
            if let kagamiEncoding = try postData.optional("_encoding")?.string() { encoding = kagamiEncoding }
            if let textNode = try postData.optional("text") {
                body.data = try bytes(of: textNode, encoding: encoding)
            } else if !params.isEmpty {
                body.data = Data(HARFormParameters.urlEncodedBody(params).utf8)
            }
            body.isTruncated = try postData.optional("_truncated")?.bool() ?? false
        }
        body.size = body.keptCount
        // A body not (or not wholly) kept: a truncated capture, or a tunnel's relayed bytes.
        if body.isTruncated || body.data.isEmpty, let bodySize, bodySize > Double(body.size) { body.size = Int(bodySize) }
        let target = method == "CONNECT" ? url.authority.description : url.target
        return FlowRequest(method: method, scheme: url.scheme, host: url.host, port: url.port, target: target, version: version, headers: headers, body: body)
    }

    /// The response, or nil for status 0 with nothing in it; and a browser's `_error` text.
    static func response(_ node: HARNode) throws(HARImportError) -> (FlowResponse?, String?) {
        let status = try node.member("status").integer()
        let reason = try node.optional("statusText")?.string() ?? ""
        let version = HARHTTPVersion.read(try node.optional("httpVersion")?.string() ?? "")
        let headers = try node.optional("headers").map { node throws(HARImportError) in try self.headers(node) } ?? HeaderFields()
        let browserError = try node.optional("_error").flatMap { $0.value.stringValue }
        // mitmproxy writes `"content": {}` for a request that got no response.
        let content = try node.optional("content")
        let size = try content?.optional("size")?.number() ?? 0
        let encoding = try content?.optional("encoding")?.string()
        var body = FlowBody()
        let text = try content?.optional("text")
        if let encoded = try content?.optional("_encodedText") {
            // Kagami's own export: the bytes as they were sent, before Content-Encoding was undone.
            body.data = try bytes(of: encoded, encoding: "base64")
        } else if let text {
            body.data = try bytes(of: text, encoding: encoding)
        }
        body.size = body.keptCount
        body.isTruncated = try content?.optional("_truncated")?.bool() ?? false
        if size > Double(body.size), body.isTruncated || text == nil, try content?.optional("_encodedText") == nil {
            body.size = Int(size)
        }
        if status == 0, headers.isEmpty, body.data.isEmpty { return (nil, browserError) }
        return (FlowResponse(status: status, reason: reason, version: version, headers: headers, body: body), browserError)
    }

    static func timings(_ node: HARNode, start: Date) throws(HARImportError) -> FlowTimings {
        func optional(_ key: String) throws(HARImportError) -> Double {
            try node.optional(key)?.number() ?? -1
        }
        let phases = HARTimings(
            blocked: try optional("blocked"), dns: try optional("dns"), connect: try optional("connect"), ssl: try optional("ssl"),
            send: try node.optional("send")?.number() ?? 0, wait: try node.optional("wait")?.number() ?? 0,
            receive: try node.optional("receive")?.number() ?? 0
        )
        return phases.flowTimings(start: start)
    }

    static func headers(_ node: HARNode) throws(HARImportError) -> HeaderFields {
        var fields = HeaderFields()
        for header in try node.array() {
            fields.add(try header.member("name").string(), try header.member("value").string())
        }
        return fields
    }

    static func bytes(of text: HARNode, encoding: String?) throws(HARImportError) -> Data {
        let string = try text.string()
        guard encoding?.lowercased() == "base64" else { return Data(string.utf8) }
        guard let data = Data(base64Encoded: string, options: .ignoreUnknownCharacters) else {
            throw text.error("expected base64 (the encoding says so)")
        }
        return data
    }

    static func date(_ node: HARNode) throws(HARImportError) -> Date {
        let text = try node.string()
        guard let date = HARDate.parse(text) else {
            throw node.error("expected an ISO 8601 date-time such as 2026-05-28T20:26:40.123Z, found \"\(text)\"")
        }
        return date
    }

    static func decode<T: Decodable>(_ type: T.Type, _ node: HARNode, what: String) throws(HARImportError) -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(node.value.serialized().utf8))
        } catch {
            throw node.error("expected \(what) as Kagami writes it: \(error)")
        }
    }

    /// The members of `input` that `derived` (what the flow exports as) lacks or has otherwise,
    /// and the members `derived` has that `input` did not.
    static func archiveFields(input: JSONObject, derived: JSONObject, path: [String]) -> [ArchiveField] {
        // Objects compared member by member rather than kept whole.
        let nested: Set<String> = ["request", "response", "content", "postData", "timings"]
        var fields: [ArchiveField] = []
        for (key, value) in input {
            let mine = derived[key]
            if let mine, value.isJSONEqual(to: mine) { continue }
            if nested.contains(key), let inputObject = value.objectValue, let derivedObject = mine?.objectValue {
                fields += archiveFields(input: inputObject, derived: derivedObject, path: path + [key])
            } else {
                fields.append(ArchiveField(path: path + [key], json: value.serialized()))
            }
        }
        for key in derived.keys where input[key] == nil {
            fields.append(ArchiveField(path: path + [key], json: nil))
        }
        return fields
    }
}

/// An entry's URL split the way the flow model keeps it.
extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
