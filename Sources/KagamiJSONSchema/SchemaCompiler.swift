// Turns schema documents into a SchemaProgram: indexes identifiers ($id, $anchor,
// $dynamicAnchor, draft 4 `id`), resolves every reference, and compiles each subschema once.
import KagamiJSON

/// The vocabularies of 2020-12 that change what keywords mean.
struct Vocabularies: OptionSet, Hashable, Sendable {
    let rawValue: Int
    static let applicator = Vocabularies(rawValue: 1 << 0)
    static let unevaluated = Vocabularies(rawValue: 1 << 1)
    static let validation = Vocabularies(rawValue: 1 << 2)
    static let formatAssertion = Vocabularies(rawValue: 1 << 3)
    static let all: Vocabularies = [.applicator, .unevaluated, .validation]

    static let byURI: [String: Vocabularies] = [
        "https://json-schema.org/draft/2020-12/vocab/core": [],
        "https://json-schema.org/draft/2020-12/vocab/applicator": .applicator,
        "https://json-schema.org/draft/2020-12/vocab/unevaluated": .unevaluated,
        "https://json-schema.org/draft/2020-12/vocab/validation": .validation,
        "https://json-schema.org/draft/2020-12/vocab/meta-data": [],
        "https://json-schema.org/draft/2020-12/vocab/format-annotation": [],
        "https://json-schema.org/draft/2020-12/vocab/format-assertion": .formatAssertion,
        "https://json-schema.org/draft/2020-12/vocab/content": [],
    ]
}

struct Dialect: Hashable, Sendable {
    var draft: JSONSchema.Draft
    var vocabularies: Vocabularies

    static let draft4 = Dialect(draft: .draft4, vocabularies: .all)
    static let draft2020 = Dialect(draft: .draft2020_12, vocabularies: .all)

    static func known(_ uri: String) -> Dialect? {
        switch uri {
        case "http://json-schema.org/draft-04/schema", "https://json-schema.org/draft-04/schema": .draft4
        case "https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft/2020-12/schema": .draft2020
        default: nil
        }
    }
}

final class SchemaCompiler {
    /// A place in a loaded document.
    struct Location: Hashable {
        var document: String
        var pointer: [String]

        func appending(_ tokens: String...) -> Location {
            Location(document: document, pointer: pointer + tokens)
        }
    }

    /// What holds at an indexed subschema: the base URI (its resource) and the dialect.
    struct Scope {
        var base: String
        var resourceRoot: [String]
        var dialect: Dialect
    }

    static let implicitBase = "urn:kagami:schema"
    static let maximumDepth = 512

    let options: JSONSchema.Options
    private var documents: [String: JSONValue] = [:]
    private var resourceRoots: [String: Location] = [:]
    private var anchors: [String: Location] = [:]
    private var dynamicAnchors: [String: [String: Location]] = [:]
    /// By location itself, not by its `uri#pointer` text: no string is made per subschema.
    private var scopes: [Location: Scope] = [:]
    private var nodeIndexes: [Location: Int] = [:]
    private var nodes: [SchemaNode?] = []
    private var pending: [(index: Int, location: Location)] = []
    private var resourceIndexes: [String: Int] = [:]
    private var resources: [SchemaResource] = []
    private var tracksAnnotations = false
    private var rootDocument = ""

    init(options: JSONSchema.Options) {
        self.options = options
    }

    /// Compiles the schema at `pointer` in `document` (the whole document by default); `$ref`s
    /// resolve against the whole document, as in an OpenAPI file's `#/components/schemas/...`.
    func compile(_ document: JSONValue, at pointer: String = "") throws(JSONSchemaCompileError) -> SchemaProgram {
        let base = options.baseURI.map { SchemaURI(parsing: $0).withoutFragment.text } ?? Self.implicitBase
        rootDocument = base
        let dialect = options.draft.map { $0 == .draft4 ? Dialect.draft4 : .draft2020 } ?? .draft2020
        try load(document, at: base, dialect: dialect, forced: options.draft != nil)
        guard let tokens = JSONPointer.tokens(pointer), JSONPointer.resolve(tokens, in: document) != nil else {
            throw JSONSchemaCompileError(schemaLocation: pointer, message: "the document has no schema at \"\(pointer)\"")
        }
        let start = Location(document: base, pointer: tokens)
        try indexIfNeeded(start)
        let root = node(at: start)
        while let job = pending.popLast() {
            nodes[job.index] = try build(job.location)
        }
        let compiled = nodes.compactMap { $0 }
        guard compiled.count == nodes.count else {
            throw JSONSchemaCompileError(schemaLocation: "", message: "internal error: a subschema was not compiled")
        }
        let rootDialect = scope(of: start).dialect
        return SchemaProgram(
            nodes: compiled, resources: resources, root: root, draft: rootDialect.draft,
            tracksAnnotations: tracksAnnotations, implicitBase: Self.implicitBase)
    }

