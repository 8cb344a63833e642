import ArgumentParser
import Foundation
import KagamiDescription
import KagamiFlow
import KagamiJSON
import KagamiOutput

/// `kagami contract FILE --json`: shows exactly what Kagami understood of a description.
struct ContractCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contract",
        abstract: "Print the contract model read from an API Blueprint or OpenAPI description.",
        discussion: "The JSON shape is documented in docs/CONTRACT.md."
    )

    @Argument(help: "The description file.")
    var file: String

    @Flag(name: .long, help: "Print the whole model as JSON.")
    var json = false

    func run() throws {
        let description = try DescriptionFile.readOrExit(path: file)
        let contract = description.contract
        if json {
            print(Self.json(description).serialized(.prettyPrinted))
        } else {
            print(contract.name.isEmpty ? "(unnamed API)" : contract.name)
            for action in contract.actions {
                let statuses = action.examples.flatMap { $0.responses.map { String($0.status) } }
                print("  \(action.method) \(action.uriTemplate)  \(statuses.joined(separator: ", "))")
            }
        }
        let lines = description.diagnostics()
        if !lines.isEmpty { Console.error(lines.joined(separator: "\n") + "\n") }
        if !contract.errors.isEmpty { throw ExitCode(1) }
    }

    /// The contract's JSON with `diagnostics`: what is printed on standard error (the
    /// reader's errors and warnings, its notes), each with its file, line, column, severity
    /// and message, in the same order.
    static func json(_ description: DescriptionFile) -> JSONValue {
        guard case .object(var members) = description.contract.jsonValue else { return description.contract.jsonValue }
        members["diagnostics"] = .array(description.diagnosticEntries().map { entry in
            [
                "file": .string(entry.file), "line": .integer(entry.line), "column": .integer(entry.column),
                "severity": .string(entry.severity), "message": .string(entry.message),
            ]
        })
        return .object(members)
    }
}
