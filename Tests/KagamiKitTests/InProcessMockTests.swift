import Foundation
import KagamiKit
import KagamiTesting
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct InProcessMockTests {
    private func send(_ method: String, _ url: URL, json: String? = nil) async throws -> (status: Int, body: String) {
        var request = URLRequest(url: url)
        request.httpMethod = method
        if let json {
            request.httpBody = Data(json.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    @Test func answersTheDocumentedBodyAndRefusesABadRequest() async throws {
        try await withKagamiMock(description: Fixture.path("notes.apib")) { mock in
            #expect(mock.port > 0)
            #expect(mock.baseURL.absoluteString == "http://127.0.0.1:\(mock.port)")
            let notes = mock.baseURL.appendingPathComponent("notes")

            let created = try await send("POST", notes, json: #"{"title": "Buy milk"}"#)
            #expect(created.status == 201)
            let body = try JSONSerialization.jsonObject(with: Data(created.body.utf8)) as? [String: Any]
            #expect(body?["id"] as? Int == 2)
            #expect(body?["title"] as? String == "Buy milk")

            let refused = try await send("POST", notes, json: #"{"title": 7}"#)
            #expect(refused.status == 422)
            #expect(refused.body.contains("title"))

            let flows = try await mock.flows(count: 2)
            #expect(flows.map(\.request.method) == ["POST", "POST"])
            #expect(flows.compactMap(\.response?.status) == [201, 422])
        }
    }

    @Test func withScenarioPutsOperationsInTheirStatesForOneScope() async throws {
        let directory = try TemporaryFolder.make("kit-scenarios")
        defer { try? FileManager.default.removeItem(at: directory) }
        let scenarios = directory.appendingPathComponent("scenarios.yaml")
        try Data("""
            scenarios:
              - name: empty-notes
                states:
                  - {operation: GET /notes, state: empty}
              - name: notes-down
                states:
                  - {operation: POST /notes, state: error, status: 503}
            """.utf8).write(to: scenarios)
        try await withKagamiMock(description: Fixture.path("notes.apib"), scenarios: scenarios.path) { mock in
            let notes = mock.baseURL.appendingPathComponent("notes")
            #expect(try await send("GET", notes).body.contains("Buy milk"))
            try await mock.withScenario("empty-notes") {
                #expect(mock.scenario == "empty-notes")
                let empty = try await send("GET", notes)
                #expect(empty.status == 200 && empty.body == "[]")
                #expect(try await send("POST", notes, json: #"{"title": "Buy milk"}"#).status == 201)
            }
            #expect(mock.scenario == nil)
            #expect(try await send("GET", notes).body.contains("Buy milk"))

            // Scopes nest, and the one before comes back even when the body throws.
            struct Stop: Error {}
            try await mock.withScenario("empty-notes") {
                await #expect(throws: Stop.self) {
                    try await mock.withScenario("notes-down") {
                        let down = try await send("POST", notes, json: #"{"title": "Buy milk"}"#)
                        #expect(down.status == 503 && down.body.contains("notes-down"))
                        throw Stop()
                    }
                }
                #expect(mock.scenario == "empty-notes")
            }
            await #expect(throws: KagamiSetupError.self) {
                try await mock.withScenario("no-such-scenario") { Issue.record("ran under an unknown scenario") }
            }

            // Each exchange a scenario touched is marked with it.
            let flows = try await mock.flows(count: 5)
            #expect(flows.map { $0.appliedRules.map(\.name) } == [[], ["Scenario 'empty-notes'"], [], [], ["Scenario 'notes-down'"]])
        }
    }

    @Test func aBrokenDescriptionSaysWhereItIsBroken() async throws {
        let directory = try TemporaryFolder.make("kit")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("broken.yaml")
        try Data("openapi: 3.1.0\npaths: [\n".utf8).write(to: file)
        await #expect(throws: KagamiSetupError.self) {
            try await withKagamiMock(description: file.path) { _ in }
        }
    }

    @Test func startingAndStoppingManyMocksLeaksNoDescriptorsOrThreads() async throws {
        // One round first, so the event loop group's threads and lazily opened descriptors exist
        // before counting.
        try await withKagamiMock(description: Fixture.path("notes.apib")) { mock in
            _ = try await send("GET", mock.baseURL.appendingPathComponent("notes"))
        }
        let threadsBefore = try threadCount()
        let descriptorsBefore = try descriptorTargets().count
        // Other suites run beside this one and open descriptors of their own, so the check is on
        // the mocks' own listening sockets: their inodes, found by port in /proc/net/tcp, must
        // be gone from this process's descriptors once the mocks are shut down.
        var listeners: Set<String> = []
        for _ in 0..<100 {
            let mock = try await KagamiMockServer.start(description: Fixture.path("notes.apib"))
            // /proc/net/tcp is read in pages while other suites open and close sockets, so a
            // line can be missed on one read: look again a few times.
            var found = try listeningSocketInode(port: mock.port)
            for _ in 0..<20 where found == nil {
                try await Task.sleep(for: .milliseconds(10))
                found = try listeningSocketInode(port: mock.port)
            }
            let inode = try #require(found, "no listening socket on \(mock.port)")
            listeners.insert("socket:[\(inode)]")
            try await mock.shutdown()
        }
        #expect(listeners.count == 100)
        // A closed listener's descriptor is released on its event loop: give it a moment, bounded.
        var leaked = try descriptorTargets().filter(listeners.contains)
        for _ in 0..<100 where !leaked.isEmpty {
            try await Task.sleep(for: .milliseconds(20))
            leaked = try descriptorTargets().filter(listeners.contains)
        }
        #expect(leaked.isEmpty, "\(leaked.count) of 100 listening sockets still open after shutdown")
        // Totals, with room for what the suites running alongside open meanwhile; one leak per
        // mock would be 100 more.
        let descriptorsAfter = try descriptorTargets().count
        #expect(descriptorsAfter < descriptorsBefore + 50, "descriptors before \(descriptorsBefore), after \(descriptorsAfter)")
        let threadsAfter = try threadCount()
        print("100 mocks started and stopped: descriptors \(descriptorsBefore) → \(descriptorsAfter), NIO threads \(threadsBefore) → \(threadsAfter)")
        #expect(threadsBefore > 0, "SwiftNIO's threads are found by name")
        #expect(threadsAfter < threadsBefore + 16, "NIO threads before \(threadsBefore), after \(threadsAfter)")
    }

    /// What each open descriptor of this process refers to (`socket:[INODE]`, a path...).
    private func descriptorTargets() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap { name in
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)")
        }
    }

    /// SwiftNIO's threads in this process (named `NIO-…`): what a mock that made an event loop
    /// group of its own would add. Dispatch's worker threads come and go with the suites
    /// running alongside (16 more than before was seen on a busy machine), so they are not counted.
    private func threadCount() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").filter { task in
            guard let handle = FileHandle(forReadingAtPath: "/proc/self/task/\(task)/comm") else { return false }
            defer { try? handle.close() }
            return String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self).hasPrefix("NIO-")
        }.count
    }

    /// The inode of the IPv4 socket listening on `port`, from /proc/net/tcp.
    private func listeningSocketInode(port: Int) throws -> String? {
        // Read to the end: /proc files report no size, and a busy machine's table runs to many pages.
        guard let handle = FileHandle(forReadingAtPath: "/proc/net/tcp") else { return nil }
        defer { try? handle.close() }
        let table = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        let wanted = String(format: ":%04X", port)
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 9, fields[1].hasSuffix(wanted), fields[3] == "0A" else { continue }
            return String(fields[9])
        }
        return nil
    }
}