    // MARK: Documents and identifiers

    private func load(_ document: JSONValue, at uri: String, dialect: Dialect, forced: Bool = false) throws(JSONSchemaCompileError) {
        documents[uri] = document
        resourceRoots[uri] = Location(document: uri, pointer: [])
        var dialect = dialect
        if let declared = document["$schema"]?.stringValue {
            dialect = try self.dialect(declared: declared, inherited: dialect, forced: forced, at: Location(document: uri, pointer: []))
        }
        try index(document, at: Location(document: uri, pointer: []), base: uri, resourceRoot: [], dialect: dialect, depth: 0)
    }

    /// Loads a document that is not part of the schema: a built-in metaschema or one the
    /// resolver serves. Returns false when nobody has it.
    private func loadExternal(_ uri: String, dialect: Dialect) throws(JSONSchemaCompileError) -> Bool {
        if documents[uri] != nil { return true }
        if let builtIn = Metaschemas.documents.first(where: { $0.uri == uri }) {
            do {
                let value = try JSONValue(parsing: builtIn.text)
                try load(value, at: uri, dialect: dialect)
                return true
            } catch {
                throw JSONSchemaCompileError(schemaLocation: uri, message: "built-in metaschema does not parse: \(error)")
            }
        }
        let found: JSONValue?
        do {
            found = try options.resolver?.schemaDocument(at: uri)
        } catch {
            throw JSONSchemaCompileError(schemaLocation: uri, message: "cannot load \(uri): \(error)")
        }
        guard let document = found else { return false }
        try load(document, at: uri, dialect: dialect)
        return true
    }

    /// The dialect a `$schema` names: a known draft, or a metaschema whose `$vocabulary` says
    /// which keywords count. An explicit draft option keeps its draft.
    private func dialect(declared: String, inherited: Dialect, forced: Bool, at location: Location) throws(JSONSchemaCompileError) -> Dialect {
        let uri = SchemaURI(parsing: declared).withoutFragment.text
        if let known = Dialect.known(uri) {
            return forced ? inherited : known
        }
        guard inherited.draft == .draft2020_12, try loadExternal(uri, dialect: inherited),
              let vocabulary = documents[uri]?["$vocabulary"]?.objectValue else {
            // An unknown dialect (OpenAPI 3.1's own, say) is read as its base draft.
            return inherited
        }
        var vocabularies: Vocabularies = []
        for (vocabularyURI, required) in vocabulary {
            if let known = Vocabularies.byURI[vocabularyURI] {
                vocabularies.formUnion(known)
            } else if required.boolValue == true {
                throw JSONSchemaCompileError(
                    schemaLocation: display(location.appending("$schema")),
                    message: "metaschema \(uri) requires the unsupported vocabulary \(vocabularyURI)")
            }
        }
        return Dialect(draft: inherited.draft, vocabularies: vocabularies)
    }

