import Foundation
import KagamiFlow

/// Ready-made flows for tests of code that consumes them (stores, exports, views).
public enum FlowFixtures {
    public static func getJSON(
        url path: String = "/users/1", host: String = "api.example.com", status: Int = 200,
        body: String = #"{"id":1,"name":"Ada"}"#, start: Date = Date(timeIntervalSince1970: 1_780_000_000)
    ) -> Flow {
        Flow(
            mode: .forward,
            clientAddress: "127.0.0.1:50000",
            serverAddress: "93.184.216.34:80",
            request: FlowRequest(
                method: "GET", scheme: "http", host: host, port: 80, target: path,
                headers: HeaderFields([("Host", host), ("Accept", "application/json"), ("Cookie", "session=abc; theme=dark")])
            ),
            response: FlowResponse(
                status: status, reason: "OK",
                headers: HeaderFields([("Content-Type", "application/json"), ("Set-Cookie", "session=def; Path=/; HttpOnly")]),
                body: FlowBody(data: Data(body.utf8))
            ),
            timings: FlowTimings(
                start: start, connected: start.addingTimeInterval(0.010), requestSent: start.addingTimeInterval(0.011),
                firstByte: start.addingTimeInterval(0.050), end: start.addingTimeInterval(0.060)
            )
        )
    }

    /// An exchange of a JSON API as a test of code comparing exchanges wants it: any method,
    /// target, status, bodies (JSON when they are given as text), extra headers and duration.
    public static func api(
        _ target: String, method: String = "GET", host: String = "api.example.com", status: Int? = 200,
        request: String? = nil, response: String? = nil, requestHeaders: [(String, String)] = [], responseHeaders: [(String, String)] = [],
        duration: TimeInterval = 0.05, start: Date = Date(timeIntervalSince1970: 1_780_000_000)
    ) -> Flow {
        var sent = HeaderFields([("Host", host)] + requestHeaders)
        if request != nil, !sent.contains("Content-Type") { sent.add("Content-Type", "application/json") }
        var received = HeaderFields(responseHeaders)
        if response != nil, !received.contains("Content-Type") { received.add("Content-Type", "application/json") }
        return Flow(
            mode: .forward,
            request: FlowRequest(method: method, scheme: "http", host: host, port: 80, target: target, headers: sent, body: FlowBody(data: Data((request ?? "").utf8))),
            response: status.map { FlowResponse(status: $0, reason: HTTPStatusPhrase.phrase(for: $0) ?? "", headers: received, body: FlowBody(data: Data((response ?? "").utf8))) },
            timings: FlowTimings(start: start, firstByte: start.addingTimeInterval(duration * 0.8), end: start.addingTimeInterval(duration)),
            error: status == nil ? FlowError(.timeout, "the server did not answer in time") : nil
        )
    }

    public static func postBinary(size: Int = 1024, start: Date = Date(timeIntervalSince1970: 1_780_000_001)) -> Flow {
        // Starts with bytes that are never UTF-8, so exports must treat it as binary.
        let bytes = Data((0..<size).map { UInt8(truncatingIfNeeded: 0xFF &- $0 &* 7) })
        return Flow(
            mode: .forward,
            request: FlowRequest(
                method: "POST", scheme: "http", host: "upload.example.com", port: 8080, target: "/files?name=a%20b&x=1",
                headers: HeaderFields([("Host", "upload.example.com:8080"), ("Content-Type", "application/octet-stream"), ("Content-Length", String(size))]),
                body: FlowBody(data: bytes)
            ),
            response: FlowResponse(status: 201, reason: "Created", headers: HeaderFields([("Content-Type", "image/png")]), body: FlowBody(data: bytes)),
            timings: FlowTimings(start: start, end: start.addingTimeInterval(0.2))
        )
    }

    /// A WebSocket handshake the server accepted (101), for `webSocketMessages()`.
    public static func webSocket(start: Date = Date(timeIntervalSince1970: 1_780_000_003)) -> Flow {
        Flow(
            mode: .reverse,
            clientAddress: "127.0.0.1:50001",
            serverAddress: "127.0.0.1:9001",
            request: FlowRequest(
                method: "GET", scheme: "http", host: "127.0.0.1", port: 9001, target: "/chat",
                headers: HeaderFields([
                    ("Host", "127.0.0.1:9001"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
                    ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13"),
                ])
            ),
            response: FlowResponse(
                status: 101, reason: "Switching Protocols",
                headers: HeaderFields([("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")])
            ),
            timings: FlowTimings(start: start, connected: start.addingTimeInterval(0.001), requestSent: start.addingTimeInterval(0.002), firstByte: start.addingTimeInterval(0.003), end: start.addingTimeInterval(2.5))
        )
    }

    /// Messages of `webSocket()`: text both ways, binary, a ping and its pong, and the close.
    public static func webSocketMessages(start: Date = Date(timeIntervalSince1970: 1_780_000_003)) -> [WebSocketMessage] {
        [
            WebSocketMessage(direction: .send, time: start.addingTimeInterval(0.25), opcode: .text, data: Data("hello 👋".utf8), size: 10),
            WebSocketMessage(direction: .receive, time: start.addingTimeInterval(0.5), opcode: .text, data: Data("hello 👋".utf8), size: 10),
            WebSocketMessage(direction: .send, time: start.addingTimeInterval(0.75), opcode: .binary, data: Data([0x00, 0xFF, 0x10]), size: 3),
            WebSocketMessage(direction: .send, time: start.addingTimeInterval(1), opcode: .ping, data: Data(), size: 0),
            WebSocketMessage(direction: .receive, time: start.addingTimeInterval(1.25), opcode: .pong, data: Data(), size: 0),
            WebSocketMessage(direction: .send, time: start.addingTimeInterval(2), opcode: .close, data: Data([0x03, 0xE8]) + Data("bye".utf8), size: 5),
        ]
    }

    public static func refused(start: Date = Date(timeIntervalSince1970: 1_780_000_002)) -> Flow {
        Flow(
            mode: .forward,
            request: FlowRequest(method: "GET", scheme: "http", host: "127.0.0.1", port: 1, target: "/"),
            response: FlowResponse(status: 502, reason: "Bad Gateway", body: FlowBody(data: Data("Kagami: connection refused by 127.0.0.1:1\n".utf8))),
            timings: FlowTimings(start: start, end: start.addingTimeInterval(0.001)),
            error: FlowError(.connectionRefused, "connection refused by 127.0.0.1:1")
        )
    }
}
