// The contract model written as API Blueprint 1A: what `kagami convert --to apib` prints.
// Bodies and schemas are written as they are (Body and Schema sections), not as MSON.
import KagamiContract
import KagamiJSON

public enum BlueprintWriter {
    /// The Blueprint for `contract`. `notes` collects what the Blueprint could not say.
    public static func document(for contract: APIContract, notes: inout [String]) -> String {
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
                    write(action, resource: resource, into: &out, notes: &notes)
                }
            }
        }
        return out
    }

    private static func write(_ action: Action, resource: Resource, into out: inout String, notes: inout [String]) {
        let request = action.uriTemplate == resource.uriTemplate ? action.method : "\(action.method) \(action.uriTemplate)"
        let name = action.name == "\(action.method) \(resource.uriTemplate)" ? "" : oneLine(action.name)
        out += "### \(name.isEmpty ? "" : name + " ")[\(request)]\n\n"
        if !action.description.isEmpty { out += action.description.trimmedNewlines + "\n\n" }
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
                write(request.payload, into: &out)
            }
            for response in example.responses {
                guard response.status != 0 else {
                    notes.append("\(action.method) \(action.uriTemplate): the default response has no place in a Blueprint; left out")
                    continue
                }
                out += "+ Response \(response.status)"
                out += response.payload.mediaType.map { " (\($0))" } ?? ""
                out += "\n\n"
                write(response.payload, into: &out)
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

    private static func write(_ payload: MessagePayload, into out: inout String) {
        let headers = payload.headers.filter { $0.name.lowercased() != "content-type" }
        if !headers.isEmpty {
            out += "    + Headers\n\n"
            for header in headers { out += "            \(header.name): \(header.value)\n" }
            out += "\n"
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
