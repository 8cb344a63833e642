import Foundation
import KagamiFlow
import KagamiJSON
import Synchronization

/// The schemas of one session's gRPC calls: the one given on the command line (`--proto-path`,
/// `--proto-descriptor`), and for a service it lacks, what the server's reflection answers,
/// asked once per server and service and kept for the session.
public final class GRPCSchemas: Sendable {
    /// Asks a server (the request's scheme, host and port) for the files that define
    /// `service`, as serialized `FileDescriptorProto`s.
    public typealias Reflection = @Sendable (_ request: FlowRequest, _ service: String) async throws -> [Data]

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
    /// The answers that came, for callers that can't wait (`knownSchema(for:)`).
    private let settled = Mutex<[String: Answer]>([:])

    public init(given: ProtobufSchema = ProtobufSchema(), sources: Sources = Sources(), reflection: Reflection? = nil) {
        self.given = given
        self.sources = sources
        self.reflection = reflection
    }

    /// The schema to read `flow` with: the given one when it has the method; else the server's
    /// reflection answer for the service (asked on first need); nil when neither has it.
    public func schema(for flow: Flow) async -> ProtobufSchema? {
        await schema(for: flow.request)
    }

    public func schema(for request: FlowRequest) async -> ProtobufSchema? {
        if given.method(path: request.path) != nil { return given }
        guard case .schema(let schema)? = await reflected(for: request) else { return given.isEmpty ? nil : given }
        return schema
    }

    /// `schema(for:)` as far as it is known now, for callers that can't wait (Map Local, in the
    /// proxy's rules): the reflection answer only once it came.
    public func knownSchema(for request: FlowRequest) -> ProtobufSchema? {
        if given.method(path: request.path) != nil { return given }
        guard let key = Self.key(request), case .schema(let schema)? = settled.withLock({ $0[key] }) else { return given.isEmpty ? nil : given }
        return schema
    }

    /// Whether the request's method is still to be learned from its server's reflection:
    /// the given schema lacks it, and reflection was not asked yet or has not answered.
    public func isLearning(_ request: FlowRequest) -> Bool {
        guard reflection != nil, given.method(path: request.path) == nil, let key = Self.key(request) else { return false }
        return settled.withLock { $0[key] } == nil
    }

    /// What reflection said about the flow's service; nil without reflection or for a path
    /// that names no service.
    public func reflected(for flow: Flow) async -> Answer? {
        await reflected(for: flow.request)
    }

    public func reflected(for request: FlowRequest) async -> Answer? {
        guard let reflection, let service = ProtobufSchema.service(ofPath: request.path), let key = Self.key(request) else { return nil }
        let given = self.given
        let task = answers.withLock { answers in
            if let task = answers[key] { return task }
            let task = Task<Answer, Never> {
                let answer: Answer
                do {
                    var schema = ProtobufSchema()
                    try schema.add(serializedFiles: try await reflection(request, service))
                    if schema.methods.keys.contains(where: { $0.hasPrefix("/\(service)/") }) {
                        answer = .schema(given.merging(schema))
                    } else {
                        answer = .failed("the server's reflection has no service \(service)")
                    }
                } catch {
                    answer = .failed("the server's reflection answered: \(error)")
                }
                self.settled.withLock { $0[key] = answer }
                return answer
            }
            answers[key] = task
            return task
        }
        return await task.value
    }

    /// One server's service: what reflection is asked once for.
    static func key(_ request: FlowRequest) -> String? {
        ProtobufSchema.service(ofPath: request.path).map { "\(request.scheme)://\(request.host):\(request.port)/\($0)" }
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
