import Foundation
import KagamiFlow

// A flow's metadata as a session keeps it: everything but the body bytes, in a compact binary
// record. At tens of thousands of exchanges a second the stored form is most of what a session
// costs on disk and most of what reading one back costs; as JSON it took ~1,060 bytes for a
// 100-byte exchange and a parser to read, as a record ~300 and a walk over the bytes.
//
// Layout (integers are `Varint`s unless said otherwise):
//
//   0x00 version(1)        0x00 can't start a JSON document, which older sessions hold
//   flags                  which optional parts follow (`Part`)
//   id                     16 bytes
//   mode                   word
//   clientAddress?  serverAddress?   text
//   request                method word, scheme word, host text, port, target text, version word,
//                          headers, body
//   response?              status, reason (0: the status's registered phrase, or 1 and a
//                          word), version word, headers, body, trailers? (headers)
//   timings                start: 8 bytes (the Double's bits, little-endian), a mask of the
//                          optional times present, then each: a date as the zigzag difference
//                          of its Double's bits from start's (a few bytes, exact), an interval as
//                          8 bytes
//   error?                 kind word, message text
//   tls?                   a mask of the fields present and upstreamVerificationDisabled, texts
//   violations?            count, each: kind word, severity word, operation? (a flag, name,
//                          method word, template), side word, location word, a mask of the
//                          optional texts and those texts, message text
//   appliedRules?          count, each: name text, description text
//   archiveFields?         count, each: path (count, words), json? (a flag, text)
//   repeatOf?              16 bytes
//   streamID?              zigzag
//
// text = length, UTF-8 bytes. word = an index into `StoredRecord.words` plus one, or 0 and a
// text. headers = count, each: name word, value word. body = size << 1 | isTruncated.
// Bytes after the last part are left unread, so a later version can add parts at the end.
extension Flow {
    /// Everything about the flow except its body bytes, as a stored record.
    public func storedRecord() -> Data {
        var record = StoredRecord.Writer()
        record.bytes.append(0)
        record.bytes.append(StoredRecord.version)
        var parts: StoredRecord.Part = []
        if clientAddress != nil { parts.insert(.clientAddress) }
        if serverAddress != nil { parts.insert(.serverAddress) }
        if response != nil { parts.insert(.response) }
        if response?.trailers != nil { parts.insert(.trailers) }
        if error != nil { parts.insert(.error) }
        if tls != nil { parts.insert(.tls) }
        if !violations.isEmpty { parts.insert(.violations) }
        if !appliedRules.isEmpty { parts.insert(.appliedRules) }
        if archiveFields != nil { parts.insert(.archiveFields) }
        if repeatOf != nil { parts.insert(.repeatOf) }
        if streamID != nil { parts.insert(.streamID) }
        record.integer(parts.rawValue)
        record.uuid(id)
        record.word(mode.rawValue)
        if let clientAddress { record.text(clientAddress) }
        if let serverAddress { record.text(serverAddress) }

        record.word(request.method)
        record.word(request.scheme)
        record.text(request.host)
        record.integer(request.port)
        record.text(request.target)
        record.word(request.version)
        record.headers(request.headers)
        record.body(request.body)
        if let response {
            record.integer(response.status)
            if response.reason == HTTPStatusPhrase.phrase(for: response.status) {
                record.integer(0)
            } else {
                record.integer(1)
                record.word(response.reason)
            }
            record.word(response.version)
            record.headers(response.headers)
            record.body(response.body)
            if let trailers = response.trailers { record.headers(trailers) }
        }

        record.timings(timings)
        if let error {
            record.word(error.kind.rawValue)
            record.text(error.message)
        }
        if let tls {
            let texts = [tls.version, tls.clientVersion, tls.cipherSuite, tls.alpn, tls.serverName,
                         tls.certificateSubject, tls.certificateIssuer, tls.certificateFingerprintSHA256]
            record.integer(StoredRecord.presence(texts) | (tls.upstreamVerificationDisabled ? 1 << texts.count : 0))
            for text in texts { if let text { record.word(text) } }
        }
        if !violations.isEmpty {
            record.integer(violations.count)
            for violation in violations { record.violation(violation) }
        }
        if !appliedRules.isEmpty {
            record.integer(appliedRules.count)
            for rule in appliedRules {
                record.text(rule.name)
                record.text(rule.description)
            }
        }
        if let archiveFields {
            record.integer(archiveFields.count)
            for field in archiveFields {
                record.integer(field.path.count)
                for name in field.path { record.word(name) }
                if let text = field.json {
                    record.integer(1)
                    record.text(text)
                } else {
                    record.integer(0)
                }
            }
        }
        if let repeatOf { record.uuid(repeatOf) }
        if let streamID { Varint.append(Varint.zigzag(Int64(streamID)), to: &record.bytes) }
        return Data(record.bytes)
    }

