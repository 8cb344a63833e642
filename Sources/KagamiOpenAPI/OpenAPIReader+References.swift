// References of an OpenAPI document that point nowhere in it: `$ref`s, and the schema
// references of a discriminator's `mapping`, which are plain strings.
import KagamiJSON

extension OpenAPIReader {
    /// Each `$ref` inside the document and each discriminator mapping target that points
    /// nowhere in it, with where it is written. References to other files are not followed.
    public static func unresolvedReferences(in document: JSONValue) -> [(path: [String], reference: String)] {
        var found: [(path: [String], reference: String)] = []
        var path: [String] = []
        func visit(_ value: JSONValue, depth: Int) {
            guard depth < 256 else { return }
            switch value {
            case .object(let members):
                if let reference = members["$ref"]?.stringValue, reference.hasPrefix("#"),
                   resolve(pointer: String(reference.dropFirst()), in: document) == nil {
                    found.append((path + ["$ref"], reference))
                }
                for (key, target) in unresolvedMappings(members["discriminator"], in: document) {
                    found.append((path + ["discriminator", "mapping", key], target))
                }
                for (key, member) in members where key != "$ref" {
                    if key == "example" || (key == "value" && path.dropLast().last == "examples") { continue }
                    path.append(key)
                    visit(member, depth: depth + 1)
                    path.removeLast()
                }
            case .array(let items):
                for (index, item) in items.enumerated() {
                    path.append(String(index))
                    visit(item, depth: depth + 1)
                    path.removeLast()
                }
            default:
                return
            }
        }
        visit(document, depth: 0)
        return found
    }

    /// The mapping entries of a discriminator whose schema is not in the document: a
    /// `#/…` reference that resolves to nothing, or a bare name no component schema has.
    static func unresolvedMappings(_ discriminator: JSONValue?, in document: JSONValue) -> [(key: String, target: String)] {
        guard let mapping = discriminator?["mapping"]?.objectValue else { return [] }
        var found: [(key: String, target: String)] = []
        for (key, value) in mapping {
            guard let target = value.stringValue else { continue }
            if target.hasPrefix("#") {
                if resolve(pointer: String(target.dropFirst()), in: document) == nil { found.append((key, target)) }
            } else if !target.contains("/"), !target.contains("."), document["components"]?["schemas"]?[target] == nil {
                found.append((key, target))
            }
        }
        return found
    }
}
