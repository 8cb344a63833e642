// `kagami mcp --http`: the same tools over Streamable HTTP, for a client that connects to a
// running server instead of starting one. One MCP session per client, each with a server of
// its own over the same session source.
import Foundation
import HTTPTypes
import Hummingbird
import KagamiJSON
import Logging
import NIOCore
@_implementationOnly import MCP  // see KagamiMCPServer.swift

public struct StreamableHTTPEndpoint: Sendable {
    public var host: String
    public var port: Int
    /// Wanted from every client (`Authorization: Bearer`) when set: beyond loopback.
    public var token: String?
    /// A server for each new MCP session.
    public var makeServer: @Sendable () throws -> KagamiMCPServer

    public init(host: String, port: Int, token: String?, makeServer: @escaping @Sendable () throws -> KagamiMCPServer) {
        self.host = host
        self.port = port
        self.token = token
        self.makeServer = makeServer
    }

    /// Serves `/mcp` until cancelled; `onListening` gets the port (useful with port 0).
    public func run(onListening: @escaping @Sendable (Int) -> Void) async throws {
        let sessions = MCPSessions(makeServer: makeServer)
        let token = token
        let router = Router()
        let handle: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
            if let token, request.headers[.authorization] != "Bearer \(token)" {
                return Response(status: .unauthorized, headers: [.wwwAuthenticate: "Bearer"])
            }
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            let body = try await request.body.collect(upTo: 16 << 20)
            let answer = await sessions.handle(MCP.HTTPRequest(
                method: request.method.rawValue, headers: headers,
                body: body.readableBytes > 0 ? Data(body.readableBytesView) : nil, path: request.uri.path))
            return Self.response(answer)
        }
        router.post("/mcp", use: handle)
        router.get("/mcp", use: handle)
        router.delete("/mcp", use: handle)
        // Warnings and errors only, on standard error: standard output says where it listens.
        var logger = Logger(label: "kagami.mcp") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        let app = Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "Kagami"),
            onServerRunning: { channel in onListening(channel.localAddress?.port ?? 0) }, logger: logger)
        try await app.runService()
        await sessions.closeAll()
    }

    static func response(_ answer: MCP.HTTPResponse) -> Response {
        var fields = HTTPFields()
        for (name, value) in answer.headers {
            if let name = HTTPField.Name(name) { fields[name] = value }
        }
        let status = HTTPTypes.HTTPResponse.Status(code: answer.statusCode)
        if case .stream(let stream, _) = answer {
            return Response(status: status, headers: fields, body: ResponseBody { writer in
                for try await data in stream { try await writer.write(ByteBuffer(bytes: data)) }
                try await writer.finish(nil)
            })
        }
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: answer.bodyData ?? Data())))
    }
}

/// The MCP sessions of the HTTP endpoint: one transport and server per client, made at its
/// initialize request and dropped at its DELETE.
actor MCPSessions {
    private struct FixedSessionID: SessionIDGenerator {
        let id: String
        func generateSessionID() -> String { id }
    }

    let makeServer: @Sendable () throws -> KagamiMCPServer
    private var open: [String: (server: KagamiMCPServer, transport: StatefulHTTPServerTransport)] = [:]

    init(makeServer: @escaping @Sendable () throws -> KagamiMCPServer) {
        self.makeServer = makeServer
    }

    func handle(_ request: MCP.HTTPRequest) async -> MCP.HTTPResponse {
        if let id = request.header(HTTPHeaderName.sessionID) {
            guard let session = open[id] else {
                return .error(statusCode: 404, .invalidRequest("no MCP session \(id): initialize a new one"))
            }
            let answer = await session.transport.handleRequest(request)
            if request.method.uppercased() == "DELETE", answer.statusCode == 200 {
                open[id] = nil
                await session.server.stop()
            }
            return answer
        }
        guard request.method.uppercased() == "POST", let body = request.body,
            let message = try? JSONValue(parsing: String(decoding: body, as: UTF8.self)), message["method"]?.stringValue == "initialize"
        else {
            return .error(statusCode: 400, .invalidRequest("no \(HTTPHeaderName.sessionID) header: initialize a session first"))
        }
        let id = UUID().uuidString
        let transport = StatefulHTTPServerTransport(sessionIDGenerator: FixedSessionID(id: id))
        do {
            let server = try makeServer()
            try await server.start(transport)
            open[id] = (server, transport)
        } catch {
            await transport.disconnect()
            return .error(statusCode: 500, .internalError("the MCP session could not start: \(error)"))
        }
        let answer = await transport.handleRequest(request)
        if case .error = answer {
            await open.removeValue(forKey: id)?.server.stop()
        }
        return answer
    }

    func closeAll() async {
        for session in open.values { await session.server.stop() }
        open = [:]
    }
}
