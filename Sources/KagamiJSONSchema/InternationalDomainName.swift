// Host names with international labels, as IDNA2008 defines them (RFC 5890–5893), for the
// `hostname` (its A-labels), `idn-hostname` and `idn-email` formats.
//
// Each code point's IDNA2008 property is computed by RFC 5892's rules from the Unicode
// properties the Swift standard library knows (general category, case folding under NFKC,
// default ignorables, canonical combining class). Three properties the library lacks are
// approximated by tables of the blocks that matter here: Script (Greek, Hebrew, Hiragana,
// Katakana, Han, for the CONTEXTO rules), Joining_Type (Arabic and Arabic Supplement letters,
// for ZERO WIDTH NON-JOINER; other scripts' letters count as non-joining) and Bidi_Class
// (letters, digits and marks of the right-to-left blocks, for RFC 5893's rule).
import Foundation

enum InternationalDomainName {
    /// The label separators UTS #46 reads as ".": full stop, ideographic, fullwidth and
    /// halfwidth ideographic full stops.
    static let separators: Set<Unicode.Scalar> = ["\u{2E}", "\u{3002}", "\u{FF0E}", "\u{FF61}"]

    /// `hostname` (2020-12): RFC 1123 LDH labels, each `xn--` label a valid A-label.
    static func isHostname(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 253, text.unicodeScalars.allSatisfy(\.isASCII) else { return false }
        var labels: [[Unicode.Scalar]] = []
        for label in text.split(separator: ".", omittingEmptySubsequences: false) {
            guard isLDH(label.unicodeScalars) else { return false }
            if hasReservedHyphens(label.unicodeScalars) {
                guard let decoded = uLabel(ofALabel: label) else { return false }
                labels.append(decoded)
            } else {
                labels.append(Array(label.lowercased().unicodeScalars))
            }
        }
        return satisfiesBidiRule(labels)
    }

    /// `idn-hostname`: labels separated as UTS #46 separates them, each an LDH label, a valid
    /// A-label or a valid U-label (NFC first, as UTS #46 normalizes), at most 63 octets as an
    /// A-label, 253 for the whole name.
    static func isIDNHostname(_ text: String) -> Bool {
        guard !text.isEmpty else { return false }
        var labels: [[Unicode.Scalar]] = []
        var asciiLength = -1
        for label in text.unicodeScalars.split(omittingEmptySubsequences: false, whereSeparator: separators.contains) {
            let scalars = Array(label)
            if scalars.allSatisfy(\.isASCII) {
                guard isLDH(scalars[...]) else { return false }
                let ascii = String(String.UnicodeScalarView(scalars))
                if hasReservedHyphens(scalars[...]) {
                    guard let decoded = uLabel(ofALabel: Substring(ascii)) else { return false }
                    labels.append(decoded)
                } else {
                    labels.append(Array(ascii.lowercased().unicodeScalars))
                }
                asciiLength += 1 + scalars.count
            } else {
                // UTS #46 maps ASCII capitals to small letters and normalizes to NFC.
                let mapped = String(String.UnicodeScalarView(scalars)).precomposedStringWithCanonicalMapping
                let uLabel = mapped.unicodeScalars.map { $0.isASCII ? Unicode.Scalar(UInt8(ascii: $0).lowercasedASCII) : $0 }
                guard isValidULabel(uLabel), let encoded = Punycode.encode(uLabel), encoded.utf8.count + 4 <= 63 else { return false }
                labels.append(uLabel)
                asciiLength += 1 + 4 + encoded.utf8.count
            }
        }
        return asciiLength <= 253 && satisfiesBidiRule(labels)
    }

    // MARK: Labels

    /// Letters, digits and hyphens, 1 to 63 of them, no hyphen first or last.
    private static func isLDH(_ label: some Collection<Unicode.Scalar>) -> Bool {
        guard !label.isEmpty, label.count <= 63, label.first != "-", label.allSatisfy({ isASCIIAlphanumeric($0) || $0 == "-" }) else { return false }
        return label.reversed().first != "-"
    }

