import Foundation
import KagamiContentCoding
import KagamiFlow
import KagamiJSON
import KagamiJSONSchema

/// What must not reach a session's storage: each value is replaced by a marker as the flow (or
/// a WebSocket message) is handed to the store, before anything is written, so it reaches
/// none of the session's files — a shared store's database and spool (`PostgresFlowStore`,
/// which redacts credentials unless told otherwise), a session file's journal, body log, WAL
/// and database (`SQLiteFlowStore`, which redacts what it is asked to). Both apply `apply(to:)`
/// as it is here.
/// - Header fields (request and response headers and trailers, any case): the name stays, so
///   the inspector still shows that the request carried credentials.
/// - Query parameters, by name (any case), in the request's target and in
///   `application/x-www-form-urlencoded` bodies.
/// - JSON body fields (request and response, `application/json` and `+json`): by name at any
///   depth, or by JSON pointer (`/user/password`, `/items/0/token`). A body with such a field
///   is stored re-serialized (and re-compressed in its Content-Encoding); a JSON body that
///   can't be read whole — cut at the body limit, in a coding Kagami can't undo, not valid JSON —
///   is stored without its bytes (size kept, marked truncated) rather than unchecked.
public struct FlowRedaction: Sendable, Hashable {
    /// Credentials and session cookies.
    public static let defaultHeaders = ["Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"]
    public static let defaultMarker = "[redacted by Kagami]"
    /// Keeps every value.
    public static let none = FlowRedaction(headers: [])

    /// A JSON body field to redact.
    public enum JSONField: Sendable, Hashable, CustomStringConvertible {
        /// A member of this name in any object, at any depth (any case).
        case name(String)
        /// The value at this JSON pointer (RFC 6901 tokens).
        case pointer([String])

        /// `/a/b` is a pointer, anything else a member name.
        public init(parsing text: String) throws(FlowRedaction.Invalid) {
            guard !text.isEmpty else { throw Invalid(message: "a JSON field to redact needs a name or a JSON pointer (/user/password)") }
            if text.hasPrefix("/") {
                guard let tokens = JSONPointer.tokens(text) else { throw Invalid(message: "\(text) is not a JSON pointer") }
                self = .pointer(tokens)
            } else {
                self = .name(text)
            }
        }

        public var description: String {
            switch self {
            case .name(let name): name
            case .pointer(let tokens): JSONPointer.string(tokens)
            }
        }
    }

    public struct Invalid: Error, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// Lowercased.
    public private(set) var headers: Set<String>
    /// Lowercased.
    public private(set) var queryParameters: Set<String>
    public private(set) var jsonFields: [JSONField]
    public var marker: String

    public init(headers: [String] = defaultHeaders, queryParameters: [String] = [], jsonFields: [JSONField] = [], marker: String = defaultMarker) {
        self.headers = Set(headers.map { $0.lowercased() })
        self.queryParameters = Set(queryParameters.map { $0.lowercased() })
        self.jsonFields = jsonFields
        self.marker = marker
        self.jsonNames = Set(jsonFields.compactMap { if case .name(let name) = $0 { name.lowercased() } else { nil } })
    }

    private let jsonNames: Set<String>

    public var isEmpty: Bool { headers.isEmpty && queryParameters.isEmpty && jsonFields.isEmpty }

    public func apply(to flow: Flow) -> Flow {
        guard !isEmpty else { return flow }
        var flow = flow
        apply(to: &flow.request.headers)
        if !queryParameters.isEmpty, let query = flow.request.query, flow.request.method != "CONNECT" {
            flow.request.target = flow.request.path + "?" + redacted(query: query)
        }
        apply(to: &flow.request.body, headers: flow.request.headers)
        if var response = flow.response {
            apply(to: &response.headers)
            if var trailers = response.trailers {
                apply(to: &trailers)
                response.trailers = trailers
            }
            apply(to: &response.body, headers: response.headers)
            flow.response = response
        }
        return flow
    }

    private func apply(to fields: inout HeaderFields) {
        guard !headers.isEmpty else { return }
        for index in fields.fields.indices where headers.contains(fields.fields[index].name.lowercased()) {
            fields.fields[index].value = marker
        }
    }

    // MARK: Query parameters

