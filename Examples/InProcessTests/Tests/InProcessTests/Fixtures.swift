import Foundation

/// Files next to this package's manifest.
enum Fixtures {
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The description the mock serves and the client was generated from.
    static var notes: String { folder.appendingPathComponent("notes.apib").path }

    /// notes.apib as a backend that drifted from it would answer: ids as strings.
    static func drifted() throws -> String {
        try String(contentsOfFile: notes, encoding: .utf8)
            .replacingOccurrences(of: "+ id: 1 (number, required)", with: "+ id: n-1 (string, required)")
    }
}
