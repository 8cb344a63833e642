// OpenAPI 3.0 and 3.1 documents (JSON or YAML) into the contract model, through OpenAPIKit.
// 3.0 documents are converted to 3.1 by OpenAPIKitCompat, so schemas come out in the
// JSON Schema 2020-12 form either way; `$ref`s to components are inlined.
import Foundation
import KagamiContract
import KagamiURITemplate
import KagamiJSON
import enum KagamiJSONSchema.JSONPointer
import OpenAPIKit
import OpenAPIKit30
import OpenAPIKitCompat
import Yams

public enum OpenAPIReader {
    /// `$schema` noted on every schema read from an OpenAPI document.
    public static let schemaDialect = "https://json-schema.org/draft/2020-12/schema"

    /// From how many paths a document's path items are decoded apart, on all cores.
    public static let pathsDecodedApart = 200

    /// How a document's paths are read.
    public enum PathReading: Sendable {
        /// Straight from the values (`OpenAPIValuesReader`), through OpenAPIKit when that
        /// reader leaves the document to it.
        case fromValues
        /// Through OpenAPIKit's model of the whole document.
        case throughOpenAPIKit
    }

    /// Reads a document. Never throws: problems become annotations with positions.
    /// `minimumPathsApart`: from how many paths the path items are decoded apart when the
    /// document is read through OpenAPIKit.
    /// The text is let go once parsed (given the last copy, a large description's text is not
    /// held while its operations are read).
    /// `checksSchemaExamples`: the examples schemas write of themselves are checked against
    /// them, each one refused a warning (lint's; `SchemaExampleCheck`).
    public static func parse(
        _ text: consuming String, minimumPathsApart: Int = pathsDecodedApart, reading: PathReading = .fromValues,
        checksSchemaExamples: Bool = false, progress: ReadingProgress.Report? = nil
    ) -> APIContract {
        progress?(ReadingProgress(stage: "parsing"))
        let document: OpenAPISource.Document
        do {
            document = try OpenAPISource.readAsOpenAPI3(consume text)
        } catch {
            return failed(.openAPI31, error.message, at: error.location)
        }
        guard let swagger = document.swagger else {
            // A walk of the whole document, on another core while the rest is decoded.
            let references = ReferenceProblemsAside(in: document.value, locator: document.locator)
            var contract = parse(document.value, locator: document.locator, references: references, minimumPathsApart: minimumPathsApart, reading: reading, progress: progress)
            if checksSchemaExamples { contract.annotations += schemaExampleProblems(document, contract: contract) }
            contract.readingNotes += references.notes
            readSecurity(of: document.value, into: &contract)
            return contract
        }
        // A 2.0 document's references are checked as the 2.0 text writes them.
        let references = ReferenceProblemsAside(in: swagger.original, locator: swagger.locator)
        var contract = parse(document.value, locator: document.locator, references: references, minimumPathsApart: minimumPathsApart, reading: reading, progress: progress)
        if checksSchemaExamples { contract.annotations += schemaExampleProblems(document, contract: contract) }
        readSecurity(of: document.value, into: &contract)
        contract.format = .swagger20
        contract.metadata = contract.metadata.map { $0.name == "openapi" ? MetadataEntry(name: "swagger", value: "2.0") : $0 }
        contract.annotations = swagger.problems + contract.annotations
        contract.readingNotes = swagger.notes
        return contract
    }

    /// Each operation's `security` (its own, else the document's) as the credentials its
    /// schemes put in a request (`Action.security`). A requirement naming a scheme whose
    /// credential a request can't be seen to carry (mutual TLS) asks for none: the client may
    /// be using it.
    static func readSecurity(of document: JSONValue, into contract: inout APIContract) {
        guard let schemes = document["components"]?["securitySchemes"]?.objectValue, !schemes.isEmpty,
              let paths = document["paths"]?.objectValue else { return }
        let shared = credentials(document["security"], schemes: schemes)
        for group in contract.groups.indices {
            for resource in contract.groups[group].resources.indices {
                guard let item = paths[contract.groups[group].resources[resource].uriTemplate] else { continue }
                for action in contract.groups[group].resources[resource].actions.indices {
                    let method = contract.groups[group].resources[resource].actions[action].method.lowercased()
                    let own = item[method]?["security"]
                    contract.groups[group].resources[resource].actions[action].security = own.map { credentials($0, schemes: schemes) } ?? shared
                }
            }
        }
    }

