import Foundation
import KagamiFlow
import KagamiJSON
@testable import KagamiStore
import KagamiTesting
import Synchronization
import Testing

/// What every `FlowStore` driver promises, checked against each of them.
@Suite("Flow store, every driver")
struct FlowStoreTests {
    @Test(arguments: StoreDriver.allCases)
    func flowsRoundTripWithBodiesInCaptureOrder(_ driver: StoreDriver) async throws {
        let session = driver.newSession()
        let store = try await session.open()
        let flows = [FlowFixtures.getJSON(), FlowFixtures.postBinary(size: 70_000), FlowFixtures.refused()]
        for flow in flows { store.record(flow) }
        try await store.flush()
        #expect(try await store.count() == 3)
        #expect(try await store.allFlows() == flows)

        let summaries = try await store.flows(offset: 1, limit: 1, includeBodies: false)
        #expect(summaries.count == 1)
        #expect(summaries[0].id == flows[1].id)
        #expect(summaries[0].request.body.data.isEmpty)
        #expect(summaries[0].request.body.size == 70_000)
        #expect(try await store.flows(offset: 2, limit: nil, includeBodies: true) == [flows[2]])
        #expect(try await store.flow(id: flows[1].id) == flows[1])
        #expect(try await store.flow(id: UUID()) == nil)

        // Recording a flow again replaces it (an edited or finished exchange) in its place.
        var updated = flows[0]
        updated.violations = [ContractViolation(kind: .schema, side: .response, location: .body, instancePointer: "/id", message: "expected string")]
        updated.response?.body.data = Data("{}".utf8)
        store.record(updated)
        try await store.flush()
        #expect(try await store.count() == 3)
        #expect(try await store.flow(id: updated.id) == updated)
        #expect(try await store.allFlows().map(\.id) == flows.map(\.id))

        // Another process opening the same session sees the same flows.
        let reopened = try await session.open()
        #expect(try await reopened.count() == 3)
        #expect(try await reopened.allFlows() == [updated, flows[1], flows[2]])
        await shutDown(store, reopened)
    }

    /// Pages are read with the bodies of many flows at once (in groups of 500): every flow
    /// gets its own bodies, across the groups' edges, in the pages and read all at once.
    @Test(arguments: StoreDriver.allCases)
    func bodiesOfManyFlowsGoToTheirOwnFlows(_ driver: StoreDriver) async throws {
        let session = driver.newSession()
        let store = try await session.open()
        var flows: [Flow] = []
        for index in 0..<1_234 {
            let flow = FlowFixtures.getJSON(body: "{\"n\": \(index)}")
            flows.append(flow)
            store.record(flow)
        }
        try await store.flush()
        #expect(try await store.allFlows() == flows)
        var paged: [Flow] = []
        try await store.forEachFlow(includeBodies: true, pageSize: 300) { paged += $0 }
        #expect(paged == flows)
        await shutDown(store)
    }

    @Test(arguments: StoreDriver.allCases)
    func everyFieldOfAFlowSurvivesTheStore(_ driver: StoreDriver) async throws {
        let flow = fullyPopulatedFlow()
        let store = try await driver.newSession().open()
        store.record(flow)
        try await store.flush()
        #expect(try await store.flow(id: flow.id) == flow)
        await shutDown(store)
    }

    @Test func theStoredRecordKeepsEveryField() throws {
        let flow = fullyPopulatedFlow()
        // Every field is set, so a field added to Flow and left out here fails this test.
        #expect(unsetFields(of: flow) == [])
        #expect(unsetFields(of: FlowFixtures.getJSON()).contains("flow.repeatOf"), "the check sees unset fields")
        let record = flow.storedRecord()
        #expect(record.first == 0, "a record can't be taken for JSON")
        #expect(try Flow(stored: record) == flow.withoutBodyBytes)
        // Older sessions' JSON is read through the same door, by the hand reader as JSONDecoder reads it.
        #expect(try Flow(stored: flow.olderStoredJSON()) == flow.withoutBodyBytes)
        #expect(try Flow(pullingStoredJSON: flow.olderStoredJSON()) == flow.withoutBodyBytes)
    }

