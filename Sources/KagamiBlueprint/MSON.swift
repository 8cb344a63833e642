// MSON (Markdown Syntax for Object Notation) as written: the element tree before named types
// are resolved. Rendering and schema generation live in MSONRenderer.
import KagamiContract

/// Type attributes from a signature's parentheses.
struct MSONTypeAttributes: OptionSet, Hashable {
    let rawValue: Int
    static let required = MSONTypeAttributes(rawValue: 1 << 0)
    static let optional = MSONTypeAttributes(rawValue: 1 << 1)
    static let fixed = MSONTypeAttributes(rawValue: 1 << 2)
    static let fixedType = MSONTypeAttributes(rawValue: 1 << 3)
    static let nullable = MSONTypeAttributes(rawValue: 1 << 4)
    static let sample = MSONTypeAttributes(rawValue: 1 << 5)
    static let `default` = MSONTypeAttributes(rawValue: 1 << 6)
}

/// `Sample` and `Default` sections: a value as text, or nested members.
struct MSONValueSection {
    var text: String?
    var members: [MSONMember]
    /// Where the section is written (its list item or header).
    var location: SourceLocation?
}

/// One element: a property, an array item, an enum member, a named type or an attributes root.
struct MSONElement {
    var name: String?
    /// `*name*`: any property name matches (rendered with the name, schema'd as a pattern).
    var nameIsVariable = false
    /// `*rel (Custom String)*`: the type the variable name's sample is of.
    var nameType: String?
    /// The whole text before the attributes, for items and members (which have no name).
    var literal: String?
    /// The text after `:` for properties, or the literal for items.
    var value: String?
    /// `*value*`: the value is a sample, not a fixed value.
    var valueIsSample = false
    /// The value as written, before `*…*` is taken off: lists split this, then look at
    /// each entry's emphasis.
    var rawValue: String?
    var typeName: String?
    /// Types in brackets: `array[string, number]`, `enum[number]`.
    var nestedTypes: [String] = []
    var attributes: MSONTypeAttributes = []
    var description = ""
    var members: [MSONMember] = []
    var samples: [MSONValueSection] = []
    var defaults: [MSONValueSection] = []
    var location: SourceLocation
}

indirect enum MSONMember {
    case element(MSONElement)
    case include(String, SourceLocation)
    case oneOf([MSONMember], SourceLocation)
    /// A `Properties`, `Items` or `Members` section: its members stand in place.
    case group([MSONMember])
}

/// The parts of `name: value (attributes) - description`.
struct MSONSignature {
    var identifier: String
    var name: String?
    var value: String?
    var attributes: [String] = []
    var description: String?

    init(_ text: String) {
        // Every delimiter is ASCII, so the UTF-8 bytes can be cut anywhere one is found.
        let bytes = Array(text.utf8)
        func string(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
        let backtick = UInt8(ascii: "`")
        var head = bytes.count
        var depth = 0
        var inCode = false
        // The description starts at the first ` - ` outside code spans and parentheses.
        for index in bytes.indices {
            let byte = bytes[index]
            if byte == backtick { inCode.toggle(); continue }
            if inCode { continue }
            switch byte {
            case UInt8(ascii: "("), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: ")"), UInt8(ascii: "]"): depth = max(0, depth - 1)
            case UInt8(ascii: "-") where depth == 0 && index > 0 && (bytes[index - 1] == 0x20 || bytes[index - 1] == 0x09)
                && (index + 1 == bytes.count || bytes[index + 1] == 0x20 || bytes[index + 1] == 0x09):
                head = index
            default: break
            }
            if head < bytes.count { break }
        }
        if head < bytes.count {
            description = string((head + 1)..<bytes.count).trimmedBlanks
        }
        var headEnd = head
        while headEnd > 0, bytes[headEnd - 1] == 0x20 || bytes[headEnd - 1] == 0x09 { headEnd -= 1 }
        // Attributes: the parenthesised group that ends the head, outside code spans.
        if headEnd > 0, bytes[headEnd - 1] == UInt8(ascii: ")") {
            var level = 0
            var open: Int?
            var code = false
            for position in stride(from: headEnd - 1, through: 0, by: -1) {
                let byte = bytes[position]
                if byte == backtick { code.toggle(); continue }
                if code { continue }
                if byte == UInt8(ascii: ")") { level += 1 } else if byte == UInt8(ascii: "(") {
                    level -= 1
                    if level == 0 { open = position; break }
                }
            }
            if let open {
                attributes = MSONSignature.splitList(string((open + 1)..<(headEnd - 1)), respectingBrackets: true)
                headEnd = open
            }
        }
        // A group inside `*…*` types a variable property name (`*rel (string)*: v`).
        if attributes.isEmpty, let (open, close) = Self.trailingTextGroup(bytes, end: headEnd),
           bytes[0..<open].filter({ $0 == UInt8(ascii: "*") }).count % 2 == 0 {
            // `- e: 1 (enum) C:1`: drafter reads the type definition and drops the text after
            // it; only when the group holds nothing but base types and attributes, so a value
            // with parentheses in it stays a value.
            let entries = MSONSignature.splitList(string((open + 1)..<close), respectingBrackets: true)
            if !entries.isEmpty, entries.allSatisfy(Self.isBaseTypeOrAttribute) {
                attributes = entries
                headEnd = open
            }
        }
        identifier = string(0..<headEnd).trimmedBlanks
        // Name and value split at the first `:` outside code spans.
        var code = false
        for position in 0..<headEnd {
            let byte = bytes[position]
            if byte == backtick { code.toggle() } else if byte == UInt8(ascii: ":"), !code {
                name = string(0..<position).trimmedBlanks
                value = string((position + 1)..<headEnd).trimmedBlanks
                break
            }
        }
        if name == nil { name = identifier }
    }

