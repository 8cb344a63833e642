// Most schema patterns are anchored runs of character classes (`^[A-Z]{3}-[0-9]{5}$`). Those
// are matched here in linear time without ICU; anything with groups, alternation, lookaround,
// backreferences or property escapes returns nil from the parser and goes to ICU.

/// A pattern made of quantified character sets, optionally anchored at either end.
struct SimplePattern: Sendable {
    struct CharacterSet: Sendable {
        var ranges: [ClosedRange<UInt32>]
        var negated: Bool

        func contains(_ scalar: UInt32) -> Bool {
            var found = false
            for range in ranges where range.contains(scalar) {
                found = true
                break
            }
            return found != negated
        }
    }

    struct Atom: Sendable {
        var set: CharacterSet
        var minimum: Int
        var maximum: Int  // Int.max when unbounded
    }

    let atoms: [Atom]
    let anchoredStart: Bool
    let anchoredEnd: Bool

    static let digit: [ClosedRange<UInt32>] = [0x30...0x39]
    static let word: [ClosedRange<UInt32>] = [0x30...0x39, 0x41...0x5A, 0x5F...0x5F, 0x61...0x7A]
    /// ECMA-262 WhiteSpace and LineTerminator.
    static let space: [ClosedRange<UInt32>] = [
        0x09...0x0D, 0x20...0x20, 0xA0...0xA0, 0x1680...0x1680, 0x2000...0x200A,
        0x2028...0x2029, 0x202F...0x202F, 0x205F...0x205F, 0x3000...0x3000, 0xFEFF...0xFEFF,
    ]
    static let lineTerminators: [ClosedRange<UInt32>] = [0x0A...0x0A, 0x0D...0x0D, 0x2028...0x2029]

    /// Parses `pattern`, or returns nil when it uses anything beyond quantified sets.
    init?(_ pattern: String) {
        let scalars = Array(pattern.unicodeScalars).map(\.value)
        var i = 0
        var atoms: [Atom] = []
        var anchoredStart = false
        var anchoredEnd = false
        if scalars.first == 0x5E {  // ^
            anchoredStart = true
            i = 1
        }
        while i < scalars.count {
            let c = scalars[i]
            var set: CharacterSet
            switch c {
            case 0x24:  // $
                guard i == scalars.count - 1 else { return nil }
                anchoredEnd = true
                i += 1
                continue
            case 0x5C:  // backslash
                guard i + 1 < scalars.count, let escaped = Self.escape(scalars[i + 1]) else { return nil }
                set = escaped
                i += 2
            case 0x5B:  // [
                guard let (parsed, next) = Self.characterClass(scalars, from: i) else { return nil }
                set = parsed
                i = next
            case 0x2E:  // .
                set = CharacterSet(ranges: Self.lineTerminators, negated: true)
                i += 1
            case 0x28, 0x29, 0x7C, 0x5D, 0x7B, 0x7D, 0x2A, 0x2B, 0x3F, 0x5E:  // ( ) | ] { } * + ? ^
                return nil
            default:
                set = CharacterSet(ranges: [c...c], negated: false)
                i += 1
            }
            var atom = Atom(set: set, minimum: 1, maximum: 1)
            if i < scalars.count {
                switch scalars[i] {
                case 0x2A: atom.minimum = 0; atom.maximum = .max; i += 1
                case 0x2B: atom.maximum = .max; i += 1
                case 0x3F: atom.minimum = 0; i += 1
                case 0x7B:
                    guard let (minimum, maximum, next) = Self.braces(scalars, from: i) else { return nil }
                    atom.minimum = minimum
                    atom.maximum = maximum
                    i = next
                default: break
                }
                // A lazy quantifier matches the same strings when only a yes/no is asked.
                if i < scalars.count, scalars[i] == 0x3F, atom.minimum != 1 || atom.maximum != 1 { i += 1 }
                if i < scalars.count, [0x2A, 0x2B, 0x3F, 0x7B].contains(scalars[i]) { return nil }
            }
            atoms.append(atom)
        }
        self.atoms = atoms
        self.anchoredStart = anchoredStart
        self.anchoredEnd = anchoredEnd
    }

    private static func escape(_ c: UInt32) -> CharacterSet? {
        switch c {
        case 0x64: CharacterSet(ranges: digit, negated: false)  // d
        case 0x44: CharacterSet(ranges: digit, negated: true)  // D
        case 0x77: CharacterSet(ranges: word, negated: false)  // w
        case 0x57: CharacterSet(ranges: word, negated: true)  // W
        case 0x73: CharacterSet(ranges: space, negated: false)  // s
        case 0x53: CharacterSet(ranges: space, negated: true)  // S
        case 0x6E: CharacterSet(ranges: [0x0A...0x0A], negated: false)  // n
        case 0x74: CharacterSet(ranges: [0x09...0x09], negated: false)  // t
        case 0x72: CharacterSet(ranges: [0x0D...0x0D], negated: false)  // r
        // Escaped punctuation is itself; letters and digits are other escapes (\b, \1, \p...).
        case 0x21...0x2F, 0x3A...0x40, 0x5B...0x60, 0x7B...0x7E: CharacterSet(ranges: [c...c], negated: false)
        default: nil
        }
    }

