import Foundation
import KagamiFlow
import KagamiJSON

// Sessions written before the stored record (`Flow.storedRecord()`) hold each flow's metadata
// as the JSON `JSONEncoder` writes for `flow.withoutBodyBytes` (dates `.deferredToDate`). They
// are read by hand: reading a session (`kagami diff`, exports, the web UI's pages) spent most
// of its time in `JSONDecoder`. The reader takes the defaults of the `Decodable` initializers
// for what older sessions lack; FlowStoreTests holds it to `JSONDecoder` on the same documents.
extension Flow {
    /// A flow from the JSON metadata of an older session, body bytes empty.
    public init(storedJSON bytes: Data) throws {
        do {
            self = try Flow(pullingStoredJSON: bytes)
        } catch {
            // A shape the reader doesn't take: `JSONDecoder` says what is wrong, or reads
            // what the `Decodable` initializers still accept.
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .deferredToDate
            self = try decoder.decode(Flow.self, from: bytes)
        }
    }

    /// The hand reader alone, without `JSONDecoder` behind it.
    init(pullingStoredJSON bytes: Data) throws {
        self = try bytes.withUnsafeBytes { buffer in
            try JSONPullReader.read(buffer) { json in try Flow(reading: &json) }
        }
    }

    private init(reading json: inout JSONPullReader) throws {
        var id: UUID?
        var mode: Mode?
        var clientAddress: String?
        var serverAddress: String?
        var request: FlowRequest?
        var response: FlowResponse?
        var timings: FlowTimings?
        var error: FlowError?
        var tls: TLSInfo?
        var violations: [ContractViolation] = []
        var appliedRules: [RuleApplication] = []
        var archiveFields: [ArchiveField]?
        var repeatOf: UUID?
        var streamID: Int?
        try json.members { json, name in
            if try json.null() { return }
            switch name {
            case "id": id = try json.uuid()
            case "mode": mode = try json.enumeration(Mode.self)
            case "clientAddress": clientAddress = try json.string()
            case "serverAddress": serverAddress = try json.string()
            case "request": request = try FlowRequest(reading: &json)
            case "response": response = try FlowResponse(reading: &json)
            case "timings": timings = try FlowTimings(reading: &json)
            case "error":
                var kind: FlowError.Kind?
                var message: String?
                try json.members { json, name in
                    switch name {
                    case "kind": kind = try json.enumeration(FlowError.Kind.self)
                    case "message": message = try json.string()
                    default: try json.skip()
                    }
                }
                guard let kind, let message else { throw json.error("an error without its kind or message") }
                error = FlowError(kind, message)
            case "tls": tls = try TLSInfo(reading: &json)
            case "violations": try json.elements { json in violations.append(try ContractViolation(reading: &json)) }
            case "appliedRules":
                try json.elements { json in
                    var ruleName = "", description = ""
                    try json.members { json, name in
                        switch name {
                        case "name": ruleName = try json.string()
                        case "description": description = try json.string()
                        default: try json.skip()
                        }
                    }
                    appliedRules.append(RuleApplication(name: ruleName, description: description))
                }
            case "archiveFields":
                var fields: [ArchiveField] = []
                try json.elements { json in
                    var path: [String] = []
                    var text: String?
                    try json.members { json, name in
                        switch name {
                        case "path": try json.elements { json in path.append(try json.string()) }
                        case "json": text = try json.null() ? nil : try json.string()
                        default: try json.skip()
                        }
                    }
                    fields.append(ArchiveField(path: path, json: text))
                }
                archiveFields = fields
            case "repeatOf": repeatOf = try json.uuid()
            case "streamID": streamID = try json.integer()
            default: try json.skip()
            }
        }
        guard let id, let mode, let request, let timings else {
            throw json.error("a stored flow without its id, mode, request or timings")
        }
        self.init(
            id: id, mode: mode, clientAddress: clientAddress, serverAddress: serverAddress, request: request, response: response,
            timings: timings, error: error, tls: tls, violations: violations, appliedRules: appliedRules)
        self.archiveFields = archiveFields
        self.repeatOf = repeatOf
        self.streamID = streamID
    }
}

extension FlowRequest {
    fileprivate init(reading json: inout JSONPullReader) throws {
        var method: String?, scheme: String?, host: String?, port: Int?, target: String?, version: String?
        var headers = HeaderFields()
        var body = FlowBody()
        try json.members { json, name in
            switch name {
            case "method": method = try json.string()
            case "scheme": scheme = try json.string()
            case "host": host = try json.string()
            case "port": port = try json.integer()
            case "target": target = try json.string()
            case "version": version = try json.string()
            case "headers": headers = try HeaderFields(reading: &json)
            case "body": body = try FlowBody(readingWithoutBytes: &json)
            default: try json.skip()
            }
        }
        guard let method, let scheme, let host, let port, let target, let version else {
            throw json.error("a stored request without its method, scheme, host, port, target or version")
        }
        self.init(method: method, scheme: scheme, host: host, port: port, target: target, version: version, headers: headers, body: body)
    }
}

extension FlowResponse {
    fileprivate init(reading json: inout JSONPullReader) throws {
        var status: Int?, reason: String?, version: String?
        var headers = HeaderFields()
        var body = FlowBody()
        var trailers: HeaderFields?
        try json.members { json, name in
            switch name {
            case "status": status = try json.integer()
            case "reason": reason = try json.string()
            case "version": version = try json.string()
            case "headers": headers = try HeaderFields(reading: &json)
            case "body": body = try FlowBody(readingWithoutBytes: &json)
            case "trailers": trailers = try json.null() ? nil : try HeaderFields(reading: &json)
            default: try json.skip()
            }
        }
        guard let status, let reason, let version else {
            throw json.error("a stored response without its status, reason or version")
        }
        self.init(status: status, reason: reason, version: version, headers: headers, body: body)
        self.trailers = trailers
    }
}

