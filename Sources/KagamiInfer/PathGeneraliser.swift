// Concrete request paths into URI templates: `/users/42/posts` → `/users/{userId}/posts`.
import Foundation

/// A path template the generaliser produced or a hint gave: literal segments and named variables.
public struct PathTemplate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public enum Segment: Sendable, Hashable {
        case literal(String)
        case variable(String)
    }

    public var segments: [Segment]

    public init(segments: [Segment]) { self.segments = segments }

    /// `/users/{userId}`; `/` for the root.
    public var description: String {
        "/" + segments.map { segment in
            switch segment {
            case .literal(let text): text
            case .variable(let name): "{\(name)}"
            }
        }.joined(separator: "/")
    }

    public var variableNames: [String] {
        segments.compactMap { if case .variable(let name) = $0 { name } else { nil } }
    }

    public static func < (a: PathTemplate, b: PathTemplate) -> Bool { a.description < b.description }
}

/// A `--path` hint: a template that wins over what the generaliser would infer for the paths it
/// matches, as a prefix (`/repos/{owner}/{repo}` also shapes `/repos/a/b/issues/3`). Literal
/// segments in a hint stay literal even when they look like ids.
public struct PathHint: Sendable, Hashable {
    public let template: PathTemplate

    public struct Invalid: Error, Sendable, CustomStringConvertible {
        public var hint: String
        public var reason: String
        public var description: String { "--path \(hint): \(reason)" }
    }

    public init(parsing text: String) throws(Invalid) {
        guard text.hasPrefix("/") else { throw Invalid(hint: text, reason: "a path template starts with '/' (e.g. /repos/{owner}/{repo})") }
        var segments: [PathTemplate.Segment] = []
        var names: Set<String> = []
        for raw in PathGeneraliser.segments(of: text) {
            if raw.hasPrefix("{") || raw.hasSuffix("}") {
                let name = String(raw.dropFirst().dropLast())
                guard raw.hasPrefix("{"), raw.hasSuffix("}"), !name.isEmpty,
                      name.unicodeScalars.allSatisfy({ PathSegmentShape.isLetter($0) || PathSegmentShape.isDigit($0) || $0 == "_" }) else {
                    throw Invalid(hint: text, reason: "'\(raw)' is not a variable: write {name} with letters, digits or _ as a whole segment")
                }
                guard names.insert(name).inserted else { throw Invalid(hint: text, reason: "the variable {\(name)} appears twice") }
                segments.append(.variable(name))
            } else {
                guard !raw.contains("{"), !raw.contains("}") else {
                    throw Invalid(hint: text, reason: "'\(raw)': a variable must be a whole segment")
                }
                segments.append(.literal(raw))
            }
        }
        template = PathTemplate(segments: segments)
    }

    /// True when the hint's segments are a prefix of `segments`.
    func matches(_ segments: [String]) -> Bool {
        guard template.segments.count <= segments.count else { return false }
        for (hinted, actual) in zip(template.segments, segments) {
            switch hinted {
            case .literal(let text): if text != actual { return false }
            case .variable: if actual.isEmpty { return false }
            }
        }
        return true
    }
}

/// Turns the paths of recorded requests into templates. Values (numbers, UUIDs, hex and
/// base64-ish ids, dates, emails) become variables named from the segment before them
/// (`/users/42` → `/users/{userId}`); literal siblings that vary while the same shape follows
/// them collapse into one variable; `api`, versions and other words stay literal. Pure: the same
/// paths and hints always give the same templates, so a changed hint re-infers from the same traffic.
public struct PathGeneraliser: Sendable {
    public var hints: [PathHint]
    /// Past this many distinct templates the rarest are left out (`Result.dropped`).
    public var maximumTemplates: Int

    public init(hints: [PathHint] = [], maximumTemplates: Int = 1000) {
        self.hints = hints
        self.maximumTemplates = maximumTemplates
    }