    /// `[...]` at `start`: literal members, ranges, and \d \w \s; nil for anything else.
    private static func characterClass(_ scalars: [UInt32], from start: Int) -> (CharacterSet, Int)? {
        var i = start + 1
        var negated = false
        if i < scalars.count, scalars[i] == 0x5E {
            negated = true
            i += 1
        }
        var ranges: [ClosedRange<UInt32>] = []
        var first = true
        while i < scalars.count {
            let c = scalars[i]
            if c == 0x5D {  // ]
                if first { return nil }  // [] and [^] are left to ICU's translation
                return (CharacterSet(ranges: ranges, negated: negated), i + 1)
            }
            first = false
            var low: UInt32
            if c == 0x5C {
                guard i + 1 < scalars.count else { return nil }
                let e = scalars[i + 1]
                i += 2
                switch e {
                case 0x64: ranges += digit; continue
                case 0x77: ranges += word; continue
                case 0x73: ranges += space; continue
                case 0x6E: low = 0x0A
                case 0x74: low = 0x09
                case 0x72: low = 0x0D
                case 0x21...0x2F, 0x3A...0x40, 0x5B...0x60, 0x7B...0x7E: low = e
                default: return nil
                }
            } else if c == 0x5B {
                return nil  // nesting differs between ECMA-262 and ICU; not here
            } else {
                low = c
                i += 1
            }
            // A range a-z; a '-' first, last or after a range is literal.
            if i + 1 < scalars.count, scalars[i] == 0x2D, scalars[i + 1] != 0x5D {
                var high = scalars[i + 1]
                if high == 0x5C {
                    guard i + 2 < scalars.count else { return nil }
                    let e = scalars[i + 2]
                    guard (0x21...0x2F).contains(e) || (0x3A...0x40).contains(e) || (0x5B...0x60).contains(e) || (0x7B...0x7E).contains(e) else { return nil }
                    high = e
                    i += 3
                } else if high == 0x5B {
                    return nil
                } else {
                    i += 2
                }
                guard low <= high else { return nil }
                ranges.append(low...high)
            } else {
                ranges.append(low...low)
            }
        }
        return nil
    }

    /// `{n}`, `{n,}` or `{n,m}` at `start`.
    private static func braces(_ scalars: [UInt32], from start: Int) -> (Int, Int, Int)? {
        var i = start + 1
        func number() -> Int? {
            var value = 0
            var digits = 0
            while i < scalars.count, (0x30...0x39).contains(scalars[i]), digits < 6 {
                value = value * 10 + Int(scalars[i] - 0x30)
                digits += 1
                i += 1
            }
            return digits > 0 ? value : nil
        }
        guard let minimum = number() else { return nil }
        var maximum = minimum
        if i < scalars.count, scalars[i] == 0x2C {
            i += 1
            maximum = number() ?? .max
        }
        guard i < scalars.count, scalars[i] == 0x7D, minimum <= maximum else { return nil }
        return (minimum, maximum, i + 1)
    }

    /// Whether the pattern matches somewhere in `text` (anywhere unless anchored).
    func matches(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            if utf8.allSatisfy({ $0 < 0x80 }) {
                return run(count: utf8.count) { UInt32(utf8[$0]) }
            }
            let scalars = Array(String(decoding: utf8, as: UTF8.self).unicodeScalars).map(\.value)
            return run(count: scalars.count) { scalars[$0] }
        }
    }

    /// Tracks the set of positions each atom can end at: O(atoms × length).
    private func run(count: Int, _ scalar: (Int) -> UInt32) -> Bool {
        withUnsafeTemporaryAllocation(of: Int.self, capacity: count + 1) { runs in
        withUnsafeTemporaryAllocation(of: Bool.self, capacity: (count + 1) * 2) { buffer in
            let n = count + 1
            var current = UnsafeMutableBufferPointer(rebasing: buffer[0..<n])
            var next = UnsafeMutableBufferPointer(rebasing: buffer[n..<(2 * n)])
            for p in 0..<n { current[p] = anchoredStart ? p == 0 : true }
            for atom in atoms {
                for p in 0..<n { next[p] = false }
                var any = false
                // run: how many scalars from p on belong to the set, computed right to left.
                var run = 0
                var p = count - 1
                while p >= 0 {
                    run = atom.set.contains(scalar(p)) ? run + 1 : 0
                    runs[p] = run
                    p -= 1
                }
                var reachUntil = -1  // positions up to here are reachable from an earlier start
                for start in 0..<n {
                    if current[start] {
                        let longest = start < count ? runs[start] : 0
                        if atom.minimum <= longest {
                            let low = start + atom.minimum
                            let high = atom.maximum == .max ? start + longest : start + min(atom.maximum, longest)
                            if low > reachUntil {
                                for q in low...high { next[q] = true }
                            } else if high > reachUntil {
                                for q in (reachUntil + 1)...high { next[q] = true }
                            }
                            reachUntil = max(reachUntil, high)
                            any = true
                        }
                    }
                }
                guard any else { return false }
                swap(&current, &next)
            }
            if anchoredEnd { return current[count] }
            return current.contains(true)
        }
        }
    }
}
