import ArgumentParser
import Foundation
import KagamiFlow
import KagamiJSON
import KagamiOutput
import KagamiURITemplate

/// `kagami template`: try out RFC 6570 URI templates the way the mock server reads them.
struct TemplateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "template",
        abstract: "Expand URI templates (RFC 6570) or match URLs against them.",
        subcommands: [Expand.self, Match.self]
    )

    struct Expand: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the expansion of a template.",
            discussion: "The variables file holds a JSON object: strings as they are, numbers and booleans as their JSON text, arrays as lists, objects as associative arrays, null as undefined."
        )

        @OptionGroup var template: TemplateArgument

        @Option(name: .customLong("vars"), help: ArgumentHelp("A JSON file with the variables.", valueName: "file.json"))
        var variablesFile: String?

        func run() throws {
            let parsed = try template.parsed()
            var variables: [String: URITemplate.Value] = [:]
            if let variablesFile { variables = try TemplateCommand.readVariables(variablesFile) }
            do {
                print(try parsed.expand(variables))
            } catch {
                TemplateCommand.printError("error: \(error)")
                throw ExitCode(2)
            }
        }
    }

    struct Match: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the variables a URL gives a template, as a JSON object.",
            discussion: "Exits 1 and prints 'no match' when the URL does not match the template. A URL with a scheme and host is matched by its path and query unless the template has a scheme too."
        )

        @OptionGroup var template: TemplateArgument

        @Argument(help: "The URL or path with query, e.g. '/users/42?fields=name'.")
        var url: String

        func run() throws {
            let parsed = try template.parsed()
            guard let match = parsed.match(TemplateCommand.requestTarget(url, for: parsed)) else {
                TemplateCommand.printError("no match")
                throw ExitCode(1)
            }
            print(match.json.serialized(.prettyPrinted))
            if !match.unmatchedQueryParameters.isEmpty {
                let names = match.unmatchedQueryParameters.map(\.name).joined(separator: ", ")
                TemplateCommand.printError("query parameters not in the template: \(names)")
            }
        }
    }

    static func readVariables(_ path: String) throws -> [String: URITemplate.Value] {
        // Read to the end rather than by the file's size, so a pipe works too (`--vars /dev/stdin`).
        guard let handle = FileHandle(forReadingAtPath: path), let data = try? handle.readToEnd() ?? Data() else {
            printError("error: cannot read \(path)")
            throw ExitCode(2)
        }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: data)
        } catch {
            printError("error: \(path): \(error)")
            throw ExitCode(2)
        }
        guard let object = json.objectValue else {
            printError("error: \(path): expected a JSON object of variables, found \(json.typeName)")
            throw ExitCode(2)
        }
        return URITemplate.variables(fromJSON: object)
    }

    /// The part of `url` a server sees: `http://host/a?b` → `/a?b` (kept whole when the
    /// template itself starts with a scheme).
    static func requestTarget(_ url: String, for template: URITemplate) -> String {
        guard !template.text.contains("://"), let scheme = url.range(of: "://") else { return url }
        let afterAuthority = url[scheme.upperBound...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" }
        guard let afterAuthority else { return "/" }
        let rest = String(url[afterAuthority...])
        return rest.hasPrefix("/") ? rest : "/" + rest
    }

    static func printError(_ message: String) {
        Console.error(message + "\n")
    }
}

/// The template argument both subcommands take; a template that does not parse exits 2.
struct TemplateArgument: ParsableArguments {
    @Argument(help: "The URI template, e.g. '/users/{id}{?fields*}'.")
    var template: String

    func parsed() throws -> URITemplate {
        do {
            return try URITemplate(template)
        } catch {
            TemplateCommand.printError("error: \(error)")
            throw ExitCode(2)
        }
    }
}
