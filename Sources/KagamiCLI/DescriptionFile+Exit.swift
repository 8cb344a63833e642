import ArgumentParser
import Foundation
import KagamiDescription
import KagamiFlow
import KagamiOutput

extension DescriptionFile {
    /// The file read, or the reason it can't be on standard error and exit status 2.
    /// With `showingProgress`, how far reading has got is shown on standard error when it is a
    /// terminal.
    /// `checksSchemaExamples`: as `DescriptionFile.init(path:checksSchemaExamples:progress:)`.
    static func readOrExit(path: String, showingProgress: Bool = false, checksSchemaExamples: Bool = false) throws -> DescriptionFile {
        let display = showingProgress ? ReadingDisplay.forTerminal(file: path) : nil
        defer { display?.finish() }
        do {
            return try DescriptionFile(path: path, checksSchemaExamples: checksSchemaExamples, progress: display?.report)
        } catch {
            Console.error(error.description + "\n")
            throw ExitCode(2)
        }
    }
}
