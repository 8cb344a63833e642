// The paths and component schemas of an OpenAPI document read straight from its parsed values
// into the contract, path by path: OpenAPIKit decodes only the rest (info, servers, tags, the
// other components), so no model of the operations is made, and a schema or an example is put
// in the form OpenAPIKit gives it once, however often the document writes it. A document using
// something this reader doesn't read (callbacks, links, servers of an operation, a parameter
// style its location doesn't have, `$ref`s to other files, …), or one OpenAPIKit or its
// validations would find fault with, is left to `OpenAPIContractBuilder`, which words the
// problem: a description comes out the same either way.
import Dispatch
import Foundation
import KagamiContract
import KagamiJSON
import enum KagamiJSONSchema.JSONPointer
import OpenAPIKit
import OpenAPIKit30
import OpenAPIKitCompat
import Synchronization

/// Why `OpenAPIValuesReader` left a document to OpenAPIKit: what it met, and where.
struct ValuesReaderRefusal: Error, CustomStringConvertible {
    var reason: String
    var path: [String]

    var description: String { "\(reason) at \(JSONPointer.string(path))" }
}

struct OpenAPIValuesReader {
    private let components: JSONObject
    private let format: ContractFormat
    private let locator: SourceLocator
    private var forms: SchemaForms
    private var inliner = ComponentSchemaInliner(componentSchemas: [:])
    private var annotations: [Annotation] = []
    private var operationIds: Set<String> = []
    /// Payload schemas that are a `$ref` to a component (most of a large description's), by
    /// the reference: inlined once, shared by every payload that refers to it.
    private var referenced: [String: JSONValue] = [:]

    static let methods = ["get", "post", "patch", "put", "delete", "head", "options", "trace"]

    /// The parameter styles of each location (OpenAPI 3.0 section 4.7.12.4).
    static let styles: [String: Set<String>] = [
        "query": ["form", "spaceDelimited", "pipeDelimited", "deepObject"], "path": ["simple", "label", "matrix"],
        "header": ["simple"], "cookie": ["form"],
    ]

    /// The contract, or why the document is left to OpenAPIKit. `annotations` come first
    /// among the contract's (the reference problems found in the text; asked for once the
    /// rest of the document is decoded).
    static func contract(
        from document: JSONValue, format: ContractFormat, locator: SourceLocator, annotations: () -> [Annotation],
        progress: ReadingProgress.Report?
    ) -> Result<APIContract, ValuesReaderRefusal> {
        do {
            var reader = try OpenAPIValuesReader(document, format: format, locator: locator)
            return .success(try reader.read(document, annotations: annotations, progress: progress))
        } catch {
            return .failure(error)
        }
    }

    private init(_ document: JSONValue, format: ContractFormat, locator: SourceLocator) throws(ValuesReaderRefusal) {
        components = document["components"]?.objectValue ?? [:]
        self.format = format
        self.locator = locator
        forms = SchemaForms(format: format)
    }