    /// Records identifiers and scopes of every subschema, following the keywords that hold
    /// subschemas (a `$id` inside `enum` or an unknown keyword is not an identifier).
    private func index(
        _ value: JSONValue, at location: Location, base: String, resourceRoot: [String], dialect: Dialect, depth: Int
    ) throws(JSONSchemaCompileError) {
        guard depth < Self.maximumDepth else {
            throw JSONSchemaCompileError(schemaLocation: display(location), message: "schema nested deeper than \(Self.maximumDepth) levels")
        }
        guard case .object(let object) = value else {
            scopes[location] = Scope(base: base, resourceRoot: resourceRoot, dialect: dialect)
            return
        }
        var base = base
        var resourceRoot = resourceRoot
        var dialect = dialect
        switch dialect.draft {
        case .draft4:
            // In draft 4 `$ref` replaces the whole object, `id` included.
            if object["$ref"] == nil, let id = object["id"]?.stringValue {
                let resolved = SchemaURI.resolve(id, against: base)
                let resource = resolved.withoutFragment.text
                if resource != base || location.pointer.isEmpty {
                    base = resource
                    resourceRoot = location.pointer
                    resourceRoots[resource] = location
                }
                if let fragment = resolved.fragment, !fragment.isEmpty {
                    anchors[resource + "#" + fragment] = location
                }
            }
        case .draft2020_12:
            if let id = object["$id"]?.stringValue {
                let resource = SchemaURI.resolve(id, against: base).withoutFragment.text
                base = resource
                resourceRoot = location.pointer
                resourceRoots[resource] = location
                if !location.pointer.isEmpty, let declared = object["$schema"]?.stringValue {
                    dialect = try self.dialect(declared: declared, inherited: dialect, forced: false, at: location)
                }
            }
            if let anchor = object["$anchor"]?.stringValue {
                anchors[base + "#" + anchor] = location
            }
            if let anchor = object["$dynamicAnchor"]?.stringValue {
                anchors[base + "#" + anchor] = location
                dynamicAnchors[base, default: [:]][anchor] = location
            }
        }
        scopes[location] = Scope(base: base, resourceRoot: resourceRoot, dialect: dialect)
        for (keyword, child) in object {
            switch SubschemaShape.of(keyword, draft: dialect.draft) {
            case nil:
                continue
            case .single:
                try index(child, at: location.appending(keyword), base: base, resourceRoot: resourceRoot, dialect: dialect, depth: depth + 1)
            case .array:
                guard case .array(let items) = child else {
                    if dialect.draft == .draft4 && keyword == "items" {
                        try index(child, at: location.appending(keyword), base: base, resourceRoot: resourceRoot, dialect: dialect, depth: depth + 1)
                    }
                    continue
                }
                for (n, item) in items.enumerated() {
                    try index(item, at: location.appending(keyword, String(n)), base: base, resourceRoot: resourceRoot, dialect: dialect, depth: depth + 1)
                }
            case .map:
                guard case .object(let members) = child else { continue }
                for (name, member) in members where member.objectValue != nil || member.boolValue != nil {
                    try index(member, at: location.appending(keyword, name), base: base, resourceRoot: resourceRoot, dialect: dialect, depth: depth + 1)
                }
            }
        }
    }

    /// A pointer may lead where no schema keyword does (an OpenAPI document's components, an
    /// unknown keyword); the subschema there is indexed when first used, under the scope of
    /// its nearest indexed ancestor.
    private func indexIfNeeded(_ location: Location) throws(JSONSchemaCompileError) {
        guard scopes[location] == nil, let document = documents[location.document],
              let value = JSONPointer.resolve(location.pointer, in: document) else { return }
        let scope = scope(of: location)
        try index(value, at: location, base: scope.base, resourceRoot: scope.resourceRoot, dialect: scope.dialect, depth: 0)
    }

    /// The scope at `location`: recorded for indexed subschemas; for other places a pointer
    /// can reach, that of the nearest indexed ancestor.
    private func scope(of location: Location) -> Scope {
        var pointer = location.pointer
        while true {
            if let scope = scopes[Location(document: location.document, pointer: pointer)] { return scope }
            if pointer.isEmpty { break }
            pointer.removeLast()
        }
        return Scope(base: location.document, resourceRoot: [], dialect: .draft2020)
    }

    /// Where a reference points. Documents outside the schema are loaded on first use.
    private func resolve(_ reference: String, from location: Location, keyword: String) throws(JSONSchemaCompileError) -> Location {
        let scope = scope(of: location)
        let uri = SchemaURI.resolve(reference, against: scope.base)
        let resource = uri.withoutFragment.text
        let fragment = (uri.fragment ?? "").percentDecoded
        if resourceRoots[resource] == nil {
            guard try loadExternal(resource, dialect: scope.dialect) else {
                throw JSONSchemaCompileError(
                    schemaLocation: display(location.appending(keyword)),
                    message: "cannot resolve \(keyword) \"\(reference)\": no schema is known at \(resource)")
            }
        }
        guard let root = resourceRoots[resource] else {
            throw JSONSchemaCompileError(
                schemaLocation: display(location.appending(keyword)),
                message: "cannot resolve \(keyword) \"\(reference)\": no schema is known at \(resource)")
        }
        if fragment.isEmpty { return root }
        if let tokens = JSONPointer.tokens(fragment) {
            let target = Location(document: root.document, pointer: root.pointer + tokens)
            guard let document = documents[root.document], JSONPointer.resolve(target.pointer, in: document) != nil else {
                throw JSONSchemaCompileError(
                    schemaLocation: display(location.appending(keyword)),
                    message: "cannot resolve \(keyword) \"\(reference)\": \(resource) has nothing at \(fragment)")
            }
            try indexIfNeeded(target)
            return target
        }
        guard let anchored = anchors[resource + "#" + fragment] else {
            throw JSONSchemaCompileError(
                schemaLocation: display(location.appending(keyword)),
                message: "cannot resolve \(keyword) \"\(reference)\": \(resource) has no anchor \"\(fragment)\"")
        }
        return anchored
    }

