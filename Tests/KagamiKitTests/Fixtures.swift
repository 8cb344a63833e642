import Foundation

enum Fixture {
    /// The path of a file in Fixtures/, beside this source file.
    static func path(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").appendingPathComponent(name).path
    }
}