    private mutating func read(
        _ document: JSONValue, annotations referenceProblems: () -> [Annotation], progress: ReadingProgress.Report?
    ) throws(ValuesReaderRefusal) -> APIContract {
        guard case .object(var members) = document, case .object(let paths) = members["paths"] else {
            throw ValuesReaderRefusal(reason: "no paths object", path: ["paths"])
        }
        // Everything but the paths and the component schemas, decoded by OpenAPIKit: what it
        // refuses there is worded by decoding the whole document.
        progress?(ReadingProgress(stage: "decoding"))
        members["paths"] = .object([:])
        let componentSchemas = components["schemas"]?.objectValue ?? [:]
        if case .object(var parts) = members["components"] {
            parts["schemas"] = .object([:])
            members["components"] = .object(parts)
        }
        let skeleton: OpenAPIKit.OpenAPI.Document
        do {
            if format == .openAPI30 {
                skeleton = try OpenAPIValueDecoder.decode(OpenAPIKit30.OpenAPI.Document.self, from: .object(members)).convert(to: .v3_1_0)
            } else {
                skeleton = try OpenAPIValueDecoder.decode(OpenAPIKit.OpenAPI.Document.self, from: .object(members))
            }
        } catch {
            throw ValuesReaderRefusal(reason: "OpenAPIKit refuses the document's other parts", path: [])
        }
        var contract = OpenAPIContractBuilder.heading(of: skeleton, format: format)
        var schemas = JSONObject()
        let made = try forms.prepare(Array(componentSchemas.values), at: ["components", "schemas"])
        for (name, form) in zip(componentSchemas.keys, made) { schemas[name] = form }
        inliner = ComponentSchemaInliner(componentSchemas: schemas)
        forms.prepareInlineSchemas(of: paths, components: components)

        progress?(ReadingProgress(stage: "validating"))
        let skeletonBuilder = OpenAPIContractBuilder(document: skeleton, format: format, locator: locator)
        annotations = referenceProblems() + skeletonBuilder.validationWarnings()

        // The component schemas inlined first: the paths then find each one made, on every core.
        progress?(ReadingProgress(stage: "schemas", total: schemas.count))
        contract.dataStructures = schemas.map { name, schema in
            DataStructure(component: name, schema: schema, resolved: inliner.sharedComponent(name) ?? inliner.resolved(schema), locator: locator)
        }

        var groups: [ResourceGroup] = []
        var groupIndexes: [String: Int] = [:]
        var resourceIndexes: [ResourceKey: Int] = [:]
        for part in try readPaths(paths, progress: progress) {
            annotations += part.annotations
            for read in part.paths {
                for (action, groupName) in read.actions {
                    let groupIndex = groupIndexes[groupName] ?? {
                        // A tag's description is its group's.
                        let tag = document["tags"]?.arrayValue?.first { $0["name"]?.stringValue == groupName }
                        groups.append(ResourceGroup(name: groupName, description: tag?["description"]?.stringValue ?? ""))
                        groupIndexes[groupName] = groups.count - 1
                        return groups.count - 1
                    }()
                    let resourceKey = ResourceKey(group: groupIndex, path: read.path)
                    if let resourceIndex = resourceIndexes[resourceKey] {
                        groups[groupIndex].resources[resourceIndex].actions.append(action)
                    } else {
                        resourceIndexes[resourceKey] = groups[groupIndex].resources.count
                        groups[groupIndex].resources.append(Resource(
                            name: read.path, description: read.description,
                            uriTemplate: read.path, parameters: read.shared, actions: [action],
                            sourceLocation: locator.location(of: ["paths", read.path])))
                    }
                }
            }
        }
        contract.groups = groups
        contract.annotations = annotations
        return contract
    }

    /// One path item read: its operations with the tag each is grouped under.
    private struct PathRead: Sendable {
        var path: String
        var description: String
        var shared: [Parameter]
        var actions: [(action: Action, group: String)]
    }

    /// The paths of one share of the document, and the problems found in them, in document order.
    private struct PathsPart: Sendable {
        var paths: [PathRead] = []
        var annotations: [Annotation] = []
        var operationIds: [(id: String, keyPath: [String])] = []
    }

    /// The path items read in consecutive shares, one per core, each by a reader of its own
    /// (its own caches, started from this one's): a large description's operations take
    /// seconds. The shares come back in document order.
    private func readPaths(_ paths: JSONObject, progress: ReadingProgress.Report?) throws(ValuesReaderRefusal) -> [PathsPart] {
        let entries = paths.elements
        let shares = min(ProcessInfo.processInfo.activeProcessorCount, 8, max(1, entries.count / 256))
        let readers = (0..<shares).map { _ in
            var reader = self
            reader.forms = forms.copy()
            reader.inliner = inliner.copy()
            reader.annotations = []
            reader.operationIds = []
            return reader
        }
        progress?(ReadingProgress(stage: "operations", total: entries.count))
        let done = Atomic<Int>(0)
        let results = Mutex<[Result<PathsPart, ValuesReaderRefusal>?]>(Array(repeating: nil, count: shares))
        DispatchQueue.concurrentPerform(iterations: shares) { share in
            var reader = readers[share]
            var part = PathsPart()
            let range = (entries.count * share / shares)..<(entries.count * (share + 1) / shares)
            do throws(ValuesReaderRefusal) {
                for (path, value) in entries[range] {
                    let count = done.add(1, ordering: .relaxed).newValue
                    if let progress, count % 500 == 0 {
                        progress(ReadingProgress(stage: "operations", done: count, total: entries.count))
                    }
                    part.paths.append(try reader.pathItem(path, value, operationIds: &part.operationIds))
                }
                part.annotations = reader.annotations
                results.withLock { $0[share] = .success(part) }
            } catch {
                let refusal = error
                results.withLock { $0[share] = .failure(refusal) }
            }
        }
        var parts: [PathsPart] = []
        var operationIds: Set<String> = []
        for result in results.withLock({ $0 }) {
            guard let result else { throw ValuesReaderRefusal(reason: "a share of the paths not read", path: ["paths"]) }
            let part = try result.get()
            for (id, keyPath) in part.operationIds where !operationIds.insert(id).inserted {
                throw ValuesReaderRefusal(reason: "an operationId used twice (a validation warns)", path: keyPath)
            }
            parts.append(part)
        }
        return parts
    }

