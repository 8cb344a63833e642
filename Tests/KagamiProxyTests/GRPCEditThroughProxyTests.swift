import Foundation
import KagamiCurl
import KagamiFlow
import KagamiGRPC
import KagamiJSON
import KagamiTesting
import Testing

/// A gRPC call changed on its way: `kagami proxy` given the test shop's .proto, grpcio's shop
/// server behind it (reverse mode) and grpcio's client in front. At a breakpoint the held
/// request and response show their messages as JSON through the admin API the web UI uses,
/// and JSON edits are what the server and the client receive.
@Suite("gRPC edited at breakpoints", .serialized)
struct GRPCEditThroughProxyTests {
    static var script: String { GRPCSchemaThroughProxyTests.script }
    static var protoFolder: String { GRPCSchemaThroughProxyTests.protoFolder }

    /// The shop server (`--gzip`: its answers compressed) and `kagami proxy` in front of it,
    /// given the shop's .proto unless `givenSchema` is false.
    static func withProxy(
        serverArguments: [String] = [], proxyArguments: [String] = [], givenSchema: Bool = true, _ body: (KagamiProcess, String) async throws -> Void
    ) async throws {
        let server = try PeerServer(script: script, arguments: serverArguments)
        defer { server.stop() }
        let session = temporaryPath("grpc-edit.sqlite")
        let proxy = try await KagamiProcess.start([
            "proxy", "--port", "0", "--ui-port", "0", "--reverse", "http://127.0.0.1:\(server.port)", "--session", session,
        ] + (givenSchema ? ["--proto-path", protoFolder] : []) + proxyArguments)
        defer { proxy.stop() }
        try await body(proxy, session)
    }

    /// One call by grpcio's client (`send`): its answers, status code and message.
    static func send(_ proxy: KagamiProcess, method: String = "/kagami.shop.Shop/GetOrder", json: String, gzip: Bool = false) async throws -> JSONValue {
        let result = try await CommandLineClient(try WebSocketPeer.python()).run(
            [script, "send", "--target", "127.0.0.1:\(proxy.port)", "--method", method, "--json", json] + (gzip ? ["--gzip"] : []))
        try #require(result.status == 0, "\(result.stderr)")
        return try JSONValue(parsing: result.stdoutText.split(separator: "\n").last.map(String.init) ?? "")
    }

    /// An admin API call with curl: the status and the JSON answer.
    static func api(_ proxy: KagamiProcess, _ method: String, _ path: String, body: String? = nil) async throws -> (status: Int, json: JSONValue) {
        let result = try await CommandLineClient.curl.run(
            ["-s", "-w", "\n%{http_code}", "-X", method, "\(proxy.api)\(path)"] + proxy.authorization
                + (body.map { ["-H", "Content-Type: application/json", "--data-binary", $0] } ?? []))
        let lines = result.stdoutText.split(separator: "\n", omittingEmptySubsequences: false)
        let status = Int(lines.last ?? "") ?? 0
        return (status, (try? JSONValue(parsing: lines.dropLast().joined(separator: "\n"))) ?? .null)
    }

    /// The exchange held now, once there is one.
    static func held(_ proxy: KagamiProcess) async throws -> JSONValue {
        let held = try await eventually(attempts: 500, every: .milliseconds(20)) {
            try await api(proxy, "GET", "/breakpoints/held").json["held"]?.arrayValue?.first
        }
        return try #require(held, "nothing was held")
    }

