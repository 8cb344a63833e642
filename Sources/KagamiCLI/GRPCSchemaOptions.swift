import ArgumentParser
import Foundation
import KagamiFlow
import KagamiGRPC
import KagamiProxy

/// Where gRPC messages get their names and types: descriptor sets and `.proto` folders.
struct GRPCSchemaOptions: ParsableArguments {
    @Option(name: .customLong("proto-descriptor"), help: ArgumentHelp(
        "A descriptor set (protoc --include_imports --descriptor_set_out=FILE) whose types gRPC messages are shown with; repeatable.",
        valueName: "file"))
    var descriptors: [String] = []

    @Option(name: .customLong("proto-path"), help: ArgumentHelp(
        "A folder of .proto files, compiled with protoc (Debian's protobuf-compiler), whose types gRPC messages are shown with; repeatable.",
        valueName: "folder"))
    var folders: [String] = []

    /// The given schema (empty without options); a `.proto` that doesn't compile stops Kagami
    /// with protoc's message.
    func schema() throws -> ProtobufSchema {
        do {
            return try ProtoFiles.schema(descriptors: descriptors.map(SessionFile.expand), folders: folders.map(SessionFile.expand))
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// Where the given schema is read from, as absolute paths.
    var sources: GRPCSchemas.Sources {
        let absolute = { (path: String) in URL(fileURLWithPath: SessionFile.expand(path)).standardizedFileURL.path }
        return GRPCSchemas.Sources(protoFolders: folders.map(absolute), descriptorSets: descriptors.map(absolute))
    }

    /// The session's schemas: the given one, and server reflection through `proxy`'s own
    /// upstream connections (its allow list), unless turned off.
    func schemas(given: ProtobufSchema, proxy: ProxyServer, reflection: Bool) -> GRPCSchemas {
        GRPCSchemas(given: given, sources: sources, reflection: reflection ? proxy.grpcReflection : nil)
    }

    /// Lines under a gRPC call in `kagami flows`: each message with its type, in the proto3
    /// JSON mapping (`→` sent, `←` received); none when the schema lacks the method.
    static func messageLines(_ flow: Flow, schema: ProtobufSchema) -> String {
        guard let exchange = GRPCExchange(flow: flow, responseTrailers: flow.response?.trailers, schema: schema), let method = exchange.method else { return "" }
        var lines = ""
        let sides: [(arrow: String, type: String, messages: [GRPCExchange.Message])] = [
            ("→", method.inputType, exchange.request.messages), ("←", method.outputType, exchange.response?.messages ?? []),
        ]
        for side in sides {
            for message in side.messages {
                switch message.typed {
                case .success(let typed)?: lines += "    \(side.arrow) \(side.type) \(typed.json.serialized())\n"
                case .failure(let failure)?: lines += "    \(side.arrow) does not fit \(side.type) \(failure)\n"
                case nil: lines += "    \(side.arrow) \(message.note ?? "not read")\n"
                }
            }
        }
        return lines
    }

    /// What the banner says of the schema.
    func describe(_ schema: ProtobufSchema) -> String? {
        guard !schema.isEmpty else { return nil }
        let services = Set(schema.methods.values.map(\.service)).sorted()
        return "gRPC: \(schema.methods.count) method\(schema.methods.count == 1 ? "" : "s") of \(services.joined(separator: ", ")) from \((descriptors + folders).joined(separator: ", "))\n"
    }
}
