// Requests, responses, models and URI parameters of a Blueprint action.
import KagamiContract
import KagamiJSON

/// A request, response or model as written, before MSON is rendered and models resolved.
struct PayloadDraft {
    /// Text between the keyword and the media type: a request name or a response status.
    var title: String
    var mediaType: String?
    var description = ""
    var headers: [Header] = []
    var body: String?
    var schemaText: String?
    var attributes: MSONElement?
    var modelReference: String?
    /// A request's own `+ Parameters`, read against the action's URI template.
    var parameters: ListItem?
    var location: SourceLocation
}

extension BlueprintDocumentReader {
    private static let payloadSections: Set<String> = ["headers", "body", "schema", "attributes", "attribute", "parameters"]

    mutating func payloadDraft(_ item: ListItem, keywordLength: Int) -> PayloadDraft {
        let location = source.location(line: item.line)
        var rest = String(item.text.dropFirst(keywordLength)).trimmedBlanks
        var mediaType: String?
        if rest.hasSuffix(")"), let open = rest.lastIndex(of: "(") {
            mediaType = String(rest[rest.index(after: open)..<rest.index(before: rest.endIndex)]).trimmedBlanks
            rest = String(rest[..<open]).trimmedBlanks
        }
        var draft = PayloadDraft(title: rest, mediaType: mediaType, location: location)
        if let mediaType { draft.headers.append(Header(name: "Content-Type", value: mediaType)) }
        let level = source.children(of: item)
        let hasSections = level.items.contains { Self.payloadSections.contains(Self.keyword($0.text)) }
        if !hasSections {
            let nested = source.nestedText(of: item)
            let text = nested.text
            let trimmed = text.trimmedNewlines
            if trimmed.hasPrefix("["), trimmed.hasSuffix("][]") {
                draft.modelReference = String(trimmed.dropFirst().dropLast(3))
            } else if !trimmed.isEmpty {
                if !nested.indented {
                    annotations.append(Annotation(.warning, "message-body asset is expected to be a pre-formatted code block, every of its line indented by exactly 8 spaces or 2 tabs", at: location))
                }
                draft.body = text
                checkJSONBody(text, of: draft, firstLine: nested.firstLine, strip: nested.strip, codeBlock: nested.indented)
            }
            for child in level.items {
                annotations.append(Annotation(.warning, "ignoring unrecognized block", at: source.location(line: child.line)))
            }
            return draft
        }
        draft.description = source.block(level.leading, strip: item.indent + 4).trimmedNewlines
        var bodyAt: (firstLine: Int, strip: Int, codeBlock: Bool)?
        defer {
            // After the headers: a `Content-Type` header declares JSON as well as the parentheses.
            if let bodyAt, let body = draft.body {
                checkJSONBody(body, of: draft, firstLine: bodyAt.firstLine, strip: bodyAt.strip, codeBlock: bodyAt.codeBlock)
            }
        }
        for child in level.items {
            let childLocation = source.location(line: child.line)
            switch Self.keyword(child.text) {
            case "headers":
                for line in source.nestedText(of: child).text.split(separator: "\n") {
                    guard let colon = line.firstIndex(of: ":") else {
                        annotations.append(Annotation(.warning, "header line is not 'Name: value'", at: childLocation))
                        continue
                    }
                    let name = String(line[..<colon]).trimmedBlanks
                    let value = String(line[line.index(after: colon)...]).trimmedBlanks
                    if name.lowercased() == "content-type", let index = draft.headers.firstIndex(where: { $0.name.lowercased() == "content-type" }) {
                        draft.headers[index].value = value
                    } else {
                        draft.headers.append(Header(name: name, value: value))
                    }
                }
            case "body":
                let nested = source.nestedText(of: child)
                if !nested.indented {
                    annotations.append(Annotation(.warning, "message-body asset is expected to be a pre-formatted code block, every of its line indented by exactly 12 spaces or 3 tabs", at: childLocation))
                }
                if !nested.text.isEmpty {
                    draft.body = nested.text
                    bodyAt = (nested.firstLine, nested.strip, nested.indented)
                }
            case "schema":
                let nested = source.nestedText(of: child)
                if !nested.text.isEmpty { draft.schemaText = nested.text }
            case "attributes", "attribute":
                draft.attributes = attributesElement(child)
            case "parameters":
                draft.parameters = child
            default:
                annotations.append(Annotation(.warning, "ignoring unrecognized block", at: childLocation))
            }
        }
        return draft
    }