    /// Random flows: words in and out of the vocabulary, any text, reasons registered or not,
    /// times before and after the start (and far from it), every optional part on or off.
    @Test func storedRecordsOfRandomFlowsReadBackAsThemselves() throws {
        var random = SeededGenerator(state: 0x5EED_F10E)
        for _ in 0..<2_000 {
            let flow = randomFlow(&random)
            #expect(try Flow(stored: flow.storedRecord()) == flow)
        }
    }

    /// A damaged record is an error that says where, never a crash or a made-up flow; a record
    /// from a newer Kagami says so.
    @Test func damagedRecordsAreErrors() throws {
        let record = [UInt8](fullyPopulatedFlow().storedRecord())
        for length in 0..<record.count {
            #expect(throws: (any Error).self) { try Flow(stored: Data(record[..<length])) }
        }
        var random = SeededGenerator(state: 7)
        for _ in 0..<5_000 {
            var damaged = record
            for _ in 0...random.next(upTo: 4) { damaged[2 + random.next(upTo: damaged.count - 2)] = UInt8(random.next(upTo: 256)) }
            _ = try? Flow(stored: Data(damaged))
        }
        var newer = record
        newer[1] = 99
        #expect { try Flow(stored: Data(newer)) } throws: { "\($0)".contains("version 99") }
    }

    /// What a 100-byte exchange through a reverse proxy keeps besides its body: a stored
    /// record a third the size of the JSON it replaced.
    @Test func aSmallExchangesRecordIsSmall() throws {
        var flow = FlowFixtures.getJSON()
        flow.clientAddress = "127.0.0.1:43744"
        flow.serverAddress = "127.0.0.1:44237"
        flow.request.headers = HeaderFields([("Host", "127.0.0.1:44237"), ("User-Agent", "curl/8.14.1"), ("Accept", "*/*")])
        flow.response?.headers = HeaderFields([
            ("Server", "nginx/1.22.1"), ("Date", "Sun, 29 Nov 2026 12:45:56 GMT"), ("Content-Type", "application/octet-stream"),
            ("Content-Length", "100"), ("Last-Modified", "Sun, 29 Nov 2026 12:45:55 GMT"), ("Connection", "keep-alive"),
            ("ETag", "\"6b0c1e83-64\""), ("Accept-Ranges", "bytes"),
        ])
        flow.timings.connected = flow.timings.start.addingTimeInterval(0.000_7)
        flow.timings.requestSent = flow.timings.start.addingTimeInterval(0.001_3)
        flow.timings.firstByte = flow.timings.start.addingTimeInterval(0.002)
        flow.timings.end = flow.timings.start.addingTimeInterval(0.002_1)
        let record = flow.storedRecord()
        #expect(record.count < 300, "\(record.count) bytes")
        #expect(record.count * 3 < (try flow.olderStoredJSON()).count)
        #expect(try Flow(stored: record) == flow.withoutBodyBytes)
    }

    @Test func storedJSONOfOlderSessionsReadsAsJSONDecoderReadsIt() throws {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .deferredToDate
        let request = #""request":{"method":"GET","scheme":"http","host":"a.test","port":80,"target":"/","version":"HTTP/1.1","headers":{"fields":[{"name":"Host","value":"a.test"}]},"body":{"data":"aGk=","size":2,"isTruncated":false}}"#
        let documents = [
            // Before appliedRules, repeatOf and streamID; a body's bytes in the metadata (base64).
            #"{"id":"0190A6B0-0000-7000-8000-000000000001","mode":"forward",\#(request),"timings":{"start":752000000.25},"violations":[]}"#,
            // A violation in the first shape: free-text location, no kind.
            #"{"id":"0190A6B0-0000-7000-8000-000000000002","mode":"reverse",\#(request),"response":{"status":200,"reason":"OK","version":"HTTP/1.1","headers":{"fields":[]},"body":{"data":"","size":0,"isTruncated":true}},"timings":{"start":752000000,"end":752000001.5},"violations":[{"location":"request body /id","message":"expected string"}],"appliedRules":[{"name":"Rewrite 'a'","description":"changed"}]}"#,
            // Escapes, unicode and null members.
            #"{"id":"0190A6B0-0000-7000-8000-000000000003","mode":"tunnel","clientAddress":null,\#(request),"timings":{"start":1e3},"error":{"kind":"timeout","message":"tab\there \u00e9 \ud83d\ude00"},"violations":[]}"#,
        ]
        for document in documents {
            let expected = try decoder.decode(Flow.self, from: Data(document.utf8))
            #expect(try Flow(pullingStoredJSON: Data(document.utf8)) == expected, "\(document)")
        }
        // What neither reads is an error, not an empty flow.
        #expect(throws: (any Error).self) { try Flow(stored: Data(#"{"id":"x","mode":"forward"}"#.utf8)) }
    }

