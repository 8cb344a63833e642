// Hot reload: a good edit is served at once, a broken one keeps the last good version.
import Foundation
import KagamiJSON
import KagamiMock
import NIOConcurrencyHelpers
import KagamiTesting
import Testing

@Suite struct MockReloadTests {
    static func description(_ body: String) -> String {
        """
        FORMAT: 1A
        # Reload API
        ## Greeting [/greeting]
        ### Greet [GET]
        + Response 200 (application/json)

                \(body)
        """
    }

    @Test func goodEditReloadsBrokenEditKeepsLastGoodVersion() async throws {
        let directory = try TemporaryFolder.make("mock")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("api.apib")
        try Self.description(#"{"hello": "one"}"#).write(to: file, atomically: true, encoding: .utf8)
        let logged = NIOLockedValueBox<[String]>([])
        let server = try await MockServer.start(
            path: file.path, configuration: .init(reloadInterval: .milliseconds(50)), log: { line in logged.withLockedValue { $0.append(line) } })
        defer { Task { try await server.stop() } }
        #expect(try await MockClient.curl("GET", server.url + "/greeting").json == ["hello": "one"])

        try Self.description(#"{"hello": "two"}"#).write(to: file, atomically: true, encoding: .utf8)
        try await Self.eventually { try await MockClient.curl("GET", server.url + "/greeting").json == ["hello": "two"] }

        // A template that does not parse is an error in the description.
        let broken = "FORMAT: 1A\n# Reload API\n## Greeting [/greeting/{id]\n### Greet [GET]\n+ Response 200\n"
        try broken.write(to: file, atomically: true, encoding: .utf8)
        try await Self.eventually { logged.withLockedValue { $0.contains { $0.contains("Keeping the last good version") } } }
        let message = logged.withLockedValue { $0.first { $0.contains("Keeping the last good version") } } ?? ""
        #expect(message.contains("api.apib:3:"))
        #expect(try await MockClient.curl("GET", server.url + "/greeting").json == ["hello": "two"])
    }

    /// The docs page is rendered once per version of the description and address it is
    /// reached at: the same page again, each address in its own curl lines, and a reload's
    /// new example on the next request.
    @Test func docsPageFollowsReloadsAndAddresses() async throws {
        let directory = try TemporaryFolder.make("mock")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("api.apib")
        try Self.description(#"{"hello": "one"}"#).write(to: file, atomically: true, encoding: .utf8)
        let server = try await MockServer.start(path: file.path, configuration: .init(reloadInterval: .milliseconds(50)), log: { _ in })
        defer { Task { try await server.stop() } }
        let first = try await MockClient.curl("GET", server.url + "/__docs")
        #expect(first.body.contains("&quot;one&quot;"))
        #expect(first.body.contains(server.url))
        #expect(try await MockClient.curl("GET", server.url + "/__docs").body == first.body)
        let named = try await MockClient.curl("GET", server.url + "/__docs", headers: ["Host: mock.test:\(server.port)"])
        #expect(named.body.contains("http://mock.test:\(server.port)"))
        #expect(!named.body.contains(server.url))

        try Self.description(#"{"hello": "two"}"#).write(to: file, atomically: true, encoding: .utf8)
        try await Self.eventually { try await MockClient.curl("GET", server.url + "/greeting").json == ["hello": "two"] }
        let reloaded = try await MockClient.curl("GET", server.url + "/__docs")
        #expect(reloaded.body.contains("&quot;two&quot;"))
        #expect(!reloaded.body.contains("&quot;one&quot;"))
    }

    static func eventually(_ condition: () async throws -> Bool) async throws {
        let met = try await KagamiTesting.eventually(attempts: 100, every: .milliseconds(50), condition)
        #expect(met, "condition not met after 100 looks")
    }
}
