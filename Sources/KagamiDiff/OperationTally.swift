// What one capture's exchanges of one operation had in common: counts, statuses, durations,
// sizes, parameters, headers, and the shapes of bodies and messages. Built an exchange at a
// time and merged, so exchanges grouped before the path templates were known join later.
import Foundation
import KagamiContentCoding
import KagamiContractCheck
import KagamiFlow
import KagamiGRPC
import KagamiInfer
import KagamiJSON
import OrderedCollections

struct OperationTally: Sendable {
    var count = 0
    /// Where the operation's first exchange is in the capture (0 for the first exchange).
    var firstPosition = Int.max
    /// The first exchanges, for findings about the operation as a whole.
    var exchangeIDs: [UUID] = []
    /// By status key: `200`, a gRPC status's name, `failed: timeout`.
    var statuses: OrderedDictionary<String, StatusTally> = [:]
    /// Each exchange's duration, with its id.
    var durations: [Measure] = []
    /// Each response body's size, with its id.
    var sizes: [Measure] = []
    var query = FieldTallies()
    var requestHeaders = FieldTallies()
    var requestBody = BodyTally()
    /// WebSocket messages by direction and kind (`receive`, `send type=chat`).
    var messages: OrderedDictionary<String, ValueShape> = [:]

    static let keptIDs = 3
    /// Message kinds kept per operation (a kind field with ids in it would make one per message).
    static let maximumMessageKinds = 64

    struct StatusTally: Sendable {
        var count = 0
        var exchangeIDs: [UUID] = []
        var headers = FieldTallies()
        var body = BodyTally()

        /// Adds an exchange answered with this status.
        mutating func add(_ flow: Flow, grpc: GRPCExchange?, options: DiffOptions) {
            let id = flow.id
            count += 1
            if exchangeIDs.count < OperationTally.keptIDs { exchangeIDs.append(id) }
            guard let response = flow.response else { return }
            headers.total += 1
            var responseSeen: Set<String> = []
            for field in response.headers {
                let lowered = field.name.lowercased()
                guard !HeaderSelection.ignoredInResponses(lowered) else { continue }
                headers.add(name: field.name, value: field.value, id: id, counting: responseSeen.insert(lowered).inserted)
            }
            if let messages = grpc?.response?.messages {
                body.addMediaType(response.headers["content-type"], size: response.body.size, id: id)
                for message in messages { body.addMessage(message, id: id) }
            } else if !flow.isWebSocket {
                body.add(response.body, headers: response.headers, id: id, limit: options.maximumBodyBytes)
            }
        }
    }

    struct Measure: Sendable {
        var value: Double
        var id: UUID
    }

    mutating func add(_ flow: Flow, messages flowMessages: [WebSocketMessage], position: Int, options: DiffOptions) {
        count += 1
        firstPosition = min(firstPosition, position)
        if exchangeIDs.count < Self.keptIDs { exchangeIDs.append(flow.id) }
        let id = flow.id
        if let duration = flow.duration { durations.append(Measure(value: duration, id: id)) }
        let grpc = GRPCExchange(flow: flow, responseTrailers: flow.response?.trailers)

        query.total += 1
        requestHeaders.total += 1
        if let query = flow.request.query {
            var seen: Set<String> = []
            for (name, value) in Self.formFields(query) where !name.isEmpty {
                // A repeated name counts once; its values still say whether it varies.
                self.query.add(name: name, value: value, id: id, counting: seen.insert(name).inserted)
            }
        }
        var requestSeen: Set<String> = []
        for field in flow.request.headers {
            let lowered = field.name.lowercased()
            guard !HeaderSelection.ignoredInRequests(lowered) else { continue }
            requestHeaders.add(name: field.name, value: field.value, id: id, counting: requestSeen.insert(lowered).inserted)
        }
        if let grpc {
            requestBody.addMediaType(flow.request.headers["content-type"], size: flow.request.body.size, id: id)
            for message in grpc.request.messages { requestBody.addMessage(message, id: id) }
        } else {
            requestBody.add(flow.request.body, headers: flow.request.headers, id: id, limit: options.maximumBodyBytes)
        }

        let key = Self.statusKey(of: flow, grpc: grpc)
        if let response = flow.response { sizes.append(Measure(value: Double(response.body.size), id: id)) }
        // Changed where it is: a copy taken out and put back would copy every shape it holds.
        let index = statuses.index(forKey: key) ?? statuses.updateValue(StatusTally(), forKey: key, insertingAt: statuses.count).index
        statuses.values[index].add(flow, grpc: grpc, options: options)

        for message in flowMessages where message.opcode == .text {
            guard message.data.count <= options.maximumBodyBytes, let value = try? JSONValue(parsing: message.data) else { continue }
            let kind = Self.messageKind(message.direction, value)
            if self.messages[kind] == nil {
                guard self.messages.count < Self.maximumMessageKinds else { continue }
                self.messages[kind] = ValueShape()
            }
            self.messages[kind]?.add(value, id: id)
        }
    }

