/// The `format`s Kagami can assert (when asked to); other formats stay annotations.
enum StringFormat: String, Sendable, CaseIterable {
    case dateTime = "date-time"
    case date
    case time
    case email
    case hostname
    case idnEmail = "idn-email"
    case idnHostname = "idn-hostname"
    case ipv4
    case ipv6
    case uri
    case uriReference = "uri-reference"
    case uuid
    case regex
    case duration
    case jsonPointer = "json-pointer"
    case relativeJSONPointer = "relative-json-pointer"
    case uriTemplate = "uri-template"
    case iri
    case iriReference = "iri-reference"

    /// Draft 4 names RFC 1123 for hostnames; 2020-12 adds IDNA2008's A-labels: "--" in the
    /// third and fourth place only in an `xn--` label that is valid Punycode of a valid U-label.
    func accepts(_ text: String, draft: JSONSchema.Draft = .draft2020_12) -> Bool {
        let bytes = Array(text.utf8)
        let idna = draft == .draft2020_12
        switch self {
        case .dateTime: return Self.isDateTime(bytes)
        case .date: return Self.isDate(bytes[...])
        case .time: return Self.isTime(bytes[...], dayOffset: nil)
        case .email: return Self.isEmail(text, idna: idna)
        case .hostname: return Self.isHostname(bytes, idna: idna)
        case .idnEmail: return Self.isEmail(text, idna: idna, international: true)
        case .idnHostname: return InternationalDomainName.isIDNHostname(text)
        case .ipv4: return Self.isIPv4(bytes[...])
        case .ipv6: return Self.isIPv6(bytes[...])
        case .uri: return Self.isURI(text, requireScheme: true)
        case .uriReference: return Self.isURI(text, requireScheme: false)
        case .iri: return Self.isURI(text, requireScheme: true, international: true)
        case .iriReference: return Self.isURI(text, requireScheme: false, international: true)
        case .uuid: return Self.isUUID(bytes)
        case .regex: return (try? ECMARegex.compiled(text)) != nil
        case .duration: return Self.isDuration(bytes)
        case .jsonPointer: return Self.isJSONPointer(bytes[...])
        case .relativeJSONPointer: return Self.isRelativeJSONPointer(bytes)
        case .uriTemplate: return Self.isURITemplate(text)
        }
    }

    // MARK: Durations, pointers, templates

