import Foundation
import KagamiFlow
import KagamiJSON
import Synchronization

/// The schemas of one session's gRPC calls: the one given on the command line (`--proto-path`,
/// `--proto-descriptor`), and for a service it lacks, what the server's reflection answers,
/// asked once per server and service and kept for the session.
public final class GRPCSchemas: Sendable {
    /// Asks a server (the flow's host and port) for the files that define `service`, as
    /// serialized `FileDescriptorProto`s.
    public typealias Reflection = @Sendable (_ flow: Flow, _ service: String) async throws -> [Data]

    public enum Answer: Sendable {
        case schema(ProtobufSchema)
        /// Why the server's reflection gave nothing (shown once; not asked again).
        case failed(String)
    }

    /// Where the given schema was read from, for tools that read it themselves (grpcurl).
    public struct Sources: Sendable, Hashable {
        /// `--proto-path` folders.
        public var protoFolders: [String]
        /// `--proto-descriptor` files.
        public var descriptorSets: [String]

        public init(protoFolders: [String] = [], descriptorSets: [String] = []) {
            self.protoFolders = protoFolders
            self.descriptorSets = descriptorSets
        }
    }

    public let given: ProtobufSchema
    public let sources: Sources
    let reflection: Reflection?
    private let answers = Mutex<[String: Task<Answer, Never>]>([:])

    public init(given: ProtobufSchema = ProtobufSchema(), sources: Sources = Sources(), reflection: Reflection? = nil) {
        self.given = given
        self.sources = sources
        self.reflection = reflection
    }

    /// The schema to read `flow` with: the given one when it has the method; else the server's
    /// reflection answer for the service (asked on first need); nil when neither has it.
    public func schema(for flow: Flow) async -> ProtobufSchema? {
        if given.method(path: flow.request.path) != nil { return given }
        guard case .schema(let schema)? = await reflected(for: flow) else { return given.isEmpty ? nil : given }
        return schema
    }

    /// What reflection said about the flow's service; nil without reflection or for a path
    /// that names no service.
    public func reflected(for flow: Flow) async -> Answer? {
        guard let reflection, let service = ProtobufSchema.service(ofPath: flow.request.path) else { return nil }
        let key = "\(flow.request.scheme)://\(flow.request.host):\(flow.request.port)/\(service)"
        let given = self.given
        let task = answers.withLock { answers in
            if let task = answers[key] { return task }
            let task = Task<Answer, Never> {
                do {
                    var schema = ProtobufSchema()
                    try schema.add(serializedFiles: try await reflection(flow, service))
                    guard schema.methods.keys.contains(where: { $0.hasPrefix("/\(service)/") }) else {
                        return .failed("the server's reflection has no service \(service)")
                    }
                    return .schema(given.merging(schema))
                } catch {
                    return .failed("the server's reflection answered: \(error)")
                }
            }
            answers[key] = task
            return task
        }
        return await task.value
    }

    /// A HAR entry's `_grpc`: the call's method and each message in the proto3 JSON mapping
    /// (null for one that doesn't fit its type); nil when the flow is not a gRPC call or no
    /// schema has its method.
    public func archiveFields(of flow: Flow) async -> JSONValue? {
        guard GRPCExchange.isGRPC(contentType: flow.request.headers["content-type"]), let schema = await schema(for: flow),
            let exchange = GRPCExchange(flow: flow, responseTrailers: flow.response?.trailers, schema: schema), let method = exchange.method
        else { return nil }
        return [
            "method": method.json,
            "request": .array(exchange.typedMessages(exchange.request)),
            "response": .array(exchange.typedMessages(exchange.response)),
        ]
    }

    /// `archiveFields` of each flow that has them, by id.
    public func archiveFields(of flows: [Flow]) async -> [UUID: JSONValue] {
        var fields: [UUID: JSONValue] = [:]
        for flow in flows {
            if let value = await archiveFields(of: flow) { fields[flow.id] = value }
        }
        return fields
    }
}