    /// One path item's operations.
    private mutating func pathItem(
        _ path: String, _ value: JSONValue, operationIds: inout [(id: String, keyPath: [String])]
    ) throws(ValuesReaderRefusal) -> PathRead {
        let pathPath = ["paths", path]
        guard path.hasPrefix("/"), OpenAPIKit.OpenAPI.Path(rawValue: path).rawValue == path else {
            throw ValuesReaderRefusal(reason: "a path OpenAPIKit writes otherwise", path: pathPath)
        }
        let item = try object(value, at: pathPath)
        try expectKeys(item, ["summary", "description", "parameters"] + Self.methods, at: pathPath)
        let shared = try parameters(item["parameters"], at: pathPath + ["parameters"])
        let summary = try string(item["summary"], at: pathPath + ["summary"])
        var read = PathRead(
            // Summary and description both, as an operation's.
            path: path, description: [summary, try string(item["description"], at: pathPath + ["description"])].compactMap { $0 }.joined(separator: "\n\n"),
            shared: shared, actions: [])
        for method in Self.methods {
            guard let operationValue = item[method] else { continue }
            let keyPath = pathPath + [method]
            let operation = try object(operationValue, at: keyPath)
            let action = try action(method, path: path, operation, shared: shared, at: keyPath)
            if let operationId = operation["operationId"]?.stringValue { operationIds.append((operationId, keyPath + ["operationId"])) }
            read.actions.append((action, operation["tags"]?.arrayValue?.first?.stringValue ?? ""))
        }
        return read
    }

    /// A path's resource within a group.
    private struct ResourceKey: Hashable {
        var group: Int
        var path: String
    }

    // MARK: Operations

