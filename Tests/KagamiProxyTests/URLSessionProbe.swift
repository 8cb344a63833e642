import Foundation

/// Finds the `url-session-probe` executable built beside the tests.
enum URLSessionProbe {
    struct NotBuilt: Error, CustomStringConvertible {
        var searched: [String]
        var description: String { "url-session-probe not found (looked in \(searched.joined(separator: ", "))); run swift build --build-tests" }
    }

    static func locate() throws -> String {
        var candidates: [String] = []
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0])
        var directory = testBinary.deletingLastPathComponent()
        for _ in 0..<4 {
            candidates.append(directory.appendingPathComponent("url-session-probe").path)
            directory = directory.deletingLastPathComponent()
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/url-session-probe").path)
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
            return found
        }
        throw NotBuilt(searched: candidates)
    }
}
