// The contract model written as API Blueprint 1A: what `kagami convert --to apib` prints.
// Bodies and schemas are written as they are (Body and Schema sections); the named types are
// MSON `# Data Structures`, and a payload whose schema is one names it in `+ Attributes`.
import KagamiContract
import KagamiJSON

public enum BlueprintWriter {
    /// The Blueprint for `contract`. `notes` collects what the Blueprint could not say, where
    /// the source says it.
    public static func document(for contract: APIContract, notes: inout [ConversionNote]) -> String {
        var mson = MSONWriter(structures: contract.dataStructures)
        var out = "FORMAT: 1A\n"
        if let server = contract.servers.first { out += "HOST: \(server.url)\n" }
        out += "\n# \(contract.name.isEmpty ? "API" : oneLine(contract.name))\n\n"
        if !contract.description.isEmpty { out += contract.description.trimmedNewlines + "\n\n" }
        for group in contract.groups {
            if !group.name.isEmpty {
                out += "# Group \(oneLine(group.name))\n\n"
                if !group.description.isEmpty { out += group.description.trimmedNewlines + "\n\n" }
            }
            for resource in group.resources {
                let name = resource.name == resource.uriTemplate ? "" : oneLine(resource.name)
                out += "## \(name.isEmpty ? "" : name + " ")[\(resource.uriTemplate)]\n\n"
                if !resource.description.isEmpty { out += resource.description.trimmedNewlines + "\n\n" }
                for action in resource.actions {
                    write(action, resource: resource, mson: mson, into: &out, notes: &notes)
                }
            }
        }
        let structures = contract.dataStructures.filter { $0.schema != nil }
        if !structures.isEmpty {
            out += "# Data Structures\n\n"
            for structure in structures {
                guard let schema = structure.schema else { continue }
                out += mson.namedType(structure.name, schema: schema, description: structure.description) + "\n"
                for loss in mson.losses {
                    notes.append(ConversionNote(
                        "data structure \(structure.name): '\(loss.keyword)' at \(loss.pointer.isEmpty ? "its root" : loss.pointer) has no MSON form; left out of the named type (a payload's Schema section keeps it)",
                        at: structure.sourceLocation))
                }
                mson = MSONWriter(structures: contract.dataStructures)
            }
        }
        return out
    }

    /// What a Blueprint's URI parameter says of its value; the rest of a schema is lost.
    private static let parameterKeywords: Set<String> = ["type", "enum", "default", "example", "examples", "description", "$schema"]

    /// The parameter's notes: where it travels and what of its schema a Blueprint can't say.
    private static func notes(for parameter: Parameter, of action: Action) -> [ConversionNote] {
        let place = "\(action.method) \(action.uriTemplate)"
        guard parameter.location == .path || parameter.location == .query else {
            return [ConversionNote(
                "\(place): the \(parameter.location.rawValue) parameter '\(parameter.name)' has no place in a Blueprint (its parameters are the URI's); left out",
                at: parameter.sourceLocation)]
        }
        guard let schema = parameter.schema?.objectValue else { return [] }
        var lost = schema.keys.filter { !parameterKeywords.contains($0) && !$0.hasPrefix("x-") }
        if schema["type"]?.stringValue == "integer" { lost.append("type: integer (written as number)") }
        guard !lost.isEmpty else { return [] }
        return [ConversionNote(
            "\(place): parameter '\(parameter.name)' says \(lost.sorted().map { "'\($0)'" }.joined(separator: ", ")), which a Blueprint parameter can't; left out",
            at: parameter.sourceLocation)]
    }