    private mutating func action(
        _ method: String, path: String, _ operation: JSONObject, shared: [Parameter], at keyPath: [String]
    ) throws(ValuesReaderRefusal) -> Action {
        try expectKeys(operation, ["tags", "summary", "description", "operationId", "parameters", "requestBody", "responses", "deprecated", "security"], at: keyPath)
        if let tags = operation["tags"], !(tags.arrayValue?.allSatisfy { $0.stringValue != nil } ?? false) {
            throw ValuesReaderRefusal(reason: "tags that are not strings", path: keyPath + ["tags"])
        }
        _ = try bool(operation["deprecated"], at: keyPath + ["deprecated"])
        try checkSecurity(operation["security"], at: keyPath + ["security"])
        let summary = try string(operation["summary"], at: keyPath + ["summary"])
        let description = try string(operation["description"], at: keyPath + ["description"])
        let operationId = try string(operation["operationId"], at: keyPath + ["operationId"])
        if let operationId, !operationIds.insert(operationId).inserted {
            throw ValuesReaderRefusal(reason: "an operationId used twice (a validation warns)", path: keyPath + ["operationId"])
        }
        let upper = method.uppercased()
        var actionParameters = shared
        for parameter in try parameters(operation["parameters"], at: keyPath + ["parameters"]) {
            if let index = actionParameters.firstIndex(where: { $0.name == parameter.name && $0.location == parameter.location }) {
                actionParameters[index] = parameter
            } else {
                actionParameters.append(parameter)
            }
        }
        guard let responses = operation["responses"]?.objectValue else {
            throw ValuesReaderRefusal(reason: "no responses object", path: keyPath + ["responses"])
        }
        if responses.isEmpty {
            annotations.append(Annotation(
                .error, "\(upper) \(path) has no responses; an operation documents at least one (a mock has nothing to answer)",
                at: locator.location(of: keyPath + ["responses"])))
        }
        var action = Action(
            name: operationId ?? summary ?? "\(upper) \(path)",
            method: upper,
            description: [summary, description].compactMap { $0 }.joined(separator: "\n\n"),
            uriTemplate: OpenAPIContractBuilder.uriTemplate(path: path, parameters: actionParameters),
            parameters: actionParameters,
            sourceLocation: locator.location(of: keyPath))
        var example = TransactionExample()
        if let bodyValue = operation["requestBody"] {
            let bodyPath = keyPath + ["requestBody"]
            let body = try resolvedComponent(bodyValue, in: "requestBodies", at: bodyPath)
            try expectKeys(body, ["description", "content", "required"], at: bodyPath)
            action.requestBodyRequired = try bool(body["required"], at: bodyPath + ["required"]) ?? false
            let bodyDescription = try string(body["description"], at: bodyPath + ["description"]) ?? ""
            guard let content = body["content"]?.objectValue else {
                throw ValuesReaderRefusal(reason: "a request body without content", path: bodyPath)
            }
            for (contentType, entry) in content {
                let mediaType = try self.mediaType(contentType, at: bodyPath + ["content", contentType])
                for (name, payload) in try payloads(mediaType, entry, headers: [], at: bodyPath + ["content", contentType]) {
                    var payload = payload
                    payload.description = bodyDescription
                    example.requests.append(Request(name: name.isEmpty ? mediaType : name, payload: payload))
                }
            }
        }
        for (status, entry) in responses {
            let statusPath = keyPath + ["responses", status]
            guard let code = OpenAPIKit.OpenAPI.Response.StatusCode(rawValue: status), code.rawValue == status else {
                throw ValuesReaderRefusal(reason: "a status OpenAPIKit reads otherwise", path: statusPath)
            }
            let response = try resolvedComponent(entry, in: "responses", at: statusPath)
            try expectKeys(response, ["description", "headers", "content"], at: statusPath)
            guard let responseDescription = try string(response["description"], at: statusPath + ["description"]) else {
                throw ValuesReaderRefusal(reason: "a response without a description", path: statusPath)
            }
            let number = OpenAPIContractBuilder.statusCode(status)
            let isStatusClass = Int(status) == nil && number != 0
            let responsePath = entry["$ref"]?.stringValue.flatMap(OpenAPIContractBuilder.documentPath(ofReference:)) ?? statusPath
            let (declared, headers) = try self.headers(response["headers"], at: responsePath + ["headers"])
            let content = try response["content"].map { value throws(ValuesReaderRefusal) in try object(value, at: statusPath + ["content"]) } ?? [:]
            if content.isEmpty {
                example.responses.append(Response(
                    status: number,
                    payload: MessagePayload(description: responseDescription, headers: headers, sourceLocation: locator.location(of: statusPath)),
                    isStatusClass: isStatusClass, declaredHeaders: declared))
            }
            for (contentType, value) in content {
                let mediaType = try self.mediaType(contentType, at: statusPath + ["content", contentType])
                for (name, payload) in try payloads(mediaType, value, headers: headers, at: statusPath + ["content", contentType]) {
                    var payload = payload
                    payload.description = responseDescription
                    example.responses.append(Response(status: number, name: name, payload: payload, isStatusClass: isStatusClass, declaredHeaders: declared))
                }
            }
        }
        action.examples = [example]
        return action
    }

    /// Security requirements naming only schemes the components define (decoding refuses others).
    private func checkSecurity(_ value: JSONValue?, at keyPath: [String]) throws(ValuesReaderRefusal) {
        guard let value else { return }
        let schemes = components["securitySchemes"]?.objectValue ?? [:]
        guard let requirements = value.arrayValue, requirements.allSatisfy({ requirement in
            guard let names = requirement.objectValue else { return false }
            return names.allSatisfy { name, scopes in
                schemes[name] != nil && (scopes.arrayValue?.allSatisfy { $0.stringValue != nil } ?? false)
            }
        }) else {
            throw ValuesReaderRefusal(reason: "security requirements OpenAPIKit checks", path: keyPath)
        }
    }

    private func mediaType(_ key: String, at keyPath: [String]) throws(ValuesReaderRefusal) -> String {
        guard let type = OpenAPIKit.OpenAPI.ContentType(rawValue: key), type.rawValue == key else {
            throw ValuesReaderRefusal(reason: "a media type OpenAPIKit writes otherwise", path: keyPath)
        }
        return key
    }

    // MARK: Parameters and headers

