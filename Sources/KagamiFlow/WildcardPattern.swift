// Charles's location wildcards (`*`, `?`, `[a-z]`) compiled once into byte-level steps, so
// matching a request costs a short loop and never a regular expression. The one reader of the
// syntax: rules' locations match with it, and the stores write its steps in their SQL.

/// A compiled wildcard pattern: `*` is any run (including empty and `/`), `?` is one byte,
/// `[a-z0-9]` is one byte from a set (`[!a-z]` or `[^a-z]` negates it); everything else is literal.
public struct WildcardPattern: Sendable, Hashable {
    public enum Step: Sendable, Hashable {
        case literal(UInt8)
        case anyByte
        case set(ranges: [ClosedRange<UInt8>], negated: Bool)
        case anyRun
    }

    enum Shape: Sendable, Hashable {
        /// Blank or `*`: no work at all.
        case everything
        /// No wildcards: one comparison.
        case exact([UInt8])
        /// `*.example.com`: the input ends with these bytes.
        case suffix([UInt8])
        /// `/api/*`: the input starts with these bytes.
        case prefix([UInt8])
        case steps([Step])
    }

    public let source: String
    public let isCaseInsensitive: Bool
    let shape: Shape

    public init(_ source: String, caseInsensitive: Bool = false) {
        self.source = source
        self.isCaseInsensitive = caseInsensitive
        let text = caseInsensitive ? source.lowercased() : source
        let steps = Self.compile(Array(text.utf8))
        if steps.isEmpty || steps.allSatisfy({ $0 == .anyRun }) {
            shape = .everything
        } else if let literal = Self.literalBytes(steps) {
            shape = .exact(literal)
        } else if steps.first == .anyRun, let literal = Self.literalBytes(steps.dropFirst()) {
            shape = .suffix(literal)
        } else if steps.last == .anyRun, let literal = Self.literalBytes(steps.dropLast()) {
            shape = .prefix(literal)
        } else {
            shape = .steps(steps)
        }
    }

    /// The bytes of steps that are all literals; nil when any is a wildcard.
    private static func literalBytes(_ steps: some Collection<Step>) -> [UInt8]? {
        var bytes: [UInt8] = []
        for step in steps {
            guard case .literal(let byte) = step else { return nil }
            bytes.append(byte)
        }
        return bytes
    }

    /// What the pattern matches, one step per byte or run (`*`), from the lowercased source when
    /// the pattern ignores case.
    public var steps: [Step] {
        Self.compile(Array((isCaseInsensitive ? source.lowercased() : source).utf8))
    }

    /// True when the pattern matches any input (blank or only `*`).
    public var matchesEverything: Bool { shape == .everything }

    public func matches(_ input: String) -> Bool {
        switch shape {
        case .everything:
            return true
        case .exact(let bytes):
            if isCaseInsensitive {
                let utf8 = input.utf8
                guard utf8.count == bytes.count else { return false }
                return zip(utf8, bytes).allSatisfy { Self.lower($0) == $1 }
            }
            return input.utf8.elementsEqual(bytes)
        case .suffix(let bytes):
            let utf8 = input.utf8
            guard utf8.count >= bytes.count else { return false }
            return isCaseInsensitive
                ? zip(utf8.suffix(bytes.count), bytes).allSatisfy { Self.lower($0) == $1 }
                : utf8.suffix(bytes.count).elementsEqual(bytes)
        case .prefix(let bytes):
            let utf8 = input.utf8
            guard utf8.count >= bytes.count else { return false }
            return isCaseInsensitive
                ? zip(utf8.prefix(bytes.count), bytes).allSatisfy { Self.lower($0) == $1 }
                : utf8.prefix(bytes.count).elementsEqual(bytes)
        case .steps(let steps):
            var input = input
            return input.withUTF8 { Self.match(steps, $0, lowercasing: isCaseInsensitive) }
        }
    }

    /// For a pattern ending in `*`, the part of `input` left after the shortest prefix that
    /// matches everything before that `*`: what Map Local and Map Remote append to a directory.
    /// Nil when the pattern doesn't end in `*` or doesn't match.
    public func remainder(after input: String) -> String? {
        guard source.hasSuffix("*"), matches(input) else { return nil }
        let stem = WildcardPattern(String(source.dropLast()), caseInsensitive: isCaseInsensitive)
        var index = input.startIndex
        while true {
            if stem.matches(String(input[..<index])) { return String(input[index...]) }
            guard index < input.endIndex else { return nil }
            index = input.index(after: index)
        }
    }

    static func lower(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }

    static func compile(_ bytes: [UInt8]) -> [Step] {
        var steps: [Step] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "*"):
                if steps.last != .anyRun { steps.append(.anyRun) }
            case UInt8(ascii: "?"):
                steps.append(.anyByte)
            case UInt8(ascii: "["):
                if let (set, end) = compileSet(bytes, from: index) {
                    steps.append(set)
                    index = end
                } else {
                    // An unclosed `[` is taken literally, as a user typing a URL would expect.
                    steps.append(.literal(byte))
                }
            default:
                steps.append(.literal(byte))
            }
            index += 1
        }
        return steps
    }

    /// Parses `[...]` starting at `start`; returns the step and the index of the closing `]`.
    static func compileSet(_ bytes: [UInt8], from start: Int) -> (Step, Int)? {
        var index = start + 1
        var negated = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "!") || bytes[index] == UInt8(ascii: "^") {
            negated = true
            index += 1
        }
        var ranges: [ClosedRange<UInt8>] = []
        var first = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "]") && !first {
                return (.set(ranges: ranges, negated: negated), index)
            }
            first = false
            if index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "-"), bytes[index + 2] != UInt8(ascii: "]") {
                let upper = bytes[index + 2]
                ranges.append(min(byte, upper)...max(byte, upper))
                index += 3
            } else {
                ranges.append(byte...byte)
                index += 1
            }
        }
        return nil
    }

    /// Greedy matching with one backtrack point per `*`: linear for typical patterns.
    static func match(_ steps: [Step], _ input: UnsafeBufferPointer<UInt8>, lowercasing: Bool) -> Bool {
        var stepIndex = 0
        var inputIndex = 0
        var starStep = -1
        var starInput = 0
        while inputIndex < input.count {
            let byte = lowercasing ? lower(input[inputIndex]) : input[inputIndex]
            if stepIndex < steps.count {
                switch steps[stepIndex] {
                case .anyRun:
                    starStep = stepIndex
                    starInput = inputIndex
                    stepIndex += 1
                    continue
                case .anyByte:
                    stepIndex += 1
                    inputIndex += 1
                    continue
                case .literal(let expected) where expected == byte:
                    stepIndex += 1
                    inputIndex += 1
                    continue
                case .set(let ranges, let negated) where ranges.contains(where: { $0.contains(byte) }) != negated:
                    stepIndex += 1
                    inputIndex += 1
                    continue
                default:
                    break
                }
            }
            guard starStep >= 0 else { return false }
            stepIndex = starStep + 1
            starInput += 1
            inputIndex = starInput
        }
        while stepIndex < steps.count, steps[stepIndex] == .anyRun { stepIndex += 1 }
        return stepIndex == steps.count
    }
}
