import Foundation
import KagamiOutput
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A command's output file appears whole or not at all, and a device or pipe given as one is
/// written to, never replaced.
@Suite struct OutputFileTests {
    private func folder() throws -> String {
        let path = NSTemporaryDirectory() + "kagami-output-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func names(in folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    }

    @Test func aNewFileAppearsWholeWithItsModeAndNothingBesideIt() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/report.json"
        try OutputFile.write(Data("{}\n".utf8), to: path, mode: 0o600)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{}\n")
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        #expect(try names(in: folder) == ["report.json"])
        try OutputFile.write(Data("second\n".utf8), to: path, mode: 0o600)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "second\n")
        #expect(try names(in: folder) == ["report.json"])
    }

    @Test func anOutputNotCommittedLeavesTheEarlierFileAsItWas() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/export.har"
        try Data("earlier\n".utf8).write(to: URL(fileURLWithPath: path))
        do {
            let output = OutputFile(path)
            #expect(!output.isInPlace)
            let handle = try output.openHandle(mode: 0o600)
            try handle.write(contentsOf: Data("half of a new one".utf8))
            #expect(try names(in: folder).count == 2, "written beside its place")
            // The command fails here: the output is let go without commit().
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "earlier\n")
        #expect(try names(in: folder) == ["export.har"])
    }

    @Test func aFolderThatIsNotThereIsNamedInTheError() throws {
        let path = NSTemporaryDirectory() + "kagami-output-missing-" + UUID().uuidString + "/out.yaml"
        #expect {
            try OutputFile.write(Data("x".utf8), to: path, mode: 0o644)
        } throws: { error in
            "\(error)".hasPrefix("cannot write \(path): ")
        }
    }

    /// `-o` a named pipe: a reader at its other end gets the bytes, and the pipe is still one.
    @Test func aNamedPipeIsWrittenToNotReplaced() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let pipe = folder + "/pipe"
        #expect(mkfifo(pipe, 0o600) == 0)
        let reader = Task.detached { () -> Data? in
            FileHandle(forReadingAtPath: pipe).flatMap { try? $0.readToEnd() }
        }
        let output = OutputFile(pipe)
        #expect(output.isInPlace)
        try OutputFile.write(Data("through the pipe\n".utf8), to: pipe, mode: 0o600)
        #expect(await reader.value == Data("through the pipe\n".utf8))
        var info = stat()
        #expect(stat(pipe, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "still a pipe, not a file")
        #expect(try names(in: folder) == ["pipe"])
    }
}