    // MARK: Nodes

    private func node(at location: Location) -> Int {
        if let index = nodeIndexes[location] { return index }
        let index = nodes.count
        nodes.append(nil)
        nodeIndexes[location] = index
        pending.append((index, location))
        return index
    }

    private func resourceIndex(_ uri: String) -> Int {
        if let index = resourceIndexes[uri] { return index }
        let index = resources.count
        resourceIndexes[uri] = index
        // Any of a resource's dynamic anchors can become a $dynamicRef target once the
        // resource is in the dynamic scope, so all of them are compiled with it.
        var table: [String: Int] = [:]
        for (name, location) in dynamicAnchors[uri] ?? [:] {
            table[name] = node(at: location)
        }
        resources.append(SchemaResource(uri: uri, dynamicAnchors: table))
        return index
    }

    private func build(_ location: Location) throws(JSONSchemaCompileError) -> SchemaNode {
        guard let document = documents[location.document], let value = JSONPointer.resolve(location.pointer, in: document) else {
            throw JSONSchemaCompileError(schemaLocation: display(location), message: "internal error: subschema vanished")
        }
        let scope = scope(of: location)
        let body: SchemaNode.Body
        var keywords: [CompiledKeyword] = []
        switch value {
        case .bool(true):
            body = .alwaysValid
        case .bool(false):
            body = .alwaysInvalid
        case .object(let object):
            var compilation = KeywordCompilation(compiler: self, object: object, location: location, dialect: scope.dialect)
            keywords = try compilation.compile()
            body = .keywords
        default:
            throw JSONSchemaCompileError(
                schemaLocation: display(location),
                message: "a schema must be an object or a boolean, found \(value.typeName)")
        }
        return SchemaNode(
            body: body, resource: resourceIndex(scope.base), base: scope.base, relative: location.pointer.dropFirst(scope.resourceRoot.count),
            keywords: keywords)
    }

    /// A location as users see it: a pointer into their schema, or `uri#pointer` elsewhere.
    func display(_ location: Location) -> String {
        let pointer = JSONPointer.string(location.pointer)
        return location.document == rootDocument ? pointer : location.document + "#" + pointer
    }

    // MARK: Services for KeywordCompilation

    func subschema(_ location: Location) -> Int { node(at: location) }

    func reference(_ reference: String, from location: Location, keyword: String) throws(JSONSchemaCompileError) -> Int {
        node(at: try resolve(reference, from: location, keyword: keyword))
    }

    /// `$dynamicRef`: the static target, plus the anchor name when that target carries the
    /// same `$dynamicAnchor` (only then does the dynamic scope take part).
    func dynamicReference(_ reference: String, from location: Location) throws(JSONSchemaCompileError) -> (Int, String?) {
        let target = try resolve(reference, from: location, keyword: "$dynamicRef")
        let fragment = (SchemaURI(parsing: reference).fragment ?? "").percentDecoded
        guard !fragment.isEmpty, JSONPointer.tokens(fragment) == nil else { return (node(at: target), nil) }
        let targetScope = scope(of: target)
        let isDynamic = dynamicAnchors[targetScope.base]?[fragment] == target
        return (node(at: target), isDynamic ? fragment : nil)
    }

    func noteUnevaluated() { tracksAnnotations = true }
}

/// Which keywords hold subschemas, and in what shape.
enum SubschemaShape {
    case single, array, map

    static func of(_ keyword: String, draft: JSONSchema.Draft) -> SubschemaShape? {
        switch draft {
        case .draft4:
            switch keyword {
            case "additionalItems", "additionalProperties", "not": .single
            case "items", "allOf", "anyOf", "oneOf": .array
            case "properties", "patternProperties", "definitions", "dependencies": .map
            default: nil
            }
        case .draft2020_12:
            switch keyword {
            case "additionalProperties", "unevaluatedProperties", "unevaluatedItems", "items", "contains",
                 "propertyNames", "not", "if", "then", "else", "contentSchema":
                .single
            case "allOf", "anyOf", "oneOf", "prefixItems": .array
            case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies": .map
            default: nil
            }
        }
    }
}