    public struct Match: Sendable, Hashable {
        public var template: PathTemplate
        /// Each variable's value in this path, in template order (still percent-encoded).
        public var values: [String]
    }

    public struct Result: Sendable {
        /// The template of each path given, keyed by the path; paths left out by the cap are absent.
        public var matches: [String: Match]
        /// Templates with how many of the given paths each covers, most used first.
        public var templates: [(template: PathTemplate, count: Int)]
        /// Distinct templates left out because there were more than `maximumTemplates`.
        public var droppedTemplates: Int
        /// Paths (counting repeats) those templates covered.
        public var droppedPaths: Int
    }

    /// Splits `/a/b/` into `["a", "b", ""]`; `/` into `[]`.
    public static func segments(of path: String) -> [String] {
        var parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if parts.first == "" { parts.removeFirst() }
        if parts == [""] { return [] }
        return parts
    }

    public func generalise(_ paths: [String]) -> Result {
        let root = Node()
        var routes: [(path: String, choices: [Choice])] = []
        var seen: Set<String> = []
        for path in paths {
            let segments = Self.segments(of: path)
            root.passes += 1
            let isNew = seen.insert(path).inserted
            let choices = insert(segments, into: root, isNew: isNew)
            if isNew { routes.append((path, choices)) }
        }
        collapse(root, depth: 0)

        var counts: [PathTemplate: Int] = [:]
        var pathCounts: [String: Int] = [:]
        for path in paths { pathCounts[path, default: 0] += 1 }
        var matches: [String: Match] = [:]
        for (path, choices) in routes {
            let match = resolve(Self.segments(of: path), choices, from: root)
            matches[path] = match
            counts[match.template, default: 0] += pathCounts[path] ?? 1
        }
        var templates = counts.map { (template: $0.key, count: $0.value) }
            .sorted { $0.count != $1.count ? $0.count > $1.count : $0.template < $1.template }
        var droppedTemplates = 0
        var droppedPaths = 0
        if templates.count > maximumTemplates {
            let dropped = Set(templates[maximumTemplates...].map(\.template))
            droppedTemplates = dropped.count
            droppedPaths = templates[maximumTemplates...].reduce(0) { $0 + $1.count }
            templates.removeSubrange(maximumTemplates...)
            matches = matches.filter { !dropped.contains($0.value.template) }
        }
        return Result(matches: matches, templates: templates, droppedTemplates: droppedTemplates, droppedPaths: droppedPaths)
    }

    // MARK: The tree of segments

    /// What insertion chose for a segment: its literal child, or the variable child.
    enum Choice: Sendable {
        case literal(String)
        case variable
    }

    final class Node {
        var literals: [String: Node] = [:]
        var variable: Node?
        /// Shapes of the values that went to `variable`.
        var shapes: Set<PathSegmentShape> = []
        /// The name a hint gave the variable child.
        var hintedName: String?
        /// Literal children a hint named: never collapsed.
        var hintedLiterals: Set<String> = []
        /// Literal children merged into the variable child.
        var collapsed: Set<String> = []
        /// Paths that went through this node, counting repeats.
        var passes = 0
        /// Distinct paths that went through this node.
        var distinctPaths = 0
        /// The first two distinct values that went to this (variable) node: enough to tell one from many.
        var values: [String] = []

        func variableChild() -> Node {
            if let variable { return variable }
            let node = Node()
            variable = node
            return node
        }

        /// Adds `other`'s subtree into this one.
        func absorb(_ other: Node) {
            passes += other.passes
            distinctPaths += other.distinctPaths
            for value in other.values where values.count < 2 && !values.contains(value) { values.append(value) }
            shapes.formUnion(other.shapes)
            hintedLiterals.formUnion(other.hintedLiterals)
            collapsed.formUnion(other.collapsed)
            if hintedName == nil { hintedName = other.hintedName }
            for (key, child) in other.literals {
                if let mine = literals[key] { mine.absorb(child) } else { literals[key] = child }
            }
            if let theirs = other.variable { variableChild().absorb(theirs) }
        }

