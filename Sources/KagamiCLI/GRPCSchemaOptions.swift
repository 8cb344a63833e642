import ArgumentParser
import KagamiGRPC

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

    /// What the banner says of the schema.
    func describe(_ schema: ProtobufSchema) -> String? {
        guard !schema.isEmpty else { return nil }
        let services = Set(schema.methods.values.map(\.service)).sorted()
        return "gRPC: \(schema.methods.count) method\(schema.methods.count == 1 ? "" : "s") of \(services.joined(separator: ", ")) from \((descriptors + folders).joined(separator: ", "))\n"
    }
}
