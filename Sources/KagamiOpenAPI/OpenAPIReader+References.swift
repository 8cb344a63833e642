// References of an OpenAPI document that point nowhere in it: `$ref`s, and the schema
// references of a discriminator's `mapping`, which are plain strings.
import Dispatch
import KagamiContract
import KagamiJSON
import Synchronization

/// `OpenAPIReader.referenceProblems`, found on another thread while the document's reading
/// goes on: a walk of the whole document (half a second of a 50 MB description) that the
/// decoding of its other parts need not wait for.
final class ReferenceProblemsAside: Sendable {
    private let found = Mutex<(problems: [Annotation], notes: [ConversionNote])>(([], []))
    private let walked = DispatchGroup()

    init(in document: JSONValue, locator: SourceLocator) {
        walked.enter()
        DispatchQueue.global().async { [self] in
            let found = OpenAPIReader.referenceProblems(in: document, locator: locator)
            self.found.withLock { $0 = found }
            walked.leave()
        }
    }

    /// The problems, once the walk has ended.
    var problems: [Annotation] {
        walked.wait()
        return found.withLock { $0.problems }
    }

    /// The examples given as an `externalValue`, which are not fetched, once the walk has ended.
    var notes: [ConversionNote] {
        walked.wait()
        return found.withLock { $0.notes }
    }
}

extension OpenAPIReader {
    /// A reference found in a document that leads nowhere in it.
    enum UnresolvedReference {
        /// A `#/…` `$ref` with nothing at its path.
        case dangling
        /// A `$ref` to another file: not followed.
        case external
        /// A discriminator's mapping entry (the key) whose schema is not in the document.
        case mapping(key: String)
        /// An Example Object's `externalValue`: another document, never fetched.
        case externalValue
    }

    /// Each `$ref` inside the document and each discriminator mapping target that points
    /// nowhere in it, with where it is written. References to other files are not followed.
    public static func unresolvedReferences(in document: JSONValue) -> [(path: [String], reference: String)] {
        unresolvedReferences(document).compactMap { path, reference, kind in
            switch kind {
            case .dangling: (path + ["$ref"], reference)
            case .mapping(let key): (path + ["discriminator", "mapping", key], reference)
            case .external, .externalValue: nil
            }
        }
    }

    /// Every reference that leads nowhere in the document (an example's `externalValue`
    /// among them), with the path of the object that holds it. Example values are sample data, where `$ref` is just a key: not walked.
    static func unresolvedReferences(_ document: JSONValue) -> [(path: [String], reference: String, kind: UnresolvedReference)] {
        var found: [(path: [String], reference: String, kind: UnresolvedReference)] = []
        // A document refers to the same few components thousands of times: each target is
        // looked up once.
        var resolvable: [String: Bool] = [:]
        // One path, grown and shrunk as the walk goes: no copy per value.
        var path: [String] = []
        func visit(_ value: JSONValue, depth: Int) {
            guard depth < 256 else { return }
            switch value {
            case .object(let members):
                if let reference = members["$ref"]?.stringValue {
                    if !reference.hasPrefix("#") {
                        found.append((path, reference, .external))
                    } else if !(resolvable[reference] ?? {
                        let exists = resolve(pointer: String(reference.dropFirst()), in: document) != nil
                        resolvable[reference] = exists
                        return exists
                    }()) {
                        found.append((path, reference, .dangling))
                    }
                }
                if path.count >= 2, path[path.count - 2] == "examples", let external = members["externalValue"]?.stringValue {
                    found.append((path, external, .externalValue))
                }
                for (key, target) in unresolvedMappings(members["discriminator"], in: document) {
                    found.append((path, target, .mapping(key: key)))
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
