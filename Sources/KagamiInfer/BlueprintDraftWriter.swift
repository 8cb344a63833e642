// A traffic draft as an API Blueprint 1A document, bodies described with MSON.
import KagamiJSON
import OrderedCollections

public enum BlueprintDraftWriter {
    public static func text(_ draft: TrafficDraft) -> String {
        var out = "FORMAT: 1A\n"
        if let host = draft.servers.first { out += "HOST: \(host)\n" }
        out += "\n# \(draft.title)\n\n"
        out += "Drafted by `kagami infer` from \(draft.exchangeCount) recorded exchange\(draft.exchangeCount == 1 ? "" : "s")"
        if draft.servers.count > 1 { out += " with \(draft.servers.joined(separator: ", "))" }
        out += ". Check the URI templates, required members and enumerations before relying on it.\n"

        var groups: OrderedDictionary<String, [DraftOperation]> = [:]
        for operation in draft.operations { groups[OpenAPIDraftWriter.groupName(operation), default: []].append(operation) }
        for (group, operations) in groups {
            out += "\n# Group \(group)\n"
            var resources: OrderedDictionary<String, [DraftOperation]> = [:]
            for operation in operations { resources[operation.template.description, default: []].append(operation) }
            for (path, actions) in resources {
                out += "\n## \(path) [\(path)]\n"
                if let first = actions.first, !first.pathParameters.isEmpty {
                    out += "\n+ Parameters\n"
                    for (index, parameter) in first.pathParameters.enumerated() {
                        var values = ValueSketch()
                        for action in actions where index < action.pathParameters.count { values.merge(action.pathParameters[index].values) }
                        out += parameterLine(parameter, values: values, required: true)
                    }
                }
                for action in actions { out += actionText(action, path: path) }
            }
        }
        return out
    }

    private static func actionText(_ action: DraftOperation, path: String) -> String {
        var out = "\n### \(action.name)"
        let query = Array(action.query.values)
        if query.isEmpty {
            out += " [\(action.method)]\n"
        } else {
            out += " [\(action.method) \(path){?\(query.map(\.name).joined(separator: ","))}]\n"
            out += "\n+ Parameters\n"
            for parameter in query { out += parameterLine(parameter, values: parameter.values, required: action.isRequired(parameter)) }
        }
        let requestHeaders = action.headers.values.filter { action.isRequired($0) }
        if !action.requestBodies.isEmpty {
            for body in action.requestBodies.values {
                out += "\n+ Request (\(body.mediaType))\n"
                out += headersText(requestHeaders.map { ($0.name, $0.example ?? "") })
                out += bodyText(body)
            }
        } else if !requestHeaders.isEmpty {
            out += "\n+ Request\n"
            out += headersText(requestHeaders.map { ($0.name, $0.example ?? "") })
        }
        for response in action.sortedResponses {
            // Blueprint response headers are checked by name: only those every response had.
            let headers = response.headers.values.filter { $0.presence == response.count }.map { ($0.name, $0.example ?? "") }
            if response.bodies.isEmpty || response.bodyIsOptional {
                out += "\n+ Response \(response.status)\n"
                out += headersText(headers)
                continue
            }
            for body in response.bodies.values {
                out += "\n+ Response \(response.status) (\(body.mediaType))\n"
                out += headersText(headers)
                out += bodyText(body)
            }
        }
        return out
    }

    private static func parameterLine(_ parameter: ParameterSketch, values: ValueSketch, required: Bool) -> String {
        let type: String
        switch values.schema()["type"]?.stringValue {
        case "integer", "number": type = "number"
        case "boolean": type = "boolean"
        default: type = "string"
        }
        let example = parameter.example.map { " `\(mark($0))`" } ?? ""
        return "    + \(parameter.name):\(example) (\(type), \(required ? "required" : "optional"))\n"
    }

    private static func headersText(_ headers: [(String, String)]) -> String {
        guard !headers.isEmpty else { return "" }
        var out = "\n    + Headers\n\n"
        for (name, value) in headers { out += "            \(name): \(value)\n" }
        return out
    }

    /// `+ Attributes` in MSON, the exact schema, and one real body.
    private static func bodyText(_ body: BodySketch) -> String {
        var out = ""
        if let sketch = body.sketch, body.isJSON {
            let schema = sketch.schema()
            if schema["type"]?.stringValue == "object" || schema["type"]?.arrayValue?.first?.stringValue == "object" {
                out += "\n    + Attributes (object)\n"
                out += msonMembers(schema, indent: 8, depth: 0)
            }
            var described = schema.objectValue ?? [:]
            described.updateValue("http://json-schema.org/draft-04/schema#", forKey: "$schema", insertingAt: 0)
            out += "\n    + Schema\n\n" + indented(JSONValue.object(described).serialized(.prettyPrinted), by: 12) + "\n"
        }
        if let example = body.example {
            let text: String
            if case .string(let raw) = example, !body.isJSON { text = raw } else { text = example.serialized(.prettyPrinted) }
            if !text.isEmpty { out += "\n    + Body\n\n" + indented(text, by: 12) + "\n" }
        }
        return out
    }

    /// One MSON member line per property, nested objects and arrays of objects indented below.
    private static func msonMembers(_ schema: JSONValue, indent: Int, depth: Int) -> String {
        guard depth < 16, let properties = schema["properties"]?.objectValue else { return "" }
        let required = Set(schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        let pad = String(repeating: " ", count: indent)
        var out = ""
        for (name, property) in properties {
            var types = property["type"]?.arrayValue?.compactMap(\.stringValue) ?? property["type"].flatMap(\.stringValue).map { [$0] } ?? []
            let nullable = types.contains("null")
            types.removeAll { $0 == "null" }
            var type = types.first ?? "string"
            if property["anyOf"] != nil { type = "string" }
            var attributes: [String] = []
            var nested = ""
            switch type {
            case "integer", "number": attributes.append("number")
            case "array":
                let items = property["items"]
                switch items?["type"]?.stringValue {
                case "object"?:
                    attributes.append("array")
                    nested = pad + "    + (object)\n" + msonMembers(items ?? [:], indent: indent + 8, depth: depth + 1)
                case "integer"?, "number"?: attributes.append("array[number]")
                case "boolean"?: attributes.append("array[boolean]")
                case "string"?: attributes.append("array[string]")
                default: attributes.append("array")
                }
            case "object":
                attributes.append("object")
                nested = msonMembers(property, indent: indent + 4, depth: depth + 1)
            default: attributes.append(type)
            }
            attributes.append(required.contains(name) ? "required" : "optional")
            if nullable { attributes.append("nullable") }
            out += "\(pad)+ \(msonName(name)) (\(attributes.joined(separator: ", ")))\n" + nested
        }
        return out
    }

    /// Member names with MSON's reserved characters are written in backticks.
    private static func msonName(_ name: String) -> String {
        let plain = name.unicodeScalars.allSatisfy { PathSegmentShape.isLetter($0) || PathSegmentShape.isDigit($0) || $0 == "_" || $0 == "-" || $0 == "." }
        return plain && !name.isEmpty ? name : "`\(mark(name))`"
    }

    private static func mark(_ text: String) -> String {
        text.replacingOccurrences(of: "`", with: "'").replacingOccurrences(of: "\n", with: " ")
    }

    private static func indented(_ text: String, by count: Int) -> String {
        let pad = String(repeating: " ", count: count)
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.isEmpty ? "" : pad + $0 }.joined(separator: "\n")
    }
}