        /// True when words follow this node (`/users/42/posts`): the shape that tells values from
        /// vocabulary. A node followed only by a variable is a collection (`/users/{id}`), and
        /// collections side by side are the API's vocabulary, not values.
        var namesWords: Bool { !literals.isEmpty }

        /// What follows this node, one level down: its literal keys, and `{}` for a variable.
        var signature: [String] {
            var keys = literals.keys.sorted()
            if variable != nil { keys.append("{}") }
            return keys
        }
    }

    private func insert(_ segments: [String], into root: Node, isNew: Bool) -> [Choice] {
        var node = root
        var choices: [Choice] = []
        let hint = hints.first { $0.matches(segments) }
        for (index, segment) in segments.enumerated() {
            let choice: Choice
            if let hint, index < hint.template.segments.count {
                switch hint.template.segments[index] {
                case .literal(let text):
                    node.hintedLiterals.insert(text)
                    choice = .literal(text)
                case .variable(let name):
                    node.hintedName = name
                    node.shapes.insert(PathSegmentShape.of(segment))
                    choice = .variable
                }
            } else {
                let shape = PathSegmentShape.of(segment)
                if shape.isValue {
                    node.shapes.insert(shape)
                    choice = .variable
                } else {
                    choice = .literal(segment)
                }
            }
            let next: Node
            switch choice {
            case .literal(let text):
                if let existing = node.literals[text] {
                    next = existing
                } else {
                    next = Node()
                    node.literals[text] = next
                }
            case .variable:
                next = node.variableChild()
            }
            next.passes += 1
            if isNew { next.distinctPaths += 1 }
            if case .variable = choice, next.values.count < 2, !next.values.contains(segment) { next.values.append(segment) }
            choices.append(choice)
            node = next
        }
        return choices
    }

    /// Merges literal siblings that are really values into the variable child, top down.
    private func collapse(_ node: Node, depth: Int) {
        guard depth < 64 else { return }
        let candidates = node.literals.filter { key, _ in
            !node.hintedLiterals.contains(key) && !PathSegmentShape.isVersionOrAPIWord(key) && !key.isEmpty
        }
        var merged: [String] = []
        // Beside a variable, a literal with the same shape below is one more value of it
        // (`/users/42/posts` and `/users/jake/posts`).
        if node.hintedName == nil, let variable = node.variable, variable.namesWords {
            let shape = variable.signature
            for (key, child) in candidates where child.signature == shape {
                merged.append(key)
            }
        }
        // Three or more literals with the same non-empty shape below vary like values.
        if node.hintedName == nil {
            var groups: [[String]: [String]] = [:]
            for (key, child) in candidates where !merged.contains(key) && child.namesWords {
                groups[child.signature, default: []].append(key)
            }
            for (_, keys) in groups where keys.count >= 3 { merged.append(contentsOf: keys) }
            // Many leaves each seen once or twice: values too (not at the root, where they are resources).
            if depth > 0 {
                let leaves = candidates.filter { key, child in child.signature.isEmpty && !merged.contains(key) }
                let passes = leaves.values.reduce(0) { $0 + $1.passes }
                if leaves.count >= 8, passes <= leaves.count * 2 {
                    merged.append(contentsOf: leaves.keys)
                }
            }
        }
        // A small number that never changes while the paths below it do is a version or a
        // fixed part of the API (`/stream/0/posts/…`), not an id.
        if node.hintedName == nil, let variable = node.variable, variable.values.count == 1, let value = variable.values.first,
           value.count <= 2, value.unicodeScalars.allSatisfy(PathSegmentShape.isDigit), variable.distinctPaths >= 3, merged.isEmpty {
            node.variable = nil
            node.shapes = []
            if let existing = node.literals[value] { existing.absorb(variable) } else { node.literals[value] = variable }
        }
        for key in merged.sorted() {
            guard let child = node.literals.removeValue(forKey: key) else { continue }
            node.shapes.insert(PathSegmentShape.of(key))
            node.collapsed.insert(key)
            node.variableChild().absorb(child)
        }
        for child in node.literals.values { collapse(child, depth: depth + 1) }
        if let variable = node.variable { collapse(variable, depth: depth + 1) }
    }

