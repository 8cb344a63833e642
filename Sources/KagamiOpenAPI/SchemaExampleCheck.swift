// The examples a schema writes for itself (`example`; 3.1's `examples` array), checked against
// that schema for lint: the mock writes values from them, so one its schema refuses would come
// back as the contract check's finding on the mock's own answer.
import Dispatch
import Foundation
import KagamiContract
import KagamiJSON
import KagamiJSONSchema
import Synchronization

enum SchemaExampleCheck {
    /// A schema of the document that writes examples of itself.
    struct Place: Sendable {
        /// Where the schema is, in the document read (a Swagger 2.0 document's 3.0 form).
        var path: [String]
        /// Each example value and where it is written.
        var examples: [(value: JSONValue, path: [String])]
    }

    /// A warning at each schema example its schema refuses, named by where the schema is.
    /// A schema example is not a request's or a response's: a readOnly or writeOnly property
    /// may be missing as it may in either. Each schema is compiled once, its `example` and
    /// `examples` set aside (a large description writes the same property schema with a
    /// different example thousands of times), with the components' schemas as the reader
    /// inlined them (`components`).
    static func problems(
        in document: JSONValue, locator: SourceLocator, components: [DataStructure], isSwagger: Bool
    ) -> [Annotation] {
        let isOpenAPI30 = document["openapi"]?.stringValue?.hasPrefix("3.0") ?? false
        var finder = PlaceFinder(isOpenAPI30: isOpenAPI30)
        finder.visitDocument(document, depth: 0)
        guard !finder.places.isEmpty else { return [] }
        let forms = formsInlined(finder.schemas, format: isOpenAPI30 ? .openAPI30 : .openAPI31, components: components)
        // By schema: each share compiles its schemas and checks every example written with them.
        let placesBySchema = {
            var places = Array(repeating: [Int](), count: forms.count)
            for (index, schema) in finder.schemaOfPlace.enumerated() { places[schema].append(index) }
            return places
        }()
        let places = finder.places
        let shares = min(ProcessInfo.processInfo.activeProcessorCount, 8, max(1, forms.count / 256))
        let results = Mutex<[[Annotation]]>(Array(repeating: [], count: shares))
        DispatchQueue.concurrentPerform(iterations: shares) { share in
            var problems: [Annotation] = []
            for schemaIndex in (forms.count * share / shares)..<(forms.count * (share + 1) / shares) {
                guard let form = forms[schemaIndex] else { continue }
                let check = DirectionlessCheck(form)
                for placeIndex in placesBySchema[schemaIndex] {
                    let place = places[placeIndex]
                    for example in place.examples {
                        guard let error = check.error(example.value) else { continue }
                        problems.append(.refusedExample(subject(place.path, isSwagger: isSwagger), error, at: locator.location(of: example.path)))
                    }
                }
            }
            results.withLock { $0[share] = problems }
        }
        return results.withLock { $0.flatMap { $0 } }
    }

    /// How a finding names the schema: its pointer, a Swagger 2.0 component by its
    /// `definitions` name (a 2.0 schema written in an operation is at another path in the 3.0
    /// form; the finding's position is the 2.0 text's).
    private static func subject(_ path: [String], isSwagger: Bool) -> String {
        guard isSwagger else { return "the example of schema '#\(JSONPointer.string(path))'" }
        guard path.count >= 3, path[0] == "components", path[1] == "schemas" else { return "the example of the schema written here" }
        return "the example of schema '#\(JSONPointer.string(["definitions"] + path.dropFirst(2)))'"
    }

    /// A schema compiled as a response's and, only when that refuses an example, as a
    /// request's: an example either accepts is accepted.
    private final class DirectionlessCheck {
        private let form: JSONValue
        private lazy var response = try? JSONSchema(compiling: form, options: .init(assertsFormat: true, direction: .response))
        private lazy var request = try? JSONSchema(compiling: form, options: .init(assertsFormat: true, direction: .request))

        init(_ form: JSONValue) {
            self.form = form
        }

        /// The response reading's first error when neither reading accepts `value`; nil when
        /// one does or the schema does not compile (lint reports that elsewhere).
        func error(_ value: JSONValue) -> JSONSchemaValidationError? {
            guard let response, let error = response.validate(value).errors.first else { return nil }
            guard let request, !request.isValid(value) else { return nil }
            return error
        }
    }

    /// The distinct schemas in the form the contract holds them (JSON Schema 2020-12), their
    /// `#/components/schemas/…` references replaced by the components as the reader inlined
    /// them; nil for one the reader would not have put in form.
    private static func formsInlined(_ schemas: [JSONValue], format: ContractFormat, components: [DataStructure]) -> [JSONValue?] {
        let made = SchemaForms(format: format)
        let forms: [JSONValue?] = (try? made.prepare(schemas, at: [])) ?? schemas.map { try? made.form(of: $0, at: []) }
        var resolved: [String: JSONValue] = [:]
        for component in components { if let schema = component.schema { resolved[component.name] = schema } }
        return forms.map { form in
            guard let form else { return nil }
            var definitions = JSONObject()
            guard case .object(var members) = ComponentInlining(resolved: resolved).inlined(form, definitions: &definitions, depth: 0) else {
                return form
            }
            if !definitions.isEmpty {
                var merged = members["$defs"]?.objectValue ?? [:]
                for (name, schema) in definitions where merged[name] == nil { merged[name] = schema }
                members["$defs"] = .object(merged)
            }
            return .object(members)
        }
    }

