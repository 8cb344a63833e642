import Foundation
import KagamiFlow
import KagamiHAR
import KagamiOutput

/// An HTTP Archive named on the command line, read the same way by every command: entries the
/// reader can't use are named on standard error and skipped; no archive, or none readable, is
/// `Unreadable` (exit 2 in each command).
enum HARFile {
    struct Unreadable: Error, CustomStringConvertible {
        var description: String
    }

    static func read(_ file: String, command: String) throws(Unreadable) -> HARImport.Result {
        do {
            return try HARImport.read(contentsOf: SessionFile.expand(file), file: file) { Console.error("kagami \(command): skipped \($0)\n") }
        } catch {
            throw Unreadable(description: error.description)
        }
    }
}