    /// The alternatives of a list of security requirements; nil when one of them asks for
    /// nothing the mock can see.
    static func credentials(_ requirements: JSONValue?, schemes: JSONObject) -> [[Credential]]? {
        guard case .array(let alternatives)? = requirements, !alternatives.isEmpty else { return nil }
        var result: [[Credential]] = []
        for alternative in alternatives {
            guard case .object(let names) = alternative, !names.isEmpty else { return nil }
            var all: [Credential] = []
            for (name, _) in names {
                guard let definition = schemes[name], let credential = Credential(scheme: name, definition: definition) else { return nil }
                all.append(credential)
            }
            result.append(all)
        }
        return result
    }

    /// The schema examples `SchemaExampleCheck` finds refused, for a document read without
    /// errors that keep it from use (with those, the schemas' forms are not all there).
    private static func schemaExampleProblems(_ document: OpenAPISource.Document, contract: APIContract) -> [Annotation] {
        guard !contract.annotations.contains(where: \.blocksUse) else { return [] }
        return SchemaExampleCheck.problems(
            in: document.value, locator: document.locator, components: contract.dataStructures, isSwagger: document.swagger != nil)
    }

    private static func parse(
        _ raw: JSONValue, locator: SourceLocator, references: ReferenceProblemsAside, minimumPathsApart: Int, reading: PathReading,
        progress: ReadingProgress.Report?
    ) -> APIContract {
        let version = raw["openapi"]?.stringValue ?? ""
        let format: ContractFormat = version.hasPrefix("3.0") ? .openAPI30 : .openAPI31
        guard version.hasPrefix("3.0") || version.hasPrefix("3.1") || version.hasPrefix("3.2") else {
            let found = version.isEmpty ? "no 'openapi' or 'swagger' field" : "'openapi: \(version)'"
            return failed(format, "expected a Swagger 2.0 or OpenAPI 3.0 or 3.1 document, found \(found)", at: locator.location(of: ["openapi"]))
        }
        if reading == .fromValues, case .success(let contract) = OpenAPIValuesReader.contract(
            from: raw, format: format, locator: locator, annotations: { references.problems }, progress: progress) {
            return contract
        }
        let referenceProblems = references.problems
        progress?(ReadingProgress(stage: "decoding"))
        // Decoded from the values as Yams decodes their JSON text: mappings keep document
        // order (Foundation's JSONDecoder doesn't).
        let document: OpenAPIKit.OpenAPI.Document
        do {
            if format == .openAPI30 {
                let legacy = try decodedApart(OpenAPIKit30.OpenAPI.Document.self, raw, minimumPaths: minimumPathsApart, progress: progress)
                    ?? OpenAPIValueDecoder.decode(OpenAPIKit30.OpenAPI.Document.self, from: raw, progress: progress)
                document = legacy.convert(to: .v3_1_0)
            } else {
                document = try decodedApart(OpenAPIKit.OpenAPI.Document.self, raw, minimumPaths: minimumPathsApart, progress: progress)
                    ?? OpenAPIValueDecoder.decode(OpenAPIKit.OpenAPI.Document.self, from: raw, progress: progress)
            }
        } catch {
            let described = OpenAPIKit.OpenAPI.Error(from: error)
            let path = described.codingPath.map(\.stringValue)
            var contract = failed(format, described.localizedDescription, at: locator.location(of: path))
            contract.annotations += referenceProblems
            return contract
        }
        var builder = OpenAPIContractBuilder(document: document, format: format, locator: locator)
        builder.annotations = referenceProblems
        builder.progress = progress
        return builder.build()
    }

