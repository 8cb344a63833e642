// Where the external conformance suites live: $KAGAMI_CONFORMANCE_DIR, else the
// `shared/conformance` folder found by walking up from this file.
import Foundation

enum ConformanceSuite {
    static let directory: URL = {
        if let path = ProcessInfo.processInfo.environment["KAGAMI_CONFORMANCE_DIR"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while folder.path != "/" {
            let candidate = folder.appendingPathComponent("shared/conformance")
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: "/work/shared/conformance")
    }()

    static func files(in relativePath: String, withExtension ext: String) -> [URL] {
        let folder = directory.appendingPathComponent(relativePath)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix("." + ext) }.sorted().map { folder.appendingPathComponent($0) }
    }

    static func text(_ url: URL) -> String {
        (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }
}
