import ArgumentParser
import Foundation
import KagamiDescription

extension DescriptionFile {
    /// The file read, or the reason it can't be on standard error and exit status 2.
    static func readOrExit(path: String) throws -> DescriptionFile {
        do {
            return try DescriptionFile(path: path)
        } catch {
            FileHandle.standardError.write(Data((error.description + "\n").utf8))
            throw ExitCode(2)
        }
    }
}