    private mutating func parameters(_ value: JSONValue?, at keyPath: [String]) throws(ValuesReaderRefusal) -> [Parameter] {
        guard let value else { return [] }
        guard let list = value.arrayValue else { throw ValuesReaderRefusal(reason: "parameters that are not a list", path: keyPath) }
        var result: [Parameter] = []
        var seen: Set<String> = []
        for (index, entry) in list.enumerated() {
            let entryPath = keyPath + [String(index)]
            let parameter = try resolvedComponent(entry, in: "parameters", at: entryPath)
            try expectKeys(parameter, ["name", "in", "description", "required", "deprecated", "allowEmptyValue", "schema", "example", "style", "explode"], at: entryPath)
            guard let name = parameter["name"]?.stringValue, let written = parameter["in"]?.stringValue else {
                throw ValuesReaderRefusal(reason: "a parameter without name or location", path: entryPath)
            }
            let location: ParameterLocation
            switch written {
            case "query": location = .query
            case "header": location = .header
            case "path": location = .path
            case "cookie": location = .cookie
            default: throw ValuesReaderRefusal(reason: "a parameter location this reader doesn't read", path: entryPath + ["in"])
            }
            let required = try bool(parameter["required"], at: entryPath + ["required"]) ?? false
            if location == .path, !required { throw ValuesReaderRefusal(reason: "a path parameter not required", path: entryPath) }
            if location != .query, parameter["allowEmptyValue"] != nil { throw ValuesReaderRefusal(reason: "allowEmptyValue outside the query", path: entryPath) }
            _ = try bool(parameter["deprecated"], at: entryPath + ["deprecated"])
            _ = try bool(parameter["allowEmptyValue"], at: entryPath + ["allowEmptyValue"])
            // How an array or object is written (what a Swagger 2.0 `collectionFormat` becomes):
            // the contract reads values as they come; a style the location doesn't have is
            // OpenAPIKit's to word.
            if let style = parameter["style"] {
                guard let styleName = style.stringValue, Self.styles[written]?.contains(styleName) == true else {
                    throw ValuesReaderRefusal(reason: "a style this location doesn't have", path: entryPath + ["style"])
                }
            }
            _ = try bool(parameter["explode"], at: entryPath + ["explode"])
            // Two parameters alike in a list: OpenAPIKit's validations warn.
            guard seen.insert("\(written) \(name)").inserted else {
                throw ValuesReaderRefusal(reason: "a parameter listed twice", path: entryPath)
            }
            guard let schemaValue = parameter["schema"] else {
                throw ValuesReaderRefusal(reason: "a parameter without a schema", path: entryPath)
            }
            let schema = try inliner.resolved(referenceOrForm(schemaValue, at: entryPath + ["schema"]))
            let parameterPath = entry["$ref"]?.stringValue.flatMap(OpenAPIContractBuilder.documentPath(ofReference:)) ?? entryPath
            let writtenExample = try parameter["example"].map { value throws(ValuesReaderRefusal) in
                WrittenExample(try exampleForm(value, at: entryPath + ["example"]), at: locator.location(of: parameterPath + ["example"]))
            }
            let example = writtenExample.map { OpenAPIContractBuilder.plainText($0.value) }
            var read = Parameter(
                name: name, location: location, type: schema["type"]?.stringValue,
                required: required, defaultValue: schema["default"].map(OpenAPIContractBuilder.plainText),
                example: example ?? schema["examples"]?.arrayValue?.first.map(OpenAPIContractBuilder.plainText)
                    ?? schema["example"].map(OpenAPIContractBuilder.plainText),
                members: schema["enum"]?.arrayValue?.map(OpenAPIContractBuilder.plainText) ?? [],
                description: try string(parameter["description"], at: entryPath + ["description"]) ?? "",
                schema: schema, sourceLocation: locator.location(of: entryPath))
            read.arrayDelimiter = OpenAPIContractBuilder.arrayDelimiter(style: parameter["style"]?.stringValue)
            read.writtenExample = writtenExample
            result.append(read)
        }
        return result
    }

