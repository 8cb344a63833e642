import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `.proto` files compiled by `protoc` (Debian's `protobuf-compiler`) into a descriptor set, and
/// the schemas Kagami is given on its command line.
public enum ProtoFiles {
    /// Every `.proto` under `directory` (recursively), as paths relative to it, sorted.
    public static func list(in directory: String, option: String = "--proto-path") throws(ProtobufSchema.Failure) -> [String] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isFolder), isFolder.boolValue else {
            throw ProtobufSchema.Failure("\(option) \(directory) is not a folder")
        }
        let root = URL(fileURLWithPath: directory).standardizedFileURL
        let found = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".proto") } ?? []
        guard !found.isEmpty else { throw ProtobufSchema.Failure("\(option) \(directory) holds no .proto file") }
        return found.sorted()
    }

    /// The descriptor set of every `.proto` under `directory`, with the files they import
    /// (`--include_imports`), made by `protoc`; its own message (file:line:column: error) when a
    /// file does not compile. `files` (relative to `directory`) compiles those alone.
    public static func compile(directory: String, files chosen: [String]? = nil, option: String = "--proto-path", protoc: String? = nil) throws(ProtobufSchema.Failure) -> Data {
        let files: [String]
        if let chosen { files = chosen } else { files = try list(in: directory, option: option) }
        guard let executable = protoc ?? findProtoc() else {
            throw ProtobufSchema.Failure("\(option) needs protoc (Debian's protobuf-compiler package); or give a descriptor set with --proto-descriptor")
        }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("kagami-\(UUID().uuidString).pb")
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("kagami-\(UUID().uuidString).txt")
        defer {
            try? FileManager.default.removeItem(at: output)
            try? FileManager.default.removeItem(at: errors)
        }
        let status = try run(executable, ["--include_imports", "--descriptor_set_out=\(output.path)", "--proto_path=\(directory)"] + files, errors: errors.path)
        guard status == 0 else {
            let message = (try? Data(contentsOf: errors)) ?? Data()
            let text = String(decoding: message, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw ProtobufSchema.Failure("protoc could not compile the .proto files in \(directory):\n\(text)")
        }
        do {
            return try Data(contentsOf: output)
        } catch {
            throw ProtobufSchema.Failure("protoc wrote no descriptor set: \(error)")
        }
    }

    /// Runs `executable` to its end with standard output to /dev/null and standard error to the
    /// file `errors`; its exit status. `posix_spawn`, not Foundation's `Process`: a running proxy
    /// re-reads a changed `--contract` folder with a thousand connections open, and `Process`
    /// on Linux lists `/proc/self/fd` and fails past the end of that listing's buffer.
    static func run(_ executable: String, _ arguments: [String], errors: String) throws(ProtobufSchema.Failure) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ([executable] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let started = (argv + [nil]).withUnsafeBufferPointer { pointers -> Int32 in
            guard let base = pointers.baseAddress else { return EINVAL }
            return posix_spawn(&child, executable, &actions, nil, base, environ)
        }
        guard started == 0 else { throw ProtobufSchema.Failure("could not run \(executable): \(String(cString: strerror(started)))") }
        var status: Int32 = 0
        while waitpid(child, &status, 0) == -1 {
            guard errno == EINTR else { throw ProtobufSchema.Failure("could not wait for \(executable): \(String(cString: strerror(errno)))") }
        }
        // WIFEXITED / WEXITSTATUS: the low 7 bits are a signal number when the child was killed.
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }

    static func findProtoc() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/protoc" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The schema of `--proto-descriptor` files and `--proto-path` folders together.
    public static func schema(descriptors: [String], folders: [String]) throws(ProtobufSchema.Failure) -> ProtobufSchema {
        var schema = ProtobufSchema()
        for path in descriptors {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw ProtobufSchema.Failure("--proto-descriptor \(path) could not be read: \(error.localizedDescription)")
            }
            schema = schema.merging(try ProtobufSchema(descriptorSet: data, source: "--proto-descriptor \(path)"))
        }
        for folder in folders {
            schema = schema.merging(try ProtobufSchema(descriptorSet: try compile(directory: folder), source: "protoc's output for \(folder)"))
        }
        return schema
    }

    /// The schema of a `--contract` path: a folder of `.proto` files, one `.proto` file (its
    /// folder is where its imports are looked for), or a descriptor set.
    public static func schema(contract path: String) throws(ProtobufSchema.Failure) -> ProtobufSchema {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw ProtobufSchema.Failure("\(path): cannot read the file: no such file")
        }
        if isFolder.boolValue {
            return try ProtobufSchema(descriptorSet: try compile(directory: path, option: "--contract"), source: "protoc's output for \(path)")
        }
        if path.lowercased().hasSuffix(".proto") {
            let url = URL(fileURLWithPath: path)
            let folder = url.deletingLastPathComponent().path
            return try ProtobufSchema(
                descriptorSet: try compile(directory: folder, files: [url.lastPathComponent], option: "--contract"), source: "protoc's output for \(path)")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ProtobufSchema.Failure("\(path): cannot read the file: \(error.localizedDescription)")
        }
        return try ProtobufSchema(descriptorSet: data, source: path)
    }
}
