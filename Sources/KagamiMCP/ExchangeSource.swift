// Where the read tools find exchanges: a session through its store, or a running proxy through
// its admin API. The tools are written once, against this.
import Foundation
import KagamiFlow
import KagamiJSON
import KagamiStore
import KagamiUI

/// The exchanges of one session, read only. Every read sees what was recorded before it.
public protocol ExchangeSource: Sendable {
    func count() async throws -> Int
    /// A page of rows, as the admin API's `/api/flows` gives them (`Flow.summaryJSON`).
    func rows(_ query: ExchangeQuery) async throws -> RowPage
    /// A page of whole flows (with bodies when `query.includeBodies`).
    func flows(_ query: ExchangeQuery) async throws -> FlowPage
    /// The flow with its bodies, or nil.
    func flow(id: UUID) async throws -> Flow?
    /// A WebSocket flow's messages in the order they passed.
    func messages(of flowID: UUID, offset: Int, limit: Int?) async throws -> [WebSocketMessage]
    /// The session's notes (changes made to the proxy while it recorded), oldest first.
    func notes() async throws -> [SessionNote]
}

/// A page asked of a source: `FlowQuery` with its filter kept as the words given (an admin
/// API is sent the words).
public struct ExchangeQuery: Sendable {
    public var order: FlowQuery.Order
    public var after: Int64?
    /// Filter words the store applies whole (`FlowFilter.unapplied` empty).
    public var filter: String
    public var limit: Int
    public var includeBodies: Bool

    public init(order: FlowQuery.Order = .oldestFirst, after: Int64? = nil, filter: String = "", limit: Int, includeBodies: Bool = false) {
        self.order = order
        self.after = after
        self.filter = filter
        self.limit = limit
        self.includeBodies = includeBodies
    }

    var flowQuery: FlowQuery {
        FlowQuery(order: order, after: after, filter: FlowFilter(parsing: filter), limit: limit, includeBodies: includeBodies)
    }
}

/// Rows of a page, and where the next one starts.
public struct RowPage: Sendable {
    public var rows: [JSONValue]
    public var next: Int64?
}

extension ExchangeSource {
    /// Calls `body` with every flow matching `filter` in capture order, a page at a time.
    func forEachFlow(filter: String = "", includeBodies: Bool, pageSize: Int = 500, _ body: ([Flow]) async throws -> Void) async throws {
        var query = ExchangeQuery(filter: filter, limit: pageSize, includeBodies: includeBodies)
        while true {
            let page = try await flows(query)
            if !page.flows.isEmpty { try await body(page.flows) }
            guard let next = page.next else { return }
            query.after = next
        }
    }
}

/// A session through its store's public API (a session file, or a session of a shared store).
public struct StoredExchanges: ExchangeSource {
    public let store: any FlowStore

    public init(_ store: any FlowStore) {
        self.store = store
    }

    public func count() async throws -> Int {
        try await store.count()
    }

    public func rows(_ query: ExchangeQuery) async throws -> RowPage {
        let page = try await flows(query)
        return RowPage(rows: page.flows.map(\.summaryJSON), next: page.next)
    }

    public func flows(_ query: ExchangeQuery) async throws -> FlowPage {
        // A session another process records: what it wrote before now is read.
        try await store.flush()
        return try await store.flows(query.flowQuery)
    }

    public func flow(id: UUID) async throws -> Flow? {
        try await store.flush()
        return try await store.flow(id: id)
    }

    public func messages(of flowID: UUID, offset: Int, limit: Int?) async throws -> [WebSocketMessage] {
        try await store.messages(of: flowID, offset: offset, limit: limit)
    }

    public func notes() async throws -> [SessionNote] {
        try await store.flush()
        return try await store.notes()
    }
}
