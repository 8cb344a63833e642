import Foundation
import KagamiFlow
import KagamiStore
import KagamiTesting
import Testing

/// Pages of a session asked of every driver: newest first, continuing from a position, and the
/// web UI's filter words answered by the store.
@Suite("Flow queries, every driver")
struct FlowQueryTests {
    /// Ten flows: hosts api/cdn, paths /users/N, statuses 200/404/500, one POST, the last failed
    /// with no response.
    static func flows() -> [Flow] {
        var flows: [Flow] = []
        for index in 0..<10 {
            var flow = FlowFixtures.getJSON(
                url: "/users/\(index)", host: index % 2 == 0 ? "api.example.com" : "cdn.example.net",
                status: [200, 404, 500][index % 3], start: Date(timeIntervalSince1970: 1_780_000_000 + Double(index)))
            if index == 7 { flow.request.method = "POST" }
            flows.append(flow)
        }
        // Failed without an answer.
        flows[9] = FlowFixtures.refused(start: Date(timeIntervalSince1970: 1_780_000_009))
        flows[9].response = nil
        return flows
    }

    func ids(_ store: any FlowStore, _ filter: String, order: FlowQuery.Order = .oldestFirst) async throws -> [UUID] {
        try await store.flows(FlowQuery(order: order, filter: FlowFilter(parsing: filter), limit: 100)).flows.map(\.id)
    }

    @Test(arguments: StoreDriver.allCases)
    func pagesContinueFromTheirPositionEitherWay(_ driver: StoreDriver) async throws {
        let store = try await driver.newSession().open()
        let flows = Self.flows()
        for flow in flows { store.record(flow) }
        try await store.flush()

        var newest: [UUID] = []
        var query = FlowQuery(order: .newestFirst, limit: 4)
        var pages = 0
        while pages < 10 {
            let page = try await store.flows(query)
            pages += 1
            newest += page.flows.map(\.id)
            guard let next = page.next else { break }
            query.after = next
        }
        #expect(pages == 3)
        #expect(newest == flows.reversed().map(\.id))

        var oldest: [UUID] = []
        try await store.forEachFlow(includeBodies: true, pageSize: 3) { oldest += $0.map(\.id) }
        #expect(oldest == flows.map(\.id))
        var firstFive: [Flow] = []
        try await store.forEachFlow(includeBodies: true, limit: 5, pageSize: 2) { firstFive += $0 }
        #expect(firstFive == Array(flows.prefix(5)))

        // A page exactly as long as what is left says there is no next one.
        let all = try await store.flows(FlowQuery(limit: 10))
        #expect(all.flows.count == 10)
        #expect(all.next == nil)
        await shutDown(store)
    }

    @Test(arguments: StoreDriver.allCases)
    func theFilterBoxWordsAreAnsweredByTheStore(_ driver: StoreDriver) async throws {
        let store = try await driver.newSession().open()
        let flows = Self.flows()
        for flow in flows { store.record(flow) }
        try await store.flush()
        let id = flows.map(\.id)

        #expect(try await ids(store, "host:API") == [0, 2, 4, 6, 8].map { id[$0] })
        #expect(try await ids(store, "-host:api") == [1, 3, 5, 7, 9].map { id[$0] })
        #expect(try await ids(store, "status:4xx") == [1, 4, 7].map { id[$0] })
        #expect(try await ids(store, "status:5") == [2, 5, 8].map { id[$0] })
        #expect(try await ids(store, "status:200") == [0, 3, 6].map { id[$0] })
        #expect(try await ids(store, "status:none") == [id[9]])
        #expect(try await ids(store, "status:abc").isEmpty)
        // A negated status word keeps the flow without a response, as the page's filter does.
        #expect(try await ids(store, "-status:2xx") == [1, 2, 4, 5, 7, 8, 9].map { id[$0] })
        #expect(try await ids(store, "has:error") == [id[9]])
        #expect(try await ids(store, "method:post") == [id[7]])
        #expect(try await ids(store, "post") == [id[7]])
        #expect(try await ids(store, "/users/1") == [id[1]])
        #expect(try await ids(store, "USERS host:cdn status:4xx") == [1, 7].map { id[$0] })
        #expect(try await ids(store, "users", order: .newestFirst) == [8, 7, 6, 5, 4, 3, 2, 1, 0].map { id[$0] })
        // LIKE's own characters are plain text in a word.
        #expect(try await ids(store, "users_1").isEmpty)
        #expect(try await ids(store, "%").isEmpty)

        let mixed = FlowFilter(parsing: "type:json host:api -contract:errors")
        #expect(mixed.unapplied == ["type:json", "-contract:errors"])
        #expect(try await ids(store, "type:json host:api") == [0, 2, 4, 6, 8].map { id[$0] })
        await shutDown(store)
    }

