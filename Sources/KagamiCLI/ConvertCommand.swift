import ArgumentParser
import Foundation
import KagamiBlueprint
import KagamiContract
import KagamiDescription
import KagamiFlow
import KagamiJSON
import KagamiOpenAPI
import KagamiOutput

/// `kagami convert FILE --to openapi|apib`: one description format written as the other.
struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Write an API description (API Blueprint or OpenAPI) as OpenAPI 3.1 or API Blueprint.",
        discussion: """
        The OpenAPI document's only server is the mock's address (--server) with the \
        description's base path, so a client generated from it (swift-openapi-generator) talks \
        to `kagami mock` as it is. What the target format cannot say is listed on standard error.
        """
    )

    enum Target: String, ExpressibleByArgument, CaseIterable {
        case openapi
        case apib
    }

    @Argument(help: "The description file.")
    var file: String

    @Option(help: "The format to write: openapi (3.1, JSON) or apib.")
    var to: Target

    @Option(name: .shortAndLong, help: "Where to write (standard output when omitted).")
    var output: String?

    @Option(help: "The server URL the OpenAPI document names (the mock's address).")
    var server = "http://127.0.0.1:3000"

    func run() throws {
        let description = try DescriptionFile.readOrExit(path: file)
        let errors = description.diagnostics(onlyErrors: true)
        guard errors.isEmpty else {
            Console.error(errors.joined(separator: "\n") + "\n")
            throw ExitCode(1)
        }
        for line in description.examplesUsedAsWritten("kept as written") { Console.error(line + "\n") }
        // What reading the file left out (a Swagger 2.0 construct OpenAPI 3 has no form for).
        var notes = description.contract.readingNotes
        let text: String
        switch to {
        case .openapi:
            var contract = description.contract
            // MSON's descriptions, which the schemas read for checking don't hold, from the
            // Blueprint's text again.
            if contract.format == .apiBlueprint, let source = try? String(contentsOfFile: file, encoding: .utf8) {
                contract = BlueprintParser.parse(source, describingSchemas: true)
            }
            text = OpenAPIWriter.document(for: contract, serverURL: server, notes: &notes).serialized(.prettyPrinted) + "\n"
        case .apib:
            text = BlueprintWriter.document(for: description.contract, notes: &notes)
            // What the OpenAPI document holds that a Blueprint can't, read from its text again
            // (a description keeps no text once parsed).
            if description.contract.format != .apiBlueprint, let source = try? String(contentsOfFile: file, encoding: .utf8) {
                notes += OpenAPIReader.blueprintNotes(source)
            }
        }
        for line in Self.lines(notes, file: file) { Console.error(line + "\n") }
        if let output {
            try OutputFile.write(Data(text.utf8), to: output, mode: 0o644)
        } else {
            try Console.answer(text)
        }
    }

    /// `FILE:LINE:COLUMN: note: …` for each note, in the order of the source (those with no
    /// place in it last).
    static func lines(_ notes: [ConversionNote], file: String) -> [String] {
        notes.enumerated().sorted { a, b in
            let (lineA, lineB) = (a.element.sourceLocation?.line ?? Int.max, b.element.sourceLocation?.line ?? Int.max)
            return lineA != lineB ? lineA < lineB : a.offset < b.offset
        }.map { _, note in
            let place = note.sourceLocation.map { "\(file):\($0.line):\($0.column)" } ?? file
            return "\(place): note: \(note.message)"
        }
    }
}
