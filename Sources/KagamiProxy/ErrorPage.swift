import KagamiFlow
import NIOCore
import NIOHTTP1

/// The short plain-text responses Kagami answers with itself when it can't forward a request:
/// bad targets, unreachable servers, timeouts, aborted breakpoints. Those that answer for a
/// server Kagami could not reach say so in `Proxy-Status` (RFC 9209), so a client such as
/// `kagami repeat` can tell them from the server's own answers.
enum ErrorPage {
    static func response(
        status: HTTPResponseStatus, message: String, version: HTTPVersion, close: Bool, error: FlowError.Kind? = nil
    ) -> (HTTPResponseHead, ByteBuffer) {
        let body = ByteBuffer(string: message + "\n")
        var headers = HTTPHeaders()
        if let error { headers.add(name: "Proxy-Status", value: "kagami; error=\(proxyStatusError(error))") }
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        if close { headers.add(name: "Connection", value: "close") }
        return (HTTPResponseHead(version: version, status: status, headers: headers), body)
    }

    /// The error types of RFC 9209 §2.3 closest to each kind of failure.
    static func proxyStatusError(_ kind: FlowError.Kind) -> String {
        switch kind {
        case .connectionRefused: "connection_refused"
        case .connectionReset: "connection_terminated"
        case .timeout: "connection_timeout"
        case .badResponse: "http_protocol_error"
        case .dnsFailure: "dns_error"
        case .badRequest: "http_request_error"
        case .tlsFailure: "tls_protocol_error"
        case .aborted: "proxy_internal_response"
        case .notAllowed: "destination_ip_prohibited"
        case .clientDisconnected, .other: "proxy_internal_error"
        }
    }
}