extension HeaderFields {
    fileprivate init(reading json: inout JSONPullReader) throws {
        var fields: [Field] = []
        try json.members { json, name in
            guard name == "fields" else { return try json.skip() }
            try json.elements { json in
                var fieldName = "", value = ""
                try json.members { json, name in
                    switch name {
                    case "name": fieldName = try json.string()
                    case "value": value = try json.string()
                    default: try json.skip()
                    }
                }
                fields.append(Field(name: fieldName, value: value))
            }
        }
        self.init(fields)
    }
}

extension FlowBody {
    /// The size and whether the body was cut; the bytes live in their own table (older
    /// sessions kept them here, in base64, as `JSONEncoder` writes `Data`).
    fileprivate init(readingWithoutBytes json: inout JSONPullReader) throws {
        var data = Data()
        var size: Int?
        var isTruncated = false
        try json.members { json, name in
            switch name {
            case "data":
                let text = try json.string()
                if !text.isEmpty {
                    guard let decoded = Data(base64Encoded: text) else { throw json.error("a body's data that is not base64") }
                    data = decoded
                }
            case "size": size = try json.integer()
            case "isTruncated": isTruncated = try json.bool()
            default: try json.skip()
            }
        }
        self.init(data: data, size: size ?? data.count, isTruncated: isTruncated)
    }
}

extension FlowTimings {
    fileprivate init(reading json: inout JSONPullReader) throws {
        var start: Date?
        var timings = FlowTimings(start: Date(timeIntervalSinceReferenceDate: 0))
        try json.members { json, name in
            if try json.null() { return }
            switch name {
            case "start": start = Date(timeIntervalSinceReferenceDate: try json.double())
            case "connected": timings.connected = Date(timeIntervalSinceReferenceDate: try json.double())
            case "requestSent": timings.requestSent = Date(timeIntervalSinceReferenceDate: try json.double())
            case "firstByte": timings.firstByte = Date(timeIntervalSinceReferenceDate: try json.double())
            case "end": timings.end = Date(timeIntervalSinceReferenceDate: try json.double())
            case "blocked": timings.blocked = try json.double()
            case "dns": timings.dns = try json.double()
            case "ssl": timings.ssl = try json.double()
            case "heldAtRequest": timings.heldAtRequest = try json.double()
            case "heldAtResponse": timings.heldAtResponse = try json.double()
            default: try json.skip()
            }
        }
        guard let start else { throw json.error("stored timings without their start") }
        timings.start = start
        self = timings
    }
}

extension TLSInfo {
    fileprivate init(reading json: inout JSONPullReader) throws {
        var info = TLSInfo()
        try json.members { json, name in
            if try json.null() { return }
            switch name {
            case "version": info.version = try json.string()
            case "clientVersion": info.clientVersion = try json.string()
            case "cipherSuite": info.cipherSuite = try json.string()
            case "alpn": info.alpn = try json.string()
            case "serverName": info.serverName = try json.string()
            case "certificateSubject": info.certificateSubject = try json.string()
            case "certificateIssuer": info.certificateIssuer = try json.string()
            case "certificateFingerprintSHA256": info.certificateFingerprintSHA256 = try json.string()
            case "upstreamVerificationDisabled": info.upstreamVerificationDisabled = try json.bool()
            default: try json.skip()
            }
        }
        self = info
    }
}

extension ContractViolation {
    /// As the `Decodable` initializer reads it, the first stored shape (a free-text `location`,
    /// no `kind`) included.
    fileprivate init(reading json: inout JSONPullReader) throws {
        var texts: [String: String] = [:]
        var operation: Operation?
        try json.members { json, name in
            if try json.null() { return }
            if name == "operation" {
                var operationName = "", method = "", template = ""
                try json.members { json, name in
                    switch name {
                    case "name": operationName = try json.string()
                    case "method": method = try json.string()
                    case "template": template = try json.string()
                    default: try json.skip()
                    }
                }
                operation = Operation(name: operationName, method: method, template: template)
            } else {
                texts[name] = try json.string()
            }
        }
        guard let message = texts["message"] else { throw json.error("a stored violation without its message") }
        let locationText = texts["location"] ?? ""
        guard let kindText = texts["kind"] else {
            self.init(
                kind: .schema, side: locationText.hasPrefix("request") ? .request : .response,
                location: Location.allCases.first { locationText.contains($0.rawValue) } ?? .body, message: message)
            return
        }
        self.init(
            kind: Kind(rawValue: kindText) ?? .schema,
            severity: texts["severity"].flatMap(Severity.init(rawValue:)) ?? .error,
            operation: operation,
            side: texts["side"].flatMap(Side.init(rawValue:)) ?? .response,
            location: Location(rawValue: locationText) ?? .body,
            name: texts["name"], instancePointer: texts["instancePointer"], schemaPointer: texts["schemaPointer"],
            keyword: texts["keyword"], expected: texts["expected"], actual: texts["actual"], schemaExcerpt: texts["schemaExcerpt"],
            message: message)
    }
}

extension JSONPullReader {
    fileprivate mutating func uuid() throws -> UUID {
        let text = try string()
        guard let id = UUID(canonicalText: text) else { throw error("\"\(text)\" is not a UUID") }
        return id
    }

    fileprivate mutating func enumeration<Value: RawRepresentable<String>>(_ type: Value.Type) throws -> Value {
        let text = try string()
        guard let value = Value(rawValue: text) else { throw error("\"\(text)\" is not a \(Value.self)") }
        return value
    }
}
