import NIOCore
import NIOHTTP1

/// The short plain-text responses Kagami answers with itself when it can't forward a request:
/// bad targets, unreachable servers, timeouts, aborted breakpoints.
enum ErrorPage {
    static func response(status: HTTPResponseStatus, message: String, version: HTTPVersion, close: Bool) -> (HTTPResponseHead, ByteBuffer) {
        let body = ByteBuffer(string: message + "\n")
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        if close { headers.add(name: "Connection", value: "close") }
        return (HTTPResponseHead(version: version, status: status, headers: headers), body)
    }
}
