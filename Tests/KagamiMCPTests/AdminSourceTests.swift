import Foundation
import KagamiFlow
import KagamiJSON
@testable import KagamiMCP
import KagamiStore
import KagamiTesting
import KagamiUI
import Testing

/// The read tools over a running proxy's admin API answer as they do over its session file:
/// one session served by a web UI on 127.0.0.1 port 0, read both ways.
@Suite struct AdminSourceTests {
    typealias F = FlowFixtures

    struct Served {
        let store: SQLiteFlowStore
        let server: UIServer
        let port: Int
        let stored: ToolCatalog
        let admin: ToolCatalog

        func stop() async {
            await server.stop()
            await store.close()
        }
    }

    static func serve(_ purpose: String, token: String = "admin-source-token") async throws -> Served {
        let store = try SQLiteFlowStore(path: try TemporaryFolder.path("mcp-admin-\(purpose)", "session.sqlite"))
        for index in 0..<12 {
            var flow = F.getJSON(url: "/items/\(index)", status: index % 4 == 0 ? 500 : 200, start: Date(timeIntervalSince1970: 1_780_000_000 + Double(index)))
            flow.request.headers.add("Authorization", "Bearer secret-\(index)")
            store.record(flow)
        }
        let handshake = F.webSocket(start: Date(timeIntervalSince1970: 1_780_000_100))
        store.record(handshake)
        store.record(messages: F.webSocketMessages(), of: handshake.id)
        try await store.flush()
        let server = try UIServer(
            configuration: .init(port: 0, proxyAddress: "http://127.0.0.1:8888", sessionPath: "session.sqlite", version: "test", token: token),
            store: store, hub: FlowHub())
        let port = try await server.start()
        let stored = try ToolCatalog(SessionTools.tools(SessionSource(store: store, name: "session.sqlite", others: nil)))
        let admin = try ToolCatalog(SessionTools.tools(SessionSource(
            exchanges: AdminExchanges(AdminAPI(baseURL: "http://127.0.0.1:\(port)", token: "admin-source-token")), name: "proxy", others: nil)))
        return Served(store: store, server: server, port: port, stored: stored, admin: admin)
    }

    @Test func searchPagesAndFiltersAnswerAsTheSessionDoes() async throws {
        let served = try await Self.serve("search")
        defer { Task { await served.stop() } }
        for arguments: JSONObject in [[:], ["limit": 5], ["filter": "status:5xx"], ["filter": "path:/items/1* -status:500", "limit": 2]] {
            var cursor: JSONValue = .null
            for _ in 0..<10 {
                var page = arguments
                if case .string = cursor { page["cursor"] = cursor }
                let viaStore = try await served.stored.call("search_exchanges", arguments: page)
                let viaAdmin = try await served.admin.call("search_exchanges", arguments: page)
                #expect(viaAdmin == viaStore, "\(page)")
                cursor = viaStore["next"] ?? .null
                if cursor.isNull { break }
            }
        }
        let failed = try await served.admin.call("search_exchanges", arguments: ["filter": "status:5xx"])
        #expect((failed["exchanges"]?.arrayValue ?? []).compactMap { $0["path"]?.stringValue } == ["/items/8", "/items/4", "/items/0"])
        #expect(failed["total"] == 13)
    }

    @Test func anExchangeItsBodyMessagesAndCurlAnswerAsTheSessionDoes() async throws {
        let served = try await Self.serve("exchange")
        defer { Task { await served.stop() } }
        let rows = try await served.stored.call("search_exchanges", arguments: ["limit": 500])
        for row in rows["exchanges"]?.arrayValue ?? [] {
            let id = try #require(row["id"])
            for (tool, arguments) in [("get_exchange", ["id": id]), ("copy_curl", ["id": id]), ("get_body", ["id": id, "part": "response", "offset": 3, "limit": 4])] as [(String, JSONObject)] {
                let viaStore = try? await served.stored.call(tool, arguments: arguments)
                let viaAdmin = try? await served.admin.call(tool, arguments: arguments)
                #expect(viaAdmin == viaStore, "\(tool) \(id)")
                if tool != "get_body" { #expect(viaStore != nil, "\(tool) \(id)") }
            }
        }
        let first = try #require(rows["exchanges"]?[0]?["id"])
        let messages = try await served.admin.call("get_messages", arguments: ["id": first, "offset": 1, "limit": 2])
        #expect(messages == (try await served.stored.call("get_messages", arguments: ["id": first, "offset": 1, "limit": 2])))
        #expect(messages["messages"]?.arrayValue?.count == 2)
        let exchange = try await served.admin.call("get_exchange", arguments: ["id": try #require(rows["exchanges"]?[1]?["id"])])
        #expect(!exchange.serialized().contains("secret-"), "a credential was answered")
        let missing = try? await served.admin.call("get_exchange", arguments: ["id": .string(UUID().uuidString)])
        #expect(missing == nil)
    }

    @Test func operationsAndResourcesReadThroughTheAdminAPI() async throws {
        let served = try await Self.serve("operations")
        defer { Task { await served.stop() } }
        let viaAdmin = try await served.admin.call("list_operations", arguments: [:])
        #expect(viaAdmin == (try await served.stored.call("list_operations", arguments: [:])))
        let items = (viaAdmin["operations"]?.arrayValue ?? []).first { $0["path"] == "/items/{itemId}" }
        #expect(items?["statuses"] == ["200": 9, "500": 3])
        let violations = try await served.admin.call("contract_violations", arguments: [:])
        #expect(violations["scanned"] == 13)
    }

    @Test func aWrongTokenIsSaidWithTheProxysReason() async throws {
        let served = try await Self.serve("token")
        defer { Task { await served.stop() } }
        let wrong = try ToolCatalog(SessionTools.tools(SessionSource(
            exchanges: AdminExchanges(AdminAPI(baseURL: "http://127.0.0.1:\(served.port)", token: "not-the-token")), name: "proxy", others: nil)))
        do {
            _ = try await wrong.call("search_exchanges", arguments: [:])
            Issue.record("a wrong token was served")
        } catch let failure as ToolFailure {
            #expect(failure.message.contains("/api/flows"), "\(failure.message)")
        }
    }
}
