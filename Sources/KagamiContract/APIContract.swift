// The neutral contract model every description format is read into; the mock server,
// the docs page and the contract check speak only this.
import KagamiJSON
import struct KagamiJSONSchema.JSONSchemaValidationError

/// Which description format a contract was read from.
public enum ContractFormat: String, Sendable, Hashable, Codable {
    case apiBlueprint = "api-blueprint"
    case openAPI30 = "openapi-3.0"
    case openAPI31 = "openapi-3.1"
    /// Swagger 2.0 (OpenAPI 2.0), read as the OpenAPI 3.0 document it describes.
    case swagger20 = "swagger-2.0"
    /// gRPC methods from Protocol Buffers definitions (`.proto` files, a descriptor set).
    case protobuf
}

/// A place in the description's source text. Lines and columns count from 1; the offset and
/// length are in UTF-8 bytes.
public struct SourceLocation: Sendable, Hashable, Codable {
    public var line: Int
    public var column: Int
    public var offset: Int
    public var length: Int

    public init(line: Int, column: Int, offset: Int = 0, length: Int = 0) {
        self.line = line
        self.column = column
        self.offset = offset
        self.length = length
    }
}

/// A warning or error found while reading a description.
public struct Annotation: Sendable, Hashable, Codable {
    public enum Severity: String, Sendable, Hashable, Codable {
        case warning
        case error
    }

    public var severity: Severity
    public var message: String
    public var sourceLocation: SourceLocation?
    /// An error the description stays usable with (an example body that is not what its media
    /// type says, a tab): lint reports it, the mock serves the description and convert keeps
    /// the text as written.
    public var keepsDocumentUsable: Bool?

    /// Errors that keep a tool from using the description (those confined to an example don't).
    public var blocksUse: Bool { severity == .error && keepsDocumentUsable != true }

    public init(_ severity: Severity, _ message: String, at location: SourceLocation?) {
        self.severity = severity
        self.message = message
        self.sourceLocation = location
    }

    /// A warning at an example the description writes that its schema refuses: the first
    /// value refused, where it is in the example, and why. The one wording of lint's example
    /// findings, whichever kind of example (a body's, a parameter's, a schema's own).
    public static func refusedExample(_ subject: String, _ error: JSONSchemaValidationError, at location: SourceLocation?) -> Annotation {
        let place = error.instanceLocation.isEmpty ? "" : " at \(error.instanceLocation)"
        let keyword = error.keyword.isEmpty ? "" : " (\(error.keyword))"
        return Annotation(.warning, "\(subject) is refused by its schema\(place): \(error.message)\(keyword)", at: location)
    }
}

/// One `key: value` of a Blueprint's metadata block or an OpenAPI `info` field.
public struct MetadataEntry: Sendable, Hashable, Codable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A base address the API is served from (Blueprint `HOST`, OpenAPI `servers`).
public struct Server: Sendable, Hashable, Codable {
    public var url: String
    public var description: String

    public init(url: String, description: String = "") {
        self.url = url
        self.description = description
    }
}

/// The whole description.
public struct APIContract: Sendable, Hashable, Codable {
    public var format: ContractFormat
    public var name: String
    public var description: String
    public var metadata: [MetadataEntry]
    public var servers: [Server]
    public var groups: [ResourceGroup]
    public var dataStructures: [DataStructure]
    public var annotations: [Annotation]
    /// What of the document the contract could not carry, each at its place (a Swagger 2.0
    /// construct OpenAPI 3 has no form for): no fault of the description, but a user should
    /// know that the mock and the check do without it.
    public var readingNotes: [ConversionNote]

    public init(
        format: ContractFormat, name: String = "", description: String = "",
        metadata: [MetadataEntry] = [], servers: [Server] = [], groups: [ResourceGroup] = [],
        dataStructures: [DataStructure] = [], annotations: [Annotation] = [], readingNotes: [ConversionNote] = []
    ) {
        self.format = format
        self.name = name
        self.description = description
        self.metadata = metadata
        self.servers = servers
        self.groups = groups
        self.dataStructures = dataStructures
        self.annotations = annotations
        self.readingNotes = readingNotes
    }

    /// Every resource, in document order, whatever group it sits in.
    public var resources: [Resource] { groups.flatMap(\.resources) }

    /// Every action, in document order.
    public var actions: [Action] { resources.flatMap(\.actions) }

    public var errors: [Annotation] { annotations.filter { $0.severity == .error } }
    public var warnings: [Annotation] { annotations.filter { $0.severity == .warning } }
}

