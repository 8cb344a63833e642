import Foundation
import KagamiFlow
import KagamiPostgresStore
import KagamiStore
import KagamiTesting
import Synchronization
import Testing

/// `kagami proxy --store postgres://…` while its database server stops and starts again: the
/// proxy keeps serving clients, keeps what it could not write in a spool file, and writes it
/// when the server is back. Each test has a PostgreSQL cluster of its own, since it stops it.
@Suite(.serialized) struct SharedStoreOutageTests {
    @Test func clientsAreServedWhileTheDatabaseIsDownAndEveryExchangeReachesItAfterwards() async throws {
        try await ThrowawayCluster.with { cluster in
            let origin = try await OriginServer.start()
            let home = temporaryPath("home")
            let name = "outage-" + UUID().uuidString
            let proxy = try await KagamiProcess.start(
                ["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--store", cluster.url, "--session", name],
                environment: ProcessInfo.processInfo.environment.merging(["KAGAMI_HOME": home]) { $1 })
            defer { proxy.stop() }
            let spool = home + "/spool"

            var urls: [String] = []
            func send(_ phase: String) async throws -> String {
                let batch = (1...15).map { "\(origin.baseURL)/echo?\(phase)=\($0)" }
                urls += batch
                let outputs = Array(repeating: ["-o", "/dev/null"], count: batch.count).flatMap { $0 }
                // A bound on the whole run: a client left waiting for the database fails the test.
                return try await CommandLineClient.curl.run(
                    ["-s", "-m", "30", "-x", "http://127.0.0.1:\(proxy.port)", "-w", "%{http_code}\n"] + outputs + batch).stdoutText
            }
            let expected = String(repeating: "200\n", count: 15)

            #expect(try await send("before") == expected)
            try await cluster.pause()
            #expect(try await send("during") == expected)
            let spooled = try FileManager.default.contentsOfDirectory(atPath: spool).filter { $0.hasSuffix(".spool") }
            #expect(spooled.count == 1, "what could not be written is in a spool file: \(spooled)")
            try await cluster.resume()
            #expect(try await send("after") == expected)

            // Written while the proxy still runs: it reconnected on its own.
            let flows = try await Self.stored(count: urls.count, in: name, at: cluster.url)
            #expect(flows.count == urls.count)
            #expect(Set(flows.map(\.request.url)) == Set(urls))
            #expect(flows.allSatisfy { $0.response?.status == 200 })
            let left = (try? FileManager.default.contentsOfDirectory(atPath: spool).filter { $0.hasSuffix(".spool") }) ?? []
            #expect(left.isEmpty, "the spool is removed once written: \(left)")
            try await origin.stop()
        }
    }

    /// What was spooled is durable: kill -9 the proxy while the server is away, start the
    /// server again, and the next proxy opening the session writes what the first one kept.
    @Test func whatWasSpooledSurvivesSIGKILLAndIsWrittenByTheNextProxy() async throws {
        try await ThrowawayCluster.with { cluster in
            let origin = try await OriginServer.start()
            let home = temporaryPath("home")
            let name = "outage-" + UUID().uuidString
            let environment = ProcessInfo.processInfo.environment.merging(["KAGAMI_HOME": home]) { $1 }
            let arguments = ["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--store", cluster.url, "--session", name]
            let first = try await KagamiProcess.start(arguments, environment: environment)
            try await cluster.pause()
            let urls = (1...12).map { "\(origin.baseURL)/echo?away=\($0)" }
            let outputs = Array(repeating: ["-o", "/dev/null"], count: urls.count).flatMap { $0 }
            let result = try await CommandLineClient.curl.run(
                ["-s", "-m", "30", "-x", "http://127.0.0.1:\(first.port)", "-w", "%{http_code}\n"] + outputs + urls)
            #expect(result.stdoutText == String(repeating: "200\n", count: urls.count))
            first.kill9()
            try await cluster.resume()

            let second = try await KagamiProcess.start(arguments, environment: environment)
            let flows = try await Self.stored(count: urls.count, in: name, at: cluster.url)
            second.stop()
            try await origin.stop()
            #expect(flows.count == urls.count)
            #expect(Set(flows.map(\.request.url)) == Set(urls))
            let left = (try? FileManager.default.contentsOfDirectory(atPath: home + "/spool").filter { $0.hasSuffix(".spool") }) ?? []
            #expect(left.isEmpty, "the spool is removed once written: \(left)")
        }
    }
}

