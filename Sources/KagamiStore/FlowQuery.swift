import Foundation
import KagamiFlow

/// A page of a session's flows asked of its store: in capture order or newest first, from a
/// position an earlier page returned, narrowed by a filter. Pages continue from a position
/// rather than skip a count, so reading a session of a million flows page by page costs the
/// same for the last page as for the first.
public struct FlowQuery: Sendable, Equatable {
    public enum Order: String, Sendable {
        case oldestFirst
        case newestFirst
    }

    public var order: Order
    /// Where to continue: the `next` of the page before; nil starts at the beginning (the
    /// oldest flow, or the newest with `.newestFirst`).
    public var after: Int64?
    public var filter: FlowFilter
    public var limit: Int
    public var includeBodies: Bool

    public init(order: Order = .oldestFirst, after: Int64? = nil, filter: FlowFilter = FlowFilter(), limit: Int, includeBodies: Bool = false) {
        self.order = order
        self.after = after
        self.filter = filter
        self.limit = limit
        self.includeBodies = includeBodies
    }
}

public struct FlowPage: Sendable {
    public var flows: [Flow]
    /// The position to ask the next page from; nil when this page reached the end.
    public var next: Int64?

    public init(flows: [Flow], next: Int64?) {
        self.flows = flows
        self.next = next
    }
}

extension FlowStore {
    /// Calls `body` with every flow of the session matching `filter` (the first `limit` of
    /// them), in capture order, a page of `pageSize` at a time: memory holds two pages whatever
    /// the session's size, the next one read while `body` goes through this one.
    public func forEachFlow(
        filter: FlowFilter = FlowFilter(), includeBodies: Bool, limit: Int? = nil, pageSize: Int = 500,
        _ body: ([Flow]) async throws -> Void
    ) async throws {
        var remaining = limit ?? Int.max
        var query = FlowQuery(filter: filter, limit: min(pageSize, remaining), includeBodies: includeBodies)
        var page = try await flows(query)
        while true {
            remaining -= page.flows.count
            var reading: Task<FlowPage, any Error>?
            if remaining > 0, let next = page.next {
                query.after = next
                query.limit = min(pageSize, remaining)
                let query = query
                reading = Task { try await self.flows(query) }
            }
            if !page.flows.isEmpty {
                do {
                    try await body(page.flows)
                } catch {
                    reading?.cancel()
                    throw error
                }
            }
            guard let reading else { return }
            page = try await reading.value
        }
    }
}

/// The web UI's filter box, for stores to answer: whitespace-separated words that must all
/// hold; `host:` and `path:` (part of the host or of the request's path, or with `*`, `?` or
/// `[` a `WildcardPattern` of all of it, as rules' locations), `method:`, `status:` (`404`,
/// `4xx`, `4`, `none`) and `has:error` qualify a word, a leading `-` negates it, and any other
/// word is part of the URL or the method. Words about what only a flow's whole record says (`type:`, `contract:`,
/// `has:rule`, `grpc`, `grpc.status:`, `grpc.method:`...) are not applied by the store: they are
/// listed in `unapplied`, for the caller to apply to the flows it gets.
public struct FlowFilter: Sendable, Equatable {
    public enum Term: Sendable, Equatable {
        /// The host matches this (ignoring case).
        case host(WildcardPattern)
        /// The request's path, before `?`, matches this.
        case path(WildcardPattern)
        /// The method is this (lowercase).
        case method(String)
        case statusClass(Int)
        case status(Int)
        /// No response (failed or not answered yet).
        case noStatus
        /// A status word that names no status: matches nothing.
        case impossible
        case failed
        /// The URL contains this, or the method is it (lowercase).
        case text(String)
    }

    public struct Condition: Sendable, Equatable {
        public var term: Term
        public var negated: Bool
    }

    public var conditions: [Condition]
    public var unapplied: [String]

    public init(conditions: [Condition] = [], unapplied: [String] = []) {
        self.conditions = conditions
        self.unapplied = unapplied
    }

    public var isEmpty: Bool { conditions.isEmpty }

    /// Text every flow the filter matches holds in its method, host or URL (ignoring case) —
    /// the longest of its words' texts and the literal runs of its host and path patterns — when
    /// one has three characters in a row that are neither `%` nor `_` (and no `\`): what a
    /// store's text index (three-character runs) finds candidates by.
    public var indexedText: String? {
        var texts: [String] = []
        for condition in conditions where !condition.negated {
            switch condition.term {
            case .text(let text), .method(let text): texts.append(text)
            case .host(let pattern), .path(let pattern): if let run = pattern.longestLiteralRun { texts.append(run) }
            default: break
            }
        }
        func longestRun(_ text: String) -> Int {
            text.split(whereSeparator: { $0 == "%" || $0 == "_" }).map(\.count).max() ?? 0
        }
        // (A backslash would escape the next character in PostgreSQL's patterns.)
        return texts.filter { longestRun($0) >= 3 && !$0.contains("\\") }.max { longestRun($0) < longestRun($1) }
    }