    @Test(arguments: StoreDriver.allCases)
    func bodiesLargeAndSmallAreKeptByteForByte(_ driver: StoreDriver) async throws {
        let store = try await driver.newSession().open()
        // 9 MB: random 64 KB blocks, each followed by its number, so no two blocks are alike.
        var generator = SystemRandomNumberGenerator()
        let block = Data((0..<65_536).map { _ in UInt8.random(in: 0...255, using: &generator) })
        var large = Data(capacity: 144 * 65_537)
        for index in 0..<144 {
            large.append(block)
            large.append(UInt8(index))
        }
        var flows: [Flow] = []
        for size in [0, 1, 255, 65_536] {
            var flow = FlowFixtures.postBinary(size: size)
            flow.response?.body = FlowBody(data: Data(repeating: UInt8(size % 256), count: size))
            flows.append(flow)
        }
        var big = FlowFixtures.postBinary(size: 0)
        big.request.body = FlowBody(data: large)
        big.response?.body = FlowBody(data: Data(large.reversed()))
        flows.append(big)
        for flow in flows { store.record(flow) }
        try await store.flush()
        for flow in flows {
            let stored = try #require(try await store.flow(id: flow.id))
            #expect(stored.request.body.data == flow.request.body.data)
            #expect(stored.response?.body.data == flow.response?.body.data)
            #expect(stored == flow)
        }
        let summaries = try await store.allFlows(includeBodies: false)
        #expect(summaries.map(\.request.body.size) == flows.map(\.request.body.size))
        #expect(summaries.allSatisfy { $0.request.body.data.isEmpty && $0.response?.body.data.isEmpty != false })
        await shutDown(store)
    }