extension SharedStoreOutageTests {
    /// The store itself while its server is away: `stored` is called for what is spooled, the
    /// status says where things wait and why, reads fail at once, and once the server is back
    /// the spool is written and removed.
    @Test func theStoreSaysWhatWaitsWhileTheServerIsAway() async throws {
        try await ThrowawayCluster.with { cluster in
            let spool = temporaryPath("spool")
            let store = try await PostgresFlowStore.open(
                try PostgresLocation(url: cluster.url), session: "away", recordedBy: "tests", spoolDirectory: spool)
            store.record(FlowFixtures.getJSON(url: "/before"))
            try await store.flush()
            #expect(store.status.serverAway == nil)
            try await cluster.pause()

            let stored = StoredCount()
            for index in 1...5 {
                store.record(FlowFixtures.getJSON(url: "/away/\(index)")) { stored.add() }
            }
            let note = SessionNote(time: Date(timeIntervalSince1970: 1_700_000_000.5), author: "tests", text: "noted while away")
            store.record(.note(note))
            try await store.flush()
            #expect(stored.value == 5)
            let status = store.status
            #expect(status.serverAway != nil)
            #expect(status.spooled == 6)
            #expect(status.spoolFiles.count == 1)
            #expect(status.description.contains("the server is away"))
            await #expect { _ = try await store.count() } throws: { "\($0)".contains("is away") }

            try await cluster.resume()
            for _ in 0..<600 where store.status.serverAway != nil || !store.status.spoolFiles.isEmpty {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(store.status.serverAway == nil)
            #expect(try await store.count() == 6)
            #expect(try await store.allFlows(includeBodies: false).map(\.request.url).filter { $0.contains("/away/") }.count == 5)
            #expect(try await store.notes() == [note])
            #expect((try? FileManager.default.contentsOfDirectory(atPath: spool))?.isEmpty ?? true)
            await store.close()
        }
    }
}

extension SharedStoreOutageTests {
    /// `kagami serve` follows the writers on a connection of its own: when that connection is
    /// lost and made again (the server restarted), the catalog says so, since flows committed
    /// meanwhile were announced to no one; the pages then read their sessions again.
    @Test func theCatalogSaysWhenItsFollowingOfTheWritersResumed() async throws {
        try await ThrowawayCluster.with { cluster in
            let location = try PostgresLocation(url: cluster.url)
            let catalog = try await PostgresSessionCatalog.open(location)
            let writer = try await PostgresFlowStore.open(
                location, session: "followed", recordedBy: "tests", spoolDirectory: temporaryPath("spool"))
            let seen = ActivityLog()
            let following = Task {
                for await activity in catalog.writerActivity() {
                    switch activity {
                    case .committed(let committed): seen.append("committed \(committed.session)")
                    case .interrupted: seen.append("interrupted")
                    case .resumed: seen.append("resumed")
                    }
                }
            }
            func until(_ condition: ([String]) -> Bool) async throws {
                for _ in 0..<600 where !condition(seen.entries) {
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            // Written until one is announced: the catalog listens from then on.
            for index in 0..<100 where seen.entries.isEmpty {
                writer.record(FlowFixtures.getJSON(url: "/before/\(index)"))
                try await writer.flush()
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(seen.entries.first == "committed followed")
            #expect(!seen.entries.contains("resumed"), "nothing was lost yet")

            try await cluster.pause()
            try await cluster.resume()
            try await until { $0.contains("resumed") }
            #expect(seen.entries.contains("resumed"))
            // Said once when following stopped, before it resumed.
            #expect(seen.entries.filter { $0 == "interrupted" }.count == 1)
            #expect(seen.entries.firstIndex(of: "interrupted").map { $0 < (seen.entries.firstIndex(of: "resumed") ?? 0) } == true)
            let resumedAt = seen.entries.count
            writer.record(FlowFixtures.getJSON(url: "/after"))
            try await writer.flush()
            try await until { $0.count > resumedAt }
            #expect(Array(seen.entries[resumedAt...]).first == "committed followed", "announced again after the restart")
            following.cancel()
            await writer.close()
            await catalog.close()
        }
    }
}

final class ActivityLog: Sendable {
    private let list = Mutex<[String]>([])
    func append(_ entry: String) { list.withLock { $0.append(entry) } }
    var entries: [String] { list.withLock { $0 } }
}

final class StoredCount: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// A PostgreSQL cluster of one test's own (`scripts/postgres-cluster.sh`), which it may stop
/// and start again.
struct ThrowawayCluster: Sendable {
    let url: String
    let directory: String
    /// With `ssl`: the CA that signed the server's certificate (for 127.0.0.1 and localhost).
    var certificateAuthority: String? = nil

    private static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/postgres-cluster.sh").path
    }

    /// With `ssl`, the server takes TLS with a certificate of its own CA's.
    static func start(ssl: Bool = false) async throws -> ThrowawayCluster {
        let output = ssl ? try await run("start", "ssl") : try await run("start")
        var values: [String: String] = [:]
        for line in output.split(separator: "\n") {
            let assignment = line.replacingOccurrences(of: "export ", with: "")
            guard let equals = assignment.firstIndex(of: "=") else { continue }
            values[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
        guard let url = values["KAGAMI_TEST_POSTGRES_URL"], let directory = values["KAGAMI_TEST_POSTGRES_DIR"] else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "postgres-cluster.sh start said: \(output)"])
        }
        return ThrowawayCluster(url: url, directory: directory, certificateAuthority: values["KAGAMI_TEST_POSTGRES_CA"])
    }

    /// Runs `body` with a new cluster, removed afterwards.
    static func with(ssl: Bool = false, _ body: (ThrowawayCluster) async throws -> Void) async throws {
        let cluster = try await start(ssl: ssl)
        do {
            try await body(cluster)
        } catch {
            await cluster.remove()
            throw error
        }
        await cluster.remove()
    }

    func pause() async throws { try await Self.run("pause", directory) }
    func resume() async throws { try await Self.run("resume", directory) }
    func remove() async { _ = try? await Self.run("stop", directory) }

    @discardableResult
    private static func run(_ arguments: String...) async throws -> String {
        let result = try await CommandLineClient("/bin/bash").run([script] + arguments)
        guard result.status == 0 else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "postgres-cluster.sh \(arguments.joined(separator: " ")) failed (PostgreSQL installed? apt-get install postgresql): \(result.stderr)"])
        }
        return result.stdoutText
    }

}

extension SharedStoreOutageTests {
    /// The session's flows once `count` are written (bounded looks at the database).
    static func stored(count: Int, in session: String, at url: String) async throws -> [Flow] {
        let reader = try await PostgresFlowStore.open(try PostgresLocation(url: url), session: session, recordedBy: "tests")
        var flows: [Flow] = []
        try await eventually(attempts: 600, every: .milliseconds(100)) {
            flows = try await reader.allFlows(includeBodies: false)
            return flows.count >= count
        }
        await reader.close()
        return flows
    }
}