    /// A document with its path items decoded apart (`OpenAPIValueDecoder.decodeApart`), or
    /// nil when it must be decoded whole: too few paths, a part that fails, or a security
    /// requirement naming a scheme the components lack, which decoding it whole refuses.
    static func decodedApart<Document: DocumentDecodedApart>(
        _ type: Document.Type, _ raw: JSONValue, minimumPaths: Int, progress: ReadingProgress.Report?
    ) -> Document? {
        guard var (document, items) = OpenAPIValueDecoder.decodeApart(
            type, paths: Document.PathEntry.self, from: raw, minimumPaths: minimumPaths, progress: progress) else { return nil }
        var paths = OrderedDictionary<OpenAPIKit.OpenAPI.Path, Document.PathEntry>()
        for (key, item) in items { paths[OpenAPIKit.OpenAPI.Path(rawValue: key)] = item }
        items = []
        // Iterated, not mapped: OpenAPIKit's ordered dictionary counts itself for each element it maps.
        for (_, item) in paths where !document.namesKnownSchemes(item) { return nil }
        document.paths = paths
        return document
    }

    /// Every `$ref` inside the document that points nowhere, named, where it is written.
    /// References to other files are not followed: a warning says so. An example's
    /// `externalValue` is not fetched either (a description is read without network access):
    /// a note says so, since that example is then neither checked nor served.
    static func referenceProblems(in document: JSONValue, locator: SourceLocator) -> (problems: [Annotation], notes: [ConversionNote]) {
        var problems: [Annotation] = []
        var notes: [ConversionNote] = []
        for (path, reference, kind) in unresolvedReferences(document) {
            switch kind {
            case .externalValue:
                notes.append(ConversionNote(
                    "example '\(path.last ?? "")' is given as externalValue '\(reference)', which is not fetched (a description is read without network access): it is not checked against its schema, and the mock does not serve it",
                    at: locator.location(of: path + ["externalValue"])))
            case .dangling:
                problems.append(Annotation(
                    .error, "unresolvable reference '\(reference)': nothing in the document is at that path",
                    at: locator.location(of: path + ["$ref"])))
            case .external:
                problems.append(Annotation(
                    .warning, "reference '\(reference)' points outside the document; it is not followed",
                    at: locator.location(of: path + ["$ref"])))
            case .mapping(let key):
                problems.append(Annotation(
                    .error, "discriminator mapping '\(key)' names '\(reference)': no schema of the document is there",
                    at: locator.location(of: path + ["discriminator", "mapping", key])))
            }
        }
        return (problems, notes)
    }

    /// The value at a JSON pointer (RFC 6901, percent-decoded as in a URI fragment).
    static func resolve(pointer: String, in document: JSONValue) -> JSONValue? {
        let decoded = pointer.removingPercentEncoding ?? pointer
        guard !decoded.isEmpty else { return document }
        guard decoded.hasPrefix("/") else { return nil }
        var current = document
        for token in decoded.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            let key = token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            switch current {
            case .object(let members):
                guard let next = members[key] else { return nil }
                current = next
            case .array(let items):
                guard let index = Int(key), items.indices.contains(index) else { return nil }
                current = items[index]
            default:
                return nil
            }
        }
        return current
    }

    private static func failed(_ format: ContractFormat, _ message: String, at location: SourceLocation?) -> APIContract {
        APIContract(format: format, annotations: [Annotation(.error, message, at: location ?? SourceLocation(line: 1, column: 1))])
    }
}

/// OpenAPIKit's 3.0 and 3.1 documents, as `OpenAPIReader.decodedApart` puts them together.
protocol DocumentDecodedApart: Decodable {
    associatedtype PathEntry: Decodable & Sendable
    var paths: OrderedDictionary<OpenAPIKit.OpenAPI.Path, PathEntry> { get set }
    /// Whether every security requirement of the path item names a scheme of the components.
    func namesKnownSchemes(_ item: PathEntry) -> Bool
}

extension OpenAPIKit30.OpenAPI.Document: DocumentDecodedApart {
    func namesKnownSchemes(_ item: OpenAPIKit30.OpenAPI.PathItem.Map.Value) -> Bool {
        (components[item]?.endpoints ?? []).allSatisfy { endpoint in
            (endpoint.operation.security ?? []).allSatisfy { $0.keys.allSatisfy { components[$0] != nil } }
        }
    }
}

extension OpenAPIKit.OpenAPI.Document: DocumentDecodedApart {
    func namesKnownSchemes(_ item: OpenAPIKit.OpenAPI.PathItem.Map.Value) -> Bool {
        (components[item]?.endpoints ?? []).allSatisfy { endpoint in
            (endpoint.operation.security ?? []).allSatisfy { $0.keys.allSatisfy { components[$0] != nil } }
        }
    }
}

