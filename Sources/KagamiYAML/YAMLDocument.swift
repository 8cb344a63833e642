// YAML text to a Yams node tree, bounded: a document's size, nesting, and the number of nodes
// it becomes once aliases are followed ("billion laughs") are checked before anyone walks it.
import Yams

public enum YAMLDocument {
    public struct Limits: Sendable, Hashable {
        /// Largest text accepted, in UTF-8 bytes.
        public var maximumBytes: Int
        /// Most nodes the document may stand for with every alias expanded.
        public var maximumNodes: Int
        /// Deepest nesting of mappings and sequences.
        public var maximumDepth: Int

        public init(maximumBytes: Int, maximumNodes: Int, maximumDepth: Int) {
            self.maximumBytes = maximumBytes
            self.maximumNodes = maximumNodes
            self.maximumDepth = maximumDepth
        }
    }

    /// What was wrong, and where when YAML knows (1-based line and column).
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public var line: Int?
        public var column: Int?

        public var description: String {
            guard let line else { return message }
            return "\(line):\(column ?? 1): \(message)"
        }
    }

    /// The document's root node; nil for an empty document.
    public static func compose(_ text: String, limits: Limits) throws(Failure) -> Node? {
        let size = text.utf8.count
        guard size <= limits.maximumBytes else {
            throw Failure(message: "the document is \(size) bytes, more than the \(limits.maximumBytes) accepted")
        }
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw failure(error)
        } catch {
            throw Failure(message: "\(error)")
        }
        guard let root else { return nil }
        var budget = limits.maximumNodes
        try check(root, depth: 0, budget: &budget, limits: limits)
        return root
    }

    /// Walks the tree with aliases expanded, stopping as soon as a limit is passed: the walk
    /// costs at most `maximumNodes` steps whatever the document.
    private static func check(_ node: Node, depth: Int, budget: inout Int, limits: Limits) throws(Failure) {
        budget -= 1
        guard budget >= 0 else {
            throw Failure(
                message: "the document stands for more than \(limits.maximumNodes) values once its aliases (*name) are expanded",
                line: node.mark.map { $0.line }, column: node.mark.map { $0.column })
        }
        guard depth <= limits.maximumDepth else {
            throw Failure(message: "nested more than \(limits.maximumDepth) levels deep", line: node.mark.map { $0.line }, column: node.mark.map { $0.column })
        }
        switch node {
        case .mapping(let mapping):
            for (key, value) in mapping {
                try check(key, depth: depth + 1, budget: &budget, limits: limits)
                try check(value, depth: depth + 1, budget: &budget, limits: limits)
            }
        case .sequence(let sequence):
            for element in sequence {
                try check(element, depth: depth + 1, budget: &budget, limits: limits)
            }
        case .scalar, .alias:
            break
        }
    }

    /// Yams's error as a message with its position (Yams appends the offending line and a
    /// caret to its description; the position says where already).
    public static func failure(_ error: YamlError) -> Failure {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _), .composer(_, let problem, let mark, _):
            return Failure(message: problem, line: mark.line, column: mark.column)
        case .duplicatedKeysInMapping(let duplicates, let context):
            return Failure(
                message: "duplicate key \(duplicates.map { "\"\($0)\"" }.joined(separator: ", "))",
                line: context.mark.line, column: context.mark.column)
        default:
            let summary = String(describing: error).split(separator: "\n").prefix(2).joined(separator: " ")
            return Failure(message: summary)
        }
    }
}