    /// A response's declared headers and the example line of each (`Content-Type` left out,
    /// as OpenAPI says). `keyPath` is where the response writes them (in its component when
    /// the response is a `$ref`).
    private mutating func headers(_ value: JSONValue?, at keyPath: [String]) throws(ValuesReaderRefusal) -> (declared: [ResponseHeader], lines: [Header]) {
        guard let value else { return ([], []) }
        var declared: [ResponseHeader] = []
        var lines: [Header] = []
        for (name, entry) in try object(value, at: keyPath) where name.lowercased() != "content-type" {
            let entryPath = keyPath + [name]
            let header = try resolvedComponent(entry, in: "headers", at: entryPath)
            let headerPath = entry["$ref"]?.stringValue.flatMap(OpenAPIContractBuilder.documentPath(ofReference:)) ?? entryPath
            try expectKeys(header, ["description", "required", "deprecated", "schema", "example"], at: headerPath)
            let description = try string(header["description"], at: headerPath + ["description"]) ?? ""
            let required = try bool(header["required"], at: headerPath + ["required"]) ?? false
            let deprecated = try bool(header["deprecated"], at: headerPath + ["deprecated"]) ?? false
            guard let schemaValue = header["schema"] else { throw ValuesReaderRefusal(reason: "a header without a schema", path: headerPath) }
            let schema = try inliner.resolved(referenceOrForm(schemaValue, at: headerPath + ["schema"]))
            let example = try header["example"].map { value throws(ValuesReaderRefusal) in try exampleForm(value, at: headerPath + ["example"]) }
            var declaration = ResponseHeader(
                name: name, required: required, deprecated: deprecated, description: description, schema: schema,
                schemaPointer: JSONPointer.string(headerPath + ["schema"]), sourceLocation: locator.location(of: headerPath))
            if example != nil { declaration.exampleLocation = locator.location(of: headerPath + ["example"]) }
            declared.append(declaration)
            lines.append(Header(name: name, value: declaration.exampleLine(example)))
        }
        return (declared, lines)
    }

    // MARK: Messages

    /// One payload per named example (or one when there are none): body, schema and headers.
    private mutating func payloads(
        _ mediaType: String, _ value: JSONValue, headers: [Header], at keyPath: [String]
    ) throws(ValuesReaderRefusal) -> [(String, MessagePayload)] {
        let content = try object(value, at: keyPath)
        try expectKeys(content, ["schema", "example", "examples"], at: keyPath)
        if content["example"] != nil, content["examples"] != nil {
            throw ValuesReaderRefusal(reason: "both example and examples", path: keyPath)
        }
        var base = MessagePayload(headers: [Header(name: "Content-Type", value: mediaType)] + headers, sourceLocation: locator.location(of: keyPath))
        if let schema = content["schema"] {
            if let reference = try self.reference(schema, at: keyPath + ["schema"]) {
                base.schemaReference = reference
                base.schema = referenced[reference] ?? {
                    let resolved = inliner.resolved(["$ref": .string(reference)])
                    referenced[reference] = resolved
                    return resolved
                }()
            } else {
                base.schema = try inliner.resolved(forms.form(of: schema, at: keyPath + ["schema"]))
            }
            base.schemaSource = .schema
            base.schemaDialect = OpenAPIReader.schemaDialect
            base.schemaPointer = JSONPointer.string(keyPath + ["schema"])
        }
        var result: [(String, MessagePayload)] = []
        let named = try content["examples"].map { value throws(ValuesReaderRefusal) in try object(value, at: keyPath + ["examples"]) } ?? [:]
        if named.isEmpty, let example = content["example"] {
            var payload = base
            payload.body = OpenAPIContractBuilder.body(try exampleForm(example, at: keyPath + ["example"]), mediaType: mediaType)
            payload.bodySource = .body
            payload.exampleLocation = locator.location(of: keyPath + ["example"])
            result.append(("", payload))
        }
        for (name, entry) in named {
            let entryPath = keyPath + ["examples", name]
            let example = try object(entry, at: entryPath)
            try expectKeys(example, ["summary", "description", "value"], at: entryPath)
            _ = try string(example["summary"], at: entryPath + ["summary"])
            _ = try string(example["description"], at: entryPath + ["description"])
            guard let value = example["value"] else { throw ValuesReaderRefusal(reason: "an example without a value", path: entryPath) }
            var payload = base
            payload.body = OpenAPIContractBuilder.body(try exampleForm(value, at: entryPath + ["value"]), mediaType: mediaType)
            payload.bodySource = .body
            payload.exampleLocation = locator.location(of: entryPath + ["value"])
            result.append((name, payload))
        }
        if result.isEmpty {
            var payload = base
            // The body is written from the schema when asked (`MessagePayload.exampleBody`).
            if base.schema != nil { payload.bodySource = .schema }
            result.append(("", payload))
        }
        return result
    }

    // MARK: Values

    /// A schema in the form OpenAPIKit gives it; a `$ref` to a component schema as written.
    private func referenceOrForm(_ value: JSONValue, at keyPath: [String]) throws(ValuesReaderRefusal) -> JSONValue {
        if let reference = try reference(value, at: keyPath) { return ["$ref": .string(reference)] }
        return try forms.form(of: value, at: keyPath)
    }

