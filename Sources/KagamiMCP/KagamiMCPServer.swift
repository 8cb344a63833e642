// `kagami mcp`: the tools and resources served over the Model Context Protocol.
import Foundation
import KagamiFlow
import KagamiJSON
import KagamiStore
import KagamiUI
// Implementation only: the SDK extends String, Int and Double with initialisers from its literal-
// convertible `Value`, which would make some expressions of every module importing KagamiCLI too
// hard to type-check. No public or inlinable declaration of this module uses its types.
@_implementationOnly import MCP

/// An MCP server over one session (and, with `--allow-write`, a running proxy's admin API):
/// tools answer with structured content and the same JSON as text; the session and each of its
/// exchanges are resources, and a subscribed session is announced as it grows.
public actor KagamiMCPServer {
    public let catalog: ToolCatalog
    let source: SessionSource
    let reader: SessionReader
    let server: Server
    /// How often a subscribed session is looked at for new exchanges.
    let pollInterval: Duration
    private var watch: Task<Void, Never>?

    static let sessionURI = "kagami://session"
    static let exchangePrefix = "kagami://exchange/"

    public init(source: SessionSource, admin: AdminAPI?, version: String, pollInterval: Duration = .seconds(1)) throws {
        let redaction = FlowRedaction()
        var tools = SessionTools.tools(source, redaction: redaction)
        if let admin { tools += WriteTools.tools(admin) }
        catalog = try ToolCatalog(tools)
        self.source = source
        reader = SessionReader(source: source, redaction: redaction)
        self.pollInterval = pollInterval
        server = Server(
            name: "kagami", version: version, title: "Kagami",
            instructions: "Kagami's recorded HTTP(S) traffic of \(source.name): search exchanges with search_exchanges (newest first), read one with get_exchange, check it against an API description with contract_violations.",
            capabilities: .init(resources: .init(subscribe: true, listChanged: true), tools: .init(listChanged: false)))
    }

    /// Serves the client that started this process, on standard input and output, until it
    /// closes them.
    public func serveStandardIO() async throws {
        try await run(StandardIOTransport())
    }

    /// Serves `transport` until the client goes away.
    func run(_ transport: any Transport) async throws {
        try await start(transport)
        await server.waitUntilCompleted()
        await stop()
    }

    /// Starts answering on `transport` (a Streamable HTTP session's).
    func start(_ transport: any Transport) async throws {
        await register()
        try await server.start(transport: transport)
    }

    func stop() async {
        watch?.cancel()
        watch = nil
        await server.stop()
    }

    private func register() async {
        let catalog = catalog
        await server.withMethodHandler(ListTools.self) { _ in
            ListTools.Result(tools: catalog.tools.map(Self.describe))
        }
        await server.withMethodHandler(CallTool.self) { parameters in
            try await Self.call(catalog, parameters)
        }
        let reader = reader
        await server.withMethodHandler(ListResources.self) { _ in
            try await Self.resources(reader)
        }
        await server.withMethodHandler(ListResourceTemplates.self) { _ in
            ListResourceTemplates.Result(templates: [
                Resource.Template(
                    uriTemplate: Self.exchangePrefix + "{id}", name: "exchange",
                    description: "One exchange, as get_exchange answers it.", mimeType: "application/json"),
            ])
        }
        await server.withMethodHandler(ReadResource.self) { parameters in
            try await Self.read(parameters.uri, reader: reader)
        }
        await server.withMethodHandler(ResourceSubscribe.self) { [weak self] parameters in
            if parameters.uri == Self.sessionURI { await self?.watchSession() }
            return Empty()
        }
        await server.withMethodHandler(ResourceUnsubscribe.self) { [weak self] parameters in
            if parameters.uri == Self.sessionURI { await self?.stopWatching() }
            return Empty()
        }
    }

    static func describe(_ tool: KagamiTool) -> Tool {
        Tool(
            name: tool.name, title: tool.title, description: tool.summary, inputSchema: tool.input.mcpValue,
            annotations: .init(title: tool.title, readOnlyHint: !tool.needsAllowWrite || WriteTools.readOnly.contains(tool.name), openWorldHint: false),
            outputSchema: tool.output.mcpValue)
    }

    /// A call: arguments outside the schema are an MCP error naming the field; what the tool
    /// can't do with valid arguments is a result marked as an error, for the model to read.
    static func call(_ catalog: ToolCatalog, _ parameters: CallTool.Parameters) async throws -> CallTool.Result {
        var arguments: JSONObject = [:]
        if case .object(let object) = JSONValue(mcp: .object(parameters.arguments ?? [:])) { arguments = object }
        do {
            let answer = try await catalog.call(parameters.name, arguments: arguments)
            return CallTool.Result(
                content: [.text(text: answer.serialized(), annotations: nil, _meta: nil)], structuredContent: Optional(answer.mcpValue), isError: false)
        } catch let error as ToolArgumentError {
            throw MCPError.invalidParams(error.description)
        } catch let failure as ToolFailure {
            return CallTool.Result(content: [.text(text: failure.message, annotations: nil, _meta: nil)], isError: true)
        } catch {
            return CallTool.Result(content: [.text(text: "\(error)", annotations: nil, _meta: nil)], isError: true)
        }
    }

    /// The session, and its newest exchanges.
    static func resources(_ reader: SessionReader) async throws -> ListResources.Result {
        let page = try await reader.exchanges.rows(ExchangeQuery(order: .newestFirst, limit: 50))
        var resources = [
            Resource(
                name: "session", uri: sessionURI, title: reader.source.name,
                description: "The session: its name, exchange count and newest exchanges. Subscribe to hear when exchanges arrive.",
                mimeType: "application/json"),
        ]
        for row in page.rows {
            guard let id = row["id"]?.stringValue else { continue }
            resources.append(Resource(
                name: "exchange \(id)", uri: exchangePrefix + id, title: title(row), mimeType: "application/json"))
        }
        return ListResources.Result(resources: resources)
    }

    /// `GET https://host/path?query → 200`, from a row.
    static func title(_ row: JSONValue) -> String {
        let text = { (name: String) in row[name]?.stringValue ?? "" }
        let query = row["query"]?.stringValue.map { "?\($0)" } ?? ""
        let status = row["status"]?.intValue.map { " → \($0)" } ?? ""
        return "\(text("method")) \(text("scheme"))://\(text("host"))\(text("path"))\(query)\(status)"
    }

    static func read(_ uri: String, reader: SessionReader) async throws -> ReadResource.Result {
        let answer: JSONValue
        if uri == sessionURI {
            let sessions = try await reader.sessions()
            let newest = try await reader.search(ToolArguments(["limit": 50]))
            answer = ["session": sessions["current"] ?? .null, "newest": newest["exchanges"] ?? .array([])]
        } else if uri.hasPrefix(exchangePrefix) {
            do {
                answer = try await reader.exchange(ToolArguments(["id": .string(String(uri.dropFirst(exchangePrefix.count)))]))
            } catch let error as ToolArgumentError {
                throw MCPError.invalidParams("uri: \(error.message)")
            } catch let failure as ToolFailure {
                throw MCPError.invalidParams("uri: \(failure.message)")
            }
        } else {
            throw MCPError.invalidParams("uri: no resource \(uri) (\(sessionURI) and \(exchangePrefix)ID are served)")
        }
        return ReadResource.Result(contents: [.text(answer.serialized([.prettyPrinted]), uri: uri, mimeType: "application/json")])
    }

    /// Looks at the session's count every poll interval and announces a change, for a session
    /// another process is recording.
    private func watchSession() async {
        guard watch == nil else { return }
        let exchanges = source.exchanges
        let server = server
        let interval = pollInterval
        // Counted before the subscription is answered: whatever arrives after it is announced.
        var known = (try? await exchanges.count()) ?? 0
        guard watch == nil else { return }
        watch = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let count = try? await exchanges.count(), count != known else { continue }
                known = count
                try? await server.notify(ResourceUpdatedNotification.message(.init(uri: Self.sessionURI)))
                try? await server.notify(ResourceListChangedNotification.message())
            }
        }
    }

    private func stopWatching() {
        watch?.cancel()
        watch = nil
    }
}
