/// What `--ignore` names: JSON Pointers into bodies and messages (`/meta/requestId`; `*` for any
/// one member or element; a pointer covers everything below it), and header or query parameter
/// names (any case).
struct IgnoredPlaces: Sendable {
    private var pointers: [[String]] = []
    private var names: Set<String> = []

    init(_ entries: [String]) {
        for entry in entries where !entry.isEmpty {
            if entry.hasPrefix("/") {
                pointers.append(entry.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map { Self.unescaped(String($0)) })
            } else {
                names.insert(entry.lowercased())
            }
        }
    }

    func ignores(name: String) -> Bool {
        names.contains(name.lowercased())
    }

    /// `tokens`: the place's unescaped pointer tokens (`*` for array elements and id-keyed members).
    func ignores(pointer tokens: [String]) -> Bool {
        pointers.contains { pattern in
            guard pattern.count <= tokens.count else { return false }
            // An index names an element; the diff merges every element into `*`.
            return zip(pattern, tokens).allSatisfy { wanted, actual in
                wanted == "*" || wanted == actual || (actual == "*" && !wanted.isEmpty && wanted.allSatisfy(\.isNumber))
            }
        }
    }

    /// `~1` is `/` and `~0` is `~` in a JSON Pointer token.
    static func unescaped(_ token: String) -> String {
        token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
    }

    static func escaped(_ token: String) -> String {
        token.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }

    static func pointer(_ tokens: [String]) -> String {
        tokens.map { "/" + escaped($0) }.joined()
    }
}