    /// The last top-level `(…)` group before `end` that has text after it, outside code spans.
    static func trailingTextGroup(_ bytes: [UInt8], end: Int) -> (Int, Int)? {
        var depth = 0
        var open: Int?
        var found: (Int, Int)?
        var code = false
        for position in 0..<end {
            let byte = bytes[position]
            if byte == UInt8(ascii: "`") { code.toggle(); continue }
            if code { continue }
            if byte == UInt8(ascii: "(") {
                if depth == 0 { open = position }
                depth += 1
            } else if byte == UInt8(ascii: ")"), depth > 0 {
                depth -= 1
                if depth == 0, let start = open { found = (start, position) }
            }
        }
        guard let found, found.1 + 1 < end else { return nil }
        return found
    }

    static func isBaseTypeOrAttribute(_ entry: String) -> Bool {
        let word = entry.lowercased()
        let base = word.firstIndex(of: "[").map { String(word[..<$0]) } ?? word
        return ["required", "optional", "fixed", "fixed-type", "nullable", "sample", "default",
                "string", "number", "boolean", "array", "enum", "object"].contains(base)
    }

    /// Comma-separated entries, trimmed; commas inside code spans (and brackets) don't split.
    static func splitList(_ text: String, respectingBrackets: Bool) -> [String] {
        var parts: [String] = []
        var current = ""
        var code = false
        var depth = 0
        for character in text {
            if character == "`" { code.toggle() }
            if !code, respectingBrackets {
                // Brackets of nested types and parentheses of generic arguments don't split.
                if character == "[" || character == "(" { depth += 1 } else if character == "]" || character == ")" { depth = max(0, depth - 1) }
            }
            if character == ",", !code, depth == 0 {
                parts.append(current.trimmedBlanks)
                current = ""
            } else {
                current.append(character)
            }
        }
        let last = current.trimmedBlanks
        if !last.isEmpty || !parts.isEmpty { parts.append(last) }
        return parts
    }

    /// Removes code-span backticks around a literal.
    static func unescape(_ text: String) -> String {
        let trimmed = text.trimmedBlanks
        guard trimmed.utf8.first == 0x60 else { return trimmed }
        var slice = Substring(trimmed)
        var ticks = 0
        while slice.hasPrefix("`"), slice.hasSuffix("`"), slice.count >= 2 {
            slice = slice.dropFirst().dropLast()
            ticks += 1
        }
        return ticks > 0 ? String(slice).trimmedBlanks : String(slice)
    }

    /// A Referenced Type Name, a Markdown link to a type for navigation (`[Person][]`,
    /// `[Person][ref]`, `[Person](#person)`, `[Person]`): returns the type name it shows.
    static func linkedTypeName(_ text: String) -> String? {
        guard text.hasPrefix("["), let close = text.firstIndex(of: "]") else { return nil }
        let name = String(text[text.index(after: text.startIndex)..<close]).trimmedBlanks
        guard !name.isEmpty, !name.contains("[") else { return nil }
        let rest = text[text.index(after: close)...]
        let isLink = rest.isEmpty
            || (rest.hasPrefix("[") && rest.hasSuffix("]") && rest.dropFirst().dropLast().allSatisfy { $0 != "[" && $0 != "]" })
            || (rest.hasPrefix("(") && rest.hasSuffix(")") && rest.dropFirst().dropLast().allSatisfy { $0 != "(" && $0 != ")" })
        return isLink ? name : nil
    }

