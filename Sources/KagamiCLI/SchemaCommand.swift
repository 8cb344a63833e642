import ArgumentParser
import Foundation
import KagamiFlow
import KagamiJSON
import KagamiJSONSchema
import KagamiOutput

/// `kagami schema`: JSON Schema tools.
struct SchemaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Validate JSON documents against a JSON Schema (draft 4 or 2020-12).",
        subcommands: [SchemaCheckCommand.self]
    )
}

/// `kagami schema check`: validates instance files (or JSON Lines) against a schema file.
struct SchemaCheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate JSON instances against a schema.",
        discussion: """
            Prints each violation as `INSTANCE: instancePointer  schemaPointer  message` ("(root)" \
            stands for the whole document). With --instances, prints one line per JSON line: `valid` \
            or a JSON array of {instanceLocation, schemaLocation, message}.
            Exit status: 0 all valid, 1 some instance invalid, 2 unreadable input or invalid schema.
            """
    )

    @Option(name: .long, help: "The schema file (JSON).")
    var schema: String

    @Option(name: .long, help: "Schema draft: 4 or 2020-12 (default: from $schema, else 2020-12).")
    var draft: String?

    @Flag(name: .long, help: "Make `format` an assertion (date-time, email, uuid, ...).")
    var assertFormat = false

    @Option(name: .long, help: "A JSON Lines file: one instance per line.")
    var instances: String?

    @Option(name: .long, help: "Validate each instance N times and report the rate on stderr (for benchmarks).")
    var `repeat`: Int = 1

    @Argument(help: "Instance files (JSON).")
    var files: [String] = []

    func validate() throws {
        if files.isEmpty && instances == nil {
            throw ValidationError("give at least one instance file or --instances FILE.jsonl")
        }
        if let draft, JSONSchema.Draft(rawValue: draft) == nil {
            throw ValidationError("--draft must be 4 or 2020-12, not \(draft)")
        }
        if self.repeat < 1 { throw ValidationError("--repeat must be at least 1") }
    }

    func run() async throws {
        let compiled: JSONSchema
        do {
            compiled = try loadSchema()
        } catch let failure as SchemaInputFailure {
            printError(failure.description)
            throw ExitCode(2)
        }
        var status: Int32 = 0
        var clock = RepeatClock()
        for file in files {
            guard let instance = readJSON(file) else {
                status = 2
                continue
            }
            let result = clock.measure(times: self.repeat) { compiled.validate(instance) }
            if result.isValid {
                print("\(file): valid")
            } else {
                status = max(status, 1)
                printErrors(result.errors, of: file, indent: "")
            }
        }
        if let instances {
            status = max(status, checkLines(instances, compiled, &clock))
        }
        if self.repeat > 1 { printError(clock.summary) }
        if status != 0 { throw ExitCode(status) }
    }

    /// An anyOf/oneOf error is followed by its alternatives' errors, indented.
    private func printErrors(_ errors: [JSONSchemaValidationError], of file: String, indent: String) {
        for error in errors {
            let pointer = error.instanceLocation.isEmpty ? "(root)" : error.instanceLocation
            print("\(file): \(indent)\(pointer)  \(error.keywordLocation)  \(error.message)")
            printErrors(error.causes, of: file, indent: indent + "  ")
        }
    }

    private func loadSchema() throws -> JSONSchema {
        let url = URL(fileURLWithPath: schema)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw SchemaInputFailure(description: "\(schema): cannot read the schema file")
        }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: data)
        } catch {
            throw SchemaInputFailure(description: "\(schema):\(error.line):\(error.column): \(error.message)")
        }
        let options = JSONSchema.Options(
            draft: draft.flatMap(JSONSchema.Draft.init(rawValue:)), assertsFormat: assertFormat,
            baseURI: JSONSchemaFileResolver.baseURI(for: url),
            resolver: JSONSchemaFileResolver(root: url.deletingLastPathComponent()))
        do {
            return try JSONSchema(compiling: value, options: options)
        } catch {
            throw SchemaInputFailure(description: "\(schema): invalid schema at \(error)")
        }
    }

    private func readJSON(_ file: String) -> JSONValue? {
        guard let data = FileManager.default.contents(atPath: file) else {
            printError("\(file): cannot read the file")
            return nil
        }
        do {
            return try JSONValue(parsing: data)
        } catch {
            printError("\(file):\(error.line):\(error.column): \(error.message)")
            return nil
        }
    }

    /// One output line per non-empty input line.
    private func checkLines(_ file: String, _ compiled: JSONSchema, _ clock: inout RepeatClock) -> Int32 {
        guard let data = FileManager.default.contents(atPath: file) else {
            printError("\(file): cannot read the file")
            return 2
        }
        var status: Int32 = 0
        var output = ""
        for (number, line) in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            guard line.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { continue }
            let instance: JSONValue
            do {
                instance = try JSONValue(parsing: line)
            } catch {
                printError("\(file):\(number + 1):\(error.column): \(error.message)")
                output += "error\n"
                status = 2
                continue
            }
            let result = clock.measure(times: self.repeat) { compiled.validate(instance) }
            if result.isValid {
                output += "valid\n"
            } else {
                status = max(status, 1)
                output += JSONValue.array(result.errors.map(\.jsonValue)).serialized() + "\n"
            }
            if output.utf8.count > 1 << 16 {
                print(output, terminator: "")
                output = ""
            }
        }
        print(output, terminator: "")
        return status
    }

    private func printError(_ message: String) {
        Console.error(message + "\n")
    }
}

private struct SchemaInputFailure: Error, CustomStringConvertible {
    var description: String
}

/// Times validations (not reading or parsing) for `--repeat`.
private struct RepeatClock {
    var validations = 0
    var seconds = 0.0

    mutating func measure(times: Int, _ body: () -> JSONSchemaValidationResult) -> JSONSchemaValidationResult {
        let start = ContinuousClock.now
        var result = body()
        for _ in 1..<max(times, 1) { result = body() }
        let elapsed = ContinuousClock.now - start
        seconds += Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        validations += times
        return result
    }

    var summary: String {
        let rate = seconds > 0 ? Double(validations) / seconds : 0
        return "validated \(validations) documents in \(String(format: "%.3f", seconds)) s (\(String(format: "%.1f", rate)) documents/s)"
    }
}
