import ArgumentParser
import Foundation
import KagamiFlow
import KagamiDescription

extension DescriptionFile {
    /// The file read, or the reason it can't be on standard error and exit status 2.
    static func readOrExit(path: String) throws -> DescriptionFile {
        do {
            return try DescriptionFile(path: path)
        } catch {
            Console.error(error.description + "\n")
            throw ExitCode(2)
        }
    }
}