    /// "--" in the third and fourth place: reserved for A-labels (RFC 5891 §4.2.3.1).
    private static func hasReservedHyphens(_ label: some Collection<Unicode.Scalar>) -> Bool {
        let scalars = Array(label.prefix(4))
        return scalars.count == 4 && scalars[2] == "-" && scalars[3] == "-"
    }

    /// The U-label an `xn--` label stands for: valid Punycode that holds a non-ASCII code
    /// point, encodes back to itself, and decodes to a valid U-label (RFC 5891 §5.3–5.4).
    private static func uLabel(ofALabel label: Substring) -> [Unicode.Scalar]? {
        let lowered = label.lowercased()
        guard lowered.hasPrefix("xn--") else { return nil }
        let encoded = lowered.dropFirst(4)
        guard let decoded = Punycode.decode(encoded), decoded.contains(where: { !$0.isASCII }),
              Punycode.encode(decoded) == String(encoded), isValidULabel(decoded) else { return nil }
        // A U-label is in NFC (RFC 5891 §5.3).
        let text = String(String.UnicodeScalarView(decoded))
        guard text.precomposedStringWithCanonicalMapping.unicodeScalars.elementsEqual(decoded) else { return nil }
        return decoded
    }

    /// RFC 5891 §5.4 on a label's code points: no hyphens in the reserved places or at either
    /// end, no combining mark first, every code point PVALID or allowed by its context rule.
    static func isValidULabel(_ label: [Unicode.Scalar]) -> Bool {
        guard let first = label.first, let last = label.last, first != "-", last != "-", !hasReservedHyphens(label) else { return false }
        switch first.properties.generalCategory {
        case .spacingMark, .nonspacingMark, .enclosingMark: return false
        default: break
        }
        for index in label.indices {
            switch property(of: label[index]) {
            case .pValid: continue
            case .contextJ, .contextO:
                guard contextRuleHolds(at: index, in: label) else { return false }
            case .disallowed, .unassigned:
                return false
            }
        }
        return true
    }

    // MARK: Code point properties (RFC 5892 §2–3)

    enum Property {
        case pValid, contextJ, contextO, disallowed, unassigned
    }

    /// RFC 5892 §2.6: code points whose property is set by hand.
    private static func exception(_ value: UInt32) -> Property? {
        switch value {
        case 0x00DF, 0x03C2, 0x06FD, 0x06FE, 0x0F0B, 0x3007: .pValid
        case 0x00B7, 0x0375, 0x05F3, 0x05F4, 0x30FB, 0x0660...0x0669, 0x06F0...0x06F9: .contextO
        case 0x0640, 0x07FA, 0x302E, 0x302F, 0x3031...0x3035, 0x303B: .disallowed
        default: nil
        }
    }

    /// RFC 5892 §3's algorithm, in its order.
    static func property(of scalar: Unicode.Scalar) -> Property {
        if let fixed = exception(scalar.value) { return fixed }
        let properties = scalar.properties
        let category = properties.generalCategory
        if category == .unassigned, !properties.isNoncharacterCodePoint { return .unassigned }
        if (0x61...0x7A).contains(scalar.value) || (0x30...0x39).contains(scalar.value) || scalar == "-" { return .pValid }
        if scalar.value == 0x200C || scalar.value == 0x200D { return .contextJ }
        // Unstable: changed by NFKC, case folding, NFKC again.
        if properties.changesWhenNFKCCaseFolded { return .disallowed }
        if properties.isDefaultIgnorableCodePoint || properties.isWhitespace || properties.isNoncharacterCodePoint { return .disallowed }
        // Ignorable blocks: Combining Diacritical Marks for Symbols, Musical Symbols, Ancient
        // Greek Musical Notation.
        switch scalar.value {
        case 0x20D0...0x20FF, 0x1D100...0x1D1FF, 0x1D200...0x1D24F: return .disallowed
        // Old Hangul Jamo (Hangul_Syllable_Type L, V, T).
        case 0x1100...0x11FF, 0xA960...0xA97F, 0xD7B0...0xD7FF: return .disallowed
        default: break
        }
        switch category {
        case .lowercaseLetter, .uppercaseLetter, .otherLetter, .decimalNumber, .modifierLetter, .nonspacingMark, .spacingMark:
            return .pValid
        default:
            return .disallowed
        }
    }