    public init(parsing text: String) {
        var conditions: [Condition] = []
        var unapplied: [String] = []
        for raw in text.split(whereSeparator: \.isWhitespace).map(String.init) {
            let negated = raw.hasPrefix("-") && raw.count > 1
            let word = negated ? String(raw.dropFirst()) : raw
            let term: Term?
            if let colon = word.firstIndex(of: ":"), colon > word.startIndex {
                let key = word[..<colon].lowercased()
                let text = String(word[word.index(after: colon)...])
                let value = text.lowercased()
                switch key {
                case "host": term = .host(Self.pattern(value, caseInsensitive: true))
                case "path": term = .path(Self.pattern(text, caseInsensitive: false))
                case "method": term = .method(value)
                case "status": term = Self.status(value)
                case "has" where value == "error": term = .failed
                case "type", "contract", "has", "grpc.status", "grpc.method": term = nil
                default: term = .text(word.lowercased())
                }
            } else if word.lowercased() == "grpc" {
                // Whether an exchange is a gRPC call is in its request headers, not in a column.
                term = nil
            } else {
                term = .text(word.lowercased())
            }
            if let term {
                conditions.append(Condition(term: term, negated: negated))
            } else {
                unapplied.append(raw)
            }
        }
        self.init(conditions: conditions, unapplied: unapplied)
    }

    /// A value with `*`, `?` or `[` is a pattern of the whole text; any other is a part of it.
    static func pattern(_ value: String, caseInsensitive: Bool) -> WildcardPattern {
        let wildcard = value.contains { $0 == "*" || $0 == "?" || $0 == "[" }
        return WildcardPattern(wildcard ? value : "*\(value)*", caseInsensitive: caseInsensitive)
    }

    private static func status(_ value: String) -> Term {
        if value == "none" || value == "failed" { return .noStatus }
        if value.count == 1 || (value.count == 3 && value.hasSuffix("xx")), let digit = value.first?.wholeNumberValue, (1...5).contains(digit) {
            return .statusClass(digit)
        }
        if let code = Int(value), String(code) == value { return .status(code) }
        return .impossible
    }

    /// The filter as an SQL condition of the dialect on the flow table's summary columns (`host`,
    /// `method`, `status`, `error`, `url`), with `placeholder(n)` for the n-th argument
    /// (1-based); `TRUE` when there are no conditions.
    public func sql(_ dialect: SQLDialect, placeholder: (Int) -> String) -> (condition: String, arguments: [SQLArgument]) {
        let like = dialect.like
        var arguments: [SQLArgument] = []
        func bind(_ argument: SQLArgument) -> String {
            arguments.append(argument)
            return placeholder(arguments.count)
        }
        func contains(_ text: String) -> SQLArgument {
            var pattern = "%"
            for character in text {
                if character == "%" || character == "_" || character == "\\" { pattern.append("\\") }
                pattern.append(character)
            }
            return .text(pattern + "%")
        }
        var parts: [String] = []
        for condition in conditions {
            let part: String
            switch condition.term {
            case .host(let pattern): part = dialect.condition("host", matches: pattern, bind: bind)
            case .path(let pattern):
                // Cutting the path out of the URL is the dearest test of a row; a URL without the
                // pattern's longest literal run can't match, and LIKE says so first.
                if let run = pattern.longestLiteralRun {
                    let prefilter = "url \(like) \(bind(contains(run))) ESCAPE '\\'"
                    part = "(\(prefilter) AND \(dialect.condition(dialect.path, matches: pattern, bind: bind)))"
                } else {
                    part = dialect.condition(dialect.path, matches: pattern, bind: bind)
                }
            case .method(let value): part = "lower(method) = \(bind(.text(value)))"
            case .statusClass(let digit):
                part = "(status IS NOT NULL AND status >= \(bind(.integer(digit * 100))) AND status < \(bind(.integer(digit * 100 + 100))))"
            case .status(let code): part = "(status IS NOT NULL AND status = \(bind(.integer(code))))"
            case .noStatus: part = "status IS NULL"
            case .impossible: part = "1 = 0"
            case .failed: part = "error IS NOT NULL"
            case .text(let value):
                part = "(url \(like) \(bind(contains(value))) ESCAPE '\\' OR lower(method) = \(bind(.text(value))))"
            }
            parts.append(condition.negated ? "NOT (\(part))" : part)
        }
        return (parts.isEmpty ? "1 = 1" : parts.joined(separator: " AND "), arguments)
    }
}

/// A value bound to an SQL statement a `FlowFilter` wrote.
public enum SQLArgument: Sendable, Equatable {
    case text(String)
    case integer(Int)
}

extension WildcardPattern {
    /// The longest run of literal characters of the pattern (`/items/` of `/items/*`), or nil
    /// when it has none or its bytes are not whole UTF-8 characters.
    var longestLiteralRun: String? {
        var longest: [UInt8] = []
        var run: [UInt8] = []
        for step in steps + [.anyRun] {
            if case .literal(let byte) = step {
                run.append(byte)
            } else {
                if run.count > longest.count { longest = run }
                run.removeAll()
            }
        }
        guard !longest.isEmpty else { return nil }
        return String(validating: longest, as: UTF8.self)
    }
}