    /// The durability rule, as the shared store keeps it: when `stored` runs, the flow is
    /// committed where another process reads it, without any flush. (A session file keeps it by
    /// its journal first: `SessionJournalTests`.)
    @Test(arguments: [StoreDriver.postgres])
    func storedRunsOnlyOnceTheFlowIsCommitted(_ driver: StoreDriver) async throws {
        let session = driver.newSession()
        let writer = try await session.open()
        let reader = try await session.open()
        let flows = (0..<50).map { index in FlowFixtures.getJSON(body: "{\"n\":\(index)}") }
        let storedIDs = Mutex<[UUID]>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let remaining = Mutex(flows.count)
            for flow in flows {
                writer.record(flow) {
                    storedIDs.withLock { $0.append(flow.id) }
                    let done = remaining.withLock { count in
                        count -= 1
                        return count == 0
                    }
                    if done { continuation.resume() }
                }
            }
        }
        #expect(Set(storedIDs.withLock { $0 }) == Set(flows.map(\.id)))
        #expect(try await reader.count() == flows.count)
        #expect(try await reader.allFlows() == flows)
        await shutDown(writer, reader)
    }

    @Test(arguments: StoreDriver.allCases)
    func webSocketMessagesKeepTheirOrderAndTheirFlow(_ driver: StoreDriver) async throws {
        let session = driver.newSession()
        let store = try await session.open()
        let finished = FlowFixtures.webSocket()
        var handshake = finished
        handshake.timings.end = nil
        let messages = FlowFixtures.webSocketMessages()
        var noted = messages[2]
        noted.note = "edited at a breakpoint"
        noted.isCompressed = true
        store.record(handshake)
        store.record(messages: Array(messages[0..<2]), of: handshake.id)
        store.record(messages: [noted] + Array(messages[3...]), of: handshake.id)
        // The socket's end is recorded again on the same flow.
        store.record(finished)
        store.record(FlowFixtures.getJSON())
        try await store.flush()

        let expected = Array(messages[0..<2]) + [noted] + Array(messages[3...])
        #expect(try await store.count() == 2)
        #expect(try await store.flow(id: handshake.id) == finished)
        #expect(try await store.messages(of: handshake.id, offset: 0, limit: nil) == expected)
        #expect(try await store.messages(of: handshake.id, offset: 2, limit: 2) == Array(expected[2..<4]))
        #expect(try await store.messages(of: UUID(), offset: 0, limit: nil) == [])
        let reopened = try await session.open()
        #expect(try await reopened.webSocketMessages(of: reopened.allFlows()) == [handshake.id: expected])

        try await store.removeAll()
        #expect(try await store.count() == 0)
        #expect(try await store.messages(of: handshake.id, offset: 0, limit: nil) == [])
        await shutDown(store, reopened)
    }

    @Test(arguments: StoreDriver.allCases)
    func violationsFoundLaterAreAddedToTheStoredFlow(_ driver: StoreDriver) async throws {
        let store = try await driver.newSession().open()
        let flow = FlowFixtures.postBinary(size: 300)
        let violations = [ContractViolation(kind: .schema, side: .request, location: .body, instancePointer: "/name", message: "expected string")]
        store.record(flow)
        // Queued right behind the flow, without waiting for it to be written.
        store.updateViolations(violations, ofFlow: flow.id)
        store.updateViolations(violations, ofFlow: UUID())
        try await store.flush()
        var expected = flow
        expected.violations = violations
        #expect(try await store.flow(id: flow.id) == expected)
        #expect(try await store.count() == 1)
        await shutDown(store)
    }

    /// Entries queued together are written together, and end as they would one by one: a flow
    /// recorded again within them replaces itself in its first place, a violation update lands
    /// on the stored flow, messages keep their order; past a statement's rows too.
    @Test(arguments: StoreDriver.allCases)
    func entriesQueuedTogetherEndAsIfWrittenOneByOne(_ driver: StoreDriver) async throws {
        let store = try await driver.newSession().open()
        let socket = FlowFixtures.webSocket()
        var handshake = socket
        handshake.timings.end = nil
        handshake.response?.body.data = Data("switching".utf8)
        let posted = FlowFixtures.postBinary(size: 300)
        var postedAgain = posted
        postedAgain.request.body = FlowBody(data: Data(repeating: 7, count: 20))
        let violations = [ContractViolation(kind: .schema, side: .request, location: .body, instancePointer: "/name", message: "expected string")]
        let messages = FlowFixtures.webSocketMessages()
        let many = (0..<2_500).map { index in FlowFixtures.getJSON(body: "{\"n\":\(index)}") }

        store.record(handshake)
        store.record(posted)
        store.record(messages: Array(messages[0..<2]), of: socket.id)
        store.record(socket)
        store.updateViolations(violations, ofFlow: socket.id)
        for flow in many[0..<1_200] { store.record(flow) }
        store.record(messages: Array(messages[2...]), of: socket.id)
        store.record(postedAgain)
        store.updateViolations(violations, ofFlow: posted.id)
        for flow in many[1_200...] { store.record(flow) }
        try await store.flush()

        var socketWithViolations = socket
        socketWithViolations.violations = violations
        postedAgain.violations = violations
        #expect(try await store.count() == 2 + many.count)
        let stored = try await store.allFlows()
        #expect(stored.map(\.id) == [socket.id, posted.id] + many.map(\.id))
        #expect(stored.first == socketWithViolations)
        #expect(stored.dropFirst().first == postedAgain)
        #expect(Array(stored.dropFirst(2)) == many)
        #expect(try await store.messages(of: socket.id, offset: 0, limit: nil) == messages)
        await shutDown(store)
    }

    /// Notes (changes made to the proxy while it recorded) are kept in the order they came,
    /// beside the flows, once each when written again (a replay), in a reopened session and in
    /// a packed copy of it; a note longer than a line is cut; clearing the session clears them.
    @Test(arguments: StoreDriver.allCases)
    func notesAreKeptInTheirOrderBesideTheFlows(_ driver: StoreDriver) async throws {
        let session = driver.newSession()
        let store = try await session.open()
        let first = FlowFixtures.getJSON()
        // Times SQLite's doubles and PostgreSQL's microseconds both keep exactly.
        let added = SessionNote(time: Date(timeIntervalSince1970: 1_700_000_000.25), author: "kagami mcp", text: "added a Map Local rule 'feed'")
        let released = SessionNote(
            time: Date(timeIntervalSince1970: 1_700_000_001.5), author: "web UI", text: "released held exchange: execute ✓", flowID: first.id)
        let long = SessionNote(
            time: Date(timeIntervalSince1970: 1_700_000_002), author: String(repeating: "a", count: 300),
            text: String(repeating: "é", count: SessionNote.maximumTextLength))
        store.record(first)
        store.record(.note(added))
        store.record(FlowFixtures.postBinary(size: 10))
        store.record(.note(released))
        store.record(.note(added))
        store.record(.note(long))
        try await store.flush()

        let notes = try await store.notes()
        #expect(notes.count == 3)
        #expect(Array(notes.prefix(2)) == [added, released])
        let cut = try #require(notes.last)
        #expect(cut.text.utf8.count == SessionNote.maximumTextLength)
        #expect(cut.text.allSatisfy { $0 == "é" })
        #expect(cut.author.utf8.count == SessionNote.maximumAuthorLength)
        #expect(try await store.count() == 2)
        let reopened = try await session.open()
        #expect(try await reopened.notes() == notes)

        let packed = temporaryPath("packed.sqlite")
        #expect(try await SessionPack.write(to: packed, from: store) == 2)
        let pack = try SQLiteFlowStore(path: packed)
        #expect(try await pack.notes() == notes)

        try await store.removeAll()
        #expect(try await store.notes() == [])
        await shutDown(store, reopened)
    }

    @Test(arguments: StoreDriver.allCases)
    func removeAllEmptiesTheSessionAndItGoesOn(_ driver: StoreDriver) async throws {
        let store = try await driver.newSession().open()
        for _ in 0..<5 { store.record(FlowFixtures.postBinary(size: 10)) }
        try await store.removeAll()
        #expect(try await store.count() == 0)
        let after = FlowFixtures.getJSON()
        store.record(after)
        try await store.flush()
        #expect(try await store.allFlows() == [after])
        await shutDown(store)
    }

    @Test(arguments: StoreDriver.allCases)
    func aStoreThatCannotBeOpenedIsAClearError(_ driver: StoreDriver) async throws {
        let (session, named) = try driver.unreachableSession()
        await #expect {
            _ = try await session.open()
        } throws: { error in
            "\(error)".contains(named)
        }
    }

    /// When the writer can't keep up, memory stays bounded: exchanges are still all stored,
    /// with their sizes, but bodies past the pending limit are not kept (and say so).
    @Test(arguments: StoreDriver.allCases)
    func bodiesPastThePendingLimitAreDroppedNotQueued(_ driver: StoreDriver) async throws {
        let store = try await driver.newSession().open(maximumPendingBodyBytes: 100)
        let withBody = FlowFixtures.postBinary(size: 1000)
        let small = FlowFixtures.getJSON(body: "{}")
        store.record(withBody)
        store.record(small)
        try await store.flush()
        let stored = try await store.allFlows()
        #expect(stored.count == 2)
        #expect(stored[0].request.body.data.isEmpty)
        #expect(stored[0].request.body.size == 1000)
        #expect(stored[0].request.body.isTruncated)
        #expect(stored[0].response?.body.isTruncated == true)
        #expect(stored[1].response?.body.data == Data("{}".utf8))
        #expect(stored[1].response?.body.isTruncated == false)
        await shutDown(store)
    }
}