/// A `# Group` of resources, or an OpenAPI tag. Resources outside any group sit in a group
/// with an empty name.
public struct ResourceGroup: Sendable, Hashable, Codable {
    public var name: String
    public var description: String
    public var resources: [Resource]
    public var sourceLocation: SourceLocation?

    public init(name: String, description: String = "", resources: [Resource] = [], sourceLocation: SourceLocation? = nil) {
        self.name = name
        self.description = description
        self.resources = resources
        self.sourceLocation = sourceLocation
    }
}

/// Something addressed by a URI template, with the actions it supports.
public struct Resource: Sendable, Hashable, Codable {
    public var name: String
    public var description: String
    /// RFC 6570 template as written, e.g. `/notes/{id}{?limit}`.
    public var uriTemplate: String
    public var parameters: [Parameter]
    public var actions: [Action]
    public var sourceLocation: SourceLocation?

    public init(
        name: String, description: String = "", uriTemplate: String, parameters: [Parameter] = [],
        actions: [Action] = [], sourceLocation: SourceLocation? = nil
    ) {
        self.name = name
        self.description = description
        self.uriTemplate = uriTemplate
        self.parameters = parameters
        self.actions = actions
        self.sourceLocation = sourceLocation
    }
}

/// Where a parameter travels in a request.
public enum ParameterLocation: String, Sendable, Hashable, Codable {
    case path
    case query
    case header
    case cookie
}

/// A URI, header or cookie parameter.
public struct Parameter: Sendable, Hashable, Codable {
    public var name: String
    public var location: ParameterLocation
    /// The declared type as written (`string`, `number`, `enum[string]`, …), if any.
    public var type: String?
    public var required: Bool
    public var defaultValue: String?
    public var example: String?
    /// Allowed values when the parameter is an enumeration.
    public var members: [String]
    public var description: String
    /// A JSON Schema for the value when the description gives one (OpenAPI).
    public var schema: JSONValue?
    public var sourceLocation: SourceLocation?
    /// What stands between an array's items in a query value when it is not a comma: a space
    /// for OpenAPI's `spaceDelimited` style (Swagger 2.0's `ssv`), `|` for `pipeDelimited`
    /// (`pipes`).
    public var arrayDelimiter: String?
    /// The parameter's own `example` (or the first of its `examples`) as the document writes
    /// it, and where; nil when `example` comes from the schema or there is none. Lint checks
    /// it against the schema (`example` is its text, which no longer tells `5` from `"5"`).
    public var writtenExample: WrittenExample?

    public init(
        name: String, location: ParameterLocation, type: String? = nil, required: Bool = false,
        defaultValue: String? = nil, example: String? = nil, members: [String] = [],
        description: String = "", schema: JSONValue? = nil, sourceLocation: SourceLocation? = nil
    ) {
        self.name = name
        self.location = location
        self.type = type
        self.required = required
        self.defaultValue = defaultValue
        self.example = example
        self.members = members
        self.description = description
        self.schema = schema
        self.sourceLocation = sourceLocation
    }

    enum CodingKeys: String, CodingKey {
        case name, location = "in", type, required, defaultValue = "default", example, members, description, schema
        case sourceLocation, arrayDelimiter
    }
}

/// An HTTP method at a URI template, with its transaction examples.
public struct Action: Sendable, Hashable, Codable {
    /// The action's name: the Blueprint header name, or the OpenAPI operationId.
    public var name: String
    public var method: String
    public var description: String
    /// The `+ Relation` link relation, if given.
    public var relation: String?
    /// The effective URI template: the action's own when it overrides the resource's.
    public var uriTemplate: String
    /// Parameters that apply to this action (the resource's, overridden by the action's).
    public var parameters: [Parameter]
    public var examples: [TransactionExample]
    /// Whether a request must carry a body: OpenAPI's `requestBody.required` (false unless
    /// said). nil where the format has no such notion (API Blueprint): a POST, PUT or PATCH
    /// whose description shows a request body is then expected to send one.
    public var requestBodyRequired: Bool?
    /// The credentials a request must carry (OpenAPI's `security`, the operation's or the
    /// document's): each element one alternative, all of whose credentials are sent. nil when
    /// the operation asks for none (no requirement, or an empty one making them optional).
    public var security: [[Credential]]?
    public var sourceLocation: SourceLocation?

    public init(
        name: String, method: String, description: String = "", relation: String? = nil,
        uriTemplate: String, parameters: [Parameter] = [], examples: [TransactionExample] = [],
        sourceLocation: SourceLocation? = nil
    ) {
        self.name = name
        self.method = method
        self.description = description
        self.relation = relation
        self.uriTemplate = uriTemplate
        self.parameters = parameters
        self.examples = examples
        self.sourceLocation = sourceLocation
    }

