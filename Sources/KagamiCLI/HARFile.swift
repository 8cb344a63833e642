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
        let path = SessionFile.expand(file)
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw Unreadable(description: "cannot read \(path): \(error.localizedDescription)")
        }
        let result: HARImport.Result
        do {
            result = try HARImport.read(from: data, file: file)
        } catch {
            throw Unreadable(description: error.description)
        }
        for skipped in result.skipped {
            Console.error("kagami \(command): skipped \(skipped)\n")
        }
        if result.flows.isEmpty, !result.skipped.isEmpty {
            throw Unreadable(description: "no entry of \(file) could be read")
        }
        return result
    }
}