    /// `*text*` emphasised: returns the inner text.
    static func emphasised(_ text: String) -> String? {
        guard text.count >= 2, text.hasPrefix("*"), text.hasSuffix("*") else { return nil }
        return String(text.dropFirst().dropLast())
    }
}

/// Reads MSON elements from list items.
struct MSONReader {
    let source: BlueprintSource
    var annotations: [Annotation] = []

    init(source: BlueprintSource) {
        self.source = source
    }

    /// Guards against pathological nesting in hostile input.
    static let maximumDepth = 64

    /// An element from a signature line (a property, an item, or a section's own header).
    mutating func element(signature text: String, at location: SourceLocation) -> MSONElement {
        checkBrackets(text, at: location)
        let signature = MSONSignature(text)
        var element = MSONElement(location: location)
        element.description = signature.description ?? ""
        apply(attributes: signature.attributes, to: &element, at: location)
        let literal = signature.identifier
        element.literal = literal.isEmpty ? nil : literal
        if let rawName = signature.name, signature.value != nil || !rawName.isEmpty {
            if let inner = MSONSignature.emphasised(rawName) {
                // `*rel (Custom String)*`: a sample name typed by a string type; `*(Link)*`:
                // no sample, the type's value (if any) names it.
                let variable = MSONSignature(inner)
                if let type = variable.attributes.first, variable.attributes.count == 1 {
                    element.name = MSONSignature.unescape(variable.identifier)
                    element.nameType = MSONSignature.unescape(type)
                } else {
                    element.name = MSONSignature.unescape(inner)
                }
                element.nameIsVariable = true
            } else {
                element.name = MSONSignature.unescape(rawName)
            }
        }
        if let rawValue = signature.value, !rawValue.isEmpty {
            element.rawValue = rawValue
            if let inner = MSONSignature.emphasised(rawValue) {
                element.value = inner
                element.valueIsSample = true
            } else {
                element.value = rawValue
            }
        }
        return element
    }

    /// A `(` or `[` left open (or a closing one without its opening) outside code spans: the
    /// type definition would be read as part of the name or value.
    mutating func checkBrackets(_ text: String, at location: SourceLocation) {
        var open: [(byte: UInt8, index: Int)] = []
        var inCode = false
        var problem: (message: String, index: Int)?
        let bytes = Array(text.utf8)
        for (index, byte) in bytes.enumerated() {
            if byte == UInt8(ascii: "`") { inCode.toggle(); continue }
            if inCode { continue }
            // The description after ` - ` may hold anything.
            if byte == UInt8(ascii: "-"), open.isEmpty, index > 0, bytes[index - 1] == 0x20,
               index + 1 == bytes.count || bytes[index + 1] == 0x20 { break }
            switch byte {
            case UInt8(ascii: "("), UInt8(ascii: "["):
                open.append((byte, index))
            case UInt8(ascii: ")"), UInt8(ascii: "]"):
                let expected = byte == UInt8(ascii: ")") ? UInt8(ascii: "(") : UInt8(ascii: "[")
                if let last = open.last, last.byte == expected {
                    open.removeLast()
                } else if problem == nil {
                    problem = open.last.map { ("unclosed '\(Character(Unicode.Scalar($0.byte)))'", $0.index) }
                        ?? ("'\(Character(Unicode.Scalar(byte)))' without its opening bracket", index)
                }
            default:
                continue
            }
        }
        if problem == nil, let first = open.first {
            problem = ("unclosed '\(Character(Unicode.Scalar(first.byte)))'", first.index)
        }
        guard let problem else { return }
        // Placed on the bracket: the text sits after the list marker on its line.
        var place = location
        if location.line >= 1, location.line <= source.lines.count {
            let line = source.lines[location.line - 1]
            let lineBytes = source.bytes[line.contentStart..<line.end]
            if let start = Self.firstRange(of: bytes, in: Array(lineBytes)) {
                place = SourceLocation(
                    line: location.line, column: location.column + start + problem.index,
                    offset: line.contentStart + start + problem.index, length: 1)
            }
        }
        annotations.append(Annotation(.error, "\(problem.message) in '\(text)'; a type definition is written '(type, attributes)'", at: place))
    }