    /// Whether an exchange is gRPC and its grpc-status are in its headers and trailers, not in
    /// the store's columns: those words are left to the caller, and text stays text.
    @Test func grpcWordsAreLeftForTheCallerToApply() {
        let filter = FlowFilter(parsing: "GRPC -grpc.status:0 grpc.method:Greeter/* host:api grpcx")
        #expect(filter.unapplied == ["GRPC", "-grpc.status:0", "grpc.method:Greeter/*"])
        #expect(filter.conditions.map(\.term) == [.host(WildcardPattern("*api*", caseInsensitive: true)), .text("grpcx")])
    }

    /// `host:` and `path:` with `*`, `?` or `[` are patterns of the whole host or path, with
    /// `WildcardPattern`'s meaning; without, a part of it, as before.
    @Test func hostAndPathWordsAreWildcardPatternsWhenTheyHaveWildcards() {
        let filter = FlowFilter(parsing: "host:*.Example.COM path:/API/* host:exam path:V1 -path:/x/[0-9]?")
        #expect(filter.conditions.map(\.term) == [
            .host(WildcardPattern("*.example.com", caseInsensitive: true)),
            .path(WildcardPattern("/API/*")),
            .host(WildcardPattern("*exam*", caseInsensitive: true)),
            .path(WildcardPattern("*V1*")),
            .path(WildcardPattern("/x/[0-9]?")),
        ])
        #expect(filter.conditions.map(\.negated) == [false, false, false, false, true])
        #expect(filter.unapplied.isEmpty)
    }

    /// The SQL each store writes for a host or path pattern selects exactly the flows
    /// `WildcardPattern.matches` does, with the characters GLOB, LIKE and regular expressions
    /// give a meaning to taken as the pattern means them.
    @Test(arguments: StoreDriver.allCases)
    func hostAndPathPatternsSelectWhatWildcardPatternMatches(_ driver: StoreDriver) async throws {
        let hosts = [
            "api.example.com", "API-1.Test", "api-x.test", "a%b.example", "a_b.example", "x+y.test", "p(q).test", #"back\slash.test"#,
            "star.host", "caret^h", "dash-h", "close]h", "open[h", "eg", "ab", "z.example.com",
        ]
        let paths = [
            "/api/v1", "/api/v2/users?x=1&y=*", "/API/x", "/a%20b", "/a_b", "/a.b", "/a+b", "/a(b)", #"/a\b"#, "/x*y", "/x[1]", "/",
            "/caret^", "/dash-", "/br]", "/api/v1?q=/api/v1",
        ]
        var flows: [Flow] = []
        for (index, host) in hosts.enumerated() {
            flows.append(FlowFixtures.getJSON(url: paths[index % paths.count], host: host, start: Date(timeIntervalSince1970: 1_780_000_000 + Double(index))))
        }
        var tunnel = FlowFixtures.getJSON(host: "tunnel.example.com", start: Date(timeIntervalSince1970: 1_780_000_100))
        tunnel.request.method = "CONNECT"
        tunnel.request.target = "tunnel.example.com:443"
        flows.append(tunnel)
        var options = FlowFixtures.getJSON(url: "*", host: "options.test", start: Date(timeIntervalSince1970: 1_780_000_101))
        options.request.method = "OPTIONS"
        flows.append(options)
        let store = try await driver.newSession().open()
        for flow in flows { store.record(flow) }
        try await store.flush()

        let patterns = [
            "*.example.com", "api-[0-9].test", "API-[0-9].TEST", "*[!a-z]*", "*[^.a-z]*", "a?b*", "*%*", "*_*", "a.b", "*.*", "*+*", "*(*", "*)*",
            #"*\*"#, "[[]*", "*[]]*", "*[]-]*", "*[-]*", "*[^]]*", "*[!-]*", "*[]^]*", #"*[\^]*"#, "*[^^]*", "[a-c]*", "[z-a]*", "*[*]*",
            "*[?]*", "*[", "*[a-", "*?", "????", "?????????????????", "*", "*e*e*", "x+y.test", "*h", "*]h", "*[0-9]*", "*[.-]*", "*[.-9]*",
            "/api/*", "/api/v?", "/API/*", "*/a?b", "/a[%_.+(]b*", "/x[*]y", "/x[[]1]", "/[!a]*", "*^", "*-", "/br]", "/", "?",
            "tunnel.*", "*:443", "[*]", "options.*", "*?*=*", "exam", "API", "/a", "b",
        ]
        for source in patterns {
            for kind in ["host", "path"] {
                let filter = FlowFilter(parsing: "\(kind):\(source)")
                let pattern: WildcardPattern
                switch filter.conditions.first?.term {
                case .host(let host)?: pattern = host
                case .path(let path)?: pattern = path
                default: Issue.record("\(kind):\(source) is no pattern"); continue
                }
                let expected = flows.filter { flow in
                    let request = flow.request
                    return pattern.matches(kind == "host" ? request.host : request.method == "CONNECT" ? request.target : request.path)
                }.map(\.id)
                #expect(try await ids(store, "\(kind):\(source)") == expected, "\(kind):\(source)")
                let others = flows.map(\.id).filter { !expected.contains($0) }
                #expect(try await ids(store, "-\(kind):\(source)") == others, "-\(kind):\(source)")
            }
        }
        await shutDown(store)
    }

    /// SQLite reads a filtered page from the positions next to its cursor first, and from its
    /// index for what they don't fill (a scan for the flows past the text index's end): with a
    /// window of 3 positions, every page of every filter, either way, is the page a filter over
    /// all the flows gives, with none, some or all of the flows in the text index.
    @Test(arguments: [0, 4, 10])
    func filteredPagesAreTheSameWhereverTheWindowEnds(indexed: Int) async throws {
        let path = NSTemporaryDirectory() + "kagami-query-\(UUID().uuidString).sqlite"
        let store = try SQLiteFlowStore(path: path, filterWindow: 3)
        let flows = Self.flows()
        for flow in flows.prefix(indexed) { store.record(flow) }
        try await store.indexText()
        for flow in flows.dropFirst(indexed) { store.record(flow) }
        try await store.flush()
        #expect(try await store.textIndexEnd() == Int64(indexed))
        let filters: [(String, (Int) -> Bool)] = [
            ("host:api", { $0 % 2 == 0 && $0 != 9 }), ("status:4xx", { [1, 4, 7].contains($0) }),
            ("users/1", { $0 == 1 }), ("users", { $0 != 9 }), ("-host:cdn status:200", { [0, 6].contains($0) }),
            // Through the text index: a method alone, a host, a pattern's literal run, `_` and
            // `%` taken as themselves, negated words (not through the index).
            ("post", { $0 == 7 }), ("example.net", { $0 % 2 == 1 && $0 != 9 }), ("path:/users/?", { $0 != 9 }),
            ("users_1", { _ in false }), ("users%1", { _ in false }), ("-users/1 -post", { $0 != 1 && $0 != 7 }),
            ("method:post users", { $0 == 7 }),
        ]
        for (filter, expected) in filters {
            for order in [FlowQuery.Order.oldestFirst, .newestFirst] {
                for limit in 1...4 {
                    var query = FlowQuery(order: order, filter: FlowFilter(parsing: filter), limit: limit)
                    var found: [UUID] = []
                    for _ in 0..<20 {
                        let page = try await store.flows(query)
                        #expect(page.flows.count <= limit)
                        found += page.flows.map(\.id)
                        guard let next = page.next else { break }
                        query.after = next
                    }
                    let indices = (0..<flows.count).filter(expected)
                    let wanted = (order == .oldestFirst ? indices : indices.reversed()).map { flows[$0].id }
                    #expect(found == wanted, "\(filter), \(order), pages of \(limit)")
                }
            }
        }
        await shutDown(store)
    }

    /// The text index follows the table: a flow recorded again under another URL is found by
    /// the new one only, and a cleared session's flows are gone from it.
    @Test func theTextIndexFollowsTheFlowsItIndexes() async throws {
        let path = NSTemporaryDirectory() + "kagami-query-\(UUID().uuidString).sqlite"
        let store = try SQLiteFlowStore(path: path, filterWindow: 1)
        #expect(store.hasTextIndex)
        var flows = Self.flows()
        for flow in flows { store.record(flow) }
        try await store.indexText()
        flows[3].request.target = "/renamed/3"
        store.record(flows[3])
        try await store.flush()
        #expect(try await ids(store, "renamed") == [flows[3].id])
        #expect(try await ids(store, "users/3").isEmpty)
        #expect(try await ids(store, "users/4") == [flows[4].id])
        try await store.removeAll()
        #expect(try await ids(store, "users").isEmpty)
        let again = FlowFixtures.getJSON(url: "/users/again", host: "api.example.com", status: 200, start: Date(timeIntervalSince1970: 1_780_000_100))
        store.record(again)
        try await store.flush()
        #expect(try await ids(store, "users") == [again.id])
        try await store.indexText()
        #expect(try await ids(store, "users") == [again.id])
        #expect(try await ids(store, "renamed").isEmpty)
        await shutDown(store)
    }

    /// The writer adds flows to the text index a chunk at a time: never more than a chunk of
    /// them wait past its end, for a scan to read.
    @Test func theWriterIndexesTextAChunkAtATime() async throws {
        let path = NSTemporaryDirectory() + "kagami-query-\(UUID().uuidString).sqlite"
        let store = try SQLiteFlowStore(path: path, filterWindow: 1)
        let count = SQLiteFlowStore.textIndexChunk + 25
        let start = Date(timeIntervalSince1970: 1_780_000_000)
        for index in 0..<count {
            store.record(FlowFixtures.getJSON(url: "/items/\(index)", host: "api.example.com", status: 200, start: start + Double(index)))
        }
        try await store.flush()
        let end = try await store.textIndexEnd()
        #expect(end >= Int64(SQLiteFlowStore.textIndexChunk))
        #expect(Int64(count) - end < Int64(SQLiteFlowStore.textIndexChunk))
        // Found either side of the index's end, in order.
        try await store.indexText()
        #expect(try await store.textIndexEnd() == Int64(count))
        for index in 0..<3 {
            store.record(FlowFixtures.getJSON(url: "/items/1002-\(index)", host: "api.example.com", status: 200, start: start + Double(count + index)))
        }
        try await store.flush()
        #expect(try await store.textIndexEnd() == Int64(count))
        let both = (0..<count).filter { "\($0)".hasPrefix("1002") }.map { "/items/\($0)" } + (0..<3).map { "/items/1002-\($0)" }
        for order in [FlowQuery.Order.newestFirst, .oldestFirst] {
            let page = try await store.flows(FlowQuery(order: order, filter: FlowFilter(parsing: "items/1002"), limit: 20))
            #expect(page.flows.map(\.request.target) == (order == .oldestFirst ? both : both.reversed()))
        }
        await shutDown(store)
    }
}