    /// The mock's default answer: the first response of the first example.
    public var defaultResponse: Response? { examples.first?.responses.first }
}

/// Requests that go together with the responses they may receive.
public struct TransactionExample: Sendable, Hashable, Codable {
    public var name: String
    public var requests: [Request]
    public var responses: [Response]

    public init(name: String = "", requests: [Request] = [], responses: [Response] = []) {
        self.name = name
        self.requests = requests
        self.responses = responses
    }
}

/// One header line, kept in description order (names may repeat).
public struct Header: Sendable, Hashable, Codable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// An example value as a description writes it, and where.
public struct WrittenExample: Sendable, Hashable, Codable {
    public var value: JSONValue
    public var location: SourceLocation?

    public init(_ value: JSONValue, at location: SourceLocation?) {
        self.value = value
        self.location = location
    }
}

/// A header a response declares (OpenAPI's `responses.*.headers`): whether it must be sent
/// and the schema its value is read and checked with. API Blueprint shows headers as example
/// lines only (`MessagePayload.headers`); MSON has no header schema.
public struct ResponseHeader: Sendable, Hashable, Codable {
    public var name: String
    public var required: Bool
    public var deprecated: Bool
    public var description: String
    /// The value's JSON Schema with references inlined; nil when the description gives none.
    public var schema: JSONValue?
    /// The media type of a header declared with `content` rather than `schema`: a JSON type's
    /// value is JSON text.
    public var mediaType: String?
    /// JSON Pointer of `schema` in the description document (inside `components/headers`
    /// for a header that is a `$ref`).
    public var schemaPointer: String?
    public var sourceLocation: SourceLocation?
    /// Where the document writes the header's example (`example`, or the first of `examples`);
    /// nil when the example line is written from the schema. Lint checks such an example
    /// against the schema.
    public var exampleLocation: SourceLocation?

    public init(
        name: String, required: Bool = false, deprecated: Bool = false, description: String = "", schema: JSONValue? = nil,
        mediaType: String? = nil, schemaPointer: String? = nil, sourceLocation: SourceLocation? = nil
    ) {
        self.name = name
        self.required = required
        self.deprecated = deprecated
        self.description = description
        self.schema = schema
        self.mediaType = mediaType
        self.schemaPointer = schemaPointer
        self.sourceLocation = sourceLocation
    }

    /// The value a header line carries, as the schema describes it: JSON text parsed for a
    /// JSON media type, other text read in the `simple` style (`SimpleStyle`). Nil for JSON
    /// text that doesn't parse.
    public func value(of text: String) -> JSONValue? {
        carriesJSON ? try? JSONValue(parsing: text) : SimpleStyle.value(of: text, schema: schema)
    }

    /// `value` as a header line carries it: JSON text for a JSON `content`, else in the
    /// `simple` style.
    public func text(of value: JSONValue) -> String {
        carriesJSON ? value.serialized() : SimpleStyle.text(of: value)
    }

    /// Declared with a JSON `content` (`application/json`, `…+json`): the value is JSON text.
    public var carriesJSON: Bool {
        guard let mediaType else { return false }
        let essence = (mediaType.lowercased().split(separator: ";").first ?? "").filter { $0 != " " }
        return essence.hasSuffix("/json") || essence.hasSuffix("+json")
    }
}

/// Where a message's example body came from. Apiary's precedence: Body > Attributes > Schema.
public enum BodySource: String, Sendable, Hashable, Codable {
    case body
    case attributes
    case schema
}

/// Where a message's validation schema came from. Apiary's precedence: Schema > Attributes > Body
/// (a schema derived from a JSON example body).
public enum SchemaSource: String, Sendable, Hashable, Codable {
    case schema
    case attributes
    case body
}

