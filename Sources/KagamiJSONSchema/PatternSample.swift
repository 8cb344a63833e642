// Strings written from an ECMA-262 pattern, for examples generated from schemas: the pattern is
// read into a small tree (alternatives, groups, quantified atoms, character sets) and walked to
// write the shortest string it matches, or one stretched towards a wanted length. Lookarounds,
// word boundaries and backreferences are not followed while writing; callers test the result
// with the pattern itself (`PatternSample.matches`) before using it.

/// Strings that match a pattern.
public enum PatternSample {
    /// Candidate strings for `pattern` whose lengths aim at `lengths` (in Unicode scalars, as
    /// `minLength`/`maxLength` count): the shortest first, then ones stretched towards the
    /// lower and upper bounds. Empty when the pattern is outside the subset read here.
    public static func strings(matching pattern: String, lengths: ClosedRange<Int> = 0...Int.max) -> [String] {
        var parser = PatternParser(pattern)
        guard let tree = try? parser.parse() else { return [] }
        var result: [String] = []
        let targets = [0, lengths.lowerBound, min(lengths.upperBound, max(lengths.lowerBound, 8))]
        for target in targets {
            for variant in 0..<2 {
                var writer = PatternWriter(target: target, variant: variant)
                writer.write(tree)
                if !result.contains(writer.text) { result.append(writer.text) }
            }
        }
        return result
    }

    /// Whether `text` matches `pattern` as a JSON Schema `pattern` is tested (ECMA-262, searched).
    public static func matches(_ text: String, pattern: String) -> Bool {
        guard let regex = try? ECMARegex.compiled(pattern) else { return false }
        return regex.matches(text)
    }
}

/// A pattern read into a tree.
indirect enum PatternNode {
    case sequence([PatternNode])
    case alternatives([PatternNode])
    case set(SimplePattern.CharacterSet)
    case repeated(PatternNode, minimum: Int, maximum: Int)
    case group(PatternNode, index: Int)
    case backreference(Int)
    /// Anchors, boundaries and lookarounds: nothing to write.
    case assertion
}

struct PatternSyntaxError: Error {}

/// A recursive-descent reader of the ECMA-262 pattern grammar (without flags).
struct PatternParser {
    private let scalars: [UInt32]
    private var i = 0
    private var groups = 0

    init(_ pattern: String) {
        scalars = pattern.unicodeScalars.map(\.value)
    }

    mutating func parse() throws(PatternSyntaxError) -> PatternNode {
        let node = try alternatives()
        guard i == scalars.count else { throw PatternSyntaxError() }
        return node
    }

    private var current: UInt32? { i < scalars.count ? scalars[i] : nil }

    private mutating func alternatives() throws(PatternSyntaxError) -> PatternNode {
        var branches = [try sequence()]
        while current == 0x7C {  // |
            i += 1
            branches.append(try sequence())
        }
        return branches.count == 1 ? branches[0] : .alternatives(branches)
    }

    private mutating func sequence() throws(PatternSyntaxError) -> PatternNode {
        var items: [PatternNode] = []
        while let c = current, c != 0x7C, c != 0x29 {  // | )
            var atom = try self.atom()
            if let (minimum, maximum) = try quantifier() {
                if case .assertion = atom {} else { atom = .repeated(atom, minimum: minimum, maximum: maximum) }
            }
            items.append(atom)
        }
        return .sequence(items)
    }

    private mutating func quantifier() throws(PatternSyntaxError) -> (Int, Int)? {
        guard let c = current else { return nil }
        var bounds: (Int, Int)
        switch c {
        case 0x2A: bounds = (0, Int.max); i += 1  // *
        case 0x2B: bounds = (1, Int.max); i += 1  // +
        case 0x3F: bounds = (0, 1); i += 1  // ?
        case 0x7B:  // {n}, {n,}, {n,m}; a brace that is not a quantifier is a literal
            let start = i
            i += 1
            guard let low = number() else {
                i = start
                return nil
            }
            var high = low
            if current == 0x2C {
                i += 1
                high = number() ?? Int.max
            }
            guard current == 0x7D, high >= low else {
                i = start
                return nil
            }
            i += 1
            bounds = (low, high)
        default: return nil
        }
        if current == 0x3F { i += 1 }  // lazy
        return bounds
    }

    private mutating func number() -> Int? {
        var value = 0
        var digits = 0
        while let c = current, (0x30...0x39).contains(c) {
            value = min(value * 10 + Int(c - 0x30), 100_000)
            digits += 1
            i += 1
        }
        return digits == 0 ? nil : value
    }