    /// A flow from its metadata column: a stored record, or the JSON older sessions hold
    /// (`Flow(storedJSON:)`). Body bytes are empty.
    public init(stored bytes: Data) throws {
        if bytes.first == 0 {
            self = try bytes.withUnsafeBytes { buffer in
                var reader = StoredRecord.Reader(buffer)
                return try reader.flow()
            }
        } else {
            self = try Flow(storedJSON: bytes)
        }
    }
}

/// The vocabulary and the byte-level reading and writing of `Flow.storedRecord()`.
enum StoredRecord {
    static let version: UInt8 = 1

    struct Part: OptionSet {
        let rawValue: Int
        static let clientAddress = Part(rawValue: 1 << 0)
        static let serverAddress = Part(rawValue: 1 << 1)
        static let response = Part(rawValue: 1 << 2)
        static let trailers = Part(rawValue: 1 << 3)
        static let error = Part(rawValue: 1 << 4)
        static let tls = Part(rawValue: 1 << 5)
        static let violations = Part(rawValue: 1 << 6)
        static let appliedRules = Part(rawValue: 1 << 7)
        static let archiveFields = Part(rawValue: 1 << 8)
        static let repeatOf = Part(rawValue: 1 << 9)
        static let streamID = Part(rawValue: 1 << 10)
    }

    /// Words a record names by their place: header names as HTTP/1 clients and servers write
    /// them and as HTTP/2 does (lower case), common header values, methods, schemes, versions,
    /// modes. Records written refer to these places, so the list only ever grows at its end.
    static let words: [String] = {
        let titled = [
            "Host", "User-Agent", "Accept", "Accept-Encoding", "Accept-Language", "Connection", "Content-Type",
            "Content-Length", "Content-Encoding", "Date", "Server", "Last-Modified", "ETag", "Accept-Ranges",
            "Cache-Control", "Cookie", "Set-Cookie", "Authorization", "Location", "Transfer-Encoding", "Vary",
            "Expires", "Pragma", "Referer", "Origin", "If-None-Match", "If-Modified-Since", "Keep-Alive",
            "Upgrade", "Via", "Age", "X-Forwarded-For", "X-Request-Id", "Access-Control-Allow-Origin",
            "Strict-Transport-Security", "Content-Disposition", "Range", "Content-Range", "Sec-WebSocket-Key",
            "Sec-WebSocket-Accept", "Sec-WebSocket-Version", "Sec-WebSocket-Extensions", "Grpc-Status",
            "Grpc-Message", "Te", "Proxy-Connection",
        ]
        let values = [
            "GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "CONNECT", "TRACE",
            "http", "https", "ws", "wss",
            "HTTP/1.1", "HTTP/1.0", "HTTP/2", "HTTP/2.0", "HTTP/3",
            "forward", "reverse", "tunnel", "mock",
            "*/*", "keep-alive", "close", "gzip", "br", "deflate", "identity", "chunked", "bytes", "no-cache",
            "application/json", "application/octet-stream", "text/html", "text/plain", "text/html; charset=utf-8",
            "application/json; charset=utf-8", "application/grpc", "trailers", "websocket", "Upgrade", "0",
            "gzip, deflate", "gzip, deflate, br", "curl/8.14.1", "TLSv1.3", "TLSv1.2", "h2", "http/1.1", "",
        ]
        return titled + titled.map { $0.lowercased() } + values
    }()