    /// Adds what `other` saw (another group of the same operation).
    mutating func merge(_ other: OperationTally) {
        count += other.count
        firstPosition = min(firstPosition, other.firstPosition)
        exchangeIDs = Array((exchangeIDs + other.exchangeIDs).prefix(Self.keptIDs))
        for (key, theirs) in other.statuses {
            var mine = statuses[key] ?? StatusTally()
            mine.count += theirs.count
            mine.exchangeIDs = Array((mine.exchangeIDs + theirs.exchangeIDs).prefix(Self.keptIDs))
            mine.headers.merge(theirs.headers)
            mine.body.merge(theirs.body)
            statuses[key] = mine
        }
        durations += other.durations
        sizes += other.sizes
        query.merge(other.query)
        requestHeaders.merge(other.requestHeaders)
        requestBody.merge(other.requestBody)
        for (kind, shape) in other.messages {
            if messages[kind] != nil {
                messages[kind]?.merge(shape)
            } else if messages.count < Self.maximumMessageKinds {
                messages[kind] = shape
            }
        }
    }

    /// `200`; a gRPC call's status by name (`OK`, `NOT_FOUND`); `failed: timeout` without a response.
    static func statusKey(of flow: Flow, grpc: GRPCExchange?) -> String {
        if let status = grpc?.status { return status.name }
        if let response = flow.response { return String(response.status) }
        if let error = flow.error { return "failed: \(error.kind.rawValue)" }
        return "no response"
    }

    /// Members that name what kind of message an object is, in the order they are looked for.
    static let kindMembers = ["type", "event", "op", "action", "method", "kind"]

    /// `receive`, or with the message's kind member `receive type=chat`: messages of
    /// different kinds on one socket are compared kind by kind.
    static func messageKind(_ direction: WebSocketMessage.Direction, _ value: JSONValue) -> String {
        for member in kindMembers {
            if let kind = value[member]?.stringValue, !kind.isEmpty, kind.count <= 64, !PathSegmentShape.of(kind).isValue {
                return "\(direction.rawValue) \(member)=\(kind)"
            }
        }
        return direction.rawValue
    }

    /// `a=1&b=x+y` into decoded pairs, in order.
    static func formFields(_ text: String) -> [(String, String)] {
        text.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String {
                // Most names and values have nothing to decode; Foundation's decoding costs.
                guard s.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else { return String(s) }
                return s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(s)
            }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }
}

/// Query parameters or headers of an operation's exchanges, by name (headers in any case).
struct FieldTallies: Sendable {
    struct Field: Sendable {
        /// As first written.
        var name: String
        /// Exchanges that had it.
        var seen = 0
        var firstID: UUID?
        var value = ScalarTally()
    }

    /// Keyed by the lower-cased name.
    var fields: OrderedDictionary<String, Field> = [:]
    /// Exchanges looked at: a field's `seen` is out of these.
    var total = 0

    /// Past this many names (query parameters named by ids), the rest are not kept.
    static let maximum = 300

    mutating func add(name: String, value: String, id: UUID, counting: Bool) {
        let key = name.lowercased()
        let index: Int
        if let found = fields.index(forKey: key) {
            index = found
        } else {
            guard fields.count < Self.maximum else { return }
            index = fields.updateValue(Field(name: name, firstID: id), forKey: key, insertingAt: fields.count).index
        }
        if counting { fields.values[index].seen += 1 }
        fields.values[index].value.add(value, kind: .text, id: id)
    }