    /// The request's message edited as JSON reaches the server (which answers with the id it
    /// got); the response's, edited too, reaches the client. With `gzip`, both sides are
    /// compressed (`grpc-encoding: gzip`) and the edits go out compressed the same way.
    @Test(arguments: [false, true]) func messagesEditedAsJSONAtBothBreakpoints(gzip: Bool) async throws {
        try await Self.withProxy(serverArguments: gzip ? ["--gzip"] : []) { proxy, session in
            let set = try await Self.api(proxy, "PUT", "/breakpoints", body: #"{"breakpoints":[{"location":{"path":"/kagami.shop.Shop/GetOrder"},"request":true,"response":true}]}"#)
            #expect(set.status == 200)
            async let answer = Self.send(proxy, json: #"{"id": "o1"}"#, gzip: gzip)

            let request = try await Self.held(proxy)
            #expect(request["phase"] == "request")
            let shown = try #require(request["request"]?["grpc"])
            #expect(shown["type"] == "kagami.shop.OrderRequest")
            #expect(shown["encoding"] == (gzip ? "gzip" : .null))
            #expect(shown["messages"] == [["id": "o1"]])
            let id = try #require(request["id"]?.stringValue)
            let refused = try await Self.api(proxy, "POST", "/breakpoints/held/\(id)", body: #"{"action":"execute","request":{"grpc":{"messages":[{"id":7}]}}}"#)
            #expect(refused.status == 400)
            #expect(refused.json["error"]?.stringValue?.contains("request.grpc.messages: message 0 does not fit kagami.shop.OrderRequest: id (string): expected a string, found integer") == true, "\(refused.json)")
            // The web UI's editor sends what was typed as text.
            let typo = try await Self.api(proxy, "POST", "/breakpoints/held/\(id)", body: #"{"action":"execute","request":{"grpc":{"text":"[{\"id\": }]"}}}"#)
            #expect(typo.status == 400)
            #expect(typo.json["error"]?.stringValue?.hasPrefix("request.grpc.text: not JSON: line 1, column 9") == true, "\(typo.json)")
            let edited = try await Self.api(proxy, "POST", "/breakpoints/held/\(id)", body: #"{"action":"execute","request":{"grpc":{"messages":[{"id":"edited-7"}]}}}"#)
            #expect(edited.status == 200, "\(edited.json)")

            let response = try await Self.held(proxy)
            #expect(response["phase"] == "response")
            let answered = try #require(response["response"]?["grpc"])
            #expect(answered["type"] == "kagami.shop.Order")
            #expect(answered["messages"]?[0]?["id"] == "edited-7", "the server got the edited id: \(answered)")
            #expect(answered["messages"]?[0]?["totalCents"] == "18446744073709551615")
            #expect(response["response"]?["trailers"]?.arrayValue?.contains(["grpc-status", "0"]) == true, "\(String(describing: response["response"]?["trailers"]))")
            let responseID = try #require(response["id"]?.stringValue)
            let edit = #"{"action":"execute","response":{"grpc":{"messages":[{"id":"from-the-breakpoint","totalCents":"5","items":[{"name":"cup","colour":"RED","added":"2024-01-31T12:00:00Z"}]}]}}}"#
            let sent = try await Self.api(proxy, "POST", "/breakpoints/held/\(responseID)", body: edit)
            #expect(sent.status == 200, "\(sent.json)")

            let received = try await answer
            #expect(received["code"] == "OK", "\(received)")
            let expected: JSONValue = [["id": "from-the-breakpoint", "totalCents": "5", "items": [["name": "cup", "colour": "RED", "added": "2024-01-31T12:00:00Z"]]]]
            #expect(received["answers"]?.serialized([.sortedKeys]) == expected.serialized([.sortedKeys]))

            // What went out was compressed as each side's grpc-encoding said.
            let flow = try #require(try await KagamiStoreOpen.open(session).allFlows().first)
            let exchange = try #require(GRPCExchange(flow: flow, responseTrailers: flow.response?.trailers))
            #expect(exchange.request.messages.map(\.compressed) == [gzip])
            #expect(exchange.response?.messages.map(\.compressed) == [gzip])
            #expect(exchange.status?.code == 0)
        }
    }

    /// A client and server with a newer .proto than the proxy's: the request's fields the
    /// proxy's schema lacks are shown counted and carried as bytes under `@unknown`; with
    /// the known `id` edited, the server receives them byte for byte.
    @Test func fieldsTheSchemaDoesNotKnowReachTheServerUnchanged() async throws {
        try await Self.withProxy(serverArguments: ["--echo-request"]) { proxy, _ in
            _ = try await Self.api(proxy, "PUT", "/breakpoints", body: #"{"breakpoints":[{"location":{"path":"/kagami.shop.Shop/GetOrder"},"request":true,"response":false}]}"#)
            // OrderRequest{id: "o1"} and, from the newer .proto, 2: "web", 3: {1: 25}, 4: fixed32 1.
            let unknown = "12037765621a0208192501000000"
            async let answer = CommandLineClient(try WebSocketPeer.python()).run([
                Self.script, "raw", "--target", "127.0.0.1:\(proxy.port)", "--method", "/kagami.shop.Shop/GetOrder", "--hex", "0a026f31" + unknown,
            ])
            let held = try await Self.held(proxy)
            let shown = try #require(held["request"]?["grpc"])
            #expect(shown["unknownFields"] == 3, "\(shown)")
            let base64 = Data(try #require(Self.bytes(hex: unknown))).base64EncodedString()
            #expect(shown["messages"] == [["id": "o1", "@unknown": .string(base64)]], "\(shown)")
            var message = try #require(shown["messages"]?[0]?.objectValue)
            message["id"] = "edited"
            let id = try #require(held["id"]?.stringValue)
            let edit: JSONValue = ["action": "execute", "request": ["grpc": ["messages": [.object(message)]]]]
            let sent = try await Self.api(proxy, "POST", "/breakpoints/held/\(id)", body: edit.serialized())
            #expect(sent.status == 200, "\(sent.json)")

            let result = try await answer
            try #require(result.status == 0, "\(result.stderr)")
            let report = try JSONValue(parsing: result.stdoutText.split(separator: "\n").last.map(String.init) ?? "")
            #expect(report["code"] == "OK", "\(report)")
            let order = try ProtoFiles.schema(descriptors: [], folders: [Self.protoFolder]).decode(Data(try #require(Self.bytes(hex: report["hex"]?.stringValue ?? ""))), as: "kagami.shop.Order").get()
            // The server's echo: the edited id, then the unknown fields as the client sent them.
            #expect(order.json["id"] == .string("0a06" + Data("edited".utf8).map { String(format: "%02x", $0) }.joined() + unknown))
        }
    }

    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        return stride(from: 0, to: digits.count, by: 2).compactMap { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16) }
    }

    /// A response held and sent on unchanged keeps its trailers: the client gets its status.
    @Test func aHeldResponseSentOnUnchangedKeepsItsStatus() async throws {
        try await Self.withProxy { proxy, _ in
            _ = try await Self.api(proxy, "PUT", "/breakpoints", body: #"{"breakpoints":[{"location":{"path":"/kagami.shop.Shop/*"},"request":false,"response":true}]}"#)
            async let answer = Self.send(proxy, method: "/kagami.shop.Shop/WatchOrders", json: #"{"id": "w"}"#)
            let held = try await Self.held(proxy)
            #expect(held["response"]?["grpc"]?["messages"]?.arrayValue?.count == 2)
            let id = try #require(held["id"]?.stringValue)
            _ = try await Self.api(proxy, "POST", "/breakpoints/held/\(id)", body: #"{"action":"execute"}"#)
            let received = try await answer
            #expect(received["code"] == "OK", "\(received)")
            #expect(received["answers"] == [["id": "w-1"], ["id": "w-2"]])
        }
    }
}

/// Map Local answering gRPC methods from JSON files, as grpcio's client receives them.
@Suite("gRPC answered by Map Local", .serialized)
struct GRPCMapLocalTests {
    /// A rules file mapping the shop's methods to a folder of `Method.json` files.
    static func withFolder(
        serverArguments: [String] = [], givenSchema: Bool = true, _ body: (KagamiProcess, URL) async throws -> Void
    ) async throws {
        let folder = try TemporaryFolder.make("grpc-map-local")
        defer { try? FileManager.default.removeItem(at: folder) }
        let answers = folder.appendingPathComponent("kagami.shop.Shop")
        try FileManager.default.createDirectory(at: answers, withIntermediateDirectories: true)
        let rules = folder.appendingPathComponent("rules.json")
        try Data(#"{"mapLocal": [{"name": "shop", "from": {"path": "/kagami.shop.Shop/*"}, "local": "kagami.shop.Shop"}]}"#.utf8).write(to: rules)
        try await GRPCEditThroughProxyTests.withProxy(serverArguments: serverArguments, proxyArguments: ["--rules", rules.path], givenSchema: givenSchema) { proxy, _ in
            try await body(proxy, answers)
        }
    }

    static func write(_ text: String, to folder: URL, _ name: String) throws {
        try Data(text.utf8).write(to: folder.appendingPathComponent(name))
    }

    @Test func unaryAndStreamingAnswersFromJSONFiles() async throws {
        try await Self.withFolder { proxy, folder in
            try Self.write(#"{"id": "from-a-file", "totalCents": "18446744073709551615", "items": [{"name": "tea", "colour": "GREEN", "shelfLife": "1.5s"}]}"#, to: folder, "GetOrder.json")
            try Self.write(#"[{"id": "w-1"}, {"id": "w-2"}, {"id": "w-3"}]"#, to: folder, "WatchOrders.json")
            let unary = try await GRPCEditThroughProxyTests.send(proxy, json: #"{"id": "o1"}"#)
            #expect(unary["code"] == "OK", "\(unary)")
            #expect(unary["answers"]?.serialized([.sortedKeys])
                == #"[{"id":"from-a-file","items":[{"colour":"GREEN","name":"tea","shelfLife":"1.500s"}],"totalCents":"18446744073709551615"}]"#)
            let streamed = try await GRPCEditThroughProxyTests.send(proxy, method: "/kagami.shop.Shop/WatchOrders", json: #"{"id": "o1"}"#)
            #expect(streamed["code"] == "OK", "\(streamed)")
            #expect(streamed["answers"] == [["id": "w-1"], ["id": "w-2"], ["id": "w-3"]])
        }
    }

    /// No .proto given: the answers are written with what the server's reflection says of
    /// the method, asked before the first answer; a server without reflection leaves the
    /// method unknown, and the client gets INTERNAL saying so.
    @Test func answersWrittenWithTheSchemaFromReflection() async throws {
        try await Self.withFolder(serverArguments: ["--reflection", "v1"], givenSchema: false) { proxy, folder in
            try Self.write(#"{"id": "from-a-file", "totalCents": "18446744073709551615", "items": [{"name": "tea", "colour": "GREEN"}]}"#, to: folder, "GetOrder.json")
            try Self.write(#"[{"id": "w-1"}, {"id": "w-2"}]"#, to: folder, "WatchOrders.json")
            let unary = try await GRPCEditThroughProxyTests.send(proxy, json: #"{"id": "o1"}"#)
            #expect(unary["code"] == "OK", "\(unary)")
            #expect(unary["answers"]?.serialized([.sortedKeys]) == #"[{"id":"from-a-file","items":[{"colour":"GREEN","name":"tea"}],"totalCents":"18446744073709551615"}]"#)
            let streamed = try await GRPCEditThroughProxyTests.send(proxy, method: "/kagami.shop.Shop/WatchOrders", json: #"{"id": "o1"}"#)
            #expect(streamed["code"] == "OK", "\(streamed)")
            #expect(streamed["answers"] == [["id": "w-1"], ["id": "w-2"]])
        }
        try await Self.withFolder(givenSchema: false) { proxy, folder in
            try Self.write(#"{"id": "from-a-file"}"#, to: folder, "GetOrder.json")
            let unknown = try await GRPCEditThroughProxyTests.send(proxy, json: #"{"id": "o1"}"#)
            #expect(unknown["code"] == "INTERNAL", "\(unknown)")
            #expect(unknown["message"]?.stringValue?.hasPrefix("Kagami Map Local: no schema has /kagami.shop.Shop/GetOrder") == true, "\(unknown)")
        }
    }

    /// A status file answers with that status (and its message, percent-encoded on the wire);
    /// a file that doesn't fit the method's type answers INTERNAL, saying where.
    @Test func statusesAndFilesThatDoNotFit() async throws {
        try await Self.withFolder { proxy, folder in
            try Self.write(#"{"grpc-status": "NOT_FOUND", "grpc-message": "no order o1 – ask again"}"#, to: folder, "GetOrder.json")
            let missing = try await GRPCEditThroughProxyTests.send(proxy, json: #"{"id": "o1"}"#)
            #expect(missing["code"] == "NOT_FOUND")
            #expect(missing["message"] == "no order o1 – ask again")
            try Self.write(#"{"grpc-status": 9, "messages": [{"id": "w-1"}]}"#, to: folder, "WatchOrders.json")
            let partial = try await GRPCEditThroughProxyTests.send(proxy, method: "/kagami.shop.Shop/WatchOrders", json: #"{"id": "o1"}"#)
            #expect(partial["code"] == "FAILED_PRECONDITION")
            #expect(partial["answers"] == [["id": "w-1"]])
            try Self.write(#"{"id": "x", "items": [{"colour": "BLUE"}]}"#, to: folder, "GetOrder.json")
            let wrong = try await GRPCEditThroughProxyTests.send(proxy, json: #"{"id": "o1"}"#)
            #expect(wrong["code"] == "INTERNAL")
            #expect(wrong["message"] == "Kagami Map Local: kagami.shop.Shop/GetOrder.json: message 0 does not fit kagami.shop.Order: items[0].colour (kagami.shop.Colour): BLUE is not a value of kagami.shop.Colour (its values: COLOUR_UNSPECIFIED, RED, GREEN)", "\(wrong)")
        }
    }
}

/// Copy as grpcurl: the command's parts for a recorded call, from `kagami curl --format
/// grpcurl` and the admin API alike, and the call made again by grpcio's client from them
/// (grpcurl itself is not packaged for Debian or PyPI).
@Suite("Copy as grpcurl", .serialized)
struct GRPCurlCopyTests {
    @Test func theCommandsPartsMakeTheCallAgain() async throws {
        try await GRPCEditThroughProxyTests.withProxy { proxy, session in
            let python = try WebSocketPeer.python()
            let first = try await CommandLineClient(python).run([
                GRPCEditThroughProxyTests.script, "send", "--target", "127.0.0.1:\(proxy.port)", "--method", "/kagami.shop.Shop/GetOrder",
                "--json", #"{"id": "o1"}"#, "--header", "x-user:ann",
            ])
            try #require(first.status == 0, "\(first.stderr)")
            let flow = try #require(try await eventually { try await KagamiStoreOpen.open(session).allFlows().first })
            let schema = try ProtoFiles.schema(descriptors: [], folders: [GRPCEditThroughProxyTests.protoFolder])
            let folder = URL(fileURLWithPath: GRPCEditThroughProxyTests.protoFolder).standardizedFileURL.path
            let command = try GRPCurlCommand(flow, schema: schema, sources: GRPCSchemas.Sources(protoFolders: [folder]))
            var arguments = command.arguments
            // grpcio sends its 20-second deadline as grpc-timeout, which gRPC's core rounds up
            // (20.1 s seen): a -max-time of a little over 20 seconds at most.
            let timeout = try #require(arguments.firstIndex(of: "-max-time"))
            #expect(Double(arguments[timeout + 1]).map { $0 > 0 && $0 <= 21 } == true, "\(arguments)")
            arguments.removeSubrange(timeout...(timeout + 1))
            #expect(arguments == [
                "grpcurl", "-plaintext", "-import-path", folder, "-proto", "kagami/shop.proto", "-H", "x-user: ann",
                "-d", #"{"id":"o1"}"#, "\(flow.request.host):\(flow.request.port)", "kagami.shop.Shop/GetOrder",
            ])

            // The same command from the CLI and the admin API the web UI copies from.
            let printed = try await CommandLineClient.kagami().run([
                "curl", "--session", session, "--format", "grpcurl", "--proto-path", GRPCEditThroughProxyTests.protoFolder, flow.id.uuidString,
            ])
            try #require(printed.status == 0, "\(printed.stderr)")
            #expect(printed.stdoutText == command.shellCommand + "\n")
            let copied = try await CommandLineClient.curl.run(["-s", "\(proxy.api)/flows/\(flow.id.uuidString)/grpcurl"] + proxy.authorization)
            #expect(copied.stdoutText == command.shellCommand + "\n")
            #expect(command.shellCommand.contains(#"-d '{"id":"o1"}'"#))

            // grpcio's client makes the call from the parts: address, method, -H, -d.
            let parts = command.arguments
            let header = try #require(parts.firstIndex(of: "-H"))
            let data = try #require(parts.firstIndex(of: "-d"))
            let again = try await CommandLineClient(python).run([
                GRPCEditThroughProxyTests.script, "send", "--target", parts[parts.count - 2], "--method", "/" + parts[parts.count - 1],
                "--json", parts[data + 1], "--header", parts[header + 1].replacingOccurrences(of: ": ", with: ":"),
            ])
            try #require(again.status == 0, "\(again.stderr)")
            let answer = try JSONValue(parsing: again.stdoutText.split(separator: "\n").last.map(String.init) ?? "")
            #expect(answer["code"] == "OK")
            #expect(answer["answers"]?[0]?["id"] == "o1")

            // Without a schema for the method there is no JSON to give -d: no command.
            #expect(throws: GRPCurlCommand.Failure.self) { try GRPCurlCommand(flow, schema: nil) }
            let refused = try await CommandLineClient.kagami().run(["curl", "--session", session, "--format", "grpcurl", flow.id.uuidString])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("no schema has /kagami.shop.Shop/GetOrder"), "\(refused.stderr)")
        }
    }
}