    static let wordCodes: [String: Int] = {
        var codes: [String: Int] = [:]
        for (index, word) in words.enumerated() where codes[word] == nil { codes[word] = index + 1 }
        return codes
    }()

    /// A mask of the values present: bit n for the n-th.
    static func presence<Value>(_ values: [Value?]) -> Int {
        var mask = 0
        for (bit, value) in values.enumerated() where value != nil { mask |= 1 << bit }
        return mask
    }

    struct Writer {
        var bytes: [UInt8] = []

        init() { bytes.reserveCapacity(512) }

        mutating func integer(_ value: Int) {
            Varint.append(UInt64(truncatingIfNeeded: value), to: &bytes)
        }

        mutating func text(_ text: String) {
            var text = text
            text.withUTF8 { utf8 in
                integer(utf8.count)
                bytes.append(contentsOf: utf8)
            }
        }

        mutating func word(_ word: String) {
            if let code = StoredRecord.wordCodes[word] {
                integer(code)
            } else {
                integer(0)
                text(word)
            }
        }

        mutating func uuid(_ id: UUID) {
            withUnsafeBytes(of: id.uuid) { bytes.append(contentsOf: $0) }
        }

        mutating func fixed64(_ value: UInt64) {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }

        mutating func headers(_ headers: HeaderFields) {
            integer(headers.fields.count)
            for field in headers.fields {
                word(field.name)
                word(field.value)
            }
        }

        mutating func body(_ body: FlowBody) {
            integer(body.size << 1 | (body.isTruncated ? 1 : 0))
        }

        mutating func timings(_ timings: FlowTimings) {
            let start = timings.start.timeIntervalSinceReferenceDate.bitPattern
            fixed64(start)
            let dates = [timings.connected, timings.requestSent, timings.firstByte, timings.end]
            let intervals = [timings.blocked, timings.dns, timings.ssl, timings.heldAtRequest, timings.heldAtResponse]
            integer(StoredRecord.presence(dates) | StoredRecord.presence(intervals) << dates.count)
            for date in dates {
                guard let date else { continue }
                let difference = Int64(bitPattern: date.timeIntervalSinceReferenceDate.bitPattern &- start)
                Varint.append(Varint.zigzag(difference), to: &bytes)
            }
            for interval in intervals {
                if let interval { fixed64(interval.bitPattern) }
            }
        }

        mutating func violation(_ violation: ContractViolation) {
            word(violation.kind.rawValue)
            word(violation.severity.rawValue)
            if let operation = violation.operation {
                integer(1)
                text(operation.name)
                word(operation.method)
                text(operation.template)
            } else {
                integer(0)
            }
            word(violation.side.rawValue)
            word(violation.location.rawValue)
            let texts = [violation.name, violation.instancePointer, violation.schemaPointer, violation.keyword,
                         violation.expected, violation.actual, violation.schemaExcerpt]
            integer(StoredRecord.presence(texts))
            for text in texts { if let text { self.text(text) } }
            text(violation.message)
        }
    }

    /// What is wrong with a record, and at which byte.
    struct Damage: Error, CustomStringConvertible {
        var offset: Int
        var reason: String
        var description: String { "stored flow record damaged at byte \(offset): \(reason)" }
    }

    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        func damage(_ reason: String) -> Damage { Damage(offset: index, reason: reason) }

        mutating func unsigned() throws -> UInt64 {
            do {
                return try Varint.read(bytes, at: &index, limit: bytes.count)
            } catch {
                throw damage(error == .tooLong ? "an integer longer than 64 bits" : "cut short")
            }
        }