    /// The `$ref` of a schema that is only a reference to a component schema; nil for a
    /// schema without one. Others (to other files, with siblings) are left to OpenAPIKit.
    private func reference(_ value: JSONValue, at keyPath: [String]) throws(ValuesReaderRefusal) -> String? {
        guard let members = value.objectValue, let written = members["$ref"] else { return nil }
        guard members.count == 1, let reference = written.stringValue, SchemaTranslation.isComponentSchemaReference(reference) else {
            throw ValuesReaderRefusal(reason: "a reference this reader doesn't follow", path: keyPath)
        }
        return reference
    }

    /// The object, or the component it refers to (`#/components/<kind>/<name>`).
    private func resolvedComponent(_ value: JSONValue, in kind: String, at keyPath: [String]) throws(ValuesReaderRefusal) -> JSONObject {
        let members = try object(value, at: keyPath)
        guard let written = members["$ref"] else { return members }
        let prefix = "#/components/\(kind)/"
        guard members.count == 1, let reference = written.stringValue, reference.hasPrefix(prefix),
              SchemaTranslation.isComponentName(reference.utf8.dropFirst(prefix.utf8.count)),
              let target = components[kind]?[String(reference.dropFirst(prefix.count))]?.objectValue,
              target["$ref"] == nil else {
            throw ValuesReaderRefusal(reason: "a reference this reader doesn't follow", path: keyPath)
        }
        return target
    }

    /// An example value as OpenAPIKit gives it back (members in name order, numbers as
    /// `JSONEncoder` writes them).
    private func exampleForm(_ value: JSONValue, at keyPath: [String]) throws(ValuesReaderRefusal) -> JSONValue {
        guard !value.isNull else { throw ValuesReaderRefusal(reason: "a null example", path: keyPath) }
        return SchemaTranslation.example(value)
    }

    private func object(_ value: JSONValue, at keyPath: [String]) throws(ValuesReaderRefusal) -> JSONObject {
        guard let members = value.objectValue else { throw ValuesReaderRefusal(reason: "not an object", path: keyPath) }
        return members
    }

    private func string(_ value: JSONValue?, at keyPath: [String]) throws(ValuesReaderRefusal) -> String? {
        guard let value else { return nil }
        guard let text = value.stringValue else { throw ValuesReaderRefusal(reason: "not a string", path: keyPath) }
        return text
    }

    private func bool(_ value: JSONValue?, at keyPath: [String]) throws(ValuesReaderRefusal) -> Bool? {
        guard let value else { return nil }
        guard let flag = value.boolValue else { throw ValuesReaderRefusal(reason: "not a boolean", path: keyPath) }
        return flag
    }

    /// Only these members and `x-` extensions (OpenAPIKit refuses other names; the rest this
    /// reader leaves to it).
    private func expectKeys(_ members: JSONObject, _ known: [String], at keyPath: [String]) throws(ValuesReaderRefusal) {
        for key in members.keys where !known.contains(key) && !key.lowercased().hasPrefix("x-") {
            throw ValuesReaderRefusal(reason: "a member this reader doesn't read", path: keyPath + [key])
        }
    }
}

/// Schemas and examples in the form OpenAPIKit gives them back (a 3.0 schema as 3.1, members
/// in name order), each distinct value made once: translated keyword by keyword
/// (`SchemaTranslation`), or by OpenAPIKit when the translation leaves it. Unchecked: one
/// reader uses it at a time; a reader on another thread takes a `copy()`.
final class SchemaForms: @unchecked Sendable {
    private let format: ContractFormat
    private var schemas: [JSONValue: JSONValue] = [:]

    init(format: ContractFormat) {
        self.format = format
    }

    /// Another with the forms made so far, for a reader on another thread.
    func copy() -> SchemaForms {
        let copy = SchemaForms(format: format)
        copy.schemas = schemas
        return copy
    }

    func form(of schema: JSONValue, at keyPath: [String]) throws(ValuesReaderRefusal) -> JSONValue {
        if let made = schemas[schema] { return made }
        return try prepare([schema], at: keyPath)[0]
    }

