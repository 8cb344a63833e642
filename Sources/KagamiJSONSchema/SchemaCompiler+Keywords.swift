import KagamiJSON

/// Compiles the keywords of one schema object, checking that each keyword's value has the
/// shape its draft requires.
struct KeywordCompilation {
    typealias Location = SchemaCompiler.Location

    let compiler: SchemaCompiler
    let object: JSONObject
    let location: Location
    let dialect: Dialect
    private var keywords: [CompiledKeyword] = []

    init(compiler: SchemaCompiler, object: JSONObject, location: Location, dialect: Dialect) {
        self.compiler = compiler
        self.object = object
        self.location = location
        self.dialect = dialect
    }

    private var isDraft4: Bool { dialect.draft == .draft4 }

    /// OpenAPI's integer formats (its Format Registry): whole numbers in these ranges.
    static let integerFormats: [String: ClosedRange<Int64>] = [
        "int32": Int64(Int32.min)...Int64(Int32.max),
        "int64": Int64.min...Int64.max,
    ]

    mutating func compile() throws(JSONSchemaCompileError) -> [CompiledKeyword] {
        if isDraft4, let reference = object["$ref"] {
            // Draft 4: a `$ref` object is only the reference; siblings are ignored.
            guard case .string(let text) = reference else { throw failure("$ref", "must be a string") }
            return [CompiledKeyword(name: "$ref", check: .ref(try compiler.reference(text, from: location, keyword: "$ref")))]
        }
        if let reference = object["$ref"] {
            guard case .string(let text) = reference else { throw failure("$ref", "must be a string") }
            add("$ref", .ref(try compiler.reference(text, from: location, keyword: "$ref")))
        }
        if !isDraft4, let reference = object["$dynamicRef"] {
            guard case .string(let text) = reference else { throw failure("$dynamicRef", "must be a string") }
            let (target, anchor) = try compiler.dynamicReference(text, from: location)
            add("$dynamicRef", .dynamicRef(target, anchor: anchor))
        }
        if dialect.vocabularies.contains(.validation) {
            try compileValidation()
        }
        if compiler.options.assertsFormat || dialect.vocabularies.contains(.formatAssertion),
           case .string(let name)? = object["format"], let format = StringFormat(rawValue: name) {
            add("format", .format(format, dialect.draft))
        }
        if compiler.options.assertsFormat, case .string(let name)? = object["format"], let range = Self.integerFormats[name] {
            add("format", .integerFormat(name, range))
        }
        if compiler.options.assertsFormat, object["format"] == "float" {
            add("format", .floatFormat)
        }
        if isDraft4 || dialect.vocabularies.contains(.applicator) {
            try compileApplicators()
        }
        if !isDraft4 && dialect.vocabularies.contains(.unevaluated) {
            // Last, so that every sibling's annotations are in when these run.
            if object["unevaluatedItems"] != nil {
                compiler.noteUnevaluated()
                add("unevaluatedItems", .unevaluatedItems(try schema("unevaluatedItems")))
            }
            if object["unevaluatedProperties"] != nil {
                compiler.noteUnevaluated()
                add("unevaluatedProperties", .unevaluatedProperties(try schema("unevaluatedProperties")))
            }
        }
        return keywords
    }

    // MARK: Validation vocabulary