/// A flow with every field set, down to the optional ones.
extension Flow {
    /// The metadata as sessions held it before the stored record: what JSONEncoder writes.
    func olderStoredJSON() throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .deferredToDate
        return try encoder.encode(withoutBodyBytes)
    }
}

/// A flow without body bytes, every part chosen at random.
private func randomFlow(_ random: inout SeededGenerator) -> Flow {
    let words = ["GET", "POST", "Host", "content-type", "application/json", "HTTP/1.1", "HTTP/2", "", "OK", "https"]
    func text(_ random: inout SeededGenerator) -> String {
        switch random.next(upTo: 4) {
        case 0: return words[random.next(upTo: words.count)]
        case 1: return ""
        default:
            let alphabet = Array("aZ9 -/:\"\\\t\n\u{0}é日😀")
            return String((0..<random.next(upTo: 40)).map { _ in alphabet[random.next(upTo: alphabet.count)] })
        }
    }
    func maybe<T>(_ random: inout SeededGenerator, _ make: (inout SeededGenerator) -> T) -> T? {
        random.next(upTo: 2) == 0 ? nil : make(&random)
    }
    func headers(_ random: inout SeededGenerator) -> HeaderFields {
        HeaderFields((0..<random.next(upTo: 6)).map { _ in HeaderFields.Field(name: text(&random), value: text(&random)) })
    }
    let start = Date(timeIntervalSinceReferenceDate: Double(random.next(upTo: 2_000_000_000)) - 1e9 + Double(random.next(upTo: 1_000_000)) / 7e5)
    func time(_ random: inout SeededGenerator) -> Date {
        random.next(upTo: 5) == 0
            ? Date(timeIntervalSinceReferenceDate: Double(random.next(upTo: 1 << 40)) / 3 - 1e11)
            : start.addingTimeInterval(Double(random.next(upTo: 10_000_000)) / 1e7 - 0.1)
    }
    let modes: [Flow.Mode] = [.forward, .reverse, .tunnel, .mock]
    let request = FlowRequest(
        method: text(&random), scheme: text(&random), host: text(&random), port: random.next(upTo: 70_000), target: text(&random),
        version: text(&random), headers: headers(&random), body: FlowBody(size: random.next(upTo: 1 << 40), isTruncated: random.next(upTo: 2) == 0))
    var flow = Flow(mode: modes[random.next(upTo: modes.count)], request: request, timings: FlowTimings(start: start))
    flow.id = UUID()
    flow.clientAddress = maybe(&random, text)
    flow.serverAddress = maybe(&random, text)
    flow.response = maybe(&random) { random in
        let status = [200, 404, 599, 0, 100_000][random.next(upTo: 5)]
        var response = FlowResponse(
            status: status, reason: random.next(upTo: 2) == 0 ? HTTPStatusPhrase.phrase(for: status) ?? "" : text(&random),
            version: text(&random), headers: headers(&random), body: FlowBody(size: random.next(upTo: 1_000), isTruncated: false))
        response.trailers = maybe(&random, headers)
        return response
    }
    flow.timings.connected = maybe(&random, time)
    flow.timings.requestSent = maybe(&random, time)
    flow.timings.firstByte = maybe(&random, time)
    flow.timings.end = maybe(&random, time)
    flow.timings.blocked = maybe(&random) { Double($0.next(upTo: 1_000_000)) / 3e6 }
    flow.timings.dns = maybe(&random) { Double($0.next(upTo: 1_000_000)) / 3e6 }
    flow.timings.ssl = maybe(&random) { Double($0.next(upTo: 1_000_000)) / 3e6 }
    flow.timings.heldAtRequest = maybe(&random) { Double($0.next(upTo: 1_000_000)) / 3e6 }
    flow.timings.heldAtResponse = maybe(&random) { Double($0.next(upTo: 1_000_000)) / 3e6 }
    flow.error = maybe(&random) { FlowError([.timeout, .badResponse, .other][$0.next(upTo: 3)], text(&$0)) }
    flow.tls = maybe(&random) { random in
        TLSInfo(version: maybe(&random, text), clientVersion: maybe(&random, text), cipherSuite: maybe(&random, text), alpn: maybe(&random, text),
                serverName: maybe(&random, text), certificateSubject: maybe(&random, text), certificateIssuer: maybe(&random, text),
                certificateFingerprintSHA256: maybe(&random, text), upstreamVerificationDisabled: random.next(upTo: 2) == 0)
    }
    flow.violations = (0..<random.next(upTo: 3)).map { _ in
        ContractViolation(
            kind: ContractViolation.Kind.allCases[random.next(upTo: ContractViolation.Kind.allCases.count)],
            severity: [.error, .warning, .info][random.next(upTo: 3)],
            operation: maybe(&random) { ContractViolation.Operation(name: text(&$0), method: text(&$0), template: text(&$0)) },
            side: random.next(upTo: 2) == 0 ? .request : .response, location: [.body, .header, .query, .status][random.next(upTo: 4)],
            name: maybe(&random, text), instancePointer: maybe(&random, text), schemaPointer: maybe(&random, text), keyword: maybe(&random, text),
            expected: maybe(&random, text), actual: maybe(&random, text), schemaExcerpt: maybe(&random, text), message: text(&random))
    }
    flow.appliedRules = (0..<random.next(upTo: 3)).map { _ in RuleApplication(name: text(&random), description: text(&random)) }
    flow.archiveFields = maybe(&random) { random in
        (0..<random.next(upTo: 3)).map { _ in ArchiveField(path: (0..<random.next(upTo: 3)).map { _ in text(&random) }, json: maybe(&random, text)) }
    }
    flow.repeatOf = maybe(&random) { _ in UUID() }
    flow.streamID = maybe(&random) { Int($0.next(upTo: 1 << 31)) - (1 << 30) }
    return flow
}

