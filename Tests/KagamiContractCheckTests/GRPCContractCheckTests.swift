import Foundation
import KagamiContractCheck
import KagamiFlow
import KagamiGRPC
import KagamiJSON
import KagamiTesting
import Testing

/// gRPC calls built by hand (messages encoded by `protoc --encode`) checked against the test
/// shop's `.proto` folder (Tests/GRPC/proto) as a description: no sockets.
@Suite struct GRPCContractCheckTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("GRPC/proto").path

    /// `text` (Protocol Buffers text format) as `type`'s binary encoding, by protoc.
    static func encode(_ text: String, as type: String) async throws -> Data {
        let protoc = try #require(ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":").map { "\($0)/protoc" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }, "protoc is not installed (scripts/test.sh installs protobuf-compiler)")
        let result = try await CommandLineClient(protoc).run(["--encode=\(type)", "--proto_path=\(folder)", "kagami/shop.proto"], stdin: Data(text.utf8))
        try #require(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    /// Messages with gRPC's 5-byte prefix each.
    static func framed(_ messages: [Data]) -> Data {
        var body = Data()
        for message in messages {
            body.append(0)
            let count = UInt32(message.count)
            body.append(contentsOf: [UInt8(count >> 24 & 0xFF), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)])
            body.append(message)
        }
        return body
    }

    static func call(
        _ path: String, request: [Data], response: [Data], status: String? = "0", httpStatus: Int = 200, contentType: String = "application/grpc"
    ) -> Flow {
        var answer = FlowResponse(
            status: httpStatus, version: "HTTP/2.0", headers: HeaderFields([("content-type", contentType)]), body: FlowBody(data: framed(response)))
        answer.trailers = HeaderFields(status.map { [("grpc-status", $0)] } ?? [])
        return Flow(
            mode: .reverse,
            request: FlowRequest(
                method: "POST", scheme: "http", host: "127.0.0.1", port: 50051, target: path, version: "HTTP/2.0",
                headers: HeaderFields([("content-type", contentType), ("te", "trailers")]), body: FlowBody(data: framed(request))),
            response: answer, timings: FlowTimings(start: Date(timeIntervalSince1970: 1_780_000_000)))
    }

    static func check() throws -> ContractCheck { try ContractCheck.load(folder) }

    static func violations(_ flow: Flow) throws -> [ContractViolation] {
        try #require(try check().check(flow), "the call is in the description's scope").violations
    }

    @Test func theProtoFolderIsADescriptionOfItsMethods() throws {
        let check = try Self.check()
        #expect(check.contract.format == .protobuf)
        #expect(check.routes.inDocumentOrder.map { "\($0.method) \($0.action.uriTemplate)" } == [
            "POST /kagami.shop.Shop/GetOrder", "POST /kagami.shop.Shop/PlaceItems", "POST /kagami.shop.Shop/WatchOrders",
        ])
        // The annotations became keywords of the message types' JSON Schemas.
        let schema = try #require(check.routes.inDocumentOrder.first?.action.examples.first?.requests.first?.payload.schema)
        #expect(schema["required"] == ["id"])
        #expect(schema["properties"]?["id"] == ["type": "string", "minLength": 2, "maxLength": 40])
        let item = try #require(check.routes.inDocumentOrder[1].action.examples.first?.requests.first?.payload.schema)
        #expect(item["properties"]?["name"]?["pattern"] == "^[a-z]+$")
        #expect(item["properties"]?["percent"]?["maximum"] == 100)
        #expect(item["properties"]?["weight"]?["minimum"] == .number(0))
    }

    @Test func aCleanCallHasNoFinding() async throws {
        let request = try await Self.encode(#"id: "o1""#, as: "kagami.shop.OrderRequest")
        let response = try await Self.encode(#"id: "o1" items { name: "tea" percent: 10 weight: 0.5 } total_cents: 3"#, as: "kagami.shop.Order")
        let flow = Self.call("/kagami.shop.Shop/GetOrder", request: [request], response: [response])
        #expect(try Self.violations(flow).isEmpty)
        // A stream of messages and a trailers-only error answer are fine too.
        let watched = Self.call("/kagami.shop.Shop/WatchOrders", request: [request], response: [response, response])
        #expect(try Self.violations(watched).isEmpty)
        let refused = Self.call("/kagami.shop.Shop/GetOrder", request: [request], response: [], status: "5")
        #expect(try Self.violations(refused).isEmpty)
    }

    @Test func aMessageOfAnotherTypeIsReported() async throws {
        // A Timestamp sent to GetOrder: its field 1 is a varint where OrderRequest has a string.
        let timestamp = try await Self.encode("seconds: 1700000000", as: "google.protobuf.Timestamp")
        let flow = Self.call("/kagami.shop.Shop/GetOrder", request: [timestamp], response: [], status: "13")
        let found = try Self.violations(flow)
        let wrong = try #require(found.first { $0.kind == .messageType }, "\(found)")
        #expect(wrong.side == .request)
        #expect(wrong.severity == .error)
        #expect(wrong.instancePointer == "/0")
        #expect(wrong.expected == "kagami.shop.OrderRequest")
        #expect(wrong.actual == "08 80 e2 cf aa 06")
        #expect(wrong.operation?.name == "GetOrder")
        #expect(wrong.message == "message 0 (6 bytes) does not decode as kagami.shop.OrderRequest at byte 0: field id (1) is declared string but came as varint")

        // A string field that is not UTF-8.
        let notText = Data([0x0A, 0x02, 0xC3, 0x28])
        let utf8 = try Self.violations(Self.call("/kagami.shop.Shop/GetOrder", request: [notText], response: []))
        #expect(utf8.contains { $0.kind == .messageType && $0.message.contains("not UTF-8") }, "\(utf8)")

        // A field the type does not declare: a warning, with where it was.
        let extra = try await Self.encode(#"name: "o1" price_cents: 5"#, as: "kagami.shop.Item")
        let unknown = try Self.violations(Self.call("/kagami.shop.Shop/GetOrder", request: [extra], response: []))
        let field = try #require(unknown.first { $0.keyword == "unknown field" }, "\(unknown)")
        #expect(field.severity == .warning)
        #expect(field.actual == "field 2 (varint)")
    }

    @Test func validationAnnotationsAreChecked() async throws {
        let empty = Data()
        let short = try await Self.encode(#"id: "x""#, as: "kagami.shop.OrderRequest")
        let missing = try Self.violations(Self.call("/kagami.shop.Shop/GetOrder", request: [empty], response: []))
        #expect(missing.map(\.keyword) == ["required"])
        #expect(missing.first?.instancePointer == "/0")
        #expect(missing.first?.expected == #"properties "id""#)
        let tooShort = try Self.violations(Self.call("/kagami.shop.Shop/GetOrder", request: [short], response: []))
        #expect(tooShort.map(\.keyword) == ["minLength"])
        #expect(tooShort.first?.instancePointer == "/0/id")

        // PGV's pattern and double range, protovalidate's int32 range, on the second message of a stream.
        let good = try await Self.encode(#"name: "cup""#, as: "kagami.shop.Item")
        let bad = try await Self.encode(#"name: "Cup!" percent: 300 weight: -1"#, as: "kagami.shop.Item")
        let order = try await Self.encode(#"id: "placed""#, as: "kagami.shop.Order")
        let placed = try Self.violations(Self.call("/kagami.shop.Shop/PlaceItems", request: [good, bad], response: [order]))
        #expect(Set(placed.map { "\($0.instancePointer ?? "") \($0.keyword ?? "")" }) == ["/1/name pattern", "/1/percent maximum", "/1/weight minimum"])
        #expect(placed.allSatisfy { $0.side == .request && $0.kind == .schema && $0.severity == .error })
    }

    @Test func unknownMethodsAndServices() throws {
        let nope = try Self.violations(Self.call("/kagami.shop.Shop/Nope", request: [], response: [], status: "12"))
        #expect(nope.count == 1)
        #expect(nope.first?.kind == .undocumentedPath)
        #expect(nope.first?.message == "the schema's service kagami.shop.Shop has no method Nope (it has GetOrder, PlaceItems, WatchOrders)")
        let other = try Self.violations(Self.call("/kagami.bank.Bank/Pay", request: [], response: [], status: "12"))
        #expect(other.first?.message == "the schema has no service kagami.bank.Bank (it has kagami.shop.Shop)")
    }

    @Test func theCallsStatusIsChecked() async throws {
        let request = try await Self.encode(#"id: "o1""#, as: "kagami.shop.OrderRequest")
        let noTrailer = try Self.violations(Self.call("/kagami.shop.Shop/GetOrder", request: [request], response: [], status: nil))
        #expect(noTrailer.map { "\($0.kind.rawValue) \($0.place)" } == ["missing header.grpc-status"])
        let odd = try Self.violations(Self.call("/kagami.shop.Shop/GetOrder", request: [request], response: [], status: "42"))
        #expect(odd.map { "\($0.kind.rawValue) \($0.actual ?? "")" } == ["undocumented-status 42"])
        #expect(odd.first?.severity == .error)
        let http = try Self.violations(Self.call("/kagami.shop.Shop/GetOrder", request: [request], response: [], httpStatus: 503))
        #expect(http.map(\.kind) == [.undocumentedStatus])
    }

    @Test func onlyGRPCCallsAreInScope() throws {
        let check = try Self.check()
        let plain = Flow(
            mode: .reverse,
            request: FlowRequest(method: "GET", scheme: "http", host: "127.0.0.1", port: 50051, target: "/health"),
            response: FlowResponse(status: 200), timings: FlowTimings(start: Date(timeIntervalSince1970: 1_780_000_000)))
        #expect(check.check(plain) == nil)
        // A folder without services is refused with the reason.
        let refusal = #expect(throws: ContractCheckError.self) { try ContractCheck.load(Self.folder + "/buf") }
        #expect(refusal?.description.contains("no service") ?? false, "\(String(describing: refusal))")
    }

    /// A `.proto` that doesn't compile is refused with protoc's own file:line:column message.
    @Test func aProtoThatDoesNotCompileIsRefusedWithProtocsMessage() throws {
        let path = try TemporaryFolder.path("grpc-contract-broken", "broken.proto")
        try Data("syntax = \"proto3\";\nmessage Broken {\n  strin name = 1;\n}\n".utf8).write(to: URL(fileURLWithPath: path))
        let refusal = #expect(throws: ContractCheckError.self) { try ContractCheck.load((path as NSString).deletingLastPathComponent) }
        let text = refusal?.description ?? ""
        #expect(text.contains("protoc could not compile"), "\(text)")
        #expect(text.contains("broken.proto:3:"), "\(text)")
    }

    /// A descriptor set (`protoc --descriptor_set_out`) is a description too, with a base URL.
    @Test func aDescriptorSetWithABaseURL() async throws {
        let set = try TemporaryFolder.path("grpc-contract", "shop.protoset")
        let protoc = try CommandLineClient("/usr/bin/protoc")
        let made = try await protoc.run(["--include_imports", "--descriptor_set_out=\(set)", "--proto_path=\(Self.folder)", "kagami/shop.proto"])
        try #require(made.status == 0, "\(made.stderr)")
        let check = try ContractCheck.load(set + "=http://127.0.0.1:50051")
        #expect(check.routes.routes.count == 3)
        let request = try await Self.encode(#"id: "x""#, as: "kagami.shop.OrderRequest")
        let flow = Self.call("/kagami.shop.Shop/GetOrder", request: [request], response: [])
        #expect(check.check(flow)?.violations.map(\.keyword) == ["minLength"])
        var elsewhere = flow
        elsewhere.request.port = 50052
        #expect(check.check(elsewhere) == nil)
    }

    /// `grpc-reflection=URL`: the server named, or a clear refusal; only the commands that can
    /// ask a running server take it.
    @Test func reflectionArgumentsAreReadOrRefused() throws {
        let server = try #require(try ContractCheck.reflectionServer("grpc-reflection=http://127.0.0.1:50051"))
        #expect(server.host == "127.0.0.1" && server.port == 50051 && !server.tls)
        #expect(try ContractCheck.reflectionServer("grpc-reflection=https://127.0.0.1")?.port == 443)
        #expect(try ContractCheck.reflectionServer(Self.folder) == nil)
        let bare = #expect(throws: ContractCheckError.self) { try ContractCheck.reflectionServer("grpc-reflection") }
        #expect(bare?.description == "grpc-reflection: name the server whose reflection describes its methods, such as grpc-reflection=http://127.0.0.1:50051 (https for TLS)")
        let loaded = #expect(throws: ContractCheckError.self) { try ContractCheck.load("grpc-reflection=http://127.0.0.1:50051") }
        #expect(loaded?.description.contains("server reflection is asked of a running server") == true)
    }

    /// A live description from reflection, answered here by a stand-in server (v1 missing,
    /// v1alpha answering from protoc's descriptor set): the services it lists become the
    /// contract; one that fails waits, saying why.
    @Test func aLiveDescriptionFromTheServersReflection() async throws {
        let set = try TemporaryFolder.path("grpc-reflection-contract", "shop.protoset")
        let made = try await CommandLineClient("/usr/bin/protoc").run(["--include_imports", "--descriptor_set_out=\(set)", "--proto_path=\(Self.folder)", "kagami/shop.proto"])
        try #require(made.status == 0, "\(made.stderr)")
        let files = Self.lengthDelimited(try Data(contentsOf: URL(fileURLWithPath: set))).map(\.payload)
        let asked = Asked()
        let standIn: ServerReflection.Send = { path, body in
            await asked.add(path)
            guard path.hasPrefix("/grpc.reflection.v1alpha.") else {
                return ServerReflection.Answer(body: Data(), status: GRPCExchange.Status(code: 12, name: "UNIMPLEMENTED", message: nil))
            }
            // A ServerReflectionRequest: field 7 list_services, field 4 file_containing_symbol.
            let request = Self.lengthDelimited(body.dropFirst(5))
            let answer: Data
            if request.first?.number == 7 {
                let services = ["kagami.shop.Shop", "grpc.reflection.v1alpha.ServerReflection"].map { Self.field(1, Self.field(1, Data($0.utf8))) }
                answer = Self.field(6, services.reduce(Data(), +))
            } else {
                answer = Self.field(4, files.map { Self.field(1, $0) }.reduce(Data(), +))
            }
            return ServerReflection.Answer(body: Self.framed([answer]), status: GRPCExchange.Status(code: 0, name: "OK", message: nil))
        }
        let argument = "grpc-reflection=http://127.0.0.1:50051"
        let live = try LiveContracts(arguments: [argument])
        #expect(live.json["waitingForReflection"]?[0]?["reason"] == "not asked yet")
        let notes = await live.askReflection { host, port, tls in
            #expect(host == "127.0.0.1" && port == 50051 && !tls)
            return standIn
        }
        #expect(notes == ["Contract: \(argument) (3 operations) from the server's reflection"])
        #expect(live.banner == "Contract: \(argument) (3 operations) checks http://127.0.0.1:50051\n")
        #expect(live.json["waitingForReflection"] == [])
        // v1 first, then v1alpha: once for the list, once for the one service listed.
        #expect(await asked.paths.filter { $0.hasPrefix("/grpc.reflection.v1alpha.") }.count == 2)
        let request = try await Self.encode(#"id: "x""#, as: "kagami.shop.OrderRequest")
        let flow = Self.call("/kagami.shop.Shop/GetOrder", request: [request], response: [])
        #expect(live.check(flow).map(\.keyword) == ["minLength"])

        let failing = try LiveContracts(arguments: [argument])
        let failed = await failing.askReflection { _, _, _ in { _, _ in throw CocoaError(.fileReadNoPermission) } }
        #expect(failed.count == 1)
        #expect(failed.first?.hasPrefix("Contract: \(argument): the server's reflection answered: ") == true, "\(failed)")
        #expect(failing.banner.hasPrefix("Contract: \(argument) waits for the server's reflection ("))
        #expect(failing.check(flow) == [])
    }

    actor Asked {
        var paths: [String] = []
        func add(_ path: String) { paths.append(path) }
    }

    /// The top-level length-delimited fields of a message, by number.
    static func lengthDelimited(_ data: Data) -> [(number: Int, payload: Data)] {
        let bytes = [UInt8](data)
        var index = 0
        func varint() -> Int {
            var value = 0, shift = 0
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                value |= Int(byte & 0x7F) << shift
                if byte & 0x80 == 0 { break }
                shift += 7
            }
            return value
        }
        var fields: [(Int, Data)] = []
        while index < bytes.count {
            let tag = varint()
            let length = varint()
            fields.append((tag >> 3, Data(bytes[index..<index + length])))
            index += length
        }
        return fields
    }

    /// One length-delimited field.
    static func field(_ number: Int, _ payload: Data) -> Data {
        var out = Data()
        func varint(_ value: Int) {
            var value = value
            while value >= 0x80 {
                out.append(UInt8(value & 0x7F) | 0x80)
                value >>= 7
            }
            out.append(UInt8(value))
        }
        varint(number << 3 | 2)
        varint(payload.count)
        return out + payload
    }

    /// Calls made of mutated messages (bits flipped, cut, grown, reframed), paths, statuses and
    /// captures: the check answers every one, and every finding holds together. Seeded, bounded.
    @Test func mutatedCallsAreCheckedWithoutCrashing() async throws {
        let check = try Self.check()
        let seeds = [
            try await Self.encode(#"id: "o1""#, as: "kagami.shop.OrderRequest"),
            try await Self.encode(#"name: "tea" price_cents: -1 sizes: [1, 2] stock { key: "a" value: 4 } note { text: "hi" } notes { blob: "\\001" }"#, as: "kagami.shop.Item"),
            try await Self.encode(#"id: "o" items { name: "x" attributes { fields { key: "k" value { number_value: 1 } } } } total_cents: 9"#, as: "kagami.shop.Order"),
        ]
        let paths = ["/kagami.shop.Shop/GetOrder", "/kagami.shop.Shop/PlaceItems", "/kagami.shop.Shop/WatchOrders", "/kagami.shop.Shop/", "/x", "/", "/a/b/c"]
        let statuses: [String?] = [nil, "0", "13", "16", "17", "-1", "x", ""]
        var generator = SeededGenerator(state: 0x6772_7063)
        func mutated() -> Data {
            var bytes = [UInt8](seeds.randomElement(using: &generator) ?? Data())
            for _ in 0..<Int.random(in: 0...3, using: &generator) where !bytes.isEmpty {
                let at = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0...3, using: &generator) {
                case 0: bytes[at] ^= UInt8(1 << Int.random(in: 0...7, using: &generator))
                case 1: bytes.removeSubrange(at...)
                case 2: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: at)
                default: bytes[at] = 0xFF
                }
            }
            return Data(bytes)
        }
        var reported = 0
        for _ in 0..<600 {
            let request = (0..<Int.random(in: 0...2, using: &generator)).map { _ in mutated() }
            let response = (0..<Int.random(in: 0...2, using: &generator)).map { _ in mutated() }
            var flow = Self.call(
                paths.randomElement(using: &generator) ?? "/", request: request, response: response,
                status: statuses.randomElement(using: &generator) ?? nil, httpStatus: Bool.random(using: &generator) ? 200 : 500)
            if Int.random(in: 0...5, using: &generator) == 0 {
                flow.request.body = FlowBody(data: flow.request.body.data.prefix(7), size: flow.request.body.size, isTruncated: true)
            }
            if Int.random(in: 0...5, using: &generator) == 0, var body = flow.response?.body.data, !body.isEmpty {
                body[body.startIndex] = 1
                flow.response?.body = FlowBody(data: body)
            }
            let result = try #require(check.check(flow))
            for violation in result.violations {
                reported += 1
                #expect(!violation.message.isEmpty && !violation.place.isEmpty)
                if let pointer = violation.instancePointer { #expect(pointer.isEmpty || pointer.hasPrefix("/"), "\(pointer)") }
                #expect((violation.expected?.count ?? 0) <= 80 && (violation.actual?.count ?? 0) <= 80, "\(violation)")
            }
        }
        #expect(reported > 150, "the mutations reach the checks")
    }
}
