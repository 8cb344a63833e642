import Foundation
import Hummingbird
import HTTPTypes
import KagamiFlow
import KagamiJSON
import KagamiRecording
import KagamiStore
import NIOCore
import Synchronization

/// `kagami serve`: the web UI and admin API over every session of a store a team shares, with
/// no proxy. `/` lists the sessions; `/sessions/NAME/` is the usual UI over one of them (its
/// API under `/sessions/NAME/api/`), live while proxies record into it; `/sessions/NAME/flows/ID`
/// opens one exchange, a link to paste into a bug report. Anything but loopback needs a token:
/// the server's own, or a user's from the store with read or write rights (`SessionsAccess`).
public final class SessionsServer: Sendable {
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        public var version: String
        /// The server's own token (every right); nil makes one up for this server.
        public var token: String?
        public var heartbeatInterval: Double
        /// Where the server says what happens to it (following the writers stopped, resumed).
        public var notice: (@Sendable (String) -> Void)?

        public init(
            host: String = "127.0.0.1", port: Int = 8890, version: String, token: String? = nil, heartbeatInterval: Double = 15,
            notice: (@Sendable (String) -> Void)? = nil
        ) {
            self.host = host
            self.port = port
            self.version = version
            self.token = token
            self.heartbeatInterval = heartbeatInterval
            self.notice = notice
        }
    }

    public let configuration: Configuration
    /// The server's own token.
    public let token: String
    let catalog: any SessionCatalog
    private let views = SessionViews()
    private let running = Mutex<[Task<Void, any Error>]>([])
    private let stopping = StoppingFlag()
    private let access: SessionsAccess
    private let page: WebPage

    public init(configuration: Configuration, catalog: any SessionCatalog) throws {
        self.configuration = configuration
        self.catalog = catalog
        page = try WebPage.load()
        token = configuration.token ?? AdminToken.make()
        access = SessionsAccess(token: token, loopbackOnly: UIAccess.isLoopback(configuration.host), catalog: catalog)
    }

    /// Starts listening and following the writers; returns the port (useful with port 0).
    public func start() async throws -> Int {
        let router = Router(context: UIRequestContext.self)
        router.get("/") { _, _ in try await self.listingPage() }
        router.get("/api/sessions") { _, _ in try await self.listing() }
        router.get("/api/status") { _, _ in
            jsonResponse(["sessions": .string(self.catalog.description), "version": .string(self.configuration.version)])
        }
        router.get("/sessions/:name") { _, context in
            Self.redirect(to: "/sessions/\(context.parameters.get("name") ?? "")/")
        }
        router.get("/sessions/:name/flows/:id") { _, context in
            Self.redirect(to: "/sessions/\(context.parameters.get("name") ?? "")/#flow=\(context.parameters.get("id") ?? "")")
        }
        let listingResponder = router.buildResponder()
        let responder = CallbackResponder<UIRequestContext> { request, context in
            let session = Self.sessionRequest(request.uri.path)
            let grant: SessionsAccess.Grant
            switch await self.access.check(request, path: session?.rest ?? request.uri.path, from: context.remoteAddress) {
            case .refused(let refusal): return refusal.response
            case .granted(let granted): grant = granted
            }
            var response: Response
            if let (name, rest) = session {
                guard let view = try await self.view(of: name) else {
                    return APIError(.notFound, "no session named \(name) at \(self.catalog.description)").response
                }
                var head = request.head
                head.path = rest + (request.uri.query.map { "?" + $0 } ?? "")
                response = try await view.responder.respond(to: Request(head: head, body: request.body), context: context)
            } else {
                response = try await listingResponder.respond(to: request, context: context)
            }
            if let cookie = grant.cookie {
                response.setCookie(UIAccess.cookie(cookie))
            }
            return response
        }

        let (port, serving) = try await runApplication(
            responder: responder, host: configuration.host, port: configuration.port, stopping: stopping, what: "kagami serve")
        let following = Task<Void, any Error> { await self.follow() }
        running.withLock { $0 = [serving, following] }
        return port
    }

    public func stop() async {
        let tasks = running.withLock { $0 }
        stopping.set()
        for task in tasks { task.cancel() }
        for task in tasks { _ = try? await task.value }
        await views.closeAll()
    }

    /// `/sessions/NAME/REST` → (NAME, `/REST`), except the routes the listing answers itself.
    static func sessionRequest(_ path: String) -> (name: String, rest: String)? {
        let parts = path.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].isEmpty, parts[1] == "sessions",
              let name = String(parts[2].prefix { $0 != "/" }).removingPercentEncoding, !name.isEmpty else { return nil }
        let rest = String(parts[2].drop { $0 != "/" })
        // `/sessions/NAME` (no slash) and `/sessions/NAME/flows/ID` are redirects.
        if rest.isEmpty || rest.hasPrefix("/flows/") { return nil }
        return (name, rest)
    }

    static func redirect(to location: String) -> Response {
        Response(status: .found, headers: [.location: location, .cacheControl: "no-store"])
    }

    private func view(of name: String) async throws -> SessionView? {
        let configuration = UIServer.Configuration(
            host: self.configuration.host, port: self.configuration.port, proxyAddress: "",
            sessionPath: "\(name) in \(catalog.description)", version: self.configuration.version,
            token: token, heartbeatInterval: self.configuration.heartbeatInterval)
        return try await views.view(of: name) { [catalog, page] in
            guard let store = try await catalog.open(session: name) else { return nil }
            let hub = FlowHub()
            let routes = UIRoutes(
                configuration: configuration, store: store, hub: hub, recorder: Recording(store: store, hub: hub).chain, page: page,
                comparable: .catalog(catalog, except: name))
            return SessionView(store: store, hub: hub, responder: buildRouter(routes, access: nil).buildResponder())
        }
    }

    /// Streams what writers commit to the sessions someone is looking at; when following them
    /// resumes after an interruption, the pages read their sessions again.
    private func follow() async {
        for await activity in catalog.writerActivity() {
            switch activity {
            case .committed(let committed):
                guard let view = await views.opened(committed.session) else { continue }
                for id in committed.flowIDs {
                    // A flow that can't be read now, or not within a few seconds (the store
                    // waiting for its database to come back), is not lost to the pages: they are
                    // told to read the session again, and following goes on meanwhile.
                    guard let flow = await Self.flow(id, of: view.store, within: .seconds(3)) else {
                        view.hub.announceMissed()
                        break
                    }
                    view.hub.announce(flow)
                }
            case .interrupted(let reason):
                configuration.notice?("kagami serve: stopped following the writers (\(reason)); trying again")
            case .resumed:
                configuration.notice?("kagami serve: following the writers again; open pages read their sessions again")
                for view in await views.allOpened() {
                    view.hub.announceMissed()
                }
            }
        }
    }

    /// Flow `id` of `store`, or nil when it isn't there, can't be read, or isn't read within
    /// `limit` (the read is then cancelled, not waited for).
    static func flow(_ id: UUID, of store: any FlowStore, within limit: Duration) async -> Flow? {
        let reading = Task { try await store.flow(id: id) }
        guard case let flow?? = try? await TimeLimit.outcome(of: reading, within: limit) else {
            reading.cancel()
            return nil
        }
        return flow
    }

    func listing() async throws -> Response {
        let sessions = try await catalog.sessions()
        return jsonResponse(["sessions": .array(sessions.map(\.json))])
    }

    func listingPage() async throws -> Response {
        let sessions = try await catalog.sessions()
        let formatter = ISO8601DateFormatter()
        var rows = ""
        for session in sessions {
            let link = "/sessions/" + (session.name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? "")
            rows += """
                <tr><td><a href="\(MarkupText.escaped(link))/">\(MarkupText.escaped(session.name))</a></td><td>\(MarkupText.escaped(session.recordedBy))</td>\
                <td>\(formatter.string(from: session.createdAt))</td><td>\(session.flowCount)</td>\
                <td>\(session.lastFlowAt.map(formatter.string(from:)) ?? "")</td></tr>\n
                """
        }
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>Kagami sessions</title>
            <link rel="icon" href="data:,">
            <style>body { font: 14px system-ui, sans-serif; margin: 2em; } td, th { padding: 0.3em 1em; text-align: left; }</style></head>
            <body><h1>Sessions in \(MarkupText.escaped(catalog.description))</h1>
            <table id="sessions"><thead><tr><th>Session</th><th>Recorded by</th><th>Created</th><th>Exchanges</th><th>Latest</th></tr></thead>
            <tbody>
            \(rows)</tbody></table>
            \(sessions.isEmpty ? "<p>No session yet: record one with <code>kagami proxy --store … --session NAME</code>.</p>" : "")
            </body></html>
            """
        return Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                        body: .init(byteBuffer: ByteBuffer(string: html)))
    }

}

struct SessionView: Sendable {
    let store: any FlowStore
    let hub: FlowHub
    let responder: RouterResponder<UIRequestContext>
}

/// The sessions opened so far, each opened once however many requests ask for it at a time.
actor SessionViews {
    private var views: [String: Task<SessionView?, any Error>] = [:]

    func view(of name: String, opening: @escaping @Sendable () async throws -> SessionView?) async throws -> SessionView? {
        if let task = views[name] {
            if let view = try? await task.value { return view }
        }
        let task = Task { try await opening() }
        views[name] = task
        do {
            guard let view = try await task.value else {
                views[name] = nil
                return nil
            }
            return view
        } catch {
            views[name] = nil
            throw error
        }
    }

    /// A session already open, without opening it.
    func opened(_ name: String) async -> SessionView? {
        guard let task = views[name] else { return nil }
        return try? await task.value
    }

    /// Every session open now.
    func allOpened() async -> [SessionView] {
        var opened: [SessionView] = []
        for task in views.values {
            if let view = try? await task.value { opened.append(view) }
        }
        return opened
    }

    /// Each store writes what it holds (imports) and lets go of its connections.
    func closeAll() async {
        let opened = views.values
        views = [:]
        for task in opened {
            await (try? await task.value)??.store.close()
        }
    }
}

extension SessionListing {
    var json: JSONValue {
        [
            "name": .string(name),
            "recordedBy": .string(recordedBy),
            "createdAt": .string(ISO8601DateFormatter().string(from: createdAt)),
            "flows": .integer(flowCount),
            "latest": lastFlowAt.map { .string(ISO8601DateFormatter().string(from: $0)) } ?? .null,
        ]
    }
}
