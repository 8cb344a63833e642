import KagamiJSON

/// A JSON Schema compiled once and reusable, from any thread, for any number of validations.
///
///     let schema = try JSONSchema(compiling: value, options: .init(draft: .draft4))
///     let result = schema.validate(instance)
public struct JSONSchema: Sendable {
    /// The schema dialects Kagami understands.
    public enum Draft: String, Sendable, CaseIterable {
        /// Draft 4, as in API Blueprint `+ Schema` sections.
        case draft4 = "4"
        /// 2020-12, as in OpenAPI 3.1.
        case draft2020_12 = "2020-12"

        /// The draft a `$schema` URI names (`http://json-schema.org/draft-04/schema#`,
        /// `https://json-schema.org/draft/2020-12/schema`), or nil for any other.
        public init?(schemaURI: String) {
            guard let dialect = Dialect.known(SchemaURI(parsing: schemaURI).withoutFragment.text) else { return nil }
            self = dialect.draft
        }
    }

    /// Which message an instance is: OpenAPI's `readOnly` properties are not required in
    /// requests, and its `writeOnly` properties are not required in responses.
    public enum Direction: Sendable {
        case request, response
    }

    public struct Options: Sendable {
        /// Forces the dialect; without it `$schema` decides, and 2020-12 when that is absent.
        public var draft: Draft?
        /// Makes `format` an assertion (date-time, date, time, email, hostname, ipv4, ipv6,
        /// uri, uri-reference, uuid, regex, and OpenAPI's int32, int64 and float on numbers); by
        /// default it is only an annotation.
        public var assertsFormat: Bool
        /// The message instances are, for `readOnly`/`writeOnly`; nil: both kinds required.
        public var direction: Direction?
        /// The URI the schema was retrieved from; relative `$id`s and `$ref`s resolve against it.
        public var baseURI: String?
        /// Serves documents for `$ref`s outside the schema. No network access happens without it.
        public var resolver: (any JSONSchemaResolver)?

        public init(
            draft: Draft? = nil, assertsFormat: Bool = false, direction: Direction? = nil, baseURI: String? = nil,
            resolver: (any JSONSchemaResolver)? = nil
        ) {
            self.draft = draft
            self.assertsFormat = assertsFormat
            self.direction = direction
            self.baseURI = baseURI
            self.resolver = resolver
        }
    }

    let program: SchemaProgram

    /// Compiles `schema`, resolving every `$ref` now so that validation cannot fail to resolve.
    public init(compiling schema: JSONValue, options: Options = Options()) throws(JSONSchemaCompileError) {
        program = try SchemaCompiler(options: options).compile(schema)
    }

    /// Compiles the schema found at `pointer` (a JSON Pointer such as
    /// `/components/schemas/Order`) inside a larger document, so that the document's own
    /// `$ref`s (`#/components/schemas/Customer`) resolve.
    public init(compiling document: JSONValue, at pointer: String, options: Options = Options()) throws(JSONSchemaCompileError) {
        program = try SchemaCompiler(options: options).compile(document, at: pointer)
    }

    /// The dialect the root schema was compiled as.
    public var draft: Draft { program.draft }

    /// Whether `text` is a valid `format` named `name`, for the formats Kagami asserts; nil for
    /// any other name.
    public static func string(_ text: String, hasFormat name: String, draft: Draft = .draft2020_12) -> Bool? {
        StringFormat(rawValue: name)?.accepts(text, draft: draft)
    }

    /// Validates `instance` and collects every violation.
    public func validate(_ instance: JSONValue) -> JSONSchemaValidationResult {
        // Most instances are valid: a first pass that keeps no paths settles those, and
        // only an invalid one is walked again to collect its errors.
        if isValid(instance) { return JSONSchemaValidationResult(isValid: true, errors: []) }
        var evaluation = SchemaEvaluation(program: program, collectsErrors: true)
        let valid = evaluation.run(instance)
        return JSONSchemaValidationResult(isValid: valid, errors: evaluation.errors)
    }

