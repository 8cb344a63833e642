import Foundation
import KagamiFlow
import KagamiTesting
import KagamiJSON
import KagamiJSONSchema
import Testing
@testable import KagamiHAR

/// Fixtures, the HAR 1.2 schema and temporary files for the HAR and curl tests.
enum HARTestSupport {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    /// Every entry of an archive, expecting none to be skipped.
    static func importAll(_ bytes: some Collection<UInt8>) throws -> [Flow] {
        let result = try HARImport.read(from: bytes)
        #expect(result.skipped.isEmpty, "\(result.skipped)")
        return result.flows
    }

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: folder.appendingPathComponent("Fixtures/\(name)"))
    }

    static let schema: JSONSchema? = {
        guard let data = try? Data(contentsOf: folder.appendingPathComponent("har-1.2.schema.json")),
              let document = try? JSONValue(parsing: data)
        else { return nil }
        return try? JSONSchema(compiling: document, options: .init(draft: .draft2020_12, assertsFormat: true))
    }()

    /// The archive without its creator, which an export always replaces with Kagami.
    static func withoutCreator(_ archive: JSONValue) -> JSONValue {
        var copy = archive
        copy.replace(at: ["log", "creator"], with: nil)
        return copy
    }

    /// A line per difference, for readable failures.
    static func differences(_ a: JSONValue, _ b: JSONValue, path: String = "") -> [String] {
        switch (a, b) {
        case (.object(let x), .object(let y)):
            var out: [String] = []
            for key in Set(x.keys).union(y.keys).sorted() {
                switch (x[key], y[key]) {
                case (let l?, let r?): out += differences(l, r, path: "\(path).\(key)")
                case (let l?, nil): out.append("\(path).\(key): only in the first: \(l.serialized())")
                case (nil, let r?): out.append("\(path).\(key): only in the second: \(r.serialized())")
                default: break
                }
            }
            return out
        case (.array(let x), .array(let y)) where x.count == y.count:
            return zip(x, y).enumerated().flatMap { differences($1.0, $1.1, path: "\(path)[\($0)]") }
        default:
            return a.isJSONEqual(to: b) ? [] : ["\(path): \(a.serialized()) != \(b.serialized())"]
        }
    }

    /// Flows that use every part of the model HAR can carry.
    static func kagamiFlows() -> [Flow] {
        let start = Date(timeIntervalSince1970: 1_780_000_000.25)
        var tls = Flow(
            mode: .forward, clientAddress: "127.0.0.1:50123", serverAddress: "[2001:db8::1]:443",
            request: FlowRequest(
                method: "POST", scheme: "https", host: "api.example.com", port: 443, target: "/login?next=%2Fhome&x=a+b",
                headers: HeaderFields([
                    ("Host", "api.example.com"), ("Content-Type", "application/x-www-form-urlencoded"),
                    ("Content-Length", "27"), ("Cookie", "a=1; b=2"),
                ]),
                body: FlowBody(data: Data("user=ada&pass=p%26ss+w%3Drd".utf8))
            ),
            response: FlowResponse(
                status: 302, reason: "Found",
                headers: HeaderFields([
                    ("Location", "/home"),
                    ("Set-Cookie", "sid=xyz; Path=/; Domain=example.com; Expires=Wed, 21 Oct 2026 07:28:00 GMT; Secure; HttpOnly; SameSite=Lax"),
                    ("Set-Cookie", "theme=dark"), ("Content-Length", "0"),
                ])
            ),
            timings: FlowTimings(
                start: start, connected: start.addingTimeInterval(0.0205), requestSent: start.addingTimeInterval(0.021),
                firstByte: start.addingTimeInterval(0.0801), end: start.addingTimeInterval(0.0812)
            ),
            tls: TLSInfo(version: "TLSv1.3", cipherSuite: "TLS_AES_128_GCM_SHA256", alpn: "http/1.1", serverName: "api.example.com",
                         certificateSubject: "CN=api.example.com", certificateIssuer: "CN=Example CA", certificateFingerprintSHA256: "ab:cd"),
            violations: [ContractViolation(kind: .undocumentedStatus, severity: .warning, side: .response, location: .status, message: "302 is not documented")]
        )
        tls.response?.body = FlowBody()
        let boundary = "XyZ"
        let multipartBody = "--XyZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHello \"world\"\r\n--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\nContent-Type: application/octet-stream\r\n\r\nrawbytes\r\n--XyZ--\r\n"
        let multipart = Flow(
            mode: .reverse, clientAddress: "127.0.0.1:50124", serverAddress: "10.0.0.2:8080",
            request: FlowRequest(
                method: "PUT", scheme: "http", host: "10.0.0.2", port: 8080, target: "/upload",
                headers: HeaderFields([("Host", "10.0.0.2:8080"), ("Content-Type", "multipart/form-data; boundary=\(boundary)")]),
                body: FlowBody(data: Data(multipartBody.utf8))
            ),
            response: FlowResponse(status: 200, reason: "OK", headers: HeaderFields([("Content-Type", "text/plain")]),
                                   body: FlowBody(data: Data("first part".utf8), size: 1_000_000, isTruncated: true)),
            timings: FlowTimings(start: start.addingTimeInterval(1), connected: start.addingTimeInterval(1.002), requestSent: start.addingTimeInterval(1.003),
                                 firstByte: start.addingTimeInterval(1.01), end: start.addingTimeInterval(1.5))
        )
        let tunnel = Flow(
            mode: .tunnel, clientAddress: "127.0.0.1:50125", serverAddress: "93.184.216.34:443",
            request: FlowRequest(method: "CONNECT", scheme: "https", host: "secure.example.com", port: 443, target: "secure.example.com:443",
                                 headers: HeaderFields([("Host", "secure.example.com:443")]), body: FlowBody(size: 517)),
            response: FlowResponse(status: 200, reason: "Connection Established", body: FlowBody(size: 4096)),
            timings: FlowTimings(start: start.addingTimeInterval(2), connected: start.addingTimeInterval(2.01), end: start.addingTimeInterval(3))
        )
        return [FlowFixtures.getJSON(start: start), tls, multipart, FlowFixtures.postBinary(), tunnel, FlowFixtures.refused()]
    }
}
