// `$ref`s to `#/components/schemas/…` inlined into the schemas a contract carries, so the
// validator and the example generator need no document beside them.
import KagamiJSON

struct ComponentSchemaInliner {
    /// The component schemas in their JSON Schema 2020-12 form, by name.
    let componentSchemas: JSONObject
    /// Component schemas once inlined, each made once and shared.
    private var inlinedComponents = InlinedComponents()

    init(componentSchemas: JSONObject) {
        self.componentSchemas = componentSchemas
    }

    /// Another with the components inlined so far, for a reader on another thread.
    func copy() -> ComponentSchemaInliner {
        var copy = self
        copy.inlinedComponents = InlinedComponents()
        copy.inlinedComponents.schemas = inlinedComponents.schemas
        return copy
    }

    /// Component schemas inlined on their own, by name; nil for one that refers back to
    /// itself somewhere (its `$defs` depend on where it is used). Unchecked: one reader uses
    /// it at a time; a reader on another thread takes a `copy()` of the inliner.
    private final class InlinedComponents: @unchecked Sendable {
        var schemas: [String: (schema: JSONValue, deepest: Int)?] = [:]
    }

    /// The schema with `#/components/schemas/…` references inlined. A reference back into a
    /// schema being inlined stays a `$ref` into `$defs`, which then holds that schema.
    func resolved(_ schema: JSONValue) -> JSONValue {
        var inlining = Inlining()
        var result = inline(schema, stack: [], inlining: &inlining, depth: 0)
        if !inlining.definitions.isEmpty, case .object(var members) = result {
            members["$defs"] = .object(inlining.definitions)
            result = .object(members)
        }
        return result
    }

    /// Component `name` inlined as `resolved` inlines a `$ref` to it, when that is also what
    /// inlining its own schema gives (it refers back to itself nowhere); nil otherwise.
    func sharedComponent(_ name: String) -> JSONValue? {
        guard let target = componentSchemas[name] else { return nil }
        return sharedInlined(name, target, depth: 1)?.schema
    }

    /// What inlining one schema has gathered.
    private struct Inlining {
        /// Schemas referred to from inside themselves, by name.
        var definitions = JSONObject()
        /// The deepest level reached (inlining stops at 64).
        var deepest = 0
    }

    /// The component inlined as it would be `depth` levels down, made once: a component
    /// that refers to no schema above it comes out the same wherever it is used, and as a
    /// shared value (copied on write) a large description holds it once, not once per use.
    private func sharedInlined(_ name: String, _ target: JSONValue, depth: Int) -> (schema: JSONValue, deepest: Int)? {
        let known: (schema: JSONValue, deepest: Int)?
        if let entry = inlinedComponents.schemas[name] {
            known = entry
        } else {
            // Not shared while it is being made: a schema it refers to that refers back to
            // it is inlined in place, as it always was.
            inlinedComponents.schemas[name] = .some(nil)
            var alone = Inlining()
            let schema = inline(target, stack: [name], inlining: &alone, depth: 0)
            known = alone.definitions.isEmpty && alone.deepest < 64 ? (schema, alone.deepest) : nil
            inlinedComponents.schemas[name] = .some(known)
        }
        guard let known, depth + known.deepest < 64 else { return nil }
        return known
    }

    private func inline(_ value: JSONValue, stack: [String], inlining: inout Inlining, depth: Int) -> JSONValue {
        inlining.deepest = max(inlining.deepest, depth)
        guard depth < 64 else { return value }
        switch value {
        case .object(var members):
            if let reference = members["$ref"]?.stringValue, reference.hasPrefix("#/components/schemas/") {
                let name = String(reference.dropFirst("#/components/schemas/".count))
                guard let target = componentSchemas[name] else { return value }
                if stack.contains(name) {
                    if inlining.definitions[name] == nil {
                        inlining.definitions[name] = [:]
                        inlining.definitions[name] = inline(target, stack: [name], inlining: &inlining, depth: depth + 1)
                    }
                    members["$ref"] = .string("#/$defs/\(name)")
                    return .object(members)
                }
                members.removeValue(forKey: "$ref")
                let expanded: JSONValue
                if let shared = sharedInlined(name, target, depth: depth + 1) {
                    inlining.deepest = max(inlining.deepest, depth + 1 + shared.deepest)
                    expanded = shared.schema
                } else {
                    expanded = inline(target, stack: stack + [name], inlining: &inlining, depth: depth + 1)
                }
                guard !members.isEmpty else { return expanded }
                // Siblings of `$ref` (2020-12 allows them) stay beside the inlined schema.
                return ["allOf": [expanded, .object(members)]]
            }
            for (key, member) in members {
                members[key] = inline(member, stack: stack, inlining: &inlining, depth: depth + 1)
            }
            return .object(members)
        case .array(let items):
            return .array(items.map { inline($0, stack: stack, inlining: &inlining, depth: depth + 1) })
        default:
            return value
        }
    }
}