    /// RFC 3339 appendix A: P[nY[nM[nD]] | nM[nD] | nD][T(nH[nM[nS]] | nM[nS] | nS)] or PnW.
    private static func isDuration(_ bytes: [UInt8]) -> Bool {
        guard bytes.first == UInt8(ascii: "P"), bytes.count > 1 else { return false }
        // (number, designator) pairs, with "T" kept as its own marker.
        var units: [UInt8] = []
        var i = 1
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "T") {
                units.append(bytes[i])
                i += 1
                continue
            }
            let start = i
            while i < bytes.count, bytes[i] >= 0x30 && bytes[i] <= 0x39 { i += 1 }
            guard i > start, i < bytes.count, bytes[i] != UInt8(ascii: "T") else { return false }
            units.append(bytes[i])
            i += 1
        }
        if units == [UInt8(ascii: "W")] { return true }
        let time = units.firstIndex(of: UInt8(ascii: "T")) ?? units.count
        let date = Array(units[..<time]), clock = Array(units[min(time + 1, units.count)...])
        if time < units.count && clock.isEmpty { return false }  // "P1YT"
        if date.isEmpty && clock.isEmpty { return false }
        // Each part: a run of consecutive designators in order, starting anywhere.
        func inOrder(_ part: [UInt8], _ order: [UInt8]) -> Bool {
            guard let first = part.first, let start = order.firstIndex(of: first) else { return part.isEmpty }
            return Array(order[start...].prefix(part.count)) == part
        }
        return inOrder(date, Array("YMD".utf8)) && inOrder(clock, Array("HMS".utf8)) && !clock.contains(UInt8(ascii: "T"))
    }

    private static func isJSONPointer(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.isEmpty || bytes.first == UInt8(ascii: "/") else { return false }
        var i = bytes.startIndex
        while i < bytes.endIndex {
            if bytes[i] == UInt8(ascii: "~") {
                let next = bytes.index(after: i)
                guard next < bytes.endIndex, bytes[next] == UInt8(ascii: "0") || bytes[next] == UInt8(ascii: "1") else { return false }
            }
            i = bytes.index(after: i)
        }
        return true
    }

    /// A non-negative integer without leading zeros, then "#" or a JSON Pointer.
    private static func isRelativeJSONPointer(_ bytes: [UInt8]) -> Bool {
        var i = 0
        while i < bytes.count, bytes[i] >= 0x30 && bytes[i] <= 0x39 { i += 1 }
        guard i > 0, i == 1 || bytes[0] != UInt8(ascii: "0") else { return false }
        if i == bytes.count - 1, bytes[i] == UInt8(ascii: "#") { return true }
        return isJSONPointer(bytes[i...])
    }

    /// RFC 6570 level 4 syntax: literals, and `{[operator]varspec,...}` expressions.
    private static func isURITemplate(_ text: String) -> Bool {
        var rest = Substring(text)
        while let open = rest.firstIndex(where: { $0 == "{" || $0 == "}" }) {
            guard isTemplateLiteral(rest[..<open]), rest[open] == "{",
                  let close = rest[open...].firstIndex(of: "}") else { return false }
            var expression = rest[rest.index(after: open)..<close]
            if let first = expression.first, "+#./;?&=,!@|".contains(first) { expression = expression.dropFirst() }
            let specs = expression.split(separator: ",", omittingEmptySubsequences: false)
            guard specs.allSatisfy(isVarspec) else { return false }
            rest = rest[rest.index(after: close)...]
        }
        return isTemplateLiteral(rest)
    }

    private static func isTemplateLiteral(_ literal: Substring) -> Bool {
        literal.unicodeScalars.allSatisfy { scalar in
            scalar.value > 0x20 && scalar.value != 0x7F && !"\"'<>\\^`{|}".unicodeScalars.contains(scalar)
                || scalar == "'"
        }
    }

    private static func isVarspec(_ spec: Substring) -> Bool {
        var name = spec
        if name.hasSuffix("*") {
            name = name.dropLast()
        } else if let colon = name.firstIndex(of: ":") {
            let length = name[name.index(after: colon)...]
            guard let value = Int(length), value > 0, value < 10000, length.first != "0",
                  length.allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
            name = name[..<colon]
        }
        // varname: varchar *( ["."] varchar ), varchar = ALPHA / DIGIT / "_" / pct-encoded
        guard !name.isEmpty, name.first != ".", name.last != ".", !name.contains("..") else { return false }
        let bytes = Array(name.utf8)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "%") {
                guard i + 2 < bytes.count, isHex(bytes[i + 1]), isHex(bytes[i + 2]) else { return false }
                i += 3
                continue
            }
            guard isASCIIAlphanumeric(b) || b == UInt8(ascii: "_") || b == UInt8(ascii: ".") else { return false }
            i += 1
        }
        return true
    }

    // MARK: RFC 3339

    private static func number(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard !bytes.isEmpty else { return nil }
        var value = 0
        for b in bytes {
            guard b >= 0x30 && b <= 0x39 else { return nil }
            value = value * 10 + Int(b - 0x30)
        }
        return value
    }

    private static func isDateTime(_ bytes: [UInt8]) -> Bool {
        guard bytes.count > 11, bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t") else { return false }
        return isDate(bytes[0..<10]) && isTime(bytes[11...], dayOffset: nil)
    }

    private static func isDate(_ bytes: ArraySlice<UInt8>) -> Bool {
        let b = Array(bytes)
        guard b.count == 10, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
              let year = number(b[0..<4]), let month = number(b[5..<7]), let day = number(b[8..<10]),
              (1...12).contains(month), day >= 1 else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return day <= days[month - 1]
    }

    /// `HH:MM:SS[.frac](Z|±HH:MM)`; a leap second only where UTC reads 23:59:60.
    private static func isTime(_ bytes: ArraySlice<UInt8>, dayOffset: Int?) -> Bool {
        let b = Array(bytes)
        guard b.count >= 9, b[2] == UInt8(ascii: ":"), b[5] == UInt8(ascii: ":"),
              let hour = number(b[0..<2]), let minute = number(b[3..<5]), let second = number(b[6..<8]),
              hour <= 23, minute <= 59, second <= 60 else { return false }
        var i = 8
        if b[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            while i < b.count, b[i] >= 0x30 && b[i] <= 0x39 { i += 1 }
            guard i > start else { return false }
        }
        guard i < b.count else { return false }
        var offsetMinutes = 0
        switch b[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard i + 1 == b.count else { return false }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard b.count - i == 6, b[i + 3] == UInt8(ascii: ":"),
                  let offsetHour = number(b[(i + 1)..<(i + 3)]), let offsetMinute = number(b[(i + 4)..<(i + 6)]),
                  offsetHour <= 23, offsetMinute <= 59 else { return false }
            offsetMinutes = (offsetHour * 60 + offsetMinute) * (b[i] == UInt8(ascii: "+") ? 1 : -1)
        default:
            return false
        }
        if second == 60 {
            let utc = ((hour * 60 + minute - offsetMinutes) % 1440 + 1440) % 1440
            return utc == 23 * 60 + 59
        }
        return true
    }

    // MARK: Internet names and addresses

    private static func isHostname(_ bytes: [UInt8], idna: Bool) -> Bool {
        if idna { return InternationalDomainName.isHostname(String(decoding: bytes, as: UTF8.self)) }
        guard !bytes.isEmpty, bytes.count <= 253 else { return false }
        let labels = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            !label.isEmpty && label.count <= 63 && label.first != UInt8(ascii: "-") && label.last != UInt8(ascii: "-")
                && label.allSatisfy { isASCIIAlphanumeric($0) || $0 == UInt8(ascii: "-") }
        }
    }

    private static func isASCIIAlphanumeric(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b | 0x20 >= UInt8(ascii: "a") && b | 0x20 <= UInt8(ascii: "z"))
    }

    private static func isHex(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b | 0x20 >= UInt8(ascii: "a") && b | 0x20 <= UInt8(ascii: "f"))
    }

    private static func isIPv4(_ bytes: ArraySlice<UInt8>) -> Bool {
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        for part in parts {
            guard part.count <= 3, let value = number(part), value <= 255 else { return false }
            if part.count > 1, part.first == UInt8(ascii: "0") { return false }
        }
        return true
    }

    private static func isIPv6(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.count >= 2, bytes.count <= 45 else { return false }
        let text = Array(bytes)
        var groups = 0
        var compressed = false
        var parts = text.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        // "::" at either end leaves two empty parts; fold them into one compression marker.
        if text.starts(with: [0x3A, 0x3A]) { parts.removeFirst() } else if text.first == 0x3A { return false }
        if text.count >= 2, text[text.count - 1] == 0x3A, text[text.count - 2] == 0x3A { parts.removeLast() } else if text.last == 0x3A { return false }
        for (n, part) in parts.enumerated() {
            if part.isEmpty {
                if compressed { return false }
                compressed = true
                continue
            }
            if n == parts.count - 1, part.contains(UInt8(ascii: ".")) {
                guard isIPv4(part) else { return false }
                groups += 2
                continue
            }
            guard part.count <= 4, part.allSatisfy(isHex) else { return false }
            groups += 1
        }
        return compressed ? groups < 8 : groups == 8
    }

    /// `email` (RFC 5321 §4.1.2), and `idn-email` when `international` (RFC 6531): the local
    /// part's atoms allow any non-ASCII code point and the domain is an `idn-hostname`. Either
    /// domain may be an address literal.
    private static func isEmail(_ text: String, idna: Bool, international: Bool = false) -> Bool {
        guard let at = text.lastIndex(of: "@") else { return false }
        let local = text[..<at]
        let domain = text[text.index(after: at)...]
        guard !local.isEmpty, !domain.isEmpty, local.utf8.count <= 64 else { return false }
        if local.hasPrefix("\"") {
            guard local.count >= 2, local.hasSuffix("\"") else { return false }
        } else {
            let allowed = "!#$%&'*+-/=?^_`{|}~."
            guard local.first != ".", local.last != ".", !local.contains(".."),
                  local.unicodeScalars.allSatisfy({
                      $0.isASCII ? isASCIIAlphanumeric(UInt8($0.value)) || allowed.unicodeScalars.contains($0) : international
                  })
            else { return false }
        }
        if let literal = addressLiteral(domain) { return literal }
        return international ? InternationalDomainName.isIDNHostname(String(domain)) : isHostname(Array(domain.utf8), idna: idna)
    }

    /// Whether a domain written as an address literal (`[192.0.2.1]`, `[IPv6:…]`) is a valid
    /// one; nil for a domain that is not written as one.
    private static func addressLiteral(_ domain: Substring) -> Bool? {
        guard domain.hasPrefix("[") && domain.hasSuffix("]") else { return nil }
        let literal = domain.dropFirst().dropLast()
        if literal.hasPrefix("IPv6:") { return isIPv6(Array(literal.dropFirst(5).utf8)[...]) }
        return isIPv4(Array(literal.utf8)[...])
    }

    /// RFC 3986 `[ userinfo "@" ] host [ ":" port ]`.
    private static func isAuthority(_ authority: String) -> Bool {
        let parts = authority.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count <= 2, let hostPort = parts.last else { return false }
        if parts.count == 2, parts[0].contains("[") || parts[0].contains("]") { return false }
        var port: Substring = ""
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { return false }
            let literal = hostPort[hostPort.index(after: hostPort.startIndex)..<close]
            if !literal.lowercased().hasPrefix("v") && !isIPv6(Array(literal.utf8)[...]) { return false }
            let rest = hostPort[hostPort.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return false }
                port = rest.dropFirst()
            }
        } else {
            if hostPort.contains("[") || hostPort.contains("]") { return false }
            // A registered name admits no colon: what follows one is the port.
            if let colon = hostPort.firstIndex(of: ":") { port = hostPort[hostPort.index(after: colon)...] }
        }
        return port.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    private static func isUUID(_ bytes: [UInt8]) -> Bool {
        guard bytes.count == 36 else { return false }
        for (n, b) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(n) {
                guard b == UInt8(ascii: "-") else { return false }
            } else if !isHex(b) {
                return false
            }
        }
        return true
    }

    /// RFC 3986 characters and shape: a scheme when required, valid percent escapes, no
    /// spaces or other characters outside the grammar.
    private static func isURI(_ text: String, requireScheme: Bool, international: Bool = false) -> Bool {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:/?#[]@!$&'()*+,;=%".utf8)
        let bytes = Array(text.utf8)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            // An IRI may also hold any non-ASCII character (RFC 3987 ucschar, iprivate).
            guard allowed.contains(b) || (international && b >= 0x80) else { return false }
            if b == UInt8(ascii: "%") {
                guard i + 2 < bytes.count, isHex(bytes[i + 1]), isHex(bytes[i + 2]) else { return false }
                i += 2
            }
            i += 1
        }
        let uri = SchemaURI(parsing: text)
        if requireScheme && uri.scheme == nil { return false }
        if uri.scheme == nil, let colon = text.firstIndex(of: ":"),
           !text[..<colon].contains("/"), !text[..<colon].contains("?"), !text[..<colon].contains("#") {
            // "1a:b" is neither a URI (bad scheme) nor a relative reference (colon in the first segment).
            return false
        }
        if let authority = uri.authority, !isAuthority(authority) { return false }
        if let fragment = uri.fragment, fragment.contains("#") || fragment.contains("[") || fragment.contains("]") { return false }
        if let query = uri.query, query.contains("[") || query.contains("]") { return false }
        if uri.path.contains("[") || uri.path.contains("]") { return false }
        return true
    }
}