        mutating func integer() throws -> Int {
            Int(truncatingIfNeeded: try unsigned())
        }

        mutating func count() throws -> Int {
            let count = try unsigned()
            // Every counted thing takes a byte at least.
            guard count <= UInt64(bytes.count - index) else { throw damage("a count of \(count) beyond the record's end") }
            return Int(count)
        }

        mutating func text() throws -> String {
            let length = try count()
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[index..<index + length]), as: UTF8.self)
            index += length
            return text
        }

        mutating func word() throws -> String {
            let code = try integer()
            if code == 0 { return try text() }
            guard code > 0, code <= StoredRecord.words.count else { throw damage("word \(code) is not in the vocabulary") }
            return StoredRecord.words[code - 1]
        }

        mutating func fixed64() throws -> UInt64 {
            guard bytes.count - index >= 8 else { throw damage("cut short") }
            var value: UInt64 = 0
            for offset in 0..<8 { value |= UInt64(bytes[index + offset]) << (8 * UInt64(offset)) }
            index += 8
            return value
        }

        mutating func uuid() throws -> UUID {
            guard bytes.count - index >= 16 else { throw damage("cut short") }
            let b = bytes
            let i = index
            index += 16
            return UUID(uuid: (b[i], b[i + 1], b[i + 2], b[i + 3], b[i + 4], b[i + 5], b[i + 6], b[i + 7],
                               b[i + 8], b[i + 9], b[i + 10], b[i + 11], b[i + 12], b[i + 13], b[i + 14], b[i + 15]))
        }

        mutating func enumeration<T: RawRepresentable>(_ type: T.Type) throws -> T where T.RawValue == String {
            let text = try word()
            guard let value = T(rawValue: text) else { throw damage("\"\(text)\" is not a \(T.self)") }
            return value
        }

        mutating func headers() throws -> HeaderFields {
            let count = try count()
            var fields: [HeaderFields.Field] = []
            fields.reserveCapacity(count)
            for _ in 0..<count {
                let name = try word()
                fields.append(HeaderFields.Field(name: name, value: try word()))
            }
            return HeaderFields(fields)
        }

        /// `count` values, each read when its bit of `mask` (`StoredRecord.presence`) is set.
        mutating func present<Value>(_ count: Int, in mask: Int, _ read: (inout Reader) throws -> Value) throws -> [Value?] {
            var values: [Value?] = []
            for bit in 0..<count { values.append(mask & 1 << bit != 0 ? try read(&self) : nil) }
            return values
        }

        mutating func body() throws -> FlowBody {
            let packed = try integer()
            return FlowBody(size: packed >> 1, isTruncated: packed & 1 == 1)
        }

        mutating func timings() throws -> FlowTimings {
            let start = try fixed64()
            var timings = FlowTimings(start: Date(timeIntervalSinceReferenceDate: Double(bitPattern: start)))
            let mask = try integer()
            let dates = try present(4, in: mask) { reader in
                let difference = Varint.unzigzag(try reader.unsigned())
                return Date(timeIntervalSinceReferenceDate: Double(bitPattern: start &+ UInt64(bitPattern: difference)))
            }
            timings.connected = dates[0]
            timings.requestSent = dates[1]
            timings.firstByte = dates[2]
            timings.end = dates[3]
            let intervals = try present(5, in: mask >> dates.count) { Double(bitPattern: try $0.fixed64()) }
            timings.blocked = intervals[0]
            timings.dns = intervals[1]
            timings.ssl = intervals[2]
            timings.heldAtRequest = intervals[3]
            timings.heldAtResponse = intervals[4]
            return timings
        }

        mutating func violation() throws -> ContractViolation {
            let kind = try enumeration(ContractViolation.Kind.self)
            let severity = try enumeration(ContractViolation.Severity.self)
            var operation: ContractViolation.Operation?
            if try integer() == 1 {
                let name = try text()
                let method = try word()
                operation = ContractViolation.Operation(name: name, method: method, template: try text())
            }
            let side = try enumeration(ContractViolation.Side.self)
            let location = try enumeration(ContractViolation.Location.self)
            let texts = try present(7, in: try integer()) { try $0.text() }
            return ContractViolation(
                kind: kind, severity: severity, operation: operation, side: side, location: location, name: texts[0],
                instancePointer: texts[1], schemaPointer: texts[2], keyword: texts[3], expected: texts[4], actual: texts[5],
                schemaExcerpt: texts[6], message: try text())
        }

        mutating func flow() throws -> Flow {
            guard bytes.count >= 2, bytes[0] == 0 else { throw damage("not a stored flow record") }
            guard bytes[1] == StoredRecord.version else {
                throw damage("a stored flow record of version \(bytes[1]), written by a newer Kagami (this one reads version \(StoredRecord.version))")
            }
            index = 2
            let parts = Part(rawValue: try integer())
            let id = try uuid()
            let mode = try enumeration(Flow.Mode.self)
            let clientAddress = parts.contains(.clientAddress) ? try text() : nil
            let serverAddress = parts.contains(.serverAddress) ? try text() : nil

            let method = try word()
            let scheme = try word()
            let host = try text()
            let port = try integer()
            let target = try text()
            let version = try word()
            let request = FlowRequest(
                method: method, scheme: scheme, host: host, port: port, target: target, version: version,
                headers: try headers(), body: try body())
            var response: FlowResponse?
            if parts.contains(.response) {
                let status = try integer()
                let reason = try integer() == 0 ? HTTPStatusPhrase.phrase(for: status) ?? "" : try word()
                let version = try word()
                var answer = FlowResponse(status: status, reason: reason, version: version, headers: try headers(), body: try body())
                if parts.contains(.trailers) { answer.trailers = try headers() }
                response = answer
            }
            let timings = try timings()
            var error: FlowError?
            if parts.contains(.error) {
                let kind = try enumeration(FlowError.Kind.self)
                error = FlowError(kind, try text())
            }
            var tls: TLSInfo?
            if parts.contains(.tls) {
                let mask = try integer()
                let texts = try present(8, in: mask) { try $0.word() }
                var info = TLSInfo()
                info.version = texts[0]
                info.clientVersion = texts[1]
                info.cipherSuite = texts[2]
                info.alpn = texts[3]
                info.serverName = texts[4]
                info.certificateSubject = texts[5]
                info.certificateIssuer = texts[6]
                info.certificateFingerprintSHA256 = texts[7]
                info.upstreamVerificationDisabled = mask & 1 << 8 != 0
                tls = info
            }
            var violations: [ContractViolation] = []
            if parts.contains(.violations) {
                for _ in 0..<(try count()) { violations.append(try violation()) }
            }
            var appliedRules: [RuleApplication] = []
            if parts.contains(.appliedRules) {
                for _ in 0..<(try count()) {
                    let name = try text()
                    appliedRules.append(RuleApplication(name: name, description: try text()))
                }
            }
            var flow = Flow(
                id: id, mode: mode, clientAddress: clientAddress, serverAddress: serverAddress, request: request, response: response,
                timings: timings, error: error, tls: tls, violations: violations, appliedRules: appliedRules)
            if parts.contains(.archiveFields) {
                var fields: [ArchiveField] = []
                for _ in 0..<(try count()) {
                    var path: [String] = []
                    for _ in 0..<(try count()) { path.append(try word()) }
                    fields.append(ArchiveField(path: path, json: try integer() == 1 ? try text() : nil))
                }
                flow.archiveFields = fields
            }
            if parts.contains(.repeatOf) { flow.repeatOf = try uuid() }
            if parts.contains(.streamID) { flow.streamID = Int(truncatingIfNeeded: Varint.unzigzag(try unsigned())) }
            return flow
        }
    }
}