    // MARK: Context rules (RFC 5892 Appendix A)

    private static func contextRuleHolds(at index: Int, in label: [Unicode.Scalar]) -> Bool {
        let before = index > label.startIndex ? label[index - 1] : nil
        let after = index + 1 < label.endIndex ? label[index + 1] : nil
        switch label[index].value {
        case 0x200C:  // ZERO WIDTH NON-JOINER
            if let before, before.properties.canonicalCombiningClass == .virama { return true }
            return joinsAcross(index, in: label)
        case 0x200D:  // ZERO WIDTH JOINER
            return before?.properties.canonicalCombiningClass == .virama
        case 0x00B7:  // MIDDLE DOT, between two l's (Catalan)
            return before == "l" && after == "l"
        case 0x0375:  // GREEK LOWER NUMERAL SIGN (KERAIA), before a Greek letter
            return after.map { script(of: $0) == .greek } ?? false
        case 0x05F3, 0x05F4:  // HEBREW PUNCTUATION GERESH and GERSHAYIM, after a Hebrew letter
            return before.map { script(of: $0) == .hebrew } ?? false
        case 0x30FB:  // KATAKANA MIDDLE DOT, in a label with Hiragana, Katakana or Han
            return label.contains { [.hiragana, .katakana, .han].contains(script(of: $0)) }
        case 0x0660...0x0669:  // ARABIC-INDIC DIGITS, never with the extended ones
            return !label.contains { (0x06F0...0x06F9).contains($0.value) }
        case 0x06F0...0x06F9:  // EXTENDED ARABIC-INDIC DIGITS, never with the plain ones
            return !label.contains { (0x0660...0x0669).contains($0.value) }
        default:
            return false
        }
    }

    /// (Joining_Type L|D) (Joining_Type T)* ZWNJ (Joining_Type T)* (Joining_Type R|D).
    private static func joinsAcross(_ index: Int, in label: [Unicode.Scalar]) -> Bool {
        var left = index - 1
        while left >= 0, joiningType(of: label[left]) == .transparent { left -= 1 }
        var right = index + 1
        while right < label.count, joiningType(of: label[right]) == .transparent { right += 1 }
        guard left >= 0, right < label.count else { return false }
        let leftType = joiningType(of: label[left]), rightType = joiningType(of: label[right])
        return (leftType == .left || leftType == .dual) && (rightType == .right || rightType == .dual)
    }

    enum JoiningType {
        case dual, right, left, transparent, nonJoining
    }

    /// Right-joining letters of the Arabic and Arabic Supplement blocks (ArabicShaping.txt).
    private static let rightJoining: [ClosedRange<UInt32>] = [
        0x0622...0x0625, 0x0627...0x0627, 0x0629...0x0629, 0x062F...0x0632, 0x0648...0x0648, 0x0671...0x0673,
        0x0675...0x0677, 0x0688...0x0699, 0x06C0...0x06C0, 0x06C3...0x06CB, 0x06CD...0x06CD, 0x06CF...0x06CF,
        0x06D2...0x06D3, 0x06D5...0x06D5, 0x06EE...0x06EF, 0x0759...0x075B, 0x076B...0x076C, 0x0771...0x0771,
        0x0773...0x0774, 0x0778...0x0779,
    ]
    /// Dual-joining letters of the same blocks; the rest of these blocks' letters don't join.
    private static let dualJoining: [ClosedRange<UInt32>] = [
        0x0620...0x0620, 0x0626...0x0626, 0x0628...0x0628, 0x062A...0x062E, 0x0633...0x063F, 0x0641...0x0647,
        0x0649...0x064A, 0x066E...0x066F, 0x0678...0x0687, 0x069A...0x06BF, 0x06C1...0x06C2, 0x06CC...0x06CC,
        0x06CE...0x06CE, 0x06D0...0x06D1, 0x06FA...0x06FC, 0x06FF...0x06FF, 0x0750...0x077F,
    ]

