import Foundation
import KagamiFlow
import KagamiJSON
@testable import KagamiMCP
import KagamiStore
import KagamiTesting
import Testing

/// The tool layer without a transport: arguments checked against each tool's schema, pages of
/// exchanges and of bodies, credentials redacted.
@Suite struct SessionToolsTests {
    typealias F = FlowFixtures

    /// A session file of `count` exchanges, one a second, `/items/0` oldest.
    static func session(_ count: Int, _ purpose: String) async throws -> (ToolCatalog, SQLiteFlowStore) {
        let store = try SQLiteFlowStore(path: try TemporaryFolder.path("mcp-\(purpose)", "session.sqlite"))
        for index in 0..<count {
            store.record(F.getJSON(url: "/items/\(index)", status: index % 5 == 0 ? 500 : 200, start: Date(timeIntervalSince1970: 1_780_000_000 + Double(index))))
        }
        try await store.flush()
        let catalog = try ToolCatalog(SessionTools.tools(SessionSource(store: store, name: "session.sqlite", others: nil)))
        return (catalog, store)
    }

    static func refusal(_ catalog: ToolCatalog, _ tool: String, _ arguments: JSONObject) async -> ToolArgumentError? {
        do {
            _ = try await catalog.call(tool, arguments: arguments)
            return nil
        } catch let error as ToolArgumentError {
            return error
        } catch {
            Issue.record("expected an argument error, got \(error)")
            return nil
        }
    }

    @Test func argumentsOutsideTheSchemaAreRefusedNamingTheField() async throws {
        let (catalog, store) = try await Self.session(3, "arguments")
        defer { Task { await store.close() } }
        let unknown = await Self.refusal(catalog, "search_exchanges", ["filtre": "status:500"])
        #expect(unknown?.field == "filtre")
        let wrongType = await Self.refusal(catalog, "search_exchanges", ["limit": "ten"])
        #expect(wrongType?.field == "limit")
        #expect(wrongType?.message.contains("integer") == true)
        let tooMany = await Self.refusal(catalog, "search_exchanges", ["limit": 100_000])
        #expect(tooMany?.field == "limit")
        let missing = await Self.refusal(catalog, "get_exchange", [:])
        #expect(missing?.description.contains("\"id\"") == true)
        let notAnID = await Self.refusal(catalog, "get_exchange", ["id": "42"])
        #expect(notAnID?.field == "id")
        let badPart = await Self.refusal(catalog, "get_body", ["id": .string(UUID().uuidString), "part": "trailer"])
        #expect(badPart?.field == "part")
        let nested = await Self.refusal(catalog, "diff_sessions", ["before": ["filter": "status:500"], "after": ["filtr": "x"]])
        #expect(nested?.field == "after.filtr")
        let pageOnlyWords = await Self.refusal(catalog, "search_exchanges", ["filter": "type:json"])
        #expect(pageOnlyWords?.field == "filter")
        let unknownTool = await Self.refusal(catalog, "add_rule", ["kind": "mapLocal", "rule": [:]])
        #expect(unknownTool?.description.contains("--allow-write") == true)
    }

    @Test func searchIsNewestFirstAPageAtATime() async throws {
        let (catalog, store) = try await Self.session(7, "search")
        defer { Task { await store.close() } }
        var paths: [String] = []
        var cursor: JSONValue = .null
        for _ in 0..<10 {
            var arguments: JSONObject = ["limit": 3]
            if case .string = cursor { arguments["cursor"] = cursor }
            let page = try await catalog.call("search_exchanges", arguments: arguments)
            #expect(page["total"] == 7)
            paths += (page["exchanges"]?.arrayValue ?? []).compactMap { $0["path"]?.stringValue }
            cursor = page["next"] ?? .null
            if cursor.isNull { break }
        }
        #expect(paths == (0..<7).reversed().map { "/items/\($0)" })
        let failed = try await catalog.call("search_exchanges", arguments: ["filter": "status:5xx"])
        #expect((failed["exchanges"]?.arrayValue ?? []).compactMap { $0["path"]?.stringValue } == ["/items/5", "/items/0"])
    }

