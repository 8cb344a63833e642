/// The RFC 6570 grammar (section 2), read one character at a time so errors can say where.
extension URITemplate {
    public init(_ text: String) throws(URITemplateError) {
        var reader = TemplateReader(text)
        let components = try reader.readComponents()
        self.init(text: text, components: components)
    }

    /// Builds a template from components already known to be valid (the path part of a
    /// parsed template).
    init(text: String, components: [Component]) {
        self.text = text
        self.components = components
        let start = Self.findQueryStart(components)
        self.queryStart = start
        let split = Self.split(components, at: start)
        self.pathPattern = PathPattern(split.path)
        self.queryPattern = QueryPattern(split.query)
    }
}

private struct TemplateReader {
    let text: String
    let characters: [Character]
    var index = 0

    init(_ text: String) {
        self.text = text
        self.characters = Array(text)
    }

    func error(_ kind: URITemplateError.Kind, at index: Int, _ reason: String) -> URITemplateError {
        URITemplateError(kind, template: text, position: index + 1, reason: reason)
    }

    mutating func readComponents() throws(URITemplateError) -> [URITemplate.Component] {
        var components: [URITemplate.Component] = []
        var literal = ""
        while index < characters.count {
            let c = characters[index]
            switch c {
            case "{":
                if !literal.isEmpty {
                    components.append(.literal(literal))
                    literal = ""
                }
                components.append(.expression(try readExpression()))
            case "}":
                throw error(.unmatchedClosingBrace, at: index, "'}' without a matching '{'")
            case "%":
                try checkTriplet(at: index)
                literal += String(characters[index...index + 2])
                index += 3
            default:
                guard Self.isLiteral(c) else {
                    throw error(.invalidLiteralCharacter, at: index,
                                "character \(Self.describe(c)) is not allowed in a template; pct-encode it")
                }
                literal.append(c)
                index += 1
            }
        }
        if !literal.isEmpty { components.append(.literal(literal)) }
        return components
    }

    func checkTriplet(at index: Int) throws(URITemplateError) {
        guard index + 2 < characters.count,
              characters[index + 1].isHexDigit, characters[index + 1].isASCII,
              characters[index + 2].isHexDigit, characters[index + 2].isASCII
        else {
            throw error(.invalidPercentEncoding, at: index, "'%' must be followed by two hexadecimal digits")
        }
    }

    mutating func readExpression() throws(URITemplateError) -> URITemplate.Expression {
        let open = index
        index += 1
        guard index < characters.count else { throw unclosed(open) }
        var op = URITemplate.Operator.simple
        let c = characters[index]
        if let known = URITemplate.Operator(symbol: c) {
            op = known
            index += 1
        } else if "=,!@|".contains(c) {
            throw error(.reservedOperator, at: index, "operator '\(c)' is reserved for future extensions")
        }
        var variables: [URITemplate.Variable] = []
        while true {
            guard index < characters.count else { throw unclosed(open) }
            if characters[index] == "}" && variables.isEmpty {
                throw error(.emptyExpression, at: index, "expected a variable name")
            }
            variables.append(try readVariable(open: open))
            guard index < characters.count else { throw unclosed(open) }
            switch characters[index] {
            case ",":
                index += 1
            case "}":
                index += 1
                return URITemplate.Expression(operator: op, variables: variables, position: open + 1)
            case "*":
                throw error(.invalidModifier, at: index, "a variable cannot have both a prefix and '*'")
            case ":":
                throw error(.invalidModifier, at: index, "a variable cannot have two modifiers")
            default:
                throw invalidNameCharacter(at: index)
            }
        }
    }

    mutating func readVariable(open: Int) throws(URITemplateError) -> URITemplate.Variable {
        let start = index
        var name = ""
        // The grammar: varchar *( ["."] varchar ), varchar = ALPHA / DIGIT / "_" / pct-encoded.
        while index < characters.count {
            let c = characters[index]
            if c == "%" {
                try checkTriplet(at: index)
                name += String(characters[index...index + 2])
                index += 3
            } else if c.isASCII && (c.isLetter || c.isNumber || c == "_") {
                name.append(c)
                index += 1
            } else if c == "." {
                if name.isEmpty {
                    throw error(.invalidVariableName, at: index, "a variable name cannot start with '.'")
                }
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                guard let next, next == "%" || (next.isASCII && (next.isLetter || next.isNumber || next == "_"))
                else {
                    throw error(.invalidVariableName, at: index, "'.' in a variable name must be followed by a name character")
                }
                name.append(c)
                index += 1
            } else {
                break
            }
        }
        guard index < characters.count else { throw unclosed(open) }
        if name.isEmpty { throw invalidNameCharacter(at: index) }
        var modifier = URITemplate.Modifier.none
        if characters[index] == "*" {
            modifier = .explode
            index += 1
        } else if characters[index] == ":" {
            index += 1
            modifier = .prefix(try readPrefixLength())
        }
        return URITemplate.Variable(name: name, modifier: modifier, position: start + 1)
    }

    mutating func readPrefixLength() throws(URITemplateError) -> Int {
        let start = index
        var digits = ""
        while index < characters.count, characters[index].isASCII, characters[index].isNumber {
            digits.append(characters[index])
            index += 1
        }
        guard let first = digits.first else {
            throw error(.invalidModifier, at: start, "expected a prefix length from 1 to 9999 after ':'")
        }
        guard first != "0" else {
            throw error(.invalidModifier, at: start, "a prefix length must be from 1 to 9999 without leading zeros")
        }
        guard digits.count <= 4, let length = Int(digits) else {
            throw error(.invalidModifier, at: start, "a prefix length must be at most 9999")
        }
        return length
    }

    func unclosed(_ open: Int) -> URITemplateError {
        error(.unclosedExpression, at: open, "unclosed expression starting")
    }

    func invalidNameCharacter(at index: Int) -> URITemplateError {
        let c = characters[index]
        if c == "}" || c == "," {
            return error(.invalidVariableName, at: index, "expected a variable name before '\(c)'")
        }
        return error(.invalidVariableName, at: index,
                     "character \(Self.describe(c)) is not allowed in a variable name (letters, digits, '_', '.' and %XX only)")
    }

    /// RFC 6570 `literals`: anything but controls, space and `"%<>\^`{|}` (`%` only as a
    /// triplet). The RFC's grammar also leaves out `'`, but it is a sub-delim of RFC 3986, the
    /// RFC's own examples and the shared test suite write it (`'{var}'`), so it is allowed.
    static func isLiteral(_ c: Character) -> Bool {
        c.unicodeScalars.allSatisfy { scalar in
            switch scalar.value {
            case 0x00...0x20, 0x7F...0x9F: false
            case 0x22, 0x25, 0x3C, 0x3E, 0x5C, 0x5E, 0x60, 0x7B...0x7D: false
            default: true
            }
        }
    }

    static func describe(_ c: Character) -> String {
        if c.unicodeScalars.allSatisfy({ $0.value >= 0x20 && !(0x7F...0x9F).contains($0.value) }) { return "'\(c)'" }
        return c.unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined(separator: " ")
    }
}