/// Builds the contract from a decoded document.
struct OpenAPIContractBuilder {
    let document: OpenAPIKit.OpenAPI.Document
    let format: ContractFormat
    let locator: SourceLocator
    var annotations: [Annotation] = []
    var progress: ReadingProgress.Report?
    /// Component schemas as JSON, inlined where they are referred to.
    let inliner: ComponentSchemaInliner
    private let madeReferences = MadeReferences()

    init(document: OpenAPIKit.OpenAPI.Document, format: ContractFormat, locator: SourceLocator) {
        self.document = document
        self.format = format
        self.locator = locator
        var schemas = JSONObject()
        for (key, schema) in document.components.schemas {
            schemas[key.rawValue] = Self.schemaForm(schema, format: format) ?? [:]
        }
        inliner = ComponentSchemaInliner(componentSchemas: schemas)
    }

    /// A schema's JSON as OpenAPIKit gives it, without what OpenAPIKitCompat adds to a 3.0 one.
    static func schemaForm(_ schema: OpenAPIKit.JSONSchema, format: ContractFormat) -> JSONValue? {
        let json = Self.json(schema)
        return format == .openAPI30 ? json.map(SchemaTranslation.withoutCompatDefaults) : json
    }

    static func json(_ value: some Encodable) -> JSONValue? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(value) else { return nil }
        return (try? JSONValue(parsing: data)).map(withoutAddedNullType)
    }

    /// OpenAPIKit reads a `oneOf`/`anyOf` with a `{type: "null"}` branch as a nullable schema
    /// and writes it back with an outer `type: "null"` the document never had, which would
    /// let only `null` through. The branch already allows null: the outer type goes.
    static func withoutAddedNullType(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(var members):
            for (key, member) in members { members[key] = withoutAddedNullType(member) }
            let onlyNull = members["type"] == .string("null") || members["type"] == .array([.string("null")])
            if onlyNull {
                let branches = (members["oneOf"]?.arrayValue ?? []) + (members["anyOf"]?.arrayValue ?? [])
                if branches.contains(where: { $0["type"] == .string("null") || $0["type"] == .array([.string("null")]) }) {
                    members.removeValue(forKey: "type")
                }
            }
            return .object(members)
        case .array(let items):
            return .array(items.map(withoutAddedNullType))
        default:
            return value
        }
    }

    /// The contract with what the document says of itself: name, description, version, servers.
    static func heading(of document: OpenAPIKit.OpenAPI.Document, format: ContractFormat) -> APIContract {
        var contract = APIContract(format: format)
        contract.name = document.info.title
        contract.description = document.info.description ?? ""
        contract.metadata = [
            MetadataEntry(name: "openapi", value: document.openAPIVersion.rawValue),
            MetadataEntry(name: "version", value: document.info.version),
        ]
        contract.servers = document.servers.map { Server(url: $0.urlTemplate.absoluteString, description: $0.description ?? "") }
        return contract
    }

    mutating func build() -> APIContract {
        var contract = Self.heading(of: document, format: format)
        progress?(ReadingProgress(stage: "validating"))
        annotations += validationWarnings()

        var groups: [ResourceGroup] = []
        // Where each group and each group's resource for a path are in `groups`: a
        // description with tens of thousands of paths would otherwise be searched for each.
        var groupIndexes: [String: Int] = [:]
        var resourceIndexes: [ResourceKey: Int] = [:]
        for (pathNumber, (path, item)) in document.paths.enumerated() {
            if let progress, pathNumber % 500 == 0 {
                progress(ReadingProgress(stage: "operations", done: pathNumber, total: document.paths.count))
            }
            let pathItem: OpenAPIKit.OpenAPI.PathItem
            do {
                pathItem = try document.components.lookup(item)
            } catch {
                annotations.append(Annotation(.error, "cannot resolve path item '\(path.rawValue)': \(error)", at: locator.location(of: ["paths", path.rawValue])))
                continue
            }
            let shared = parameters(pathItem.parameters, at: ["paths", path.rawValue, "parameters"])
            for endpoint in pathItem.endpoints {
                let method = endpoint.method.rawValue.uppercased()
                let operation = endpoint.operation
                let keyPath = ["paths", path.rawValue, endpoint.method.rawValue.lowercased()]
                var actionParameters = shared
                for parameter in parameters(operation.parameters, at: keyPath + ["parameters"]) {
                    if let index = actionParameters.firstIndex(where: { $0.name == parameter.name && $0.location == parameter.location }) {
                        actionParameters[index] = parameter
                    } else {
                        actionParameters.append(parameter)
                    }
                }
                if operation.responses.isEmpty {
                    annotations.append(Annotation(
                        .error, "\(method) \(path.rawValue) has no responses; an operation documents at least one (a mock has nothing to answer)",
                        at: locator.location(of: keyPath + ["responses"])))
                }
                let template = Self.uriTemplate(path: path.rawValue, parameters: actionParameters)
                var action = Action(
                    name: operation.operationId ?? operation.summary ?? "\(method) \(path.rawValue)",
                    method: method,
                    description: [operation.summary, operation.description].compactMap { $0 }.joined(separator: "\n\n"),
                    uriTemplate: template, parameters: actionParameters,
                    sourceLocation: locator.location(of: keyPath))
                action.examples = [transaction(operation, at: keyPath)]
                if let body = operation.requestBody {
                    action.requestBodyRequired = (try? document.components.lookup(body))?.required ?? false
                }
                let groupName = operation.tags?.first ?? ""
                let groupIndex = groupIndexes[groupName] ?? {
                    // A tag's description is its group's.
                    groups.append(ResourceGroup(name: groupName, description: document.tags?.first { $0.name == groupName }?.description ?? ""))
                    groupIndexes[groupName] = groups.count - 1
                    return groups.count - 1
                }()
                let resourceKey = ResourceKey(group: groupIndex, path: path.rawValue)
                if let resourceIndex = resourceIndexes[resourceKey] {
                    groups[groupIndex].resources[resourceIndex].actions.append(action)
                } else {
                    resourceIndexes[resourceKey] = groups[groupIndex].resources.count
                    groups[groupIndex].resources.append(Resource(
                        name: path.rawValue, description: [pathItem.summary, pathItem.description].compactMap { $0 }.joined(separator: "\n\n"),
                        uriTemplate: path.rawValue, parameters: shared, actions: [action],
                        sourceLocation: locator.location(of: ["paths", path.rawValue])))
                }
            }
        }
        contract.groups = groups
        progress?(ReadingProgress(stage: "schemas", total: inliner.componentSchemas.count))
        contract.dataStructures = inliner.componentSchemas.map { name, schema in
            let resolved = resolved(schema)
            return DataStructure(component: name, schema: schema, resolved: resolved, locator: locator)
        }
        contract.annotations = annotations
        return contract
    }

    /// A path's resource within a group.
    private struct ResourceKey: Hashable {
        var group: Int
        var path: String
    }

    /// The path with `{?…}` for query parameters, so the template describes the whole URI.
    /// Parameter names become template variable names (`{item-id}` → `{item%2Did}`): OpenAPI
    /// allows any name, RFC 6570 only letters, digits, `_` and `.`.
    static func uriTemplate(path: String, parameters: [Parameter]) -> String {
        var template = ""
        var rest = Substring(path)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            template += rest[..<open] + "{" + URITemplate.variableName(String(rest[rest.index(after: open)..<close])) + "}"
            rest = rest[rest.index(after: close)...]
        }
        template += rest
        let query = parameters.filter { $0.location == .query }.map { URITemplate.variableName($0.name) }
        return query.isEmpty ? template : template + "{?" + query.joined(separator: ",") + "}"
    }

    // MARK: Parameters

    private mutating func parameters(_ list: OpenAPIKit.OpenAPI.Parameter.Array, at keyPath: [String]) -> [Parameter] {
        var result: [Parameter] = []
        for (index, entry) in list.enumerated() {
            let parameter: OpenAPIKit.OpenAPI.Parameter
            do {
                parameter = try document.components.lookup(entry)
            } catch {
                annotations.append(Annotation(.error, "cannot resolve parameter: \(error)", at: locator.location(of: keyPath + [String(index)])))
                continue
            }
            let location: ParameterLocation
            switch parameter.location {
            case .query, .querystring: location = .query
            case .header: location = .header
            case .path: location = .path
            case .cookie: location = .cookie
            }
            // Where the parameter is written: its component when the entry is a `$ref`.
            var parameterPath = keyPath + [String(index)]
            if case .a(let reference) = entry, let path = Self.documentPath(ofReference: reference.absoluteString) { parameterPath = path }
            var schema: JSONValue?
            var written: WrittenExample?
            var delimiter: String?
            switch parameter.schemaOrContent {
            case .a(let context):
                delimiter = Self.arrayDelimiter(style: context.style.rawValue)
                switch context.schema {
                case .a(let reference): schema = resolved(["$ref": .string(reference.absoluteString)])
                case .b(let value): schema = schemaJSON(value).map(resolved)
                }
                written = writtenExample(context.example, context.examples, at: parameterPath)
            case .b(let content):
                if let (type, entry) = content.first, let media = try? document.components.lookup(entry) {
                    schema = media.schema.flatMap(schemaJSON).map(resolved)
                    written = writtenExample(media.example, media.examples, at: parameterPath + ["content", type.rawValue])
                }
            }
            let members = schema?["enum"]?.arrayValue?.map(Self.plainText) ?? []
            var read = Parameter(
                name: parameter.name, location: location, type: schema?["type"]?.stringValue,
                required: parameter.required, defaultValue: schema?["default"].map(Self.plainText),
                example: written.map { Self.plainText($0.value) }
                    ?? schema?["examples"]?.arrayValue?.first.map(Self.plainText) ?? schema?["example"].map(Self.plainText),
                members: members, description: parameter.description ?? "", schema: schema,
                sourceLocation: locator.location(of: keyPath + [String(index)]))
            read.arrayDelimiter = delimiter
            read.writtenExample = written
            result.append(read)
        }
        return result
    }

    /// A parameter's `example`, or the first of its `examples` (an `externalValue` is not
    /// fetched), with where its value is written: `keyPath` is the parameter's (or its media
    /// type's), a named example's is its component when it is a `$ref`.
    private func writtenExample(
        _ example: AnyCodable?, _ examples: OpenAPIKit.OpenAPI.Example.Map?, at keyPath: [String]
    ) -> WrittenExample? {
        // OpenAPIKit also fills `example` from `examples`: the named ones first.
        if let (name, entry) = examples?.first {
            guard let value = (try? document.components.lookup(entry))?.value?.value.flatMap(Self.json) else { return nil }
            return WrittenExample(value, at: locator.location(of: Self.examplePath(entry, named: name, at: keyPath)))
        }
        return example.flatMap(Self.json).map { WrittenExample($0, at: locator.location(of: keyPath + ["example"])) }
    }

    /// Where a named example's value is written: in `components/examples` when it is a `$ref`.
    static func examplePath(_ entry: Either<OpenAPIKit.OpenAPI.Reference<OpenAPIKit.OpenAPI.Example>, OpenAPIKit.OpenAPI.Example>, named name: String, at keyPath: [String]) -> [String] {
        if case .a(let reference) = entry, let path = documentPath(ofReference: reference.absoluteString) { return path + ["value"] }
        return keyPath + ["examples", name, "value"]
    }

    /// The text between an array's items that a parameter style writes, when not a comma.
    static func arrayDelimiter(style: String?) -> String? {
        switch style {
        case "spaceDelimited": " "
        case "pipeDelimited": "|"
        default: nil
        }
    }

    /// A JSON value as a parameter would be written in a URI or header.
    static func plainText(_ value: JSONValue) -> String {
        if case .string(let text) = value { return text }
        return value.serialized()
    }

    // MARK: Messages

    private mutating func transaction(_ operation: OpenAPIKit.OpenAPI.Operation, at keyPath: [String]) -> TransactionExample {
        var example = TransactionExample()
        if let body = operation.requestBody {
            do {
                let request = try document.components.lookup(body)
                for (contentType, entry) in request.content {
                    guard let content = try? document.components.lookup(entry) else { continue }
                    for (name, payload) in payloads(contentType.rawValue, content, headers: [], at: keyPath + ["requestBody", "content", contentType.rawValue]) {
                        var payload = payload
                        payload.description = request.description ?? ""
                        example.requests.append(Request(name: name.isEmpty ? contentType.rawValue : name, payload: payload))
                    }
                }
            } catch {
                annotations.append(Annotation(.error, "cannot resolve request body: \(error)", at: locator.location(of: keyPath + ["requestBody"])))
            }
        }
        for (status, entry) in operation.responses {
            let statusKeyPath = keyPath + ["responses", status.rawValue]
            let response: OpenAPIKit.OpenAPI.Response
            do {
                response = try document.components.lookup(entry)
            } catch {
                annotations.append(Annotation(.error, "cannot resolve response '\(status.rawValue)': \(error)", at: locator.location(of: statusKeyPath)))
                continue
            }
            let code = Self.statusCode(status.rawValue)
            let isStatusClass = Int(status.rawValue) == nil && code != 0
            // Where the response is written: its component when the entry is a `$ref`.
            var responsePath = statusKeyPath
            if case .a(let reference) = entry, let path = Self.documentPath(ofReference: reference.absoluteString) { responsePath = path }
            var declared: [ResponseHeader] = []
            var headers: [Header] = []
            for (name, entry) in response.headers ?? [:] where name.lowercased() != "content-type" {
                guard let header = try? document.components.lookup(entry) else { continue }
                var headerPath = responsePath + ["headers", name]
                if case .a(let reference) = entry, let path = Self.documentPath(ofReference: reference.absoluteString) { headerPath = path }
                var schema: JSONValue?
                var schemaPath = headerPath + ["schema"]
                var mediaType: String?
                var example: JSONValue?
                // Where the example is written: `example`, else the first of `examples`.
                var examplePath: [String]?
                switch header.schemaOrContent {
                case .a(let context):
                    switch context.schema {
                    case .a(let reference): schema = resolved(["$ref": .string(reference.absoluteString)])
                    case .b(let value): schema = schemaJSON(value).map(resolved)
                    }
                    // OpenAPIKit also fills `example` from `examples`: the named ones first.
                    if let (exampleName, entry) = context.examples?.first {
                        example = (try? document.components.lookup(entry))?.value?.value.flatMap(Self.json)
                        examplePath = Self.examplePath(entry, named: exampleName, at: headerPath)
                    } else {
                        example = context.example.flatMap(Self.json)
                        examplePath = headerPath + ["example"]
                    }
                case .b(let content):
                    if let (type, entry) = content.first, let media = try? document.components.lookup(entry) {
                        mediaType = type.rawValue
                        schemaPath = headerPath + ["content", type.rawValue, "schema"]
                        schema = media.schema.flatMap(schemaJSON).map(resolved)
                        if let (exampleName, entry) = media.examples?.first {
                            example = (try? document.components.lookup(entry))?.value?.value.flatMap(Self.json)
                            examplePath = Self.examplePath(entry, named: exampleName, at: headerPath + ["content", type.rawValue])
                        } else {
                            example = media.example.flatMap(Self.json)
                            examplePath = headerPath + ["content", type.rawValue, "example"]
                        }
                    }
                }
                var declaration = ResponseHeader(
                    name: name, required: header.required, deprecated: header.deprecated, description: header.description ?? "",
                    schema: schema, mediaType: mediaType, schemaPointer: schema == nil ? nil : JSONPointer.string(schemaPath),
                    sourceLocation: locator.location(of: headerPath))
                if example != nil, let examplePath { declaration.exampleLocation = locator.location(of: examplePath) }
                declared.append(declaration)
                headers.append(Header(name: name, value: declaration.exampleLine(example)))
            }
            if response.content.isEmpty {
                example.responses.append(Response(
                    status: code, payload: MessagePayload(description: response.description ?? "", headers: headers, sourceLocation: locator.location(of: statusKeyPath)),
                    isStatusClass: isStatusClass, declaredHeaders: declared))
            }
            for (contentType, entry) in response.content {
                guard let content = try? document.components.lookup(entry) else { continue }
                for (name, payload) in payloads(contentType.rawValue, content, headers: headers, at: statusKeyPath + ["content", contentType.rawValue]) {
                    var payload = payload
                    payload.description = response.description ?? ""
                    example.responses.append(Response(status: code, name: name, payload: payload, isStatusClass: isStatusClass, declaredHeaders: declared))
                }
            }
        }
        return example
    }

    /// An example value as the body of a message of this media type: a string as it is
    /// unless the type is JSON, anything else as pretty-printed JSON.
    static func body(_ value: JSONValue, mediaType: String) -> String {
        let isJSON = mediaType.hasSuffix("/json") || mediaType.hasSuffix("+json") || mediaType.contains("json;")
        if !isJSON, case .string(let text) = value { return text }
        return value.serialized(.prettyPrinted)
    }

    /// The document path a local `$ref` names (`#/components/headers/Rate` → its tokens).
    static func documentPath(ofReference reference: String) -> [String]? {
        guard reference.hasPrefix("#") else { return nil }
        return JSONPointer.tokens(String(reference.dropFirst()))
    }

    /// `200` → 200, `2XX` → 200, `default` → 0.
    static func statusCode(_ raw: String) -> Int {
        if let code = Int(raw) { return code }
        if raw.count == 3, let first = raw.first?.wholeNumberValue { return first * 100 }
        return 0
    }

    /// One payload per named example (or one when there are none): body, schema and headers.
    private func payloads(_ mediaType: String, _ content: OpenAPIKit.OpenAPI.Content, headers: [Header], at keyPath: [String]) -> [(String, MessagePayload)] {
        var base = MessagePayload(headers: [Header(name: "Content-Type", value: mediaType)] + headers, sourceLocation: locator.location(of: keyPath))
        if let schema = content.schema, let json = schemaJSON(schema) {
            base.schema = resolved(json)
            base.schemaSource = .schema
            base.schemaDialect = OpenAPIReader.schemaDialect
            base.schemaPointer = JSONPointer.string(keyPath + ["schema"])
            if case .reference(let reference, _) = schema.value { base.schemaReference = reference.absoluteString }
        }
        func body(_ value: JSONValue) -> String { Self.body(value, mediaType: mediaType) }
        var result: [(String, MessagePayload)] = []
        // OpenAPIKit also fills `example` from `examples`; named examples win.
        if content.examples?.isEmpty ?? true, let example = content.example.flatMap(Self.json) {
            var payload = base
            payload.body = body(example)
            payload.bodySource = .body
            payload.exampleLocation = locator.location(of: keyPath + ["example"])
            result.append(("", payload))
        }
        for (name, entry) in content.examples ?? [:] {
            guard let example = try? document.components.lookup(entry) else { continue }
            var payload = base
            if let value = example.value?.value.flatMap(Self.json) {
                payload.body = body(value)
            } else if let serialized = example.value?.serializedValue {
                payload.body = serialized
            } else {
                continue
            }
            payload.bodySource = .body
            payload.exampleLocation = locator.location(of: Self.examplePath(entry, named: name, at: keyPath))
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

    // MARK: Schemas

    func resolved(_ schema: JSONValue) -> JSONValue { inliner.resolved(schema) }

    /// Schemas that are a `$ref` (most of a large description's payloads), as JSON, by the
    /// reference: encoding one costs a `JSONEncoder` and a parse.
    private final class MadeReferences {
        var references: [String: (schema: OpenAPIKit.JSONSchema, json: JSONValue?)] = [:]
    }

    /// `Self.json(schema)`, made once for each reference the description uses.
    func schemaJSON(_ schema: OpenAPIKit.JSONSchema) -> JSONValue? {
        guard case .reference(let reference, _) = schema.value else { return Self.schemaForm(schema, format: format) }
        if let made = madeReferences.references[reference.absoluteString], made.schema == schema { return made.json }
        let json = Self.schemaForm(schema, format: format)
        madeReferences.references[reference.absoluteString] = (schema, json)
        return json
    }
}

extension DataStructure {
    /// Component schema `name` as a data structure: `resolved` is `schema` with its references
    /// inlined; its example is written from it when asked (`exampleValue`).
    init(component name: String, schema: JSONValue, resolved: JSONValue, locator: SourceLocator) {
        self.init(
            name: name, description: schema["description"]?.stringValue ?? "",
            schema: resolved,
            sourceLocation: locator.location(of: ["components", "schemas", name]))
    }
}
