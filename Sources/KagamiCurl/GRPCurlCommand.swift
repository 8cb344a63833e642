import Foundation
import KagamiFlow
import KagamiGRPC
import KagamiJSON

/// A grpcurl command line that makes a recorded gRPC call again: the request's messages as
/// JSON (`-d`), its metadata (`-H`), the schema where it came from (`-import-path` and
/// `-proto` for `.proto` folders, `-protoset` for descriptor sets; nothing for a server's
/// reflection, which grpcurl asks itself), `-plaintext` for a call without TLS, then
/// `host:port` and `service/method`.
public struct GRPCurlCommand: Sendable {
    /// Why a flow gives no grpcurl command.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// What grpcurl receives, one element per argument, before shell quoting.
    public private(set) var arguments: [String] = []

    /// Metadata grpcurl or gRPC writes itself (or refuses to be given): the transport's fields
    /// and `grpc-` ones, `grpc-timeout` becoming `-max-time`.
    static let ownFields: Set<String> = [
        "host", "content-type", "content-length", "te", "user-agent", "accept-encoding", "connection", "keep-alive",
        "transfer-encoding", "upgrade", "http2-settings", "proxy-connection",
    ]

    /// `schema` reads the request's messages (nil or without the method: no command); `sources`
    /// says where that schema was read from (empty when it came from the server's reflection).
    public init(_ flow: Flow, schema: ProtobufSchema?, sources: GRPCSchemas.Sources = GRPCSchemas.Sources()) throws(Failure) {
        guard GRPCExchange.isGRPC(contentType: flow.request.headers["content-type"]) else {
            throw Failure(description: "exchange \(flow.id) is not a gRPC call (content-type \(flow.request.headers["content-type"] ?? "none"))")
        }
        guard let schema, let exchange = GRPCExchange(flow: flow, schema: schema), let method = exchange.method else {
            throw Failure(description: "no schema has \(flow.request.path) to write its request as JSON (give --proto-path or --proto-descriptor)")
        }
        var messages: [String] = []
        for message in exchange.request.messages {
            switch message.typed {
            case .success(let typed)?: messages.append(typed.json.serialized())
            case .failure(let failure)?: throw Failure(description: "request message \(message.index) does not fit \(method.inputType) \(failure)")
            case nil: throw Failure(description: "request message \(message.index) can't be read: \(message.note ?? "not decoded")")
            }
        }
        if let problem = exchange.request.problem { throw Failure(description: "the request's messages are incomplete: \(problem)") }
        arguments = ["grpcurl"]
        if flow.request.scheme != "https" { arguments.append("-plaintext") }
        if !sources.protoFolders.isEmpty, let file = schema.serviceFiles[method.service] {
            for folder in sources.protoFolders { arguments += ["-import-path", folder] }
            arguments += ["-proto", file]
        } else {
            for set in sources.descriptorSets { arguments += ["-protoset", set] }
        }
        for field in flow.request.headers where !field.name.hasPrefix(":") {
            let name = field.name.lowercased()
            if name == "grpc-timeout", let seconds = Self.seconds(field.value) {
                arguments += ["-max-time", seconds]
            } else if !Self.ownFields.contains(name), !name.hasPrefix("grpc-") {
                arguments += ["-H", "\(name): \(field.value)"]
            }
        }
        arguments += ["-d", messages.joined(separator: "\n")]
        arguments += ["\(flow.request.host):\(flow.request.port)", String(method.path.dropFirst())]
    }

    /// `grpc-timeout` (`20S`, `19999m`…) in seconds, as `-max-time` takes it.
    static func seconds(_ timeout: String) -> String? {
        guard let unit = timeout.last, let amount = Double(timeout.dropLast()) else { return nil }
        let scale: Double
        switch unit {
        case "H": scale = 3600
        case "M": scale = 60
        case "S": scale = 1
        case "m": scale = 1e-3
        case "u": scale = 1e-6
        case "n": scale = 1e-9
        default: return nil
        }
        let seconds = amount * scale
        return seconds.rounded() == seconds ? String(Int(seconds)) : String(format: "%.3f", seconds)
    }

    /// The command for a shell: arguments single-quoted where needed, each option on its line.
    public var shellCommand: String {
        let starters: Set<String> = ["-import-path", "-protoset", "-H", "-max-time", "-d"]
        var lines: [String] = []
        var line = ""
        for (index, argument) in arguments.enumerated() {
            let word = index == 0 ? argument : CurlCommand.singleQuoted(argument)
            if index > 0, starters.contains(argument) || index == arguments.count - 2 {
                lines.append(line)
                line = word
            } else {
                line += line.isEmpty ? word : " " + word
            }
        }
        lines.append(line)
        return lines.joined(separator: " \\\n  ")
    }
}