    private static func firstRange(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard !needle.isEmpty, needle.count <= haystack.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return start
        }
        return nil
    }

    mutating func apply(attributes: [String], to element: inout MSONElement, at location: SourceLocation) {
        for attribute in attributes {
            let word = attribute.trimmedBlanks
            switch word.lowercased() {
            case "required": element.attributes.insert(.required)
            case "optional": element.attributes.insert(.optional)
            case "fixed": element.attributes.insert(.fixed)
            case "fixed-type": element.attributes.insert(.fixedType)
            case "nullable": element.attributes.insert(.nullable)
            case "sample": element.attributes.insert(.sample)
            case "default": element.attributes.insert(.default)
            case "": continue
            default:
                if element.typeName != nil {
                    annotations.append(Annotation(.warning, "unrecognized type attribute '\(word)'", at: location))
                    continue
                }
                if let linked = MSONSignature.linkedTypeName(word) {
                    element.typeName = MSONSignature.unescape(linked)
                } else if let open = word.firstIndex(of: "["), word.hasSuffix("]") {
                    element.typeName = MSONSignature.unescape(String(word[..<open]))
                    let inner = word[word.index(after: open)..<word.index(before: word.endIndex)]
                    element.nestedTypes = MSONSignature.splitList(String(inner), respectingBrackets: true)
                        .map { MSONSignature.unescape(MSONSignature.linkedTypeName($0) ?? $0) }.filter { !$0.isEmpty }
                } else {
                    element.typeName = MSONSignature.unescape(word)
                }
            }
        }
        let conflicts: [(MSONTypeAttributes, MSONTypeAttributes, String)] = [
            (.required, .optional, "cannot use 'required' and 'optional' together"),
            (.fixed, .optional, "cannot use 'fixed' and 'optional' together"),
            (.default, .sample, "cannot use 'default' and 'sample' together"),
            (.fixed, .fixedType, "cannot use 'fixed' and 'fixed-type' together"),
        ]
        for (first, second, message) in conflicts where element.attributes.contains(first) && element.attributes.contains(second) {
            annotations.append(Annotation(.warning, message, at: location))
        }
    }

    /// Fills `element` with the members, sections and description nested under `item`.
    mutating func readNested(under item: ListItem, into element: inout MSONElement, depth: Int) {
        let level = source.children(of: item)
        read(level: level, itemIndent: item.indent, into: &element, depth: depth)
    }

    /// `optionsOfOneOf`: the level lists One Of options, where a `Properties` group is one
    /// option among the others rather than the end of a block description.
    mutating func read(level: ListLevel, itemIndent: Int, into element: inout MSONElement, depth: Int, optionsOfOneOf: Bool = false) {
        var described = false
        if !level.leading.isEmpty {
            let text = source.block(level.leading, strip: itemIndent + 4).trimmedNewlines
            if !text.isEmpty { element.description += element.description.isEmpty ? text : "\n" + text }
            described = !text.isEmpty
        }
        // With an explicit `Items`/`Members`/`Properties` section, list items before it are
        // part of the description.
        let sectionIndex = optionsOfOneOf ? nil : level.items.lastIndex { ["items", "members", "properties"].contains($0.text.lowercased()) }
        // A primitive type has no members: after its description, a list is more description.
        let primitive = element.typeName.flatMap { MSONKind(typeName: $0) }?.isPrimitive == true && described
        for (index, item) in level.items.enumerated() {
            if let sectionIndex, index < sectionIndex, !Self.isSectionKeyword(item.text) { continue }
            if primitive, !Self.isSectionKeyword(item.text) {
                element.description += "\n- " + item.text
                continue
            }
            read(item: item, into: &element, depth: depth)
        }
    }

    static func isSectionKeyword(_ text: String) -> Bool {
        let lowered = text.lowercased()
        return ["items", "members", "properties", "one of"].contains(lowered) || lowered.hasPrefix("sample") || lowered.hasPrefix("default") || lowered.hasPrefix("include ")
    }

    private mutating func read(item: ListItem, into element: inout MSONElement, depth: Int) {
        let location = source.location(line: item.line)
        guard depth < Self.maximumDepth else {
            annotations.append(Annotation(.error, "MSON nested deeper than \(Self.maximumDepth) levels", at: location))
            return
        }
        // Keywords are read case-insensitively with any run of blanks between words (`One  Of`).
        let keyword = item.text.lowercased().split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
        switch keyword {
        case "members", "items", "properties":
            element.members.append(.group(members(under: item, depth: depth + 1)))
            return
        case "one of":
            var holder = MSONElement(location: location)
            read(level: source.children(of: item), itemIndent: item.indent, into: &holder, depth: depth + 1, optionsOfOneOf: true)
            element.members.append(.oneOf(holder.members, location))
            return
        default:
            break
        }
        if keyword.hasPrefix("sample") || keyword.hasPrefix("default") {
            let word = keyword.hasPrefix("sample") ? "sample" : "default"
            let rest = item.text.dropFirst(word.count).trimmedBlanks
            if rest.isEmpty || rest.hasPrefix(":") {
                var section = MSONValueSection(text: nil, members: [], location: location)
                let inline = rest.dropFirst().trimmedBlanks
                if !inline.isEmpty {
                    section.text = inline
                } else {
                    let nested = source.children(of: item)
                    section.members = members(in: nested.items, depth: depth + 1)
                    if nested.items.isEmpty {
                        let text = source.nestedText(of: item).text.trimmedNewlines
                        if !text.isEmpty { section.text = text }
                    }
                }
                if word == "default", section.text == nil, section.members.isEmpty {
                    // drafter: a `Default` with nothing in it is noted and ignored.
                    annotations.append(Annotation(.warning, "no value(s) specified", at: location))
                    return
                }
                if word == "sample" { element.samples.append(section) } else { element.defaults.append(section) }
                return
            }
        }
        if keyword.hasPrefix("include ") {
            var name = MSONSignature.unescape(String(item.text.dropFirst("include ".count)))
            if name.hasPrefix("("), name.hasSuffix(")") { name = String(name.dropFirst().dropLast()).trimmedBlanks }
            // A structure type is nothing to include: the member stays, empty.
            guard !["object", "array", "enum", ""].contains(name.lowercased()) else {
                annotations.append(Annotation(.warning, "ignoring unrecognized block", at: location))
                element.members.append(.group([]))
                return
            }
            element.members.append(.include(name, location))
            return
        }
        element.members.append(.element(self.element(item: item, depth: depth + 1)))
    }

    mutating func element(item: ListItem, depth: Int) -> MSONElement {
        var child = element(signature: item.text, at: source.location(line: item.line))
        readNested(under: item, into: &child, depth: depth)
        check(child)
        return child
    }

    /// drafter's warnings about an element's attributes and sections.
    mutating func check(_ element: MSONElement) {
        for (attribute, word) in [(MSONTypeAttributes.default, "default"), (.sample, "sample")]
        where element.attributes.contains(attribute) && element.value == nil {
            annotations.append(Annotation(.warning, "no value present when '\(word)' is specified", at: element.location))
        }
        if element.typeName == "enum" {
            var defaults = element.defaults.reduce(0) { $0 + max($1.members.count, $1.text == nil ? 0 : 1) }
            if element.attributes.contains(.default), let value = element.rawValue ?? element.value {
                defaults += MSONSignature.splitList(value, respectingBrackets: false).count
            }
            if defaults > 1 {
                // drafter places the warning on the `Default` sections: on each one when each
                // gives one value inline, else on the first.
                let places = element.defaults.compactMap(\.location)
                if element.defaults.count > 1, element.defaults.allSatisfy({ $0.text != nil }), places.count == element.defaults.count {
                    for place in places {
                        annotations.append(Annotation(.warning, "multiple definitions of 'default' value", at: place))
                    }
                } else {
                    annotations.append(Annotation(.warning, "multiple definitions of 'default' value", at: places.first ?? element.location))
                }
            }
        }
        if let type = element.typeName, ["string", "number", "boolean"].contains(type), element.hasElementMembers {
            annotations.append(Annotation(.warning, "sub-types of primitive types should not have nested members", at: element.location))
        }
    }

    private mutating func members(under item: ListItem, depth: Int) -> [MSONMember] {
        var holder = MSONElement(location: source.location(line: item.line))
        readNested(under: item, into: &holder, depth: depth)
        return holder.members
    }

    private mutating func members(in items: [ListItem], depth: Int) -> [MSONMember] {
        var holder = MSONElement(location: source.location(line: items.first?.line ?? 0))
        for item in items { read(item: item, into: &holder, depth: depth) }
        return holder.members
    }
}

extension String {
    /// Without leading and trailing blank lines and whitespace.
    var trimmedNewlines: String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}