/// What requests and responses share: headers, an example body and a schema to validate with.
public struct MessagePayload: Sendable, Hashable, Codable {
    public var description: String
    public var headers: [Header]
    /// The example body as text, as the description gives it. A body to be written from the
    /// schema (`bodySource` `.schema`) may be left nil by a reader and written when something
    /// asks for it (`exampleBody`, `body(for:)`): a description of thousands of operations is
    /// read without writing an example for each.
    public var body: String?
    public var bodySource: BodySource?
    /// JSON Schema to validate bodies with.
    public var schema: JSONValue?
    /// The schema as written in the description, also when it isn't JSON (e.g. an XML schema).
    public var schemaText: String?
    public var schemaSource: SchemaSource?
    /// `$schema` dialect of `schema`, e.g. `http://json-schema.org/draft-04/schema#`.
    public var schemaDialect: String?
    /// JSON Pointer of `schema` in the description document, when it is a JSON document
    /// (OpenAPI: `/paths/~1notes/get/responses/200/content/application~1json/schema`).
    public var schemaPointer: String? = nil
    public var sourceLocation: SourceLocation?
    /// Where the document writes the example `body` comes from (a media type's `example`, or
    /// a named example's `value`, in `components/examples` when it is a `$ref`); nil when the
    /// body is written from the schema. Lint checks such an example against the schema.
    public var exampleLocation: SourceLocation?
    /// The `$ref` `schema` is, when it is one (`#/components/schemas/Item`): payloads that
    /// share it share the schema, found by the reference rather than by comparing schemas.
    public var schemaReference: String?

    public init(
        description: String = "", headers: [Header] = [], body: String? = nil, bodySource: BodySource? = nil,
        schema: JSONValue? = nil, schemaSource: SchemaSource? = nil, schemaDialect: String? = nil,
        sourceLocation: SourceLocation? = nil
    ) {
        self.description = description
        self.headers = headers
        self.body = body
        self.bodySource = bodySource
        self.schema = schema
        self.schemaSource = schemaSource
        self.schemaDialect = schemaDialect
        self.sourceLocation = sourceLocation
    }

    /// The first header with this name, compared case-insensitively.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.utf8.count == wanted.utf8.count && $0.name.lowercased() == wanted }?.value
    }

    /// The media type from `Content-Type`, without parameters.
    public var mediaType: String? {
        guard let value = header("Content-Type") else { return nil }
        let type = value.split(separator: ";", maxSplits: 1).first ?? Substring(value)
        let trimmed = type.drop { $0 == " " }
        return String(trimmed[..<(trimmed.lastIndex { $0 != " " }.map(trimmed.index(after:)) ?? trimmed.startIndex)]).lowercased()
    }

    /// The example body parsed as JSON, when it is JSON (written from the schema when the
    /// reader left it to be).
    public var bodyJSON: JSONValue? {
        guard let body = exampleBody else { return nil }
        return try? JSONValue(parsing: body)
    }
}

/// An example request.
public struct Request: Sendable, Hashable, Codable {
    public var name: String
    /// Parameters this example request sets (Blueprint `+ Parameters` inside `+ Request`),
    /// overriding the action's by name.
    public var parameters: [Parameter]
    public var payload: MessagePayload

    public init(name: String = "", parameters: [Parameter] = [], payload: MessagePayload = MessagePayload()) {
        self.name = name
        self.parameters = parameters
        self.payload = payload
    }
}

/// An example response.
public struct Response: Sendable, Hashable, Codable {
    /// HTTP status; OpenAPI's `default` response is 0.
    public var status: Int
    /// Names the example when a format gives several per status (OpenAPI `examples`).
    public var name: String
    public var payload: MessagePayload
    /// The description gave a class of statuses (OpenAPI `2XX`): `status` is its first code
    /// and any of the hundred matches.
    public var isStatusClass: Bool = false
    /// The headers the response declares with a schema (OpenAPI `headers`), checked in the
    /// traffic; their example values are among `payload.headers`, which the mock sends.
    public var declaredHeaders: [ResponseHeader] = []

    public init(
        status: Int, name: String = "", payload: MessagePayload = MessagePayload(), isStatusClass: Bool = false,
        declaredHeaders: [ResponseHeader] = []
    ) {
        self.status = status
        self.name = name
        self.payload = payload
        self.isStatusClass = isStatusClass
        self.declaredHeaders = declaredHeaders
    }

    /// Whether a response with `code` is this documented response (`default`, status 0,
    /// matches any code).
    public func documents(status code: Int) -> Bool {
        if status == 0 { return true }
        return isStatusClass ? code / 100 == status / 100 : code == status
    }
}

/// A named type: a Blueprint `# Data Structures` entry or an OpenAPI component schema.
public struct DataStructure: Sendable, Hashable, Codable {
    public var name: String
    public var description: String
    /// A rendered example value, when the description gives or renders one (an OpenAPI
    /// component's is written from its schema when asked: `exampleValue`).
    public var example: JSONValue?
    public var schema: JSONValue?
    public var sourceLocation: SourceLocation?

    public init(name: String, description: String = "", example: JSONValue? = nil, schema: JSONValue? = nil, sourceLocation: SourceLocation? = nil) {
        self.name = name
        self.description = description
        self.example = example
        self.schema = schema
        self.sourceLocation = sourceLocation
    }
}
