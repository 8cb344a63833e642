import ArgumentParser
import Foundation
import KagamiContractCheck
import KagamiDescription

/// `kagami lint FILE`: reports what is wrong with an API description.
struct LintCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lint",
        abstract: "Check an API Blueprint or OpenAPI description; print warnings and errors.",
        discussion: """
        Each problem is printed once as FILE:LINE:COLUMN: warning|error: MESSAGE, sorted by line; \
        what a Swagger 2.0 document says that OpenAPI 3 cannot hold, as a note. \
        The errors keep `kagami mock` from serving the file, except those confined to one example \
        (an invalid body: the mock serves it as written). Exits 1 when there are errors, 2 when \
        the file cannot be read.
        """
    )

    @Argument(help: "The description file (.apib/.md for API Blueprint; .json/.yaml/.yml for OpenAPI).")
    var file: String

    func run() throws {
        let report = Self.report(try DescriptionFile.readOrExit(path: file, showingProgress: true, checksSchemaExamples: true))
        print(report.lines.joined(separator: "\n"))
        if report.hasErrors { throw ExitCode(1) }
    }

    /// What lint prints: every problem, or one line saying there are none.
    static func report(_ description: DescriptionFile) -> (lines: [String], hasErrors: Bool) {
        let routes = OperationRoutes(contract: description.contract)
        let lines = description.problems(routes: routes)
        if lines.isEmpty { return (["\(description.path): no problems found"], false) }
        return (lines, !description.contract.errors.isEmpty || !routes.templateErrors.isEmpty)
    }
}