func fullyPopulatedFlow() -> Flow {
    var flow = FlowFixtures.getJSON()
    flow.clientAddress = "127.0.0.1:50123"
    flow.streamID = 7
    flow.serverAddress = "127.0.0.1:8443"
    flow.timings.connected = flow.timings.start.addingTimeInterval(0.001)
    flow.timings.requestSent = flow.timings.start.addingTimeInterval(0.002)
    flow.timings.firstByte = flow.timings.start.addingTimeInterval(0.010_5)
    flow.timings.end = flow.timings.start.addingTimeInterval(0.020_25)
    flow.timings.blocked = 0.000_3
    flow.timings.dns = 0.000_4
    flow.timings.ssl = 0.004
    flow.timings.heldAtRequest = 1.5
    flow.timings.heldAtResponse = 0.25
    flow.error = FlowError(.connectionReset, "the server closed the connection: \"reset\" / 日本")
    flow.tls = TLSInfo(version: "TLSv1.3", clientVersion: "TLSv1.2", cipherSuite: "TLS_AES_128_GCM_SHA256", alpn: "http/1.1",
                       serverName: "api.example.com", certificateSubject: "CN=api.example.com", certificateIssuer: "CN=Kagami CA",
                       certificateFingerprintSHA256: "AB:CD", upstreamVerificationDisabled: true)
    flow.violations = [ContractViolation(
        kind: .schema, severity: .warning, operation: .init(name: "listItems", method: "GET", template: "/items{?limit}"),
        side: .response, location: .body, name: "body", instancePointer: "/items/0/id", schemaPointer: "/properties/items/items/properties/id/type",
        keyword: "type", expected: "integer", actual: "string \"x\"", schemaExcerpt: "{\"type\":\"integer\"}", message: "expected integer, found string")]
    flow.appliedRules = [RuleApplication(name: "Map Local 'user'", description: "mapped to local file docs/user.json")]
    flow.archiveFields = [ArchiveField(path: ["response", "content", "compression"], json: "12"), ArchiveField(path: ["comment"], json: nil)]
    flow.repeatOf = UUID()
    flow.request.headers.add("X-Odd", "tab\there, \"quotes\"")
    flow.response?.trailers = HeaderFields([("grpc-status", "5"), ("grpc-message", "not%20found")])
    return flow
}

/// Paths of optionals that are nil and collections that are empty anywhere inside `value`.
/// A body counts as one value: its bytes may be held in one part or several.
private func unsetFields(of value: Any, path: String = "flow") -> [String] {
    if value is String || value is Data || value is UUID || value is Date || value is FlowBody { return [] }
    let mirror = Mirror(reflecting: value)
    switch mirror.displayStyle {
    case .optional:
        guard let wrapped = mirror.children.first?.value else { return [path] }
        return unsetFields(of: wrapped, path: path)
    case .collection:
        guard let first = mirror.children.first?.value else { return [path] }
        return unsetFields(of: first, path: path + "[0]")
    case .struct, .class:
        return mirror.children.flatMap { child in unsetFields(of: child.value, path: path + "." + (child.label ?? "?")) }
    default:
        return []
    }
}

extension SeededGenerator {
    /// A number in 0..<bound.
    fileprivate mutating func next(upTo bound: Int) -> Int { Int(next(upperBound: UInt64(bound))) }
}