    /// Whether `instance` is valid; stops at the first violation.
    public func isValid(_ instance: JSONValue) -> Bool {
        var evaluation = SchemaEvaluation(program: program, collectsErrors: false)
        return evaluation.run(instance)
    }
}

public struct JSONSchemaValidationResult: Sendable, Equatable {
    public var isValid: Bool
    /// Empty when valid; otherwise every violation found, in schema order.
    public var errors: [JSONSchemaValidationError]
}

/// One violation: where in the instance, which keyword of the schema, and what is wrong.
public struct JSONSchemaValidationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// JSON Pointer into the instance ("" is the whole instance).
    public var instanceLocation: String
    /// JSON Pointer of the failing keyword along the evaluation path from the root schema,
    /// `$ref`s included (e.g. `/properties/owner/$ref/required`).
    public var keywordLocation: String
    /// The keyword's absolute location (`uri#pointer`) when the path went through a `$ref`.
    public var absoluteKeywordLocation: String?
    /// The failing keyword ("type", "required", ...); empty for a `false` schema.
    public var keyword: String
    /// A readable sentence, e.g. `expected integer, found string`.
    public var message: String
    /// For an `anyOf`/`oneOf` that no alternative matched: each alternative's own errors
    /// (their keyword locations say which alternative).
    public var causes: [JSONSchemaValidationError]

    public init(
        instanceLocation: String, keywordLocation: String, absoluteKeywordLocation: String? = nil,
        keyword: String, message: String, causes: [JSONSchemaValidationError] = []
    ) {
        self.instanceLocation = instanceLocation
        self.keywordLocation = keywordLocation
        self.absoluteKeywordLocation = absoluteKeywordLocation
        self.keyword = keyword
        self.message = message
        self.causes = causes
    }

    public var description: String {
        let instance = instanceLocation.isEmpty ? "(root)" : instanceLocation
        return "\(instance): \(message) (\(absoluteKeywordLocation ?? keywordLocation))"
    }

    /// `{instanceLocation, schemaLocation, [absoluteSchemaLocation,] message, [causes]}` as the
    /// CLI and reports print it.
    public var jsonValue: JSONValue {
        var object: JSONObject = [
            "instanceLocation": .string(instanceLocation),
            "schemaLocation": .string(keywordLocation),
        ]
        if let absoluteKeywordLocation { object["absoluteSchemaLocation"] = .string(absoluteKeywordLocation) }
        object["message"] = .string(message)
        if !causes.isEmpty { object["causes"] = .array(causes.map(\.jsonValue)) }
        return .object(object)
    }
}

/// Why a schema could not be compiled, and where.
public struct JSONSchemaCompileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// JSON Pointer into the schema (prefixed by the document's URI when the problem is in a
    /// document reached through `$ref`).
    public var schemaLocation: String
    public var message: String

    public init(schemaLocation: String, message: String) {
        self.schemaLocation = schemaLocation
        self.message = message
    }

    public var description: String {
        "\(schemaLocation.isEmpty ? "(schema root)" : schemaLocation): \(message)"
    }
}

/// Serves schema documents by absolute URI (without fragment) for `$ref`s and `$schema`s
/// that leave the compiled schema. Returning nil (or throwing, to say why) makes the
/// reference a compile error.
public protocol JSONSchemaResolver: Sendable {
    func schemaDocument(at uri: String) throws -> JSONValue?
}

/// A fixed set of schema documents by URI.
public struct JSONSchemaRegistry: JSONSchemaResolver {
    public var documents: [String: JSONValue]

    public init(_ documents: [String: JSONValue] = [:]) {
        self.documents = documents
    }

    public mutating func register(_ document: JSONValue, at uri: String) {
        documents[uri] = document
    }

    public func schemaDocument(at uri: String) -> JSONValue? {
        documents[uri]
    }
}
