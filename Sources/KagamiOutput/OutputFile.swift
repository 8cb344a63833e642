import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file a command writes (`-o FILE`), whole or not at all: its bytes go beside its place under
/// a hidden name (`.NAME.partial-XXXXXXXX`) and `commit()` renames them there, so a command that
/// fails leaves no empty or partial file and an existing file as it was. What is there but is
/// not a regular file (`/dev/null`, a named pipe) is written in place: renaming over it would
/// replace the device or the pipe itself.
public final class OutputFile {
    /// Where the file goes.
    public let path: String
    /// Where its bytes are written until `commit()`: the hidden name beside `path`, or `path`
    /// itself when it is not a regular file (`isInPlace`).
    public let writingPath: String
    public let isInPlace: Bool
    private var committed = false

    public init(_ path: String) {
        self.path = path
        var existing = stat()
        if stat(path, &existing) == 0, existing.st_mode & S_IFMT != S_IFREG {
            writingPath = path
            isInPlace = true
        } else {
            let directory = (path as NSString).deletingLastPathComponent
            writingPath = ((directory.isEmpty ? "." : directory) as NSString)
                .appendingPathComponent(".\((path as NSString).lastPathComponent).partial-\(UUID().uuidString.prefix(8))")
            isInPlace = false
        }
    }

    deinit {
        if !committed, !isInPlace { unlink(writingPath) }
    }

    /// Opens `writingPath` for writing; a new file gets `mode`.
    public func openHandle(mode: mode_t) throws -> FileHandle {
        let flags = isInPlace ? O_WRONLY | O_CLOEXEC : O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC
        let descriptor = open(writingPath, flags, mode)
        guard descriptor >= 0 else { throw OutputFileError("cannot write \(path): \(String(cString: strerror(errno)))") }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// Everything is written: the file takes its place.
    public func commit() throws {
        guard !isInPlace else { return }
        guard rename(writingPath, path) == 0 else {
            throw OutputFileError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        committed = true
    }

    /// Writes `data` as the file at `path`, whole or not at all; a new file gets `mode` (0600 for
    /// what holds captured traffic).
    public static func write(_ data: Data, to path: String, mode: mode_t) throws {
        let file = OutputFile(path)
        let handle = try file.openHandle(mode: mode)
        do {
            try handle.write(contentsOf: data)
            try handle.close()
        } catch {
            throw OutputFileError("cannot write \(path): \(error.localizedDescription)")
        }
        try file.commit()
    }
}

public struct OutputFileError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