    /// The forms of these schemas: those not made yet are translated, and those the translation
    /// leaves are decoded together as the component schemas of documents of a thousand each,
    /// on all cores.
    func prepare(_ values: [JSONValue], at keyPath: [String]) throws(ValuesReaderRefusal) -> [JSONValue] {
        var untranslated: [JSONValue] = []
        for value in values where schemas[value] == nil {
            if let form = SchemaTranslation.form(of: value, format: format) {
                schemas[value] = form
            } else {
                untranslated.append(value)
            }
        }
        var seen: Set<JSONValue> = []
        let pending = untranslated.filter { seen.insert($0).inserted }
        let batch = 1000
        let parts = (pending.count + batch - 1) / batch
        let made = Mutex<[[JSONValue]?]>(Array(repeating: nil, count: parts))
        let format = format
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            let range = (part * batch)..<min((part + 1) * batch, pending.count)
            var members = JSONObject()
            for index in range { members["s\(index)"] = pending[index] }
            guard let decoded = try? Self.decoded(members, format: format) else { return }
            let forms = range.compactMap { decoded["s\($0)"] }
            guard forms.count == range.count else { return }
            made.withLock { $0[part] = forms }
        }
        for (part, forms) in made.withLock({ $0 }).enumerated() {
            guard let forms else { throw ValuesReaderRefusal(reason: "a schema OpenAPIKit refuses", path: keyPath) }
            for (offset, form) in forms.enumerated() { schemas[pending[part * batch + offset]] = form }
        }
        var forms: [JSONValue] = []
        forms.reserveCapacity(values.count)
        for value in values {
            guard let form = schemas[value] else { throw ValuesReaderRefusal(reason: "a schema OpenAPIKit doesn't give back", path: keyPath) }
            forms.append(form)
        }
        return forms
    }

    /// Every schema written inline in the paths (and in the parameters, request bodies,
    /// responses and headers they refer to), put in form together before the paths are read.
    func prepareInlineSchemas(of paths: JSONObject, components: JSONObject) {
        var found: [JSONValue] = []
        func schema(_ value: JSONValue?) {
            guard let value, value.objectValue?["$ref"] == nil else { return }
            found.append(value)
        }
        func parameters(_ value: JSONValue?) {
            for entry in value?.arrayValue ?? [] { schema(entry["schema"]) }
        }
        func content(_ value: JSONValue?) {
            for (_, entry) in value?.objectValue ?? [:] { schema(entry["schema"]) }
        }
        for (_, item) in paths {
            parameters(item["parameters"])
            for method in OpenAPIValuesReader.methods {
                guard let operation = item[method] else { continue }
                parameters(operation["parameters"])
                content(operation["requestBody"]?["content"])
                for (_, response) in operation["responses"]?.objectValue ?? [:] {
                    content(response["content"])
                    for (_, header) in response["headers"]?.objectValue ?? [:] { schema(header["schema"]) }
                }
            }
        }
        for (_, parameter) in components["parameters"]?.objectValue ?? [:] { schema(parameter["schema"]) }
        for (_, body) in components["requestBodies"]?.objectValue ?? [:] { content(body["content"]) }
        for (_, response) in components["responses"]?.objectValue ?? [:] {
            content(response["content"])
            for (_, header) in response["headers"]?.objectValue ?? [:] { schema(header["schema"]) }
        }
        for (_, header) in components["headers"]?.objectValue ?? [:] { schema(header["schema"]) }
        // One that OpenAPIKit refuses is met again as the paths are read, and refused there.
        _ = try? prepare(found, at: ["paths"])
    }

    /// The forms OpenAPIKit gives these schemas, decoded as the component schemas of a document.
    static func decoded(_ members: JSONObject, format: ContractFormat) throws -> [String: JSONValue] {
        guard !members.isEmpty else { return [:] }
        let document: JSONValue = [
            "openapi": .string(format == .openAPI30 ? "3.0.3" : "3.1.0"),
            "info": ["title": "", "version": ""],
            "paths": .object([:]),
            "components": ["schemas": .object(members)],
        ]
        let schemas: OrderedDictionary<OpenAPIKit.OpenAPI.ComponentKey, OpenAPIKit.JSONSchema>
        if format == .openAPI30 {
            schemas = try OpenAPIValueDecoder.decode(OpenAPIKit30.OpenAPI.Document.self, from: document).convert(to: .v3_1_0).components.schemas
        } else {
            schemas = try OpenAPIValueDecoder.decode(OpenAPIKit.OpenAPI.Document.self, from: document).components.schemas
        }
        var result: [String: JSONValue] = [:]
        for (key, schema) in schemas { result[key.rawValue] = OpenAPIContractBuilder.schemaForm(schema, format: format) }
        return result
    }
}
