import ArgumentParser
import KagamiDescription

/// `kagami lint FILE`: reports what is wrong with an API description.
struct LintCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lint",
        abstract: "Check an API Blueprint or OpenAPI description; print warnings and errors.",
        discussion: "Each problem is printed as FILE:LINE:COLUMN: warning|error: MESSAGE. Exits non-zero when there are errors."
    )

    @Argument(help: "The description file (.apib/.md for API Blueprint; .json/.yaml/.yml for OpenAPI).")
    var file: String

    func run() throws {
        let description = try DescriptionFile.readOrExit(path: file)
        let lines = description.diagnostics()
        if !lines.isEmpty { print(lines.joined(separator: "\n")) }
        if !description.contract.errors.isEmpty { throw ExitCode(1) }
    }
}