    /// A body declared JSON that does not parse is an error where the JSON goes wrong (clients
    /// would fail on it), confined to its example: the mock serves it as written and convert
    /// keeps it. A body that is no proper code block (lines indented unevenly: drafter warns
    /// and keeps the text) gets a warning.
    mutating func checkJSONBody(_ body: String, of draft: PayloadDraft, firstLine: Int, strip: Int, codeBlock: Bool) {
        let contentType = draft.headers.last { $0.name.lowercased() == "content-type" }?.value.lowercased() ?? ""
        let essence = contentType.split(separator: ";").first.map { $0.trimmedBlanks } ?? ""
        guard essence.hasSuffix("/json") || essence.hasSuffix("+json") else { return }
        do {
            _ = try JSONValue(parsing: body)
        } catch {
            // A body that starts like JSON and breaks is an error; text that isn't JSON at all
            // (a placeholder, sections indented too far) is a warning, as drafter keeps it.
            let first = body.utf8.first { $0 != 0x20 && $0 != 0x0A && $0 != 0x09 && $0 != 0x0D }
            let looksLikeJSON = first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
            var annotation = Annotation(
                looksLikeJSON && codeBlock ? .error : .warning, "the body is declared \(essence) but is not valid JSON: \(error.message)",
                at: source.location(inBlockAt: firstLine, strip: strip, line: error.line, column: error.column))
            annotation.keepsDocumentUsable = true
            annotations.append(annotation)
        }
    }

    /// The payload with Apiary's precedence applied: example body Body > Attributes > Schema,
    /// validation schema Schema > Attributes > Body.
    mutating func payload(from draft: PayloadDraft, status: Int?) -> MessagePayload {
        var draft = draft
        if let reference = draft.modelReference {
            if let model = models[reference] {
                for header in model.headers where !draft.headers.contains(where: { $0.name.lowercased() == header.name.lowercased() }) {
                    draft.headers.append(header)
                }
                draft.body = draft.body ?? model.body
                draft.schemaText = draft.schemaText ?? model.schemaText
                draft.attributes = draft.attributes ?? model.attributes
                if draft.mediaType == nil { draft.mediaType = model.mediaType }
            } else {
                annotations.append(Annotation(.error, "undefined resource model '\(reference)', the model must be defined before it is referenced", at: draft.location))
            }
        }
        var payload = MessagePayload(description: draft.description, headers: draft.headers, sourceLocation: draft.location)
        let contentType = payload.mediaType ?? ""
        let isJSON = contentType.hasSuffix("/json") || contentType.hasSuffix("+json")
        if let body = draft.body {
            payload.body = body
            payload.bodySource = .body
        }
        if let text = draft.schemaText {
            payload.schemaText = text
            do {
                payload.schema = try JSONValue(parsing: text)
                payload.schemaSource = .schema
                // Apiary reads Blueprint schemas without `$schema` as draft 4.
                payload.schemaDialect = payload.schema?["$schema"]?.stringValue ?? MSONRenderer.schemaDialect
            } catch {
                // Not JSON Schema (drafter accepts any schema text): nothing to validate with.
            }
        }
        if let attributes = draft.attributes, isJSON {
            if payload.body == nil {
                payload.body = renderer.render(attributes).serialized(.prettyPrinted)
                payload.bodySource = .attributes
            }
            if payload.schema == nil {
                payload.schema = renderer.schemaDocument(for: attributes)
                payload.schemaSource = .attributes
                payload.schemaDialect = MSONRenderer.schemaDialect
            }
        }
        if payload.body == nil, let schema = payload.schema {
            payload.body = JSONSchemaExample.example(for: schema).serialized(.prettyPrinted)
            payload.bodySource = .schema
        }
        if payload.schema == nil, isJSON, let json = payload.bodyJSON {
            payload.schema = JSONSchemaExample.schema(describing: json)
            payload.schemaSource = .body
            payload.schemaDialect = JSONSchemaExample.derivedDialect
        }
        if let status, status == 204 || status == 304 || (100..<200).contains(status), draft.body != nil {
            annotations.append(Annotation(.warning, "the \(status) response MUST NOT include a message-body", at: draft.location))
        }
        return payload
    }

    // MARK: Parameters

    mutating func parameters(_ item: ListItem, template: String) -> [Parameter] {
        let level = source.children(of: item)
        if level.items.isEmpty {
            annotations.append(Annotation(.warning, "no parameters specified, expected a nested list of parameters, one parameter per list item", at: source.location(line: item.line)))
        }
        let variables = URITemplateVariables(template)
        return level.items.map { parameter($0, variables: variables, template: template) }
    }