    /// A form's component references replaced by the components' inlined schemas; what those
    /// keep in their own `$defs` (a component that refers back to itself) goes to the root's.
    private struct ComponentInlining {
        let resolved: [String: JSONValue]
        private static let prefix = "#/components/schemas/"
        /// Sample data, where `$ref` is just a key.
        private static let values: Set<String> = ["examples", "const", "enum", "default"]

        func inlined(_ value: JSONValue, definitions: inout JSONObject, depth: Int) -> JSONValue {
            guard depth < 64 else { return value }
            switch value {
            case .object(var members):
                if let reference = members["$ref"]?.stringValue, reference.hasPrefix(Self.prefix),
                   case .object(var target)? = resolved[JSONPointer.unescape(String(reference.dropFirst(Self.prefix.count)))] {
                    if case .object(let own)? = target.removeValue(forKey: "$defs") {
                        for (name, schema) in own where definitions[name] == nil { definitions[name] = schema }
                    }
                    members.removeValue(forKey: "$ref")
                    return members.isEmpty ? .object(target) : ["allOf": [.object(target), .object(members)]]
                }
                for (key, member) in members where !Self.values.contains(key) {
                    members[key] = inlined(member, definitions: &definitions, depth: depth + 1)
                }
                return .object(members)
            case .array(let items):
                return .array(items.map { inlined($0, definitions: &definitions, depth: depth + 1) })
            default:
                return value
            }
        }
    }

    /// Walks the document to its schemas (`schema` members, component schemas) and through
    /// their subschemas, past example values and extensions.
    private struct PlaceFinder {
        let isOpenAPI30: Bool
        var places: [Place] = []
        /// The distinct schemas, their examples set aside, and each place's among them.
        var schemas: [JSONValue] = []
        var schemaOfPlace: [Int] = []
        private var schemaIndexes: [JSONValue: Int] = [:]
        /// One path, grown and shrunk as the walk goes.
        private var path: [String] = []

        init(isOpenAPI30: Bool) {
            self.isOpenAPI30 = isOpenAPI30
        }

        private static let subschema = [
            "additionalProperties", "items", "not", "if", "then", "else", "contains", "propertyNames",
            "unevaluatedItems", "unevaluatedProperties", "additionalItems",
        ]
        private static let subschemaMaps = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]
        private static let subschemaLists = ["allOf", "anyOf", "oneOf", "prefixItems", "items"]

        mutating func visitDocument(_ value: JSONValue, depth: Int) {
            guard depth < 256 else { return }
            switch value {
            case .object(let members):
                for (key, member) in members {
                    // Example values are sample data; extensions are anyone's.
                    if key == "example" || key == "examples" || key.lowercased().hasPrefix("x-") { continue }
                    path.append(key)
                    if key == "schema" {
                        visitSchema(member, depth: depth + 1)
                    } else if key == "schemas", path.count == 2, path[0] == "components", case .object(let schemas) = member {
                        visitMap(schemas, depth: depth + 1)
                    } else {
                        visitDocument(member, depth: depth + 1)
                    }
                    path.removeLast()
                }
            case .array(let items):
                for (index, item) in items.enumerated() {
                    path.append(String(index))
                    visitDocument(item, depth: depth + 1)
                    path.removeLast()
                }
            default:
                return
            }
        }

        private mutating func visitMap(_ schemas: JSONObject, depth: Int) {
            for (name, schema) in schemas {
                path.append(name)
                visitSchema(schema, depth: depth + 1)
                path.removeLast()
            }
        }

        private mutating func visitSchema(_ value: JSONValue, depth: Int) {
            guard depth < 256, case .object(let members) = value else { return }
            var examples: [(value: JSONValue, path: [String])] = []
            if let example = members["example"], !(isOpenAPI30 && example.isNull) {
                examples.append((example, path + ["example"]))
            }
            if !isOpenAPI30, case .array(let items)? = members["examples"] {
                for (index, item) in items.enumerated() { examples.append((item, path + ["examples", String(index)])) }
            }
            if !examples.isEmpty {
                var schema = members
                schema.removeValue(forKey: "example")
                schema.removeValue(forKey: "examples")
                let key = JSONValue.object(schema)
                let index = schemaIndexes[key] ?? {
                    schemas.append(key)
                    schemaIndexes[key] = schemas.count - 1
                    return schemas.count - 1
                }()
                places.append(Place(path: path, examples: examples))
                schemaOfPlace.append(index)
            }
            for key in Self.subschema {
                guard let member = members[key], member.objectValue != nil else { continue }
                path.append(key)
                visitSchema(member, depth: depth + 1)
                path.removeLast()
            }
            for key in Self.subschemaMaps {
                guard case .object(let map)? = members[key] else { continue }
                path.append(key)
                visitMap(map, depth: depth + 1)
                path.removeLast()
            }
            for key in Self.subschemaLists {
                guard case .array(let items)? = members[key] else { continue }
                path.append(key)
                for (index, item) in items.enumerated() {
                    path.append(String(index))
                    visitSchema(item, depth: depth + 1)
                    path.removeLast()
                }
                path.removeLast()
            }
        }
    }
}
