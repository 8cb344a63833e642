import KagamiFlow
import NIOHTTP1

extension FlowResponse {
    init(_ head: HTTPResponseHead) {
        self.init(
            status: Int(head.status.code), reason: head.status.reasonPhrase, version: head.version.description,
            headers: HeaderFields(head.headers))
    }
}

extension HTTPRequestHead {
    /// `Expect: 100-continue` from an HTTP/1.1 (or later) client: it waits for a 100 (Continue)
    /// before it sends its body (RFC 9110 §10.1.1). An HTTP/1.0 client is sent no 100.
    var expectsContinue: Bool {
        (version.major, version.minor) >= (1, 1) && headers[canonicalForm: "expect"].contains { $0.lowercased() == "100-continue" }
    }
}

extension HTTPResponseHead {
    /// Takes status and headers from a response the rules returned.
    mutating func apply(_ response: FlowResponse) {
        if Int(status.code) != response.status || status.reasonPhrase != response.reason {
            status = HTTPResponseStatus(code: response.status, reason: response.reason)
        }
        let fields = HTTPHeaders(response.headers.pairs)
        if !fields.elementsEqual(headers, by: { $0.name == $1.name && $0.value == $1.value }) {
            headers = fields
        }
    }
}

extension HTTPResponseStatus {
    /// The status with `reason` as its phrase: NIO's `init(statusCode:reasonPhrase:)` gives a
    /// code it knows its standard phrase, so "503 Down For Maintenance" would go out as
    /// "503 Service Unavailable".
    init(code: Int, reason: String) {
        let standard = HTTPResponseStatus(statusCode: code)
        self = reason.isEmpty || reason == standard.reasonPhrase ? standard : .custom(code: UInt(code), reasonPhrase: reason)
    }
}