    private mutating func parameter(_ item: ListItem, variables: URITemplateVariables, template: String) -> Parameter {
        let location = source.location(line: item.line)
        var parameter = Parameter(name: "", location: .path, required: true, sourceLocation: location)
        let text = item.text
        if let dots = text.firstRange(of: " ...") ?? text.firstRange(of: "...") {
            // The original syntax: name = `default` (required, type, `example`) ... description
            parameter.description = String(text[dots.upperBound...]).trimmedBlanks
            readOriginalSignature(String(text[..<dots.lowerBound]), into: &parameter)
        } else if let equals = text.firstIndex(of: "="), text.firstIndex(of: "(").map({ equals < $0 }) ?? true, !text.contains(":") {
            readOriginalSignature(text, into: &parameter)
        } else {
            let signature = MSONSignature(text)
            parameter.name = MSONSignature.unescape(signature.name ?? "")
            if let value = signature.value, !value.isEmpty { parameter.example = MSONSignature.unescape(value) }
            parameter.description = signature.description ?? ""
            for attribute in signature.attributes {
                switch attribute.lowercased() {
                case "required": parameter.required = true
                case "optional": parameter.required = false
                case "sample", "default", "fixed", "nullable", "fixed-type": continue
                default: parameter.type = MSONSignature.unescape(attribute)
                }
            }
        }
        let nested = source.children(of: item)
        let extra = source.block(nested.leading, strip: item.indent + 4).trimmedNewlines
        if !extra.isEmpty { parameter.description = parameter.description.isEmpty ? extra : parameter.description + "\n" + extra }
        for child in nested.items {
            let keyword = Self.keyword(child.text)
            switch keyword {
            case "default":
                if let colon = child.text.firstIndex(of: ":") {
                    parameter.defaultValue = MSONSignature.unescape(String(child.text[child.text.index(after: colon)...]))
                }
            case "sample":
                if let colon = child.text.firstIndex(of: ":") {
                    parameter.example = MSONSignature.unescape(String(child.text[child.text.index(after: colon)...]))
                }
            case "members", "values":
                for member in source.children(of: child).items {
                    let signature = MSONSignature(member.text)
                    parameter.members.append(MSONSignature.unescape(signature.identifier))
                }
            default:
                annotations.append(Annotation(.warning, "ignoring unrecognized block", at: source.location(line: child.line)))
            }
        }
        if let placement = variables.location(of: parameter.name) {
            parameter.location = placement
        } else {
            parameter.location = .query
            annotations.append(Annotation(.warning, "parameter '\(parameter.name)' is not found within the URI template '\(template)' for '\(parameter.name)'", at: location))
        }
        return parameter
    }

    private func readOriginalSignature(_ text: String, into parameter: inout Parameter) {
        var head = text.trimmedBlanks
        if head.hasSuffix(")"), let open = head.lastIndex(of: "(") {
            let inner = String(head[head.index(after: open)..<head.index(before: head.endIndex)])
            head = String(head[..<open]).trimmedBlanks
            for attribute in MSONSignature.splitList(inner, respectingBrackets: true) {
                switch attribute.lowercased() {
                case "required": parameter.required = true
                case "optional": parameter.required = false
                default:
                    if attribute.hasPrefix("`") { parameter.example = MSONSignature.unescape(attribute) } else { parameter.type = attribute }
                }
            }
        }
        if let equals = head.firstIndex(of: "=") {
            parameter.defaultValue = MSONSignature.unescape(String(head[head.index(after: equals)...]))
            head = String(head[..<equals]).trimmedBlanks
        }
        parameter.name = MSONSignature.unescape(head)
    }
}

/// Variable names in a URI template's expressions and whether each is a query parameter.
struct URITemplateVariables {
    private var placements: [String: ParameterLocation] = [:]

    /// drafter's complaints about a template: characters that must be percent-encoded, and
    /// variable names with characters RFC 6570 doesn't allow.
    static func problems(in template: String) -> [String] {
        var problems: [String] = []
        var inExpression = false
        for character in template {
            if character == "{" { inExpression = true } else if character == "}" { inExpression = false } else if !inExpression, " []\"<>\\^`|".contains(character) {
                problems.append("URI template contains disallowed character '\(character)'. Disallowed characters must be percent encoded.")
                break
            }
        }
        var variables = URITemplateVariables(template)
        for name in variables.placements.keys.sorted() {
            if let bad = name.first(where: { !($0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == "%") }) {
                problems.append("URI template variable '\(name)' contains invalid character '\(bad)', which should be percent encoded")
            }
        }
        variables.placements = [:]
        return problems
    }

    init(_ template: String) {
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else { break }
            var expression = rest[rest.index(after: open)..<close]
            var placement = ParameterLocation.path
            if let first = expression.first, "+#./;?&".contains(first) {
                if first == "?" || first == "&" { placement = .query }
                expression = expression.dropFirst()
            }
            for variable in expression.split(separator: ",") {
                var name = variable.trimmedBlanks
                if name.hasSuffix("*") { name.removeLast() }
                if let colon = name.firstIndex(of: ":") { name = String(name[..<colon]) }
                placements[name] = placement
            }
            rest = rest[rest.index(after: close)...]
        }
    }

    func location(of name: String) -> ParameterLocation? { placements[name] }
}