    static func joiningType(of scalar: Unicode.Scalar) -> JoiningType {
        let value = scalar.value
        if rightJoining.contains(where: { $0.contains(value) }) { return .right }
        if dualJoining.contains(where: { $0.contains(value) }) { return .dual }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return value == 0x200C || value == 0x200D ? .nonJoining : .transparent
        default: return .nonJoining
        }
    }

    enum Script {
        case greek, hebrew, hiragana, katakana, han, other
    }

    /// The scripts the context rules name, by block (their Common code points left out).
    static func script(of scalar: Unicode.Scalar) -> Script {
        switch scalar.value {
        case 0x0374, 0x037E, 0x0385, 0x0387: .other
        case 0x0370...0x03FF, 0x1F00...0x1FFF: .greek
        case 0x0591...0x05F4, 0xFB1D...0xFB4F: .hebrew
        case 0x3041...0x309F, 0x1B001...0x1B11F: .hiragana
        case 0x30FB, 0x30FC: .other
        case 0x30A1...0x30FF, 0x31F0...0x31FF, 0x32D0...0x32FE, 0x3300...0x3357, 0xFF66...0xFF9D: .katakana
        case 0x2E80...0x2FDF, 0x3005, 0x3007, 0x3021...0x3029, 0x3038...0x303B, 0x3400...0x4DBF, 0x4E00...0x9FFF,
             0xF900...0xFAFF, 0x20000...0x3134F:
            .han
        default: .other
        }
    }

    // MARK: The Bidi rule (RFC 5893 §2)

    enum BidiClass {
        case l, r, al, en, an, es, cs, et, on, bn, nsm
    }

    static func bidiClass(of scalar: Unicode.Scalar) -> BidiClass {
        let value = scalar.value
        switch value {
        case 0x30...0x39, 0x06F0...0x06F9: return .en
        case 0x0660...0x0669, 0x066B...0x066C: return .an
        case 0x2D: return .es
        case 0x2E, 0x2C, 0x3A, 0x2F: return .cs
        default: break
        }
        let properties = scalar.properties
        switch properties.generalCategory {
        case .nonspacingMark, .enclosingMark: return .nsm
        case .format: return .bn
        default: break
        }
        switch value {
        case 0x0590...0x05FF, 0x07C0...0x085F, 0xFB1D...0xFB4F, 0x10800...0x10FFF, 0x1E800...0x1EDFF: return .r
        case 0x0600...0x07BF, 0x0860...0x08FF, 0xFB50...0xFDFF, 0xFE70...0xFEFF, 0x1EE00...0x1EEFF: return .al
        default: break
        }
        switch properties.generalCategory {
        case .lowercaseLetter, .uppercaseLetter, .otherLetter, .modifierLetter, .titlecaseLetter, .spacingMark, .decimalNumber,
             .letterNumber:
            return .l
        case .currencySymbol: return .et
        default: return .on
        }
    }

    /// A name with a right-to-left label (R, AL or AN in it) is a Bidi domain name: then every
    /// label must keep RFC 5893's six conditions.
    static func satisfiesBidiRule(_ labels: [[Unicode.Scalar]]) -> Bool {
        let classes = labels.map { $0.map(bidiClass(of:)) }
        guard classes.contains(where: { $0.contains { $0 == .r || $0 == .al || $0 == .an } }) else { return true }
        for label in classes {
            guard let first = label.first else { return false }
            let trailing = label.reversed().drop { $0 == .nsm }
            guard let last = trailing.first else { return false }
            switch first {
            case .r, .al:
                let allowed: Set<BidiClass> = [.r, .al, .an, .en, .es, .cs, .et, .on, .bn, .nsm]
                guard label.allSatisfy(allowed.contains), [.r, .al, .en, .an].contains(last),
                      !(label.contains(.en) && label.contains(.an)) else { return false }
            case .l:
                let allowed: Set<BidiClass> = [.l, .en, .es, .cs, .et, .on, .bn, .nsm]
                guard label.allSatisfy(allowed.contains), last == .l || last == .en else { return false }
            default:
                return false
            }
        }
        return true
    }

    private static func isASCIIAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && (scalar.properties.isAlphabetic || (0x30...0x39).contains(scalar.value))
    }
}

extension UInt8 {
    fileprivate var lowercasedASCII: UInt8 { (0x41...0x5A).contains(self) ? self | 0x20 : self }
}