    private mutating func compileValidation() throws(JSONSchemaCompileError) {
        if let value = object["type"] {
            let names: [JSONValue]
            switch value {
            case .string: names = [value]
            case .array(let items): names = items
            default: throw failure("type", "must be a type name or an array of type names")
            }
            var types: [JSONType] = []
            for name in names {
                guard let text = name.stringValue, let type = JSONType(rawValue: text) else {
                    throw failure("type", "unknown type \(name); expected one of \(JSONType.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                types.append(type)
            }
            add("type", .type(types))
        }
        if let value = object["enum"] {
            guard case .array(let options) = value else { throw failure("enum", "must be an array") }
            add("enum", .enumeration(options))
        }
        if !isDraft4, let value = object["const"] {
            add("const", .constant(value))
        }
        if let value = object["multipleOf"] {
            guard let divisor = NumberDivisor(value) else { throw failure("multipleOf", "must be a number greater than 0") }
            add("multipleOf", .multipleOf(divisor))
        }
        try compileBounds()
        if let length = try count("minLength") { add("minLength", .minLength(length)) }
        if let length = try count("maxLength") { add("maxLength", .maxLength(length)) }
        if let value = object["pattern"] {
            add("pattern", .pattern(try regex(value, at: "pattern")))
        }
        if let items = try count("minItems") { add("minItems", .minItems(items)) }
        if let items = try count("maxItems") { add("maxItems", .maxItems(items)) }
        if let value = object["uniqueItems"] {
            guard case .bool(let unique) = value else { throw failure("uniqueItems", "must be a boolean") }
            if unique { add("uniqueItems", .uniqueItems) }
        }
        if let properties = try count("minProperties") { add("minProperties", .minProperties(properties)) }
        if let properties = try count("maxProperties") { add("maxProperties", .maxProperties(properties)) }
        if let value = object["required"] {
            var required = try names(value, at: ["required"])
            // OpenAPI: a required readOnly property is required in responses only, a required
            // writeOnly property in requests only.
            if let direction = compiler.options.direction, let properties = object["properties"]?.objectValue {
                let exempt = direction == .request ? "readOnly" : "writeOnly"
                required.removeAll { properties[$0]?[exempt]?.boolValue == true }
            }
            add("required", .required(required))
        }
        if !isDraft4, let value = object["dependentRequired"] {
            guard case .object(let members) = value else { throw failure("dependentRequired", "must be an object") }
            var entries: [(property: String, required: [String])] = []
            for (property, list) in members {
                entries.append((property, try names(list, at: ["dependentRequired", property])))
            }
            add("dependentRequired", .dependentRequired(entries))
        }
    }

    /// minimum/maximum with both drafts' exclusive forms: a boolean modifier in draft 4,
    /// a number of its own in 2020-12.
    private mutating func compileBounds() throws(JSONSchemaCompileError) {
        for (bound, exclusiveKeyword) in [("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")] {
            let isMinimum = bound == "minimum"
            if let value = object[bound] {
                guard let limit = NumericLimit(value) else { throw failure(bound, "must be a number") }
                var exclusive = false
                if isDraft4, let flag = object[exclusiveKeyword] {
                    guard case .bool(let b) = flag else { throw failure(exclusiveKeyword, "must be a boolean in draft 4") }
                    exclusive = b
                }
                add(bound, isMinimum ? .minimum(limit, exclusive: exclusive) : .maximum(limit, exclusive: exclusive))
            }
            if !isDraft4, let value = object[exclusiveKeyword] {
                guard let limit = NumericLimit(value) else { throw failure(exclusiveKeyword, "must be a number") }
                add(exclusiveKeyword, isMinimum ? .minimum(limit, exclusive: true) : .maximum(limit, exclusive: true))
            }
        }
    }

    // MARK: Applicator vocabulary

    private mutating func compileApplicators() throws(JSONSchemaCompileError) {
        for keyword in ["allOf", "anyOf", "oneOf"] where object[keyword] != nil {
            let schemas = try schemaArray(keyword)
            add(keyword, keyword == "allOf" ? .allOf(schemas) : keyword == "anyOf" ? .anyOf(schemas) : .oneOf(schemas))
        }
        if object["not"] != nil { add("not", .not(try schema("not"))) }
        if !isDraft4, object["if"] != nil {
            let condition = try schema("if")
            let then = object["then"] != nil ? try schema("then") : nil
            let otherwise = object["else"] != nil ? try schema("else") : nil
            // Even alone, `if` counts: its annotations reach unevaluated*, though it never fails.
            add("if", .conditional(if: condition, then: then, else: otherwise))
        }
        try compileDependencies()
        try compileArrayApplicators()
        try compileObjectApplicators()
    }

    private mutating func compileDependencies() throws(JSONSchemaCompileError) {
        // 2020-12 split `dependencies` into dependentRequired/dependentSchemas; schemas
        // written the draft 4-7 way still mean it, so it is honoured in both.
        if let value = object["dependencies"] {
            guard case .object(let members) = value else { throw failure("dependencies", "must be an object") }
            var required: [(property: String, required: [String])] = []
            var schemas: [(property: String, schema: Int)] = []
            for (property, dependency) in members {
                if case .array = dependency {
                    required.append((property, try names(dependency, at: ["dependencies", property])))
                } else {
                    schemas.append((property, try schema("dependencies", property)))
                }
            }
            if !required.isEmpty { add("dependencies", .dependentRequired(required)) }
            if !schemas.isEmpty { add("dependencies", .dependentSchemas(schemas)) }
        }
        if !isDraft4, let value = object["dependentSchemas"] {
            guard case .object(let members) = value else { throw failure("dependentSchemas", "must be an object") }
            var schemas: [(property: String, schema: Int)] = []
            for property in members.keys {
                schemas.append((property, try schema("dependentSchemas", property)))
            }
            add("dependentSchemas", .dependentSchemas(schemas))
        }
    }

    private mutating func compileArrayApplicators() throws(JSONSchemaCompileError) {
        if isDraft4 {
            guard let items = object["items"] else { return }
            if case .array = items {
                let tuple = try schemaArray("items", allowEmpty: true)
                add("items", .prefixItems(tuple))
                if object["additionalItems"] != nil {
                    add("additionalItems", .items(try schema("additionalItems"), start: tuple.count))
                }
            } else {
                add("items", .items(try schema("items"), start: 0))
            }
            return
        }
        var prefixCount = 0
        if object["prefixItems"] != nil {
            let prefix = try schemaArray("prefixItems")
            prefixCount = prefix.count
            add("prefixItems", .prefixItems(prefix))
        }
        if let items = object["items"] {
            if case .array = items {
                throw failure("items", "must be a schema in 2020-12; a list of schemas by position is prefixItems (or declare draft 4)")
            }
            add("items", .items(try schema("items"), start: prefixCount))
        }
        if object["contains"] != nil {
            let validation = dialect.vocabularies.contains(.validation)
            let minimum = validation ? try count("minContains") ?? 1 : 1
            let maximum = validation ? try count("maxContains") : nil
            add("contains", .contains(try schema("contains"), minimum: minimum, maximum: maximum))
        }
    }

    private mutating func compileObjectApplicators() throws(JSONSchemaCompileError) {
        var declared: Set<String> = []
        var patterns: [ECMARegex] = []
        if let value = object["properties"] {
            guard case .object(let members) = value else { throw failure("properties", "must be an object") }
            var ordered: [(name: String, schema: Int)] = []
            for name in members.keys {
                ordered.append((name, try schema("properties", name)))
            }
            declared = Set(members.keys)
            add("properties", .properties(ordered, Dictionary(ordered, uniquingKeysWith: { first, _ in first })))
        }
        if let value = object["patternProperties"] {
            guard case .object(let members) = value else { throw failure("patternProperties", "must be an object") }
            var entries: [(regex: ECMARegex, schema: Int)] = []
            for name in members.keys {
                let regex = try regex(.string(name), at: "patternProperties")
                entries.append((regex, try schema("patternProperties", name)))
                patterns.append(regex)
            }
            add("patternProperties", .patternProperties(entries))
        }
        if object["additionalProperties"] != nil {
            add("additionalProperties", .additionalProperties(try schema("additionalProperties"), declared: declared, patterns: patterns))
        }
        if !isDraft4, object["propertyNames"] != nil {
            add("propertyNames", .propertyNames(try schema("propertyNames")))
        }
    }

    // MARK: Values

    private mutating func add(_ name: String, _ check: SchemaCheck) {
        keywords.append(CompiledKeyword(name: name, check: check))
    }

    private func failure(_ keyword: String, _ message: String) -> JSONSchemaCompileError {
        JSONSchemaCompileError(schemaLocation: compiler.display(location.appending(keyword)), message: "\(keyword) \(message)")
    }

    private func schema(_ tokens: String...) throws(JSONSchemaCompileError) -> Int {
        let target = Location(document: location.document, pointer: location.pointer + tokens)
        switch JSONPointer.resolve(tokens, in: .object(object)) {
        case .object?, .bool?:
            return compiler.subschema(target)
        default:
            throw JSONSchemaCompileError(
                schemaLocation: compiler.display(target),
                message: "\(tokens.joined(separator: "/")) must be a schema (an object or a boolean)")
        }
    }

    private func schemaArray(_ keyword: String, allowEmpty: Bool = false) throws(JSONSchemaCompileError) -> [Int] {
        guard case .array(let items)? = object[keyword], allowEmpty || !items.isEmpty else {
            throw failure(keyword, "must be a non-empty array of schemas")
        }
        var indexes: [Int] = []
        for n in items.indices {
            indexes.append(try schema(keyword, String(n)))
        }
        return indexes
    }

    private func count(_ keyword: String) throws(JSONSchemaCompileError) -> Int? {
        guard let value = object[keyword] else { return nil }
        guard let count = value.intValue, count >= 0 else { throw failure(keyword, "must be a non-negative integer") }
        return count
    }

    private func names(_ value: JSONValue, at tokens: [String]) throws(JSONSchemaCompileError) -> [String] {
        guard case .array(let items) = value else {
            throw JSONSchemaCompileError(
                schemaLocation: compiler.display(Location(document: location.document, pointer: location.pointer + tokens)),
                message: "\(tokens.joined(separator: "/")) must be an array of property names")
        }
        var names: [String] = []
        for item in items {
            guard case .string(let name) = item else {
                throw JSONSchemaCompileError(
                    schemaLocation: compiler.display(Location(document: location.document, pointer: location.pointer + tokens)),
                    message: "\(tokens.joined(separator: "/")) must hold only strings, found \(item.typeName)")
            }
            names.append(name)
        }
        return names
    }

    private func regex(_ value: JSONValue, at keyword: String) throws(JSONSchemaCompileError) -> ECMARegex {
        guard case .string(let pattern) = value else { throw failure(keyword, "must be a string") }
        do {
            return try ECMARegex.compiled(pattern)
        } catch {
            throw failure(keyword, "\"\(pattern)\" is not a valid regular expression: \(error.reason)")
        }
    }
}
