import Foundation
import SwiftProtobuf

/// The message, enum and service definitions of a descriptor set (`protoc
/// --descriptor_set_out`, or the files a server's reflection gives), looked up by full name:
/// what turns field numbers into names and types, and a gRPC path into its method.
public struct ProtobufSchema: Sendable {
    /// One RPC: the path a call is made on, and its message types (full names, no leading dot).
    public struct Method: Sendable, Hashable {
        /// `/package.Service/Method`.
        public var path: String
        public var service: String
        public var name: String
        public var inputType: String
        public var outputType: String
        public var clientStreaming: Bool
        public var serverStreaming: Bool
    }

    /// Why a descriptor set could not be read.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String

        public init(_ description: String) { self.description = description }
    }

    /// Messages by full name (`pkg.Outer.Inner`).
    var messages: [String: Google_Protobuf_DescriptorProto] = [:]
    /// Enums by full name.
    var enums: [String: Google_Protobuf_EnumDescriptorProto] = [:]
    /// Messages of proto2 files, whose singular fields are written when set even to their
    /// default and whose repeated numbers are not packed unless the field says so.
    var proto2Messages: Set<String> = []
    /// Methods by path.
    public private(set) var methods: [String: Method] = [:]
    /// The files read, by name (`echo.proto`), so a second source adds only what is new.
    public private(set) var files: Set<String> = []
    /// The file each service is defined in (`kagami.shop.Shop` → `kagami/shop.proto`).
    public private(set) var serviceFiles: [String: String] = [:]

    public init() {}

    /// The definitions of a serialized `google.protobuf.FileDescriptorSet`; `source` names it in
    /// the error.
    public init(descriptorSet data: Data, source: String) throws(Failure) {
        let set: Google_Protobuf_FileDescriptorSet
        do {
            set = try Google_Protobuf_FileDescriptorSet(serializedBytes: data)
        } catch {
            throw Failure("\(source) is not a descriptor set (a serialized google.protobuf.FileDescriptorSet, as protoc --descriptor_set_out writes): \(error)")
        }
        guard !set.file.isEmpty else { throw Failure("\(source) is a descriptor set without files") }
        add(set.file)
    }

    /// Adds files (a descriptor set's, or serialized `FileDescriptorProto`s from reflection).
    public mutating func add(_ files: [Google_Protobuf_FileDescriptorProto]) {
        for file in files where !self.files.contains(file.name) {
            self.files.insert(file.name)
            let prefix = file.package.isEmpty ? "" : file.package + "."
            let proto2 = file.syntax.isEmpty || file.syntax == "proto2"
            for message in file.messageType { index(message, prefix: prefix, proto2: proto2) }
            for item in file.enumType { enums[prefix + item.name] = item }
            for service in file.service {
                let serviceName = prefix + service.name
                serviceFiles[serviceName] = file.name
                for method in service.method {
                    let path = "/\(serviceName)/\(method.name)"
                    methods[path] = Method(
                        path: path, service: serviceName, name: method.name, inputType: Self.bare(method.inputType),
                        outputType: Self.bare(method.outputType), clientStreaming: method.clientStreaming, serverStreaming: method.serverStreaming)
                }
            }
        }
    }

    /// Adds serialized `FileDescriptorProto`s (what server reflection answers with).
    public mutating func add(serializedFiles: [Data]) throws(Failure) {
        var files: [Google_Protobuf_FileDescriptorProto] = []
        for (index, data) in serializedFiles.enumerated() {
            do {
                files.append(try Google_Protobuf_FileDescriptorProto(serializedBytes: data))
            } catch {
                throw Failure("file descriptor \(index) is not a google.protobuf.FileDescriptorProto: \(error)")
            }
        }
        add(files)
    }

    /// Every definition of both; `other`'s files that this one has are skipped.
    public func merging(_ other: ProtobufSchema) -> ProtobufSchema {
        var merged = self
        for (name, message) in other.messages where merged.messages[name] == nil { merged.messages[name] = message }
        for (name, item) in other.enums where merged.enums[name] == nil { merged.enums[name] = item }
        merged.proto2Messages.formUnion(other.proto2Messages.filter { self.messages[$0] == nil })
        for (path, method) in other.methods where merged.methods[path] == nil { merged.methods[path] = method }
        merged.serviceFiles.merge(other.serviceFiles) { mine, _ in mine }
        merged.files.formUnion(other.files)
        return merged
    }

    public var isEmpty: Bool { messages.isEmpty && methods.isEmpty }

    /// The method a gRPC request's path names (`/pkg.Service/Method`), if the schema has it.
    public func method(path: String) -> Method? {
        methods[String(path.split(separator: "?", maxSplits: 1).first ?? "")]
    }

    /// Whether the schema defines the message type (full name, with or without the leading dot).
    public func hasMessage(_ name: String) -> Bool { messages[Self.bare(name)] != nil }

    /// The service part of a gRPC path (`pkg.Service` of `/pkg.Service/Method`).
    public static func service(ofPath path: String) -> String? {
        let parts = path.split(separator: "?", maxSplits: 1).first?.split(separator: "/") ?? []
        return parts.count == 2 ? String(parts[0]) : nil
    }

    private mutating func index(_ message: Google_Protobuf_DescriptorProto, prefix: String, proto2: Bool) {
        let name = prefix + message.name
        messages[name] = message
        if proto2 { proto2Messages.insert(name) }
        for nested in message.nestedType { index(nested, prefix: name + ".", proto2: proto2) }
        for item in message.enumType { enums[name + "." + item.name] = item }
    }

    /// A type reference without its leading dot (`.pkg.Msg` → `pkg.Msg`).
    static func bare(_ name: String) -> String { name.hasPrefix(".") ? String(name.dropFirst()) : name }
}