    private static func write(_ action: Action, resource: Resource, mson: MSONWriter, into out: inout String, notes: inout [ConversionNote]) {
        let request = action.uriTemplate == resource.uriTemplate ? action.method : "\(action.method) \(action.uriTemplate)"
        let name = action.name == "\(action.method) \(resource.uriTemplate)" ? "" : oneLine(action.name)
        out += "### \(name.isEmpty ? "" : name + " ")[\(request)]\n\n"
        if !action.description.isEmpty { out += action.description.trimmedNewlines + "\n\n" }
        for parameter in action.parameters { notes += Self.notes(for: parameter, of: action) }
        if action.requestBodyRequired == false, action.examples.contains(where: { !$0.requests.isEmpty }) {
            notes.append(ConversionNote(
                "\(action.method) \(action.uriTemplate): the request body is optional, which a Blueprint can't say (its requests show a body); written as shown",
                at: action.sourceLocation))
        }
        let parameters = action.parameters.filter { $0.location == .path || $0.location == .query }
        if !parameters.isEmpty {
            out += "+ Parameters\n"
            for parameter in parameters { out += "    " + line(for: parameter) + "\n" }
            out += "\n"
        }
        for example in action.examples {
            for request in example.requests {
                out += "+ Request\(request.name.isEmpty ? "" : " " + oneLine(request.name))"
                out += request.payload.mediaType.map { " (\($0))" } ?? ""
                out += "\n\n"
                write(request.payload, mson: mson, into: &out)
            }
            for response in example.responses {
                guard response.status != 0 else {
                    notes.append(ConversionNote(
                        "\(action.method) \(action.uriTemplate): the default response has no place in a Blueprint; left out",
                        at: response.payload.sourceLocation))
                    continue
                }
                if response.isStatusClass {
                    notes.append(ConversionNote(
                        "\(action.method) \(action.uriTemplate): the status class \(response.status / 100)XX has no place in a Blueprint; written as \(response.status)",
                        at: response.payload.sourceLocation))
                }
                out += "+ Response \(response.status)"
                out += response.payload.mediaType.map { " (\($0))" } ?? ""
                out += "\n\n"
                write(response.payload, mson: mson, into: &out)
            }
        }
    }

    /// `+ name: `example` (type, required) - description`
    private static func line(for parameter: Parameter) -> String {
        var text = "+ \(parameter.name)"
        if let example = parameter.example, !example.isEmpty { text += ": `\(example)`" }
        var attributes: [String] = []
        if !parameter.members.isEmpty {
            attributes.append("enum[string]")
        } else if let type = parameter.type?.lowercased(), ["number", "integer", "boolean", "string"].contains(type) {
            attributes.append(type == "integer" ? "number" : type)
        }
        attributes.append(parameter.required ? "required" : "optional")
        text += " (\(attributes.joined(separator: ", ")))"
        if !parameter.description.isEmpty { text += " - \(oneLine(parameter.description))" }
        var nested: [String] = []
        if let value = parameter.defaultValue { nested.append("+ Default: `\(value)`") }
        if !parameter.members.isEmpty {
            nested.append("+ Members")
            nested += parameter.members.map { "    + `\($0)`" }
        }
        return ([text] + nested.map { "    " + $0 }).joined(separator: "\n    ")
    }

    private static func write(_ payload: MessagePayload, mson: MSONWriter, into out: inout String) {
        // The payload's description (an OpenAPI response's), before its sections.
        if !payload.description.isEmpty { out += indented(payload.description, by: 4) + "\n" }
        let headers = payload.headers.filter { $0.name.lowercased() != "content-type" }
        let hasSections = !headers.isEmpty || payload.exampleBody?.isEmpty == false
            || payload.schema.map { mson.typeReference($0) != nil || payload.schemaSource != .body } == true
        // Text under a payload with no section is its body: an empty Headers section keeps a
        // description a description.
        if !headers.isEmpty || (!payload.description.isEmpty && !hasSections) {
            out += "    + Headers\n\n"
            for header in headers { out += "            \(header.name): \(header.value)\n" }
            out += "\n"
        }
        if let schema = payload.schema, let type = mson.typeReference(schema) {
            out += "    + Attributes (\(type))\n\n"
        }
        if let body = payload.exampleBody, !body.isEmpty {
            out += "    + Body\n\n" + indented(body, by: 12) + "\n"
        }
        if let schema = payload.schema, payload.schemaSource != .body {
            out += "    + Schema\n\n" + indented(payload.schemaText ?? schema.serialized(.prettyPrinted), by: 12) + "\n"
        }
    }

    private static func indented(_ text: String, by columns: Int) -> String {
        let pad = String(repeating: " ", count: columns)
        return text.trimmedNewlines.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.isEmpty ? "" : pad + $0 }.joined(separator: "\n") + "\n"
    }

    private static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
