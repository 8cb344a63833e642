import Foundation
import KagamiFlow
@testable import KagamiStore
import KagamiTesting
import Synchronization
import Testing

/// How a session file's writer bounds what waits for SQLite: past its limit of waiting flows
/// it asks the proxy to slow down, and keeps every flow it is given, bodies and all.
@Suite("Session writer's limits")
struct SessionWriterLimitsTests {
    /// The proxy's path (a client waits for each flow, so each goes into the journal first)
    /// with the writer held: at the limit the store says it is behind; flows that come anyway
    /// (exchanges already under way when it said so) wait too, none shortened; once the writer
    /// runs again every one is in the session and the store is no longer behind.
    @Test func pastTheLimitOfWaitingFlowsTheStoreAsksForLessAndDropsNothing() async throws {
        let store = try SQLiteFlowStore(path: temporaryPath("session.sqlite"), maximumPendingFlows: 4)
        store.writer.suspend()
        let flows = (0..<7).map { FlowFixtures.getJSON(body: "{\"n\":\($0)}") }
        let stored = Mutex(0)
        for (index, flow) in flows.enumerated() {
            #expect(store.isBehind == (index >= 4), "behind with \(index) flows waiting")
            store.record(flow) { stored.withLock { $0 += 1 } }
        }
        #expect(store.isBehind)
        #expect(store.writer.queuedCount == flows.count)
        #expect(stored.withLock { $0 } == flows.count, "each flow was kept (in the journal) as it came")

        store.writer.resume()
        try await store.flush()
        #expect(!store.isBehind)
        let kept = try await store.allFlows()
        #expect(kept == flows)
        #expect(kept.allSatisfy { $0.response?.body.isTruncated == false })
    }
}
