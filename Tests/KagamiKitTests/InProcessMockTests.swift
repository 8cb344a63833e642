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

    /// A test looks at the app while a request is loading, then lets it go: the request waits,
    /// listed, until `releaseLoading()`, and the client then gets the real answer.
    @Test func aLoadingRequestWaitsUntilTheTestReleasesIt() async throws {
        let directory = try TemporaryFolder.make("kit-loading")
        defer { try? FileManager.default.removeItem(at: directory) }
        let scenarios = directory.appendingPathComponent("scenarios.yaml")
        try Data("""
            scenarios:
              - name: notes-loading
                states:
                  - {operation: GET /notes, state: loading}
              - name: notes-loading-briefly
                states:
                  - {operation: GET /notes, state: loading, seconds: 0.2}
            """.utf8).write(to: scenarios)
        try await withKagamiMock(description: Fixture.path("notes.apib"), scenarios: scenarios.path) { mock in
            let notes = mock.baseURL.appendingPathComponent("notes")
            try await mock.withScenario("notes-loading") {
                #expect(mock.releaseLoading() == 0)
                let answer = Task { try await send("GET", notes) }
                var waited = 0
                while mock.loadingRequests.isEmpty, waited < 400 {
                    try await Task.sleep(for: .milliseconds(25))
                    waited += 1
                }
                #expect(mock.loadingRequests.map(\.target) == ["/notes"])
                #expect(mock.releaseLoading() == 1)
                let released = try await answer.value
                #expect(released.status == 200 && released.body.contains("Buy milk"))
                #expect(mock.loadingRequests.isEmpty)
            }
            // A timed loading state ends by itself, nobody releasing it.
            try await mock.withScenario("notes-loading-briefly") {
                let answered = try await send("GET", notes)
                #expect(answered.status == 200 && answered.body.contains("Buy milk"))
                #expect(mock.loadingRequests.isEmpty)
            }
            let marks = try await mock.flows(count: 2).map { $0.appliedRules.map(\.description) }
            #expect(marks == [["GET /notes: loading (until released)"], ["GET /notes: loading 0.2 s"]])
        }
    }

    /// A slow state's upload bandwidth: the mock takes the request body at that rate, so 16,000
    /// bytes at 64 kbps (8,000 bytes a second) are answered no sooner than 2 seconds after
    /// they start (a lower bound: a busy machine is only slower).
    @Test func aSlowStateTakesTheUploadAtItsBandwidth() async throws {
        let directory = try TemporaryFolder.make("kit-slow-upload")
        defer { try? FileManager.default.removeItem(at: directory) }
        let scenarios = directory.appendingPathComponent("scenarios.yaml")
        try Data("""
            scenarios:
              - name: slow-upload
                states:
                  - {operation: POST /notes, state: slow, profile: {downloadKbps: 0, uploadKbps: 64, latencyMs: 0}}
            """.utf8).write(to: scenarios)
        try await withKagamiMock(description: Fixture.path("notes.apib"), scenarios: scenarios.path) { mock in
            let notes = mock.baseURL.appendingPathComponent("notes")
            let body = #"{"title": ""# + String(repeating: "m", count: 16_000 - 13) + #""}"#
            #expect(body.utf8.count == 16_000)
            let unshapedStart = ContinuousClock.now
            #expect(try await send("POST", notes, json: body).status == 201)
            let unshaped = ContinuousClock.now - unshapedStart
            try await mock.withScenario("slow-upload") {
                let start = ContinuousClock.now
                let created = try await send("POST", notes, json: body)
                #expect(created.status == 201)
                #expect(ContinuousClock.now - start >= .milliseconds(1900), "answered after \(ContinuousClock.now - start), unshaped \(unshaped)")
            }
            let flows = try await mock.flows(count: 2)
            #expect(flows.last?.request.body.size == 16_000)
            #expect(flows.last?.appliedRules.map(\.description) == ["POST /notes: slow (unlimited down, 64 kbps up)"])
        }
    }

    /// A scenario's recorded state answers from its recording in a test as with the CLI: the
    /// HAR beside the scenario file, its calls in recorded order, then the last again.
    @Test func aRecordedStateAnswersFromItsRecording() async throws {
        let directory = try TemporaryFolder.make("kit-recorded")
        defer { try? FileManager.default.removeItem(at: directory) }
        func entry(_ body: String) -> String {
            """
            {"startedDateTime": "2026-11-28T10:00:00.000Z", "time": 1,
             "request": {"method": "GET", "url": "http://api.example.com/notes", "httpVersion": "HTTP/1.1", "headers": [], "queryString": [],
                         "cookies": [], "headersSize": -1, "bodySize": 0},
             "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                          "headers": [{"name": "Content-Type", "value": "application/json"}], "cookies": [],
                          "content": {"size": \(body.utf8.count), "mimeType": "application/json", "text": "\(body.replacingOccurrences(of: "\"", with: "\\\""))"},
                          "redirectURL": "", "headersSize": -1, "bodySize": \(body.utf8.count)},
             "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}}
            """
        }
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("runs"), withIntermediateDirectories: true)
        try Data("""
            {"log": {"version": "1.2", "creator": {"name": "test", "version": "1"},
                     "entries": [\(entry(#"[{"id":7,"title":"recorded"}]"#)), \(entry(#"[{"id":7,"title":"recorded"},{"id":8,"title":"later"}]"#))]}}
            """.utf8).write(to: directory.appendingPathComponent("runs/notes.har"))
        let scenarios = directory.appendingPathComponent("scenarios.yaml")
        try Data("""
            scenarios:
              - name: yesterday
                states:
                  - {operation: GET /notes, state: recorded, recording: runs/notes.har}
            """.utf8).write(to: scenarios)
        try await withKagamiMock(description: Fixture.path("notes.apib"), scenarios: scenarios.path) { mock in
            let notes = mock.baseURL.appendingPathComponent("notes")
            try await mock.withScenario("yesterday") {
                let bodies = try await [send("GET", notes).body, send("GET", notes).body, send("GET", notes).body]
                #expect(bodies == [#"[{"id":7,"title":"recorded"}]"#, #"[{"id":7,"title":"recorded"},{"id":8,"title":"later"}]"#,
                                   #"[{"id":7,"title":"recorded"},{"id":8,"title":"later"}]"#])
            }
            #expect(try await send("GET", notes).body.contains("Buy milk"))
        }

        // A recording that isn't there is refused at start, naming the file, the line and the field.
        try Data("""
            scenarios:
              - name: yesterday
                states:
                  - {operation: GET /notes, state: recorded, recording: runs/missing.har}
            """.utf8).write(to: scenarios)
        await #expect {
            try await withKagamiMock(description: Fixture.path("notes.apib"), scenarios: scenarios.path) { _ in }
        } throws: { error in
            let text = "\(error)"
            return error is KagamiSetupError && text.hasPrefix("scenarios.yaml:4:50: scenarios[0].states[0].recording: ") && text.contains("runs/missing.har")
        }
    }

    /// An error state without a body of its own answers the body the description documents for
    /// that status; an operation that documents none gets the problem document.
    @Test func anErrorStateAnswersTheDescriptionsDocumentedErrorBody() async throws {
        let directory = try TemporaryFolder.make("kit-documented-error")
        defer { try? FileManager.default.removeItem(at: directory) }
        let description = directory.appendingPathComponent("api.yaml")
        try Data("""
            openapi: 3.1.0
            info: {title: Profile, version: "1"}
            paths:
              /profile:
                get:
                  responses:
                    "200": {description: the profile, content: {application/json: {example: {"name": "Ada"}}}}
                    "503": {description: maintenance, content: {application/json: {example: {"message": "back at noon"}}}}
              /feed:
                get:
                  responses:
                    "200": {description: the feed, content: {application/json: {example: {"items": []}}}}
            """.utf8).write(to: description)
        let scenarios = directory.appendingPathComponent("scenarios.yaml")
        try Data("""
            scenarios:
              - name: down
                states:
                  - {operation: GET /profile, state: error, status: 503}
                  - {operation: GET /feed, state: error, status: 503}
            """.utf8).write(to: scenarios)
        try await withKagamiMock(description: description.path, scenarios: scenarios.path) { mock in
            try await mock.withScenario("down") {
                let profile = try await send("GET", mock.baseURL.appendingPathComponent("profile"))
                #expect(profile.status == 503)
                #expect(try JSONSerialization.jsonObject(with: Data(profile.body.utf8)) as? [String: String] == ["message": "back at noon"])
                let feed = try await send("GET", mock.baseURL.appendingPathComponent("feed"))
                #expect(feed.status == 503 && feed.body.contains("Scenario down puts GET /feed in its error state."), "\(feed.body)")
            }
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
