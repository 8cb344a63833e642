// The compiled form of a schema: subschemas become nodes in one array and refer to each other
// by index, so `$ref` cycles need no references between objects and the whole is Sendable.
import KagamiJSON

final class SchemaProgram: Sendable {
    let nodes: [SchemaNode]
    let resources: [SchemaResource]
    let root: Int
    let draft: JSONSchema.Draft
    /// Only `unevaluatedItems`/`unevaluatedProperties` need annotations; without them
    /// evaluation skips collecting them.
    let tracksAnnotations: Bool
    /// The base URI given to the root when it has none; left out of reported locations.
    let implicitBase: String

    init(
        nodes: [SchemaNode], resources: [SchemaResource], root: Int, draft: JSONSchema.Draft,
        tracksAnnotations: Bool, implicitBase: String
    ) {
        self.nodes = nodes
        self.resources = resources
        self.root = root
        self.draft = draft
        self.tracksAnnotations = tracksAnnotations
        self.implicitBase = implicitBase
    }
}

/// A schema resource (a document or a subschema with `$id`), the unit of the dynamic scope.
struct SchemaResource: Sendable {
    let uri: String
    /// `$dynamicAnchor` name to node.
    let dynamicAnchors: [String: Int]
}

/// Nodes and keywords are immutable classes: evaluation passes them around by reference,
/// which keeps reference counting to one object instead of every array inside.
final class SchemaNode: Sendable {
    enum Body: Sendable {
        case alwaysValid
        case alwaysInvalid
        case keywords
    }

    let body: Body
    let resource: Int
    /// The node's resource URI and its pointer relative to the resource: the absolute location
    /// is written only when an error names it (a string made for every node of every schema
    /// compiled cost a large description's lint more than its errors ever needed).
    private let base: String
    private let relative: ArraySlice<String>

    /// Absolute location, `uri#pointer`, with the pointer relative to the resource.
    var location: String { base + "#" + JSONPointer.string(Array(relative)) }
    /// Keywords for every instance (type, enum, const, references, in-place applicators),
    /// evaluated first.
    let general: [CompiledKeyword]
    /// Keywords by the instance type they constrain, each in schema order with
    /// unevaluated* last; an instance of another type skips them without looking.
    let object: [CompiledKeyword]
    let array: [CompiledKeyword]
    let string: [CompiledKeyword]
    let number: [CompiledKeyword]

    init(body: Body, resource: Int, base: String, relative: ArraySlice<String>, keywords: [CompiledKeyword] = []) {
        self.body = body
        self.resource = resource
        self.base = base
        self.relative = relative
        var general: [CompiledKeyword] = [], object: [CompiledKeyword] = [], array: [CompiledKeyword] = []
        var string: [CompiledKeyword] = [], number: [CompiledKeyword] = []
        for keyword in keywords {
            switch keyword.check {
            case .ref, .dynamicRef, .type, .enumeration, .constant, .allOf, .anyOf, .oneOf, .not, .conditional:
                general.append(keyword)
            case .multipleOf, .minimum, .maximum, .integerFormat, .floatFormat:
                number.append(keyword)
            case .minLength, .maxLength, .pattern, .format:
                string.append(keyword)
            case .minItems, .maxItems, .uniqueItems, .prefixItems, .items, .contains, .unevaluatedItems:
                array.append(keyword)
            case .minProperties, .maxProperties, .required, .dependentRequired, .dependentSchemas, .properties,
                 .patternProperties, .additionalProperties, .propertyNames, .unevaluatedProperties:
                object.append(keyword)
            }
        }
        (self.general, self.object, self.array, self.string, self.number) = (general, object, array, string, number)
    }
}

final class CompiledKeyword: Sendable {
    /// The keyword as written in the schema; the last token of the keyword location.
    let name: String
    let check: SchemaCheck

    init(name: String, check: SchemaCheck) {
        self.name = name
        self.check = check
    }
}

enum JSONType: String, Sendable, CaseIterable {
    case null, boolean, integer, number, string, array, object

    func matches(_ value: JSONValue) -> Bool {
        switch (self, value) {
        case (.null, .null), (.boolean, .bool), (.string, .string), (.array, .array), (.object, .object),
             (.integer, .integer), (.number, .integer), (.number, .number):
            return true
        case (.integer, .number(let d)):
            // 1.0 is an integer in both drafts: the type is about the value, not the notation.
            return d.isFinite && d.rounded() == d
        default:
            return false
        }
    }
}

enum SchemaCheck: Sendable {
    // Core
    case ref(Int)
    case dynamicRef(Int, anchor: String?)
    // Any instance
    case type([JSONType])
    case enumeration([JSONValue])
    case constant(JSONValue)
    // Numbers
    case multipleOf(NumberDivisor)
    case minimum(NumericLimit, exclusive: Bool)
    case maximum(NumericLimit, exclusive: Bool)
    /// OpenAPI's `int32`/`int64`: a whole number in the format's range.
    case integerFormat(String, ClosedRange<Int64>)
    /// OpenAPI's `float`: a number a single-precision float holds without overflowing.
    case floatFormat
    // Strings
    case minLength(Int)
    case maxLength(Int)
    case pattern(ECMARegex)
    case format(StringFormat, JSONSchema.Draft)
    // Arrays
    case minItems(Int)
    case maxItems(Int)
    case uniqueItems
    case prefixItems([Int])
    /// Applies to every item from `start` on (2020-12 `items`, draft 4 `items` and `additionalItems`).
    case items(Int, start: Int)
    case contains(Int, minimum: Int, maximum: Int?)
    case unevaluatedItems(Int)
    // Objects
    case minProperties(Int)
    case maxProperties(Int)
    case required([String])
    case dependentRequired([(property: String, required: [String])])
    case dependentSchemas([(property: String, schema: Int)])
    /// Declared properties in schema order, and the same as a table for lookups.
    case properties([(name: String, schema: Int)], [String: Int])
    case patternProperties([(regex: ECMARegex, schema: Int)])
    case additionalProperties(Int, declared: Set<String>, patterns: [ECMARegex])
    case propertyNames(Int)
    case unevaluatedProperties(Int)
    // In-place applicators
    case allOf([Int])
    case anyOf([Int])
    case oneOf([Int])
    case not(Int)
    case conditional(if: Int, then: Int?, else: Int?)
}

/// A `minimum`/`maximum` limit. Integers are compared exactly: as doubles, 2^63 - 1 and 2^63
/// are the same number, and an int64 bound would let 2^63 through.
struct NumericLimit: Sendable, Hashable {
    let value: Double
    /// The limit as written when it is an integer in `Int`'s range.
    let integer: Int?

    init?(_ json: JSONValue) {
        guard let value = json.doubleValue else { return nil }
        self.value = value
        if case .integer(let integer) = json { self.integer = integer } else { integer = nil }
    }

    /// The instance's order relative to the limit (-1 below, 0 equal, 1 above); nil when the
    /// instance is not a number.
    func order(of instance: JSONValue) -> Int? {
        switch instance {
        case .integer(let number):
            if let integer { return number < integer ? -1 : (number == integer ? 0 : 1) }
            let double = Double(number)
            return double < value ? -1 : (double == value ? 0 : 1)
        case .number(let number):
            // An integer literal beyond `Int` (parsed as a double) lies beyond any `Int` limit.
            if integer != nil, number.rounded() == number, abs(number) >= 9_223_372_036_854_775_808.0 {
                return number > 0 ? 1 : -1
            }
            return number < value ? -1 : (number == value ? 0 : 1)
        default:
            return nil
        }
    }
}