    /// `a=1&token=s3cret` → `a=1&token=%5Bredacted%20by%20Kagami%5D`; everything else as it was.
    func redacted(query: String) -> String {
        let encodedMarker = marker.addingPercentEncoding(withAllowedCharacters: Self.queryValueCharacters) ?? "redacted"
        return query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let rawName = String(parts[0])
            let name = (rawName.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? rawName).lowercased()
            guard queryParameters.contains(name) else { return String(pair) }
            return rawName + "=" + encodedMarker
        }.joined(separator: "&")
    }

    private static let queryValueCharacters: CharacterSet = {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return allowed
    }()

    // MARK: Bodies

    private enum BodyKind { case json, form }

    private func kind(of headers: HeaderFields) -> BodyKind? {
        guard let contentType = headers["Content-Type"] else { return nil }
        let media = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        if !jsonFields.isEmpty, media == "application/json" || media.hasSuffix("+json") { return .json }
        if !queryParameters.isEmpty, media == "application/x-www-form-urlencoded" { return .form }
        return nil
    }

    private func apply(to body: inout FlowBody, headers: HeaderFields) {
        guard !body.data.isEmpty, let kind = kind(of: headers) else { return }
        let coding = headers["Content-Encoding"]
        guard !body.isTruncated, let plain = try? ContentCoding.decode(body.data, contentEncoding: coding) else {
            drop(&body)
            return
        }
        let changed: Data?
        switch kind {
        case .form:
            let text = String(decoding: plain, as: UTF8.self)
            let redacted = redacted(query: text)
            changed = redacted == text ? nil : Data(redacted.utf8)
        case .json:
            guard let document = try? JSONValue(parsing: plain) else {
                drop(&body)
                return
            }
            changed = redactingJSONFields(of: document).map { Data($0.serialized().utf8) }
        }
        guard let changed else { return }
        guard let encoded = try? ContentCoding.encode(changed, contentEncoding: coding) else {
            drop(&body)
            return
        }
        body.data = encoded
    }

    /// The bytes are left out, the size kept: what couldn't be checked is not stored.
    private func drop(_ body: inout FlowBody) {
        body.data = Data()
        body.isTruncated = body.size > 0
    }

    /// `document` with the `jsonFields` (names at any depth, pointers) replaced; nil when none
    /// of them is in it.
    private func redactingJSONFields(of document: JSONValue) -> JSONValue? {
        var redacted = document
        var found = redactNames(in: &redacted)
        for case .pointer(let tokens) in jsonFields where replace(at: tokens[...], in: &redacted) { found = true }
        // Not `found ? redacted : nil`: JSONValue takes `nil` as its own null.
        guard found else { return nil }
        return redacted
    }

    /// Members named in `jsonFields`, at any depth; true when one was found.
    private func redactNames(in value: inout JSONValue) -> Bool {
        guard !jsonNames.isEmpty else { return false }
        switch value {
        case .object(var members):
            var found = false
            for key in members.keys {
                if jsonNames.contains(key.lowercased()) {
                    members[key] = .string(marker)
                    found = true
                } else if var member = members[key], redactNames(in: &member) {
                    members[key] = member
                    found = true
                }
            }
            if found { value = .object(members) }
            return found
        case .array(var items):
            var found = false
            for index in items.indices where redactNames(in: &items[index]) { found = true }
            if found { value = .array(items) }
            return found
        default:
            return false
        }
    }

    /// The value at `tokens`, when there is one; true when it was replaced.
    private func replace(at tokens: ArraySlice<String>, in value: inout JSONValue) -> Bool {
        guard let token = tokens.first else {
            value = .string(marker)
            return true
        }
        switch value {
        case .object(var members):
            guard var member = members[token], replace(at: tokens.dropFirst(), in: &member) else { return false }
            members[token] = member
            value = .object(members)
            return true
        case .array(var items):
            guard let index = Int(token), index >= 0, index < items.count, token == "0" || !token.hasPrefix("0"),
                  replace(at: tokens.dropFirst(), in: &items[index]) else { return false }
            value = .array(items)
            return true
        default:
            return false
        }
    }

    // MARK: WebSocket messages

    /// Text messages carrying JSON lose the `jsonFields` as JSON bodies do: a message that is a
    /// JSON object or array, or one behind a number as Socket.IO sends them (`42["login",{…}]`,
    /// the number kept). Such a message that can't be read whole — cut at the capture limit, or
    /// not valid JSON after all — is stored without its bytes (size kept, marked truncated)
    /// rather than unchecked. Other messages (binary, control, plain text) are kept as they are.
    public func apply(to messages: [WebSocketMessage]) -> [WebSocketMessage] {
        guard !jsonFields.isEmpty else { return messages }
        return messages.map { message in
            guard message.opcode == .text, let start = Self.jsonStart(of: message.data) else { return message }
            var message = message
            guard !message.isTruncated, let document = try? JSONValue(parsing: message.data[start...]) else {
                message.data = Data()
                message.isTruncated = message.size > 0
                return message
            }
            if let redacted = redactingJSONFields(of: document) {
                message.data = message.data[..<start] + Data(redacted.serialized().utf8)
            }
            return message
        }
    }

    /// Where the JSON of a text message starts: its first byte, or the first past a run of
    /// digits, when that opens an object or an array (leading white space allowed).
    private static func jsonStart(of data: Data) -> Data.Index? {
        let afterNumber = data.firstIndex { !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } ?? data.endIndex
        guard let first = data[afterNumber...].firstIndex(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }),
              data[first] == UInt8(ascii: "{") || data[first] == UInt8(ascii: "[") else { return nil }
        return afterNumber
    }
}