    @Test func anExchangeComesRedactedWithItsBodyPaged() async throws {
        let (catalog, store) = try await Self.session(1, "exchange")
        defer { Task { await store.close() } }
        let row = try await catalog.call("search_exchanges", arguments: [:])
        let id = try #require(row["exchanges"]?[0]?["id"])
        let answer = try await catalog.call("get_exchange", arguments: ["id": id, "body_bytes": 5])
        let headers = answer["exchange"]?["request"]?["headers"]?.arrayValue ?? []
        #expect(headers.contains(["Cookie", "[redacted by Kagami]"]))
        #expect(!answer.serialized().contains("session=abc"))
        #expect(answer["responseBody"]?["text"] == #"{"id""#)
        #expect(answer["responseBody"]?["nextOffset"] == 5)
        let rest = try await catalog.call("get_body", arguments: ["id": id, "part": "response", "offset": 5])
        #expect(rest["text"] == #":1,"name":"Ada"}"#)
        #expect(rest["nextOffset"] == .null)
        let curl = try await catalog.call("copy_curl", arguments: ["id": id])
        #expect(curl["command"]?.stringValue?.contains("curl") == true)
        #expect(curl["command"]?.stringValue?.contains("session=abc") == false)
        let missing = try? await catalog.call("get_exchange", arguments: ["id": .string(UUID().uuidString)])
        #expect(missing == nil)
    }

    @Test func aPageOfTextEndsOnACharacterBoundary() {
        let body = FlowBody(data: Data("añb".utf8))
        let page = BodyPage(body, headers: HeaderFields([("Content-Type", "text/plain")]), offset: 0, limit: 2)
        #expect(page.json["text"] == "a")
        #expect(page.json["nextOffset"] == 1)
        let binary = BodyPage(FlowBody(data: Data([0xFF, 0x00, 0x01])), headers: HeaderFields(), offset: 1, limit: 10)
        #expect(binary.json["base64"] == .string(Data([0x00, 0x01]).base64EncodedString()))
    }

    @Test func operationsCountCallsAndStatuses() async throws {
        let (catalog, store) = try await Self.session(6, "operations")
        defer { Task { await store.close() } }
        let answer = try await catalog.call("list_operations", arguments: [:])
        let operations = answer["operations"]?.arrayValue ?? []
        #expect(operations.count == 1)
        #expect(operations.first?["path"] == "/items/{itemId}")
        #expect(operations.first?["count"] == 6)
        #expect(operations.first?["statuses"] == ["200": 4, "500": 2])
    }

    @Test func webSocketMessagesArePaged() async throws {
        let (catalog, store) = try await Self.session(0, "messages")
        defer { Task { await store.close() } }
        let handshake = F.webSocket()
        store.record(handshake)
        store.record(messages: F.webSocketMessages(), of: handshake.id)
        try await store.flush()
        let id = JSONValue.string(handshake.id.uuidString)
        let first = try await catalog.call("get_messages", arguments: ["id": id, "limit": 4])
        #expect(first["messages"]?.arrayValue?.count == 4)
        #expect(first["messages"]?[0]?["text"] == "hello 👋")
        #expect(first["messages"]?[2]?["base64"] == .string(Data([0x00, 0xFF, 0x10]).base64EncodedString()))
        #expect(first["nextOffset"] == 4)
        let rest = try await catalog.call("get_messages", arguments: ["id": id, "offset": 4])
        #expect(rest["messages"]?.arrayValue?.count == 2)
        #expect(rest["nextOffset"] == .null)
        let exchange = try await catalog.call("get_exchange", arguments: ["id": id])
        #expect(exchange["messages"]?.arrayValue?.count == 6)
        #expect(exchange["moreMessages"] == false)
    }

    @Test func twoFiltersOfTheSessionAreCompared() async throws {
        let (catalog, store) = try await Self.session(10, "diff")
        defer { Task { await store.close() } }
        let report = try await catalog.call("diff_sessions", arguments: ["before": ["filter": "status:200"], "after": ["filter": "status:500"]])
        let kinds = (report["findings"]?.arrayValue ?? []).compactMap { $0["kind"]?.stringValue }
        #expect(kinds.contains("status"), "\(report.serialized())")
        let same = await Self.refusal(catalog, "diff_sessions", ["before": [:], "after": [:]])
        #expect(same?.field == "after")
        let elsewhere = try? await catalog.call("diff_sessions", arguments: ["before": ["session": "other.sqlite"], "after": [:]])
        #expect(elsewhere == nil)
    }

    @Test func fieldNamesReadAsTheArgumentsAreWritten() {
        #expect(ToolCatalog.field("/after/filter") == "after.filter")
        #expect(ToolCatalog.field("/paths/2") == "paths[2]")
        #expect(ToolCatalog.field("") == "")
    }
}
