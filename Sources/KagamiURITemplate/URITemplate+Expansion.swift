/// Expansion as RFC 6570 section 3 and appendix A describe it.
extension URITemplate {
    /// Expands the template. Variables missing from `variables` are undefined and expand to
    /// nothing. Throws only for a prefix modifier on a list or associative value.
    public func expand(_ variables: [String: Value]) throws(URITemplateError) -> String {
        var out: [UInt8] = []
        for component in components {
            switch component {
            case .literal(let literal):
                // Literals are valid URI characters already, except non-ASCII ones.
                PercentEncoding.encode(literal, allowReserved: true, into: &out)
            case .expression(let expression):
                try expand(expression, variables, into: &out)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private func expand(
        _ expression: Expression, _ variables: [String: Value], into out: inout [UInt8]
    ) throws(URITemplateError) {
        let op = expression.operator
        var isFirst = true
        for variable in expression.variables {
            guard let value = variables[variable.name], value.isDefined else { continue }
            out.append(contentsOf: (isFirst ? op.first : op.separator).utf8)
            isFirst = false
            switch value {
            case .string(let string):
                var text = Substring(string)
                if case .prefix(let length) = variable.modifier {
                    text = Self.prefix(of: string, characters: length, tripletsAsOne: op.allowsReserved)
                }
                if op.isNamed {
                    out.append(contentsOf: variable.name.utf8)
                    out.append(contentsOf: (text.isEmpty ? op.ifEmpty : "=").utf8)
                }
                PercentEncoding.encode(text, allowReserved: op.allowsReserved, into: &out)
            case .list, .associative:
                if case .prefix = variable.modifier {
                    throw URITemplateError(
                        .prefixOfCompositeValue, template: text, position: variable.position,
                        reason: "prefix modifier on variable '\(variable.name)', whose value is \(value.kindName)")
                }
                expandComposite(value, variable: variable, op: op, into: &out)
            }
        }
    }

    private func expandComposite(_ value: Value, variable: Variable, op: Operator, into out: inout [UInt8]) {
        // Each element is written as (key?, value); lists have no keys.
        let elements: [(key: String?, value: String)] = switch value {
        case .string(let s): [(nil, s)]
        case .list(let items): items.map { (nil, $0) }
        case .associative(let pairs): pairs.map { ($0.key, $0.value) }
        }
        let encode = { (text: String, out: inout [UInt8]) in
            PercentEncoding.encode(text, allowReserved: op.allowsReserved, into: &out)
        }
        if variable.modifier == .explode {
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(contentsOf: op.separator.utf8) }
                if let key = element.key {
                    encode(key, &out)
                    out.append(contentsOf: (op.isNamed && element.value.isEmpty ? op.ifEmpty : "=").utf8)
                } else if op.isNamed {
                    out.append(contentsOf: variable.name.utf8)
                    out.append(contentsOf: (element.value.isEmpty ? op.ifEmpty : "=").utf8)
                }
                encode(element.value, &out)
            }
        } else {
            if op.isNamed {
                out.append(contentsOf: variable.name.utf8)
                out.append(UInt8(ascii: "="))
            }
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                if let key = element.key {
                    encode(key, &out)
                    out.append(UInt8(ascii: ","))
                }
                encode(element.value, &out)
            }
        }
    }

    /// The first `count` Unicode scalars; with `tripletsAsOne` a pct-encoded triplet counts as
    /// one character and is never cut (RFC 6570 section 2.4.1).
    static func prefix(of string: String, characters count: Int, tripletsAsOne: Bool) -> Substring {
        let scalars = string.unicodeScalars
        var index = scalars.startIndex
        var taken = 0
        while index < scalars.endIndex && taken < count {
            if tripletsAsOne, scalars[index] == "%",
               let second = scalars.index(index, offsetBy: 1, limitedBy: scalars.endIndex), second < scalars.endIndex,
               let third = scalars.index(second, offsetBy: 1, limitedBy: scalars.endIndex), third < scalars.endIndex,
               scalars[second].properties.isASCIIHexDigit, scalars[third].properties.isASCIIHexDigit {
                index = scalars.index(after: third)
            } else {
                index = scalars.index(after: index)
            }
            taken += 1
        }
        return Substring(string.unicodeScalars[..<index])
    }
}

extension URITemplate.Value {
    var kindName: String {
        switch self {
        case .string: "a string"
        case .list: "a list"
        case .associative: "an associative array"
        }
    }
}