@Suite struct ReverseProxyInFrontOfAMockTests {
    @Test func recordsAURLSessionClientAndChecksItAgainstTheDescription() async throws {
        let description = Fixture.path("notes.apib")
        try await withKagamiMock(description: description) { mock in
            let configuration = KagamiProxyServer.Configuration(
                reverseTarget: mock.baseURL.absoluteString, contracts: ["\(description)=\(mock.baseURL.absoluteString)"])
            try await withKagamiProxy(configuration: configuration) { proxy in
                // URLSession on every platform: the reverse proxy is just the client's base URL.
                let session = URLSession(configuration: .ephemeral)
                defer { session.finishTasksAndInvalidate() }
                var request = URLRequest(url: proxy.proxyURL.appendingPathComponent("notes"))
                request.httpMethod = "POST"
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                request.httpBody = Data(#"{"title": 7}"#.utf8)
                let (_, response) = try await session.data(for: request)
                #expect((response as? HTTPURLResponse)?.statusCode == 422)

                let flow = try #require(try await proxy.flows(count: 1).first)
                #expect(flow.request.path == "/notes")
                // The request breaks the description; the check says where.
                #expect(!flow.violations.isEmpty, "\(flow.violations)")
                #expect(try await mock.flows(count: 1).count == 1)
            }
        }
    }
}