    private func resolve(_ segments: [String], _ choices: [Choice], from root: Node) -> Match {
        var node = root
        var result: [PathTemplate.Segment] = []
        var values: [String] = []
        var previousLiteral: String?
        var usedNames: Set<String> = []
        for (segment, choice) in zip(segments, choices) {
            var goesToVariable = false
            switch choice {
            case .variable: goesToVariable = true
            case .literal(let text): goesToVariable = node.collapsed.contains(text) || node.literals[text] == nil
            }
            if goesToVariable, let variable = node.variable {
                var name = node.hintedName ?? Self.variableName(after: previousLiteral, shapes: node.shapes)
                if usedNames.contains(name) {
                    var index = 2
                    while usedNames.contains("\(name)\(index)") { index += 1 }
                    name = "\(name)\(index)"
                }
                usedNames.insert(name)
                result.append(.variable(name))
                values.append(segment)
                previousLiteral = nil
                node = variable
            } else if let child = node.literals[segment] {
                result.append(.literal(segment))
                previousLiteral = segment
                node = child
            } else {
                // Unreachable by construction; keep the segment as written rather than lose the path.
                result.append(.literal(segment))
                previousLiteral = segment
            }
        }
        return Match(template: PathTemplate(segments: result), values: values)
    }

    /// `users` → `userId`, `categories` → `categoryId`, `line-items` → `lineItemId`; `id` after
    /// a variable or at the root. Dates and emails say so (`reportDate`, `userEmail`).
    static func variableName(after literal: String?, shapes: Set<PathSegmentShape>) -> String {
        let suffix: String
        if shapes == [.date] {
            suffix = "Date"
        } else if shapes == [.email] {
            suffix = "Email"
        } else {
            suffix = "Id"
        }
        guard let literal, let base = camelCase(singular(literal)), !base.isEmpty else {
            return suffix == "Id" ? "id" : suffix.lowercased()
        }
        return base + suffix
    }

    static func singular(_ word: String) -> String {
        let lowered = word.lowercased()
        let irregular = ["people": "person", "children": "child", "men": "man", "women": "woman", "data": "data", "media": "media", "indices": "index", "statuses": "status", "aliases": "alias", "analyses": "analysis"]
        if let known = irregular[lowered] { return String(word.prefix(word.count - lowered.count)) + known }
        if lowered.hasSuffix("ies"), lowered.count > 3 { return String(word.dropLast(3)) + "y" }
        if lowered.hasSuffix("sses") || lowered.hasSuffix("xes") || lowered.hasSuffix("ches") || lowered.hasSuffix("shes") || lowered.hasSuffix("zzes") {
            return String(word.dropLast(2))
        }
        if lowered.hasSuffix("s"), !lowered.hasSuffix("ss"), !lowered.hasSuffix("us"), !lowered.hasSuffix("is"), lowered.count > 1 {
            return String(word.dropLast())
        }
        return word
    }

    /// Letters and digits of `text` in lower camel case (`line-items` → `lineItems`); nil when nothing is left.
    static func camelCase(_ text: String) -> String? {
        var words: [String] = []
        var current = ""
        for scalar in text.unicodeScalars {
            if PathSegmentShape.isLetter(scalar) || PathSegmentShape.isDigit(scalar) {
                current.unicodeScalars.append(scalar)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
            }
        }
        if !current.isEmpty { words.append(current) }
        guard let first = words.first else { return nil }
        var result = first.prefix(1).lowercased() + first.dropFirst()
        for word in words.dropFirst() { result += word.prefix(1).uppercased() + word.dropFirst() }
        if let leading = result.unicodeScalars.first, PathSegmentShape.isDigit(leading) { result = "n" + result }
        return result
    }
}