    private mutating func atom() throws(PatternSyntaxError) -> PatternNode {
        guard let c = current else { throw PatternSyntaxError() }
        switch c {
        case 0x5E, 0x24:  // ^ $
            i += 1
            return .assertion
        case 0x2E:  // .
            i += 1
            return .set(.init(ranges: SimplePattern.lineTerminators, negated: true))
        case 0x28:  // (
            i += 1
            var index = 0
            var lookaround = false
            if current == 0x3F {  // ?
                i += 1
                switch current {
                case 0x3A: i += 1  // (?:
                case 0x3D, 0x21:  // (?= (?!
                    i += 1
                    lookaround = true
                case 0x3C:  // (?<= (?<! (?<name>
                    i += 1
                    if current == 0x3D || current == 0x21 {
                        i += 1
                        lookaround = true
                    } else {
                        while let n = current, n != 0x3E { i += 1 }
                        guard current == 0x3E else { throw PatternSyntaxError() }
                        i += 1
                        groups += 1
                        index = groups
                    }
                default: throw PatternSyntaxError()
                }
            } else {
                groups += 1
                index = groups
            }
            let inner = try alternatives()
            guard current == 0x29 else { throw PatternSyntaxError() }
            i += 1
            return lookaround ? .assertion : .group(inner, index: index)
        case 0x5B:  // [
            return .set(try characterClass())
        case 0x5C:  // \
            i += 1
            guard let e = current else { throw PatternSyntaxError() }
            if e == 0x62 || e == 0x42 {  // \b \B
                i += 1
                return .assertion
            }
            if (0x31...0x39).contains(e) {
                return .backreference(number() ?? 0)
            }
            return .set(try escape(inClass: false))
        case 0x29, 0x7C, 0x2A, 0x2B, 0x3F:
            throw PatternSyntaxError()
        default:
            i += 1
            return .set(.init(ranges: [c...c], negated: false))
        }
    }

    private mutating func characterClass() throws(PatternSyntaxError) -> SimplePattern.CharacterSet {
        i += 1
        var negated = false
        if current == 0x5E {
            negated = true
            i += 1
        }
        var ranges: [ClosedRange<UInt32>] = []
        var negatedParts: [SimplePattern.CharacterSet] = []
        while let c = current, c != 0x5D {
            var low: UInt32?
            if c == 0x5C {
                i += 1
                let set = try escape(inClass: true)
                if set.negated || set.ranges.count != 1 || set.ranges[0].count != 1 {
                    if set.negated { negatedParts.append(set) } else { ranges += set.ranges }
                    continue
                }
                low = set.ranges[0].lowerBound
            } else {
                low = c
                i += 1
            }
            guard let start = low else { continue }
            // A range a-z; a "-" first, last or after a class escape is a literal.
            if current == 0x2D, i + 1 < scalars.count, scalars[i + 1] != 0x5D {
                i += 1
                var end: UInt32
                if current == 0x5C {
                    i += 1
                    let set = try escape(inClass: true)
                    guard !set.negated, set.ranges.count == 1, set.ranges[0].count == 1 else { throw PatternSyntaxError() }
                    end = set.ranges[0].lowerBound
                } else {
                    guard let e = current else { throw PatternSyntaxError() }
                    end = e
                    i += 1
                }
                guard start <= end else { throw PatternSyntaxError() }
                ranges.append(start...end)
            } else {
                ranges.append(start...start)
            }
        }
        guard current == 0x5D else { throw PatternSyntaxError() }
        i += 1
        // A class with \D, \W or \S inside: written from its complement's first characters.
        if !negatedParts.isEmpty {
            for part in negatedParts {
                for candidate in PatternWriter.preferred where part.contains(candidate) {
                    ranges.append(candidate...candidate)
                    break
                }
            }
        }
        return .init(ranges: ranges, negated: negated)
    }

