import Foundation
import KagamiCurl
import KagamiFlow
import KagamiTesting
import Testing

/// Generated commands run by bash and the real curl against the testing origin, which records
/// exactly what arrived.
@Suite struct CurlCommandTests {
    static let oddValues = [
        #"say "hi""#, "it's", "$HOME and $(id) and ${x}", "`uname`", #"back\slash\\"#, "naïve — 日本 ✓",
        "semi;colon", "inner  spaces", "!bang !! ^caret", "#hash &amp; *star* ?q [a] {b}", "%s%n%%",
    ]

    func send(_ request: FlowRequest, to origin: OriginServer) async throws -> OriginServer.ReceivedRequest {
        let command = CurlCommand(request)
        let before = origin.received.count
        let result = try await CommandLineClient("/bin/bash").run(["-c", command.shellCommand + " --silent --show-error --output /dev/null"])
        #expect(result.status == 0, "\(result.stderr)\n\(command.shellCommand)")
        let received = origin.received
        try #require(received.count == before + 1, "\(command.shellCommand)")
        return received[before]
    }

    func request(_ method: String, _ target: String, port: Int, headers: [(String, String)], body: Data = Data()) -> FlowRequest {
        FlowRequest(
            method: method, scheme: "http", host: "127.0.0.1", port: port, target: target,
            headers: HeaderFields([("Host", "127.0.0.1:\(port)")] + headers), body: FlowBody(data: body)
        )
    }

    func expectSame(_ received: OriginServer.ReceivedRequest, _ request: FlowRequest) {
        #expect(received.method == request.method)
        #expect(received.uri == request.target)
        #expect(received.headers.map { "\($0.name): \($0.value)" } == request.headers.map { "\($0.name): \($0.value)" })
        #expect(received.body == request.body.data)
    }

    @Test func oddHeaderValuesArriveUnchanged() async throws {
        let origin = try await OriginServer.start()
        defer { Task { try? await origin.stop() } }
        var headers = Self.oddValues.enumerated().map { ("X-Odd-\($0)", $1) }
        headers += [("X-Empty", ""), ("X-Dup", "one"), ("x-dup", "two"), ("User-Agent", "MyApp/1.0 (iPhone)")]
        let original = request("GET", "/echo/a/../b?q=%20x&y=[1]{2}&z='\"", port: origin.port, headers: headers)
        expectSame(try await send(original, to: origin), original)
    }

    @Test func everyByteValueInTheBody() async throws {
        let origin = try await OriginServer.start()
        defer { Task { try? await origin.stop() } }
        let bytes = Data((0..<512).map { UInt8($0 % 256) })
        let original = request("POST", "/echo", port: origin.port, headers: [
            ("Content-Type", "application/octet-stream"), ("Content-Length", "\(bytes.count)"),
        ], body: bytes)
        let command = CurlCommand(original)
        #expect(command.standardInput == bytes)
        expectSame(try await send(original, to: origin), original)
    }

    @Test func binaryWithoutNULsAndTextWithQuotes() async throws {
        let origin = try await OriginServer.start()
        defer { Task { try? await origin.stop() } }
        let binary = Data((1..<256).map { UInt8($0) } + [0xFF, 0xFE, 0x80])
        let text = Data(#"{"name":"O'Brien \"Bob\"","cmd":"`rm -rf` $(x) \\n","emoji":"🎉","nl":"a"}"#.utf8 + [0x0A, 0x0D, 0x09] + "'".utf8)
        for body in [binary, text, Data("@/etc/passwd".utf8)] {
            let original = request("PUT", "/echo", port: origin.port, headers: [
                ("Content-Type", "application/json"), ("Content-Length", "\(body.count)"),
            ], body: body)
            expectSame(try await send(original, to: origin), original)
        }
    }

    @Test func methodsWithoutBodiesAndNoCurlDefaults() async throws {
        let origin = try await OriginServer.start()
        defer { Task { try? await origin.stop() } }
        // Neither User-Agent nor Accept: curl must not add its own.
        for method in ["GET", "DELETE", "HEAD", "OPTIONS"] {
            let original = request(method, "/echo", port: origin.port, headers: [("X-Trace", "1")])
            expectSame(try await send(original, to: origin), original)
        }
    }

    @Test func compressedOnlyWhenAskedFor() async throws {
        let origin = try await OriginServer.start()
        defer { Task { try? await origin.stop() } }
        let asked = request("GET", "/echo", port: origin.port, headers: [("Accept-Encoding", "gzip, br")])
        #expect(CurlCommand(asked).arguments.contains("--compressed"))
        expectSame(try await send(asked, to: origin), asked)
        let plain = request("GET", "/echo", port: origin.port, headers: [("Accept", "*/*")])
        #expect(!CurlCommand(plain).arguments.contains("--compressed"))
        #expect(!CurlCommand(plain).shellCommand.contains(" -x") && !CurlCommand(plain).shellCommand.contains("--proxy"))
    }

    /// A request recorded over HTTP/2 carries pseudo-header fields and no Host: the command
    /// asks for HTTP/2, leaves the pseudo fields to curl, and the server gets the authority as Host.
    @Test func http2RequestsUseTheAuthority() async throws {
        let origin = try await OriginServer.start()
        let request = FlowRequest(
            method: "GET", scheme: "http", host: "127.0.0.1", port: origin.port, target: "/echo?via=h2", version: "HTTP/2.0",
            headers: HeaderFields([
                (":method", "GET"), (":authority", "127.0.0.1:\(origin.port)"), (":scheme", "http"), (":path", "/echo?via=h2"),
                ("accept", "*/*"), ("x-trace", "abc"),
            ]))
        let command = CurlCommand(request)
        #expect(command.arguments.contains("--http2"))
        #expect(!command.arguments.contains { $0.hasPrefix(":") || $0 == "Host:" })
        let received = try await send(request, to: origin)
        #expect(received.uri == "/echo?via=h2")
        #expect(received.headers.first { $0.name.lowercased() == "host" }?.value == "127.0.0.1:\(origin.port)")
        #expect(received.headers.contains { $0.name == "x-trace" && $0.value == "abc" })
        try await origin.stop()
    }

    @Test func commandIsReadable() {
        let original = FlowRequest(
            method: "POST", scheme: "https", host: "api.example.com", port: 443, target: "/v1/items",
            headers: HeaderFields([("Host", "api.example.com"), ("Content-Type", "application/json"), ("Content-Length", "9")]),
            body: FlowBody(data: Data(#"{"a":"b"}"#.utf8))
        )
        #expect(CurlCommand(original).shellCommand == """
            curl --path-as-is --globoff --http1.1 \\
              --request POST \\
              --header 'Host: api.example.com' \\
              --header 'Content-Type: application/json' \\
              --header 'Content-Length: 9' \\
              --header User-Agent: \\
              --header Accept: \\
              --header Expect: \\
              --data-binary $'{"a":"b"}' \\
              https://api.example.com/v1/items
            """)
    }
}
