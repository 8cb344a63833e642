/// Pct-encoding as RFC 3986 defines it, on UTF-8 bytes.
enum PercentEncoding {
    static let percent = UInt8(ascii: "%")
    static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// ALPHA / DIGIT / "-" / "." / "_" / "~"
    static func isUnreserved(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// gen-delims and sub-delims: `:/?#[]@` and `!$&'()*+,;=`
    static func isReserved(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: ":"), UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"),
             UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "@"),
             UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"),
             UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="):
            true
        default: false
        }
    }

    static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): b - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// The byte a complete triplet at `i` stands for, if there is one.
    static func triplet<C: RandomAccessCollection<UInt8>>(in bytes: C, at i: C.Index) -> UInt8? {
        guard bytes[i] == percent,
              let i1 = bytes.index(i, offsetBy: 1, limitedBy: bytes.endIndex), i1 != bytes.endIndex,
              let i2 = bytes.index(i1, offsetBy: 1, limitedBy: bytes.endIndex), i2 != bytes.endIndex,
              let high = hexValue(bytes[i1]), let low = hexValue(bytes[i2])
        else { return nil }
        return high << 4 | low
    }

    static func appendTriplet(_ b: UInt8, to out: inout [UInt8]) {
        out.append(percent)
        out.append(hexDigits[Int(b >> 4)])
        out.append(hexDigits[Int(b & 0x0F)])
    }

    /// Appends `text` pct-encoded: only unreserved characters stay as they are, unless
    /// `allowReserved`, which also keeps reserved characters and existing triplets.
    static func encode(_ text: some StringProtocol, allowReserved: Bool, into out: inout [UInt8]) {
        let bytes = Array(text.utf8)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if isUnreserved(b) || (allowReserved && isReserved(b)) {
                out.append(b)
            } else if allowReserved, triplet(in: bytes, at: i) != nil {
                out.append(contentsOf: bytes[i...i + 2])
                i += 3
                continue
            } else {
                appendTriplet(b, to: &out)
            }
            i += 1
        }
    }

    /// Syntax-based normalisation (RFC 3986 section 6.2.2): triplets of unreserved characters
    /// are decoded, other triplets get upper-case hex, and bytes not allowed in a URI (non-ASCII,
    /// space, a `%` that starts no triplet…) are encoded. The result is ASCII, and two spellings
    /// of the same URI give the same bytes while `%2F` stays distinct from `/`.
    static func normalize(_ text: some StringProtocol) -> [UInt8] {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if let decoded = triplet(in: bytes, at: i) {
                if isUnreserved(decoded) { out.append(decoded) } else { appendTriplet(decoded, to: &out) }
                i += 3
                continue
            }
            if isUnreserved(b) || isReserved(b) { out.append(b) } else { appendTriplet(b, to: &out) }
            i += 1
        }
        return out
    }

    /// Decodes every triplet; `plusIsSpace` for form-encoded query strings. Bytes that do not
    /// form UTF-8 become U+FFFD.
    static func decode(_ bytes: ArraySlice<UInt8>, plusIsSpace: Bool = false) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            if let decoded = triplet(in: bytes, at: i) {
                out.append(decoded)
                i += 3
                continue
            }
            out.append(plusIsSpace && bytes[i] == UInt8(ascii: "+") ? UInt8(ascii: " ") : bytes[i])
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension URITemplate {
    /// `name` as a template variable name: what RFC 6570 doesn't allow in a varname (anything
    /// but letters, digits, `_`, `.` and a `%XX` triplet) percent-encoded, so an OpenAPI
    /// parameter `page-size` becomes `{?page%2Dsize}`. Matching a query decodes it back to the
    /// key `page-size`; a match's variables are keyed by this form.
    public static func variableName(_ name: String) -> String {
        let bytes = Array(name.utf8)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."):
                result.append(byte)
            case PercentEncoding.percent where PercentEncoding.triplet(in: bytes, at: index) != nil:
                result.append(contentsOf: bytes[index...(index + 2)])
                index += 2
            default:
                result += [PercentEncoding.percent, PercentEncoding.hexDigits[Int(byte >> 4)], PercentEncoding.hexDigits[Int(byte & 0x0F)]]
            }
            index += 1
        }
        return String(decoding: result, as: UTF8.self)
    }
}