    /// An escape after `\`: a class (\d, \w, \s and their negations, \p{…}) or one character.
    private mutating func escape(inClass: Bool) throws(PatternSyntaxError) -> SimplePattern.CharacterSet {
        guard let e = current else { throw PatternSyntaxError() }
        i += 1
        func one(_ value: UInt32) -> SimplePattern.CharacterSet { .init(ranges: [value...value], negated: false) }
        switch e {
        case 0x64: return .init(ranges: SimplePattern.digit, negated: false)  // d
        case 0x44: return .init(ranges: SimplePattern.digit, negated: true)
        case 0x77: return .init(ranges: SimplePattern.word, negated: false)  // w
        case 0x57: return .init(ranges: SimplePattern.word, negated: true)
        case 0x73: return .init(ranges: SimplePattern.space, negated: false)  // s
        case 0x53: return .init(ranges: SimplePattern.space, negated: true)
        case 0x6E: return one(0x0A)
        case 0x72: return one(0x0D)
        case 0x74: return one(0x09)
        case 0x66: return one(0x0C)
        case 0x76: return one(0x0B)
        case 0x30: return one(0)
        case 0x62 where inClass: return one(0x08)
        case 0x63:  // \cX
            guard let letter = current else { throw PatternSyntaxError() }
            i += 1
            return one(letter % 32)
        case 0x78:  // \xHH
            return one(try hex(count: 2))
        case 0x75:  // \uHHHH or \u{H…}
            if current == 0x7B {
                i += 1
                var value: UInt32 = 0
                while let c = current, c != 0x7D {
                    guard let digit = Self.hexDigit(c) else { throw PatternSyntaxError() }
                    value = value &* 16 &+ digit
                    i += 1
                }
                i += 1
                return one(value)
            }
            return one(try hex(count: 4))
        case 0x70, 0x50:  // \p{…} \P{…}: letters stand for most properties written in schemas
            guard current == 0x7B else { throw PatternSyntaxError() }
            while let c = current, c != 0x7D { i += 1 }
            i += 1
            let letters: [ClosedRange<UInt32>] = [0x41...0x5A, 0x61...0x7A]
            return .init(ranges: letters, negated: e == 0x50)
        default:
            return one(e)
        }
    }

    private mutating func hex(count: Int) throws(PatternSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<count {
            guard let c = current, let digit = Self.hexDigit(c) else { throw PatternSyntaxError() }
            value = value * 16 + digit
            i += 1
        }
        return value
    }

    private static func hexDigit(_ c: UInt32) -> UInt32? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }
}

/// Walks a pattern tree writing one string: each quantifier repeats its minimum, and more while
/// the text is shorter than `target`; `variant` picks later alternatives and characters.
struct PatternWriter {
    /// Characters tried first, so samples read like words.
    static let preferred: [UInt32] = Array(0x61...0x7A) + Array(0x41...0x5A) + Array(0x30...0x39) + [0x5F, 0x2D, 0x2E, 0x20]

    let target: Int
    let variant: Int
    private(set) var text = ""
    private var length = 0
    private var captures: [Int: String] = [:]
    /// Bounds the work on patterns such as `(a{1000}){1000}`.
    private var budget = 10_000

    init(target: Int, variant: Int) {
        self.target = target
        self.variant = variant
    }

    mutating func write(_ node: PatternNode) {
        guard budget > 0 else { return }
        budget -= 1
        switch node {
        case .sequence(let items):
            for item in items { write(item) }
        case .alternatives(let branches):
            write(branches[variant % branches.count])
        case .set(let set):
            if let scalar = Self.character(in: set, variant: variant) {
                text.unicodeScalars.append(scalar)
                length += 1
            }
        case .repeated(let inner, let minimum, let maximum):
            var count = 0
            while count < minimum, budget > 0 {
                write(inner)
                count += 1
            }
            while count < maximum, length < target, budget > 0 {
                let before = length
                write(inner)
                count += 1
                if length == before { break }
            }
        case .group(let inner, let index):
            let start = text.unicodeScalars.count
            write(inner)
            if index > 0 { captures[index] = String(String.UnicodeScalarView(text.unicodeScalars.dropFirst(start))) }
        case .backreference(let index):
            if let captured = captures[index] {
                text += captured
                length += captured.unicodeScalars.count
            }
        case .assertion:
            break
        }
    }

    static func character(in set: SimplePattern.CharacterSet, variant: Int) -> Unicode.Scalar? {
        var found: [UInt32] = []
        for candidate in preferred where set.contains(candidate) {
            found.append(candidate)
            if found.count > variant { break }
        }
        if let pick = found.last { return Unicode.Scalar(pick) }
        if !set.negated {
            for range in set.ranges {
                if let scalar = Unicode.Scalar(range.lowerBound) { return scalar }
            }
            return nil
        }
        for value in UInt32(0x21)...0xFFFF where set.contains(value) {
            if let scalar = Unicode.Scalar(value) { return scalar }
        }
        return nil
    }
}