    mutating func merge(_ other: FieldTallies) {
        total += other.total
        for (key, theirs) in other.fields {
            if var mine = fields[key] {
                mine.seen += theirs.seen
                mine.value.merge(theirs.value)
                fields[key] = mine
            } else if fields.count < Self.maximum {
                fields[key] = theirs
            }
        }
    }
}

/// The bodies of one side of an operation's exchanges (a request, or the responses of one
/// status): their media types and their JSON (or form, or gRPC message) shapes.
struct BodyTally: Sendable {
    /// Media types (essence) by how many bodies had each; `(empty)` for no body.
    var mediaTypes: OrderedDictionary<String, Int> = [:]
    var firstIDs: [String: UUID] = [:]
    /// JSON bodies, and form bodies as objects of strings.
    var json = ValueShape()
    /// gRPC messages, fields named by number.
    var grpc = ValueShape()

    static let empty = "(empty)"

    mutating func addMediaType(_ contentType: String?, size: Int, id: UUID) {
        let type = size == 0 ? Self.empty : contentType.map(MediaType.essence) ?? "(none given)"
        mediaTypes[type, default: 0] += 1
        if firstIDs[type] == nil { firstIDs[type] = id }
    }

    mutating func add(_ body: FlowBody, headers: HeaderFields, id: UUID, limit: Int) {
        let contentType = headers["content-type"]
        addMediaType(contentType, size: body.size, id: id)
        guard body.size > 0, body.size <= limit, !body.isTruncated, body.keptCount == body.size, let contentType else { return }
        let type = MediaType.essence(contentType)
        let isJSON = MediaType.isJSON(type)
        guard isJSON || type == "application/x-www-form-urlencoded" else { return }
        let data: Data
        do {
            data = try ContentCoding.decode(body.data, contentEncoding: headers["content-encoding"], limit: limit)
        } catch {
            return
        }
        if isJSON {
            // Read straight into the shape; parsed into a value only when that could differ.
            let added = data.withUnsafeBytes { bytes in json.add(json: bytes, id: id) }
            guard !added, let value = try? JSONValue(parsing: data) else { return }
            json.add(value, id: id)
        } else {
            var object = JSONObject()
            for (name, value) in OperationTally.formFields(String(decoding: data, as: UTF8.self)) where !name.isEmpty {
                object[name] = .string(value)
            }
            json.add(.object(object), id: id)
        }
    }

    mutating func addMessage(_ message: GRPCExchange.Message, id: UUID) {
        guard case .success(let fields)? = message.fields else { return }
        grpc.add(Self.value(of: fields), id: id, namedMembers: true)
    }

    /// Protocol Buffers fields as JSON: an object keyed by field number, a repeated field an
    /// array; varints and fixed numbers as numbers, text as strings, nested messages as
    /// objects, other bytes as base64 strings.
    static func value(of fields: [ProtobufWire.Field]) -> JSONValue {
        var grouped = OrderedDictionary<String, [JSONValue]>()
        for field in fields {
            let value: JSONValue
            switch field.value {
            case .varint(let number): value = number <= UInt64(Int.max) ? .integer(Int(number)) : .number(Double(number))
            case .fixed64(let bits): value = bits <= UInt64(Int.max) ? .integer(Int(bits)) : .number(Double(bits))
            case .fixed32(let bits): value = .integer(Int(bits))
            case .text(let text): value = .string(text)
            case .message(let nested), .group(let nested): value = Self.value(of: nested)
            case .bytes(let data): value = .string(data.base64EncodedString())
            }
            grouped[String(field.number), default: []].append(value)
        }
        var object = JSONObject()
        for (number, values) in grouped { object[number] = values.count == 1 ? values[0] : .array(values) }
        return .object(object)
    }

    mutating func merge(_ other: BodyTally) {
        mediaTypes.merge(other.mediaTypes, uniquingKeysWith: +)
        firstIDs.merge(other.firstIDs) { mine, _ in mine }
        json.merge(other.json)
        grpc.merge(other.grpc)
    }
}
