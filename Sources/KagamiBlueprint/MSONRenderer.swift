// Turns MSON elements into example JSON bodies and JSON Schemas, resolving named types,
// inheritance and mixins the way drafter does. Recursion through named types is cut off.
import KagamiContract
import KagamiJSON

enum MSONKind: String {
    case string, number, boolean, object, array, `enum`

    var isPrimitive: Bool { self == .string || self == .number || self == .boolean }

    init?(typeName: String) {
        switch typeName.lowercased() {
        case "string": self = .string
        case "number": self = .number
        case "boolean": self = .boolean
        case "object": self = .object
        case "array": self = .array
        case "enum": self = .enum
        default: return nil
        }
    }
}

/// Named types by name, with what rendering needs to resolve them.
struct MSONRenderer {
    /// MSON schemas are JSON Schema draft 4 (what the validator speaks). drafter 5 writes the
    /// same schemas as draft 7 with `const` where draft 4 has a one-value `enum`.
    static let schemaDialect = "http://json-schema.org/draft-04/schema#"

    var namedTypes: [String: MSONElement] = [:]
    /// Schemas carry the elements' descriptions (for `kagami convert`, which writes them).
    var describesMembers = false
    /// Elements being rendered right now; mixins inside members can recurse without a named
    /// type on the stack, so this bounds the depth whatever the input.
    private var nesting = 0
    static let maximumNesting = 96
    /// Elements one body or schema may still visit: named types used twice per level double
    /// at every level, so without a budget a small document can ask for billions.
    private var budget = 0
    static let maximumElements = 50_000
    /// Enumerations stop collecting members here (mixins can multiply them too).
    static let maximumEnumMembers = 5_000

    /// Counts one visited element against the budget of the body or schema being made.
    private mutating func spend(at location: SourceLocation) -> Bool {
        if nesting == 1 {
            budget = Self.maximumElements
            budgetReported = false
        }
        budget -= 1
        if budget <= 0, !budgetReported {
            budgetReported = true
            fail("data structure too large to render: more than \(Self.maximumElements) elements (named types that multiply?)", at: location)
        }
        return budget > 0
    }

    private var budgetReported = false
    var annotations: [Annotation] = []
    /// Each message is reported once per place.
    private var reported: Set<String> = []

    init() {}

    mutating func warn(_ message: String, at location: SourceLocation) {
        let key = "\(location.line):\(location.column):\(message)"
        guard reported.insert(key).inserted else { return }
        annotations.append(Annotation(.warning, message, at: location))
    }

    mutating func fail(_ message: String, at location: SourceLocation) {
        let key = "\(location.line):\(location.column):\(message)"
        guard reported.insert(key).inserted else { return }
        annotations.append(Annotation(.error, message, at: location))
    }

    // MARK: Types

    /// The named type `type` refers to: a declared one, or a generic one (`Name(Argument, …)`)
    /// with its variable type names (`*T*`) bound to the arguments in the order they first
    /// appear in its declaration.
    func namedType(_ type: String) -> MSONElement? {
        if let declared = namedTypes[type] { return declared }
        guard let reference = MSONGenericReference(type), let generic = namedTypes[reference.base] else { return nil }
        let variables = generic.typeVariables
        guard !variables.isEmpty else { return nil }
        var bindings: [String: String] = [:]
        for (variable, argument) in zip(variables, reference.arguments) { bindings[variable] = argument }
        return generic.binding(bindings)
    }

    /// `*T*` in a generic named type, or the wildcard `*`: any type, nothing to check or resolve.
    static func isTypeVariable(_ type: String) -> Bool {
        type == "*" || MSONSignature.emphasised(type) != nil
    }

    /// Base kinds of the named types, resolved once by `resolveNamedKinds()`.
    private var namedKinds: [String: MSONKind] = [:]

    /// The base kind a type name stands for, following named types; nil when unknown or circular.
    func kind(ofType name: String) -> MSONKind? {
        if let kind = MSONKind(typeName: name) ?? namedKinds[name] { return kind }
        // A generic reference: the kind of what its declaration becomes with the arguments.
        guard MSONGenericReference(name) != nil, let instance = namedType(name) else { return nil }
        guard let base = instance.typeName else { return .object }
        return base == name ? nil : kind(ofType: base)
    }

    /// Follows each named type's base-type chain once (named types don't change afterwards).
    mutating func resolveNamedKinds() {
        namedKinds = [:]
        for name in namedTypes.keys {
            var visited: Set<String> = []
            var current = name
            while visited.count < Self.maximumNesting, !visited.contains(current), let named = namedType(current) {
                visited.insert(current)
                guard let base = named.typeName else {
                    namedKinds[name] = .object
                    break
                }
                if let kind = MSONKind(typeName: base) ?? namedKinds[base] {
                    namedKinds[name] = kind
                    break
                }
                current = base
            }
        }
    }

    /// The element's kind. `asValue`: the element is an array item or enum member.
    func kind(of element: MSONElement, asValue: Bool = false) -> MSONKind {
        if let type = element.typeName { return kind(ofType: type) ?? .object }
        if element.hasElementMembers { return .object }
        if !asValue, let value = element.value, MSONSignature.splitList(value, respectingBrackets: false).count > 1 {
            return .array
        }
        if !asValue, element.samples.contains(where: { $0.text.map { MSONSignature.splitList($0, respectingBrackets: false).count > 1 } ?? false }) {
            return .array
        }
        return .string
    }

    /// Checks named types for base types that loop or don't exist.
    mutating func checkNamedTypes(order: [String]) {
        for name in order {
            guard let named = namedType(name), let base = named.typeName, MSONKind(typeName: base) == nil, !Self.isTypeVariable(base) else { continue }
            var visited: Set<String> = [name]
            var current = base
            while MSONKind(typeName: current) == nil, !Self.isTypeVariable(current), visited.count < Self.maximumNesting {
                guard let next = namedType(current) else {
                    fail("base type '\(current)' is not defined in the document", at: named.location)
                    break
                }
                if visited.contains(current) {
                    fail("base type '\(name)' circularly referencing itself", at: named.location)
                    break
                }
                visited.insert(current)
                guard let nextBase = next.typeName else { break }
                current = nextBase
            }
        }
    }

    /// `members` with each element (also in groups and One Of options) marked `fixed`.
    static func markedFixed(_ members: [MSONMember]) -> [MSONMember] {
        members.map { member in
            switch member {
            case .element(var child):
                child.attributes.insert(.fixed)
                return .element(child)
            case .group(let inner): return .group(markedFixed(inner))
            case .oneOf(let options, let location): return .oneOf(markedFixed(options), location)
            case .include: return member
            }
        }
    }

    /// Members after inheritance and mixins: the base type's first, own ones override by name.
    mutating func expandedMembers(of element: MSONElement, stack: [String]) -> [MSONMember] {
        var result: [MSONMember] = []
        guard stack.count < Self.maximumNesting else {
            fail("named types nested deeper than \(Self.maximumNesting) levels", at: element.location)
            return element.members
        }
        if let type = element.typeName, MSONKind(typeName: type) == nil {
            if let named = namedType(type), !stack.contains(type) {
                result = expandedMembers(of: named, stack: stack + [type])
            }
        }
        let isObject = kind(of: element) == .object
        for member in element.members {
            guard budget > 0 else { break }
            budget -= 1
            switch member {
            case .element(let child):
                if let name = child.name, !child.nameIsVariable, isObject,
                    let existing = result.firstIndex(where: { $0.elementName == name })
                {
                    result[existing] = member
                } else {
                    result.append(member)
                }
            case .include(let name, let location):
                if MSONKind(typeName: name) != nil {
                    warn("mixin type may not include a type of a primitive sub-type", at: location)
                    continue
                }
                guard let named = namedType(name) else {
                    fail("base type '\(name)' is not defined in the document", at: location)
                    continue
                }
                if stack.contains(name) {
                    fail("base type '\(name)' circularly referencing itself", at: location)
                    continue
                }
                if let base = named.typeName, let baseKind = kind(ofType: base), baseKind.isPrimitive {
                    warn("mixin type may not include a type of a primitive sub-type", at: location)
                    continue
                }
                if kind(of: element) == .array, !named.hasElementMembers {
                    // An array type given by its samples alone: its sample is what it adds.
                    result.append(member)
                    continue
                }
                let included = expandedMembers(of: named, stack: stack + [name])
                // A `fixed` type's members come in fixed (member type precedence), the including
                // structure itself does not become fixed.
                result.append(.group(attributes(of: named).contains(.fixed) ? Self.markedFixed(included) : included))
            case .group(let inner):
                var holder = MSONElement(location: element.location)
                holder.members = inner
                result.append(.group(expandedMembers(of: holder, stack: stack)))
            case .oneOf(let options, let location) where isObject:
                // Each option expanded on its own (an `Include` is the named type's members),
                // so options never merge with each other or the members around them.
                var expanded: [MSONMember] = []
                for option in options {
                    var holder = MSONElement(location: element.location)
                    holder.members = [option]
                    let members = expandedMembers(of: holder, stack: stack)
                    expanded.append(members.count == 1 ? members[0] : .group(members))
                }
                result.append(.oneOf(expanded, location))
            case .oneOf:
                result.append(member)
            }
        }
        return result
    }

    /// The value text an element carries: inline, else its first sample, else its default,
    /// else what its named type carries.
    func valueText(of element: MSONElement, stack: [String] = []) -> String? {
        guard stack.count < Self.maximumNesting else { return nil }
        if let value = element.value { return value }
        if let text = element.samples.first?.text { return text }
        // With several `Default` sections the last one counts (drafter warns about the others).
        if let text = element.defaults.last?.text { return text }
        if let type = element.typeName, let named = namedType(type), !stack.contains(type), MSONKind(typeName: type) == nil {
            return valueText(of: named, stack: stack + [type])
        }
        return nil
    }

    /// The element's `[…]` types, or its named type's when it has none of its own.
    func nestedTypes(of element: MSONElement, stack: [String] = []) -> [String] {
        guard stack.count < Self.maximumNesting else { return [] }
        if !element.nestedTypes.isEmpty { return element.nestedTypes }
        if let type = element.typeName, MSONKind(typeName: type) == nil, let named = namedType(type), !stack.contains(type) {
            return nestedTypes(of: named, stack: stack + [type])
        }
        return []
    }

    func attributes(of element: MSONElement, stack: [String] = []) -> MSONTypeAttributes {
        var attributes = element.attributes
        guard stack.count < Self.maximumNesting else { return attributes }
        if let type = element.typeName, let named = namedType(type), !stack.contains(type), MSONKind(typeName: type) == nil {
            attributes.formUnion(self.attributes(of: named, stack: stack + [type]).intersection([.fixed, .fixedType, .nullable]))
        }
        return attributes
    }

    // MARK: Example values

    /// The example JSON for an element. `asValue`: it is an array item or enum member.
    mutating func render(_ element: MSONElement, asValue: Bool = false, stack: [String] = []) -> JSONValue {
        nesting += 1
        defer { nesting -= 1 }
        guard nesting < Self.maximumNesting else {
            fail("data structure nested deeper than \(Self.maximumNesting) levels (a circular mixin?)", at: element.location)
            return .null
        }
        guard spend(at: element.location) else { return .null }
        let outer = stack
        var stack = stack
        if let type = element.typeName, MSONKind(typeName: type) == nil {
            if stack.contains(type) {
                return emptyValue(kind(of: element, asValue: asValue))
            }
            if namedType(type) == nil, !Self.isTypeVariable(type) {
                // An unknown type (often a misspelt attribute) is an error: rendered as an empty
                // object it would make the mock refuse the documented value.
                fail("base type '\(type)' is not defined in the document", at: element.location)
            }
            stack.append(type)
        }
        let kind = kind(of: element, asValue: asValue)
        let text = valueText(of: element)
        switch kind {
        case .string:
            if let text { return .string(MSONSignature.unescape(text)) }
            return attributes(of: element).contains(.nullable) ? .null : .string("")
        case .number:
            if let text { return number(text, at: element.location) }
            return attributes(of: element).contains(.nullable) ? .null : .integer(0)
        case .boolean:
            if let text { return boolean(text, at: element.location) }
            return attributes(of: element).contains(.nullable) ? .null : .bool(false)
        case .object:
            // drafter shows an object's own properties; its samples only stand in for none.
            if !element.hasElementMembers, let sample = element.samples.first(where: { !$0.members.isEmpty }) {
                return renderObject(members: sample.members, stack: stack)
            }
            if element.value != nil, element.hasElementMembers || element.typeName != nil {
                warn("'object' with value definition. You should use type definition without value eg. '- key (object)'", at: element.location)
            }
            return renderObject(members: expandedMembers(of: element, stack: outer), stack: stack)
        case .array:
            return renderArray(element, outer: outer, stack: stack)
        case .enum:
            return renderEnum(element, outer: outer, stack: stack)
        }
    }

    private func emptyValue(_ kind: MSONKind) -> JSONValue {
        switch kind {
        case .string: .string("")
        case .number: .integer(0)
        case .boolean: .bool(false)
        case .object: .object([:])
        // An enumeration met again inside itself has no member left to show (drafter: null).
        case .enum: .null
        case .array: .array([])
        }
    }

    mutating func number(_ text: String, at location: SourceLocation) -> JSONValue {
        let literal = MSONSignature.unescape(text)
        if let value = try? JSONValue(parsing: literal), value.isNumber { return value }
        if let double = Double(literal), !literal.lowercased().contains("n"), literal.first != "+" {
            return .number(double)
        }
        warn("invalid value format for 'number' type. please check mson specification for valid format", at: location)
        return .integer(0)
    }

    mutating func boolean(_ text: String, at location: SourceLocation) -> JSONValue {
        switch MSONSignature.unescape(text) {
        case "true": return .bool(true)
        case "false": return .bool(false)
        default:
            warn("invalid value for 'boolean' type. allowed values are 'true' or 'false'", at: location)
            return .bool(false)
        }
    }

    private mutating func renderObject(members: [MSONMember], stack: [String]) -> JSONValue {
        var object = JSONObject()
        renderProperties(members, into: &object, stack: stack)
        return .object(object)
    }

    private mutating func renderProperties(_ members: [MSONMember], into object: inout JSONObject, stack: [String]) {
        for member in members {
            switch member {
            case .element(let child):
                var name = child.name ?? ""
                if name.isEmpty, child.nameIsVariable, let type = child.nameType {
                    // `*(Link)*`: the named string type's sample or default names the property;
                    // without one there is no name to show.
                    guard let sample = namedType(type).flatMap({ valueText(of: $0) }) else { continue }
                    name = MSONSignature.unescape(sample)
                }
                guard !name.isEmpty else {
                    warn("no identifier specified", at: child.location)
                    continue
                }
                if child.attributes.contains(.optional), isEmpty(child) { continue }
                object[name] = render(child, stack: stack)
            case .group(let inner):
                renderProperties(inner, into: &object, stack: stack)
            case .oneOf(let options, _):
                if let first = options.first { renderProperties([first], into: &object, stack: stack) }
            case .include(let name, _):
                // Written in a sample (members are expanded before): its properties in place.
                guard let named = namedType(name), !stack.contains(name) else { continue }
                if case .object(let included) = render(named, stack: stack + [name]) {
                    for (key, value) in included { object[key] = value }
                }
            }
        }
    }

    /// Nothing to render: no value, no sample or default, no members.
    private func isEmpty(_ element: MSONElement) -> Bool {
        element.value == nil && element.samples.isEmpty && element.defaults.isEmpty && element.members.isEmpty
    }

    private mutating func renderArray(_ element: MSONElement, outer: [String], stack: [String]) -> JSONValue {
        let nestedTypes = nestedTypes(of: element)
        let itemType = nestedTypes.count == 1 ? nestedTypes.first : nil
        let itemKind = itemType.flatMap { kind(ofType: $0) } ?? .string
        func literalItems(_ text: String) -> [JSONValue] {
            MSONSignature.splitList(text, respectingBrackets: false).map { entry in
                var item = MSONElement(location: element.location)
                item.value = MSONSignature.emphasised(entry) ?? entry
                if itemKind.isPrimitive, let itemType { item.typeName = itemType }
                return renderPrimitive(item, kind: itemKind.isPrimitive ? itemKind : .string)
            }
        }
        if let sample = element.samples.first {
            if !sample.members.isEmpty { return .array(renderItems(sample.members, nestedType: itemType, stack: stack)) }
            if let text = sample.text { return .array(literalItems(text)) }
        }
        // drafter starts an `array[object]` or `array[array]` example with an empty one.
        let leading: [JSONValue] = nestedTypes.compactMap { type in
            switch type.lowercased() {
            case "object": .object([:])
            case "array": .array([])
            default: nil
            }
        }
        if let value = element.rawValue ?? element.value { return .array(leading + literalItems(value)) }
        if let fallback = element.defaults.last {
            if !fallback.members.isEmpty { return .array(renderItems(fallback.members, nestedType: itemType, stack: stack)) }
            if let text = fallback.text { return .array(literalItems(text)) }
        }
        var items = renderItems(expandedMembers(of: element, stack: outer), nestedType: itemType, stack: stack)
        if items.isEmpty {
            // A generic type's own `*T*` is bound where the type is used: nothing to render.
            for type in nestedTypes where MSONKind(typeName: type) == nil && !Self.isTypeVariable(type) {
                if namedType(type) == nil {
                    warn("Undefined named type '\(type)' referenced in type definition", at: element.location)
                } else {
                    var item = MSONElement(location: element.location)
                    item.typeName = type
                    items.append(render(item, asValue: true, stack: stack))
                }
            }
        }
        return .array(leading + items)
    }

    private mutating func renderPrimitive(_ element: MSONElement, kind: MSONKind) -> JSONValue {
        switch kind {
        case .number: number(element.value ?? "0", at: element.location)
        case .boolean: boolean(element.value ?? "false", at: element.location)
        default: .string(MSONSignature.unescape(element.value ?? ""))
        }
    }

    private mutating func renderItems(_ members: [MSONMember], nestedType: String?, stack: [String]) -> [JSONValue] {
        var items: [JSONValue] = []
        for member in members {
            switch member {
            case .element(let child):
                let childKind = kind(of: child.asItem(nestedType: nestedType), asValue: true)
                if childKind == .object, child.literal != nil {
                    warn("array member definition of type 'object' contains value. You should use type definition without value eg. '- (object)'", at: child.location)
                    var item = child
                    item.value = nil
                    item.literal = nil
                    items.append(render(item, asValue: true, stack: stack))
                    continue
                }
                let item = child.asItem(nestedType: nestedType)
                if childKind.isPrimitive, item.value == nil, valueText(of: item) == nil, !attributes(of: item).contains(.fixed) {
                    continue
                }
                items.append(render(item, asValue: true, stack: stack))
            case .group(let inner):
                items.append(contentsOf: renderItems(inner, nestedType: nestedType, stack: stack))
            case .oneOf(let options, _):
                if let first = options.first { items.append(contentsOf: renderItems([first], nestedType: nestedType, stack: stack)) }
            case .include(let name, _):
                // Written in a sample, or an array type known by its samples: its items in place.
                guard let named = namedType(name), !stack.contains(name) else { continue }
                if case .array(let included) = render(named, stack: stack + [name]) { items.append(contentsOf: included) }
            }
        }
        return items
    }

    /// Enum members as elements: nested ones, plus the inline value list when the value isn't
    /// marked as the sample or default.
    private func enumMembers(_ element: MSONElement, stack: [String]) -> [MSONElement] {
        var result: [MSONElement] = []
        guard stack.count < Self.maximumNesting else { return result }
        let nestedType = element.nestedTypes.first
        func collect(_ members: [MSONMember]) {
            // Mixins that include each other twice per level would double at every level.
            for member in members where result.count < Self.maximumEnumMembers {
                switch member {
                case .element(let child): result.append(child.asItem(nestedType: nestedType))
                case .group(let inner): collect(inner)
                case .oneOf(let options, _): collect(options)
                case .include(let name, _):
                    if let named = namedType(name), !stack.contains(name) {
                        result.append(contentsOf: enumMembers(named, stack: stack + [name]))
                    }
                }
            }
        }
        if let type = element.typeName, let named = namedType(type), !stack.contains(type) {
            result = enumMembers(named, stack: stack + [type])
        }
        // Inline values are members whether they are marked `sample` or `default` or not, and
        // so are the values of `Sample` and `Default` sections (as drafter lists them): a value
        // the description shows must be one the enumeration allows.
        func inline(_ value: String) {
            for entry in MSONSignature.splitList(value, respectingBrackets: false) {
                var member = MSONElement(location: element.location)
                let plain = MSONSignature.emphasised(entry) ?? entry
                member.value = plain
                member.literal = plain
                if let nestedType, MSONKind(typeName: nestedType)?.isPrimitive == true { member.typeName = nestedType }
                result.append(member)
            }
        }
        // drafter lists a value marked `sample` or `default` after the members.
        let marked = element.attributes.contains(.default) || element.attributes.contains(.sample)
        if !marked, let value = element.rawValue ?? element.value { inline(value) }
        collect(element.members)
        if marked, let value = element.rawValue ?? element.value { inline(value) }
        for section in element.samples + element.defaults {
            if let text = section.text { inline(text.trimmedNewlines) } else { collect(section.members) }
        }
        return result
    }

    private mutating func renderEnum(_ element: MSONElement, outer: [String], stack: [String]) -> JSONValue {
        let memberKind = element.nestedTypes.first.flatMap { kind(ofType: $0) } ?? .string
        func typed(_ text: String) -> JSONValue {
            var item = MSONElement(location: element.location)
            item.value = text
            return renderPrimitive(item, kind: memberKind.isPrimitive ? memberKind : .string)
        }
        let inline = (element.rawValue ?? element.value).map { value in
            MSONSignature.splitList(value, respectingBrackets: false).first ?? value
        }
        if let inline, element.attributes.contains(.default) || element.attributes.contains(.sample) {
            return typed(inline)
        }
        for section in element.samples + element.defaults.reversed() {
            if let text = section.text { return typed(text) }
            if case .element(let child)? = section.members.first { return typed(child.asItem(nestedType: nil).value ?? "") }
        }
        if let inline { return typed(MSONSignature.emphasised(inline) ?? inline) }
        guard let first = enumMembers(element, stack: outer).first else { return .null }
        if first.typeName == nil, !first.hasElementMembers { return typed(first.value ?? "") }
        return render(first, asValue: true, stack: stack)
    }

    // MARK: JSON Schema

    /// A JSON Schema (draft 4) for an element, with `$schema` at the root.
    mutating func schemaDocument(for element: MSONElement, stack: [String] = []) -> JSONValue {
        var root: JSONObject = ["$schema": .string(Self.schemaDialect)]
        for (key, value) in schema(element, fixed: false, stack: stack) { root[key] = value }
        return .object(root)
    }

    /// The element's schema; with `describesMembers`, its description as the schema's
    /// `description` (drafter's schemas, which the contract keeps, have none).
    mutating func schema(_ element: MSONElement, fixed inherited: Bool, asValue: Bool = false, stack: [String]) -> JSONObject {
        var result = undescribedSchema(element, fixed: inherited, asValue: asValue, stack: stack)
        if describesMembers, !element.description.isEmpty, result["description"] == nil {
            result["description"] = .string(element.description)
        }
        return result
    }

    private mutating func undescribedSchema(_ element: MSONElement, fixed inherited: Bool, asValue: Bool, stack: [String]) -> JSONObject {
        nesting += 1
        defer { nesting -= 1 }
        guard nesting < Self.maximumNesting else {
            fail("data structure nested deeper than \(Self.maximumNesting) levels (a circular mixin?)", at: element.location)
            return [:]
        }
        guard spend(at: element.location) else { return [:] }
        let outer = stack
        var stack = stack
        let kind = kind(of: element, asValue: asValue)
        if let type = element.typeName, MSONKind(typeName: type) == nil {
            if stack.contains(type) { return ["type": .string(kind == .enum ? "object" : kind.rawValue)] }
            stack.append(type)
        }
        if let type = element.typeName, Self.isTypeVariable(type), !element.hasElementMembers {
            return [:]
        }
        let attributes = attributes(of: element)
        let fixed = inherited || attributes.contains(.fixed)
        let fixedType = attributes.contains(.fixedType)
        if attributes.contains(.nullable), kind != .enum {
            return ["anyOf": [["type": "null"], ["type": .string(kind.rawValue)]]]
        }
        switch kind {
        case .string, .number, .boolean:
            if fixed, !element.valueIsSample, element.value != nil {
                return ["enum": [renderPrimitive(element, kind: kind)]]
            }
            return ["type": .string(kind.rawValue)]
        case .object:
            return objectSchema(expandedMembers(of: element, stack: outer), fixed: fixed, fixedType: fixedType, stack: stack)
        case .array:
            return arraySchema(element, fixed: fixed, fixedType: fixedType, outer: outer, stack: stack)
        case .enum:
            return enumSchema(element, nullable: attributes.contains(.nullable), outer: outer, stack: stack)
        }
    }

    private mutating func objectSchema(_ members: [MSONMember], fixed: Bool, fixedType: Bool, stack: [String]) -> JSONObject {
        var properties = JSONObject()
        var patterns = JSONObject()
        var required: [JSONValue] = []
        var allOf: [JSONValue] = []
        collectProperties(members, fixed: fixed, fixedType: fixedType, stack: stack,
                          properties: &properties, patterns: &patterns, required: &required, allOf: &allOf)
        var schema: JSONObject = ["type": "object"]
        if !properties.isEmpty { schema["properties"] = .object(properties) }
        if !patterns.isEmpty { schema["patternProperties"] = .object(patterns) }
        if !required.isEmpty { schema["required"] = .array(required) }
        if fixed || fixedType { schema["additionalProperties"] = false }
        if !allOf.isEmpty { schema["allOf"] = .array(allOf) }
        return schema
    }

    private mutating func collectProperties(
        _ members: [MSONMember], fixed: Bool, fixedType: Bool, stack: [String],
        properties: inout JSONObject, patterns: inout JSONObject, required: inout [JSONValue], allOf: inout [JSONValue]
    ) {
        for member in members {
            switch member {
            case .element(let child):
                if child.nameIsVariable {
                    // Any name: the sample name is no key of its own.
                    patterns["(?:)"] = .object(self.schema(child, fixed: fixed, stack: stack))
                    continue
                }
                guard let name = child.name, !name.isEmpty else { continue }
                let schema = JSONValue.object(self.schema(child, fixed: fixed, stack: stack))
                properties[name] = schema
                let optional = child.attributes.contains(.optional)
                // The last of several members of one name decides whether it is required.
                required.removeAll { $0 == .string(name) }
                // `required, optional` together: drafter warns and optional wins.
                if !optional, child.attributes.contains(.required) || fixed || fixedType {
                    required.append(.string(name))
                }
            case .group(let inner):
                collectProperties(inner, fixed: fixed, fixedType: fixedType, stack: stack,
                                  properties: &properties, patterns: &patterns, required: &required, allOf: &allOf)
            case .oneOf(let options, _):
                var alternatives: [JSONValue] = []
                for option in options {
                    var optionProperties = JSONObject()
                    var optionPatterns = JSONObject()
                    var optionRequired: [JSONValue] = []
                    var optionAllOf: [JSONValue] = []
                    collectProperties([option], fixed: fixed, fixedType: fixedType, stack: stack,
                                      properties: &optionProperties, patterns: &optionPatterns,
                                      required: &optionRequired, allOf: &optionAllOf)
                    var alternative = JSONObject()
                    if !optionProperties.isEmpty { alternative["properties"] = .object(optionProperties) }
                    if !optionPatterns.isEmpty { alternative["patternProperties"] = .object(optionPatterns) }
                    if !optionRequired.isEmpty { alternative["required"] = .array(optionRequired) }
                    if !optionAllOf.isEmpty { alternative["allOf"] = .array(optionAllOf) }
                    alternatives.append(.object(alternative))
                }
                // drafter writes `oneOf`, which no object with the properties of one option
                // satisfies (options without `required` all match): `anyOf` lets the
                // description's own examples through. An empty One Of allows anything (an
                // empty `anyOf` is no valid schema).
                if !alternatives.isEmpty { allOf.append(["anyOf": .array(alternatives)]) }
            case .include:
                continue
            }
        }
    }

    private mutating func arraySchema(_ element: MSONElement, fixed: Bool, fixedType: Bool, outer: [String], stack: [String]) -> JSONObject {
        guard fixed || fixedType else { return ["type": "array"] }
        var itemElements: [MSONElement] = []
        func collect(_ members: [MSONMember]) {
            for member in members {
                switch member {
                case .element(let child):
                    itemElements.append(child.asItem(nestedTypes: element.nestedTypes))
                case .group(let inner): collect(inner)
                case .oneOf(let options, _): collect(options)
                case .include: continue
                }
            }
        }
        collect(expandedMembers(of: element, stack: outer))
        if itemElements.isEmpty, let value = element.rawValue ?? element.value {
            for entry in MSONSignature.splitList(value, respectingBrackets: false) {
                var item = MSONElement(location: element.location)
                item.value = MSONSignature.emphasised(entry) ?? entry
                item.valueIsSample = MSONSignature.emphasised(entry) != nil
                if let type = element.nestedTypes.first, MSONKind(typeName: type)?.isPrimitive == true { item.typeName = type }
                itemElements.append(item)
            }
        }
        if fixed {
            var items: [JSONValue] = element.nestedTypes.isEmpty || itemElements.isEmpty ? [] : element.nestedTypes.map { typeSchema($0, stack: stack) }
            for item in itemElements { items.append(.object(schema(item, fixed: true, asValue: true, stack: stack))) }
            return ["type": "array", "minItems": .integer(items.count), "items": .array(items), "additionalItems": false]
        }
        // `fixed-type`: items are of the declared types, else like the items listed.
        if !element.nestedTypes.isEmpty || itemElements.isEmpty {
            let types = element.nestedTypes.map { typeSchema($0, stack: stack) }
            if types.count == 1, let only = types.first { return ["type": "array", "items": only] }
            if types.isEmpty { return ["type": "array"] }
            return ["type": "array", "items": ["anyOf": .array(types)]]
        }
        if itemElements.count == 1, let only = itemElements.first {
            return ["type": "array", "items": .object(schema(only, fixed: false, asValue: true, stack: stack))]
        }
        var alternatives: [JSONValue] = []
        for item in itemElements {
            let schema = JSONValue.object(self.schema(item, fixed: false, asValue: true, stack: stack))
            if !alternatives.contains(where: { $0.isJSONEqual(to: schema) }) { alternatives.append(schema) }
        }
        return ["type": "array", "items": ["anyOf": .array(alternatives)]]
    }

    private mutating func typeSchema(_ type: String, stack: [String]) -> JSONValue {
        var item = MSONElement(location: SourceLocation(line: 0, column: 0))
        item.typeName = type
        return .object(schema(item, fixed: false, asValue: true, stack: stack))
    }

    private mutating func enumSchema(_ element: MSONElement, nullable: Bool, outer: [String], stack: [String]) -> JSONObject {
        let memberKind = element.nestedTypes.first.flatMap { kind(ofType: $0) } ?? .string
        var values: [JSONValue] = []
        var complex: [JSONValue] = []
        for member in enumMembers(element, stack: outer) {
            let kind = member.typeName == nil && !member.hasElementMembers ? memberKind : self.kind(of: member, asValue: true)
            if kind.isPrimitive, member.valueIsSample {
                // `- *5* (number)`: a sample of a type, not a value of its own.
                let type = JSONValue.object(["type": .string(kind.rawValue)])
                if !complex.contains(where: { $0.isJSONEqual(to: type) }) { complex.append(type) }
                continue
            }
            switch kind {
            case .string, .number, .boolean:
                values.append(renderPrimitive(member, kind: kind))
            case .enum:
                // Through `schema` so a named enum inside itself stops there.
                let inner = schema(member, fixed: false, asValue: true, stack: stack)
                if let nested = inner["enum"]?.arrayValue { values.append(contentsOf: nested) } else if let nested = inner["anyOf"]?.arrayValue {
                    for entry in nested { if let list = entry["enum"]?.arrayValue { values.append(contentsOf: list) } }
                }
            case .object, .array:
                complex.append(.object(schema(member, fixed: false, asValue: true, stack: stack)))
            }
        }
        var unique: [JSONValue] = []
        for value in values where !unique.contains(where: { $0.isJSONEqual(to: value) && $0.typeName == value.typeName }) {
            unique.append(value)
        }
        values = unique
        if nullable { values.insert(.null, at: 0) }
        if let nested = element.nestedTypes.first {
            return ["anyOf": [typeSchema(nested, stack: stack), ["enum": .array(values)]]]
        }
        if complex.isEmpty { return ["enum": .array(values)] }
        if !values.isEmpty { complex.append(["enum": .array(values)]) }
        return ["anyOf": .array(complex)]
    }
}

extension MSONElement {
    /// This element read as an array item or enum member: its whole literal is the value
    /// (`*value*` marks a sample), typed by the container's nested type when it has none.
    func asItem(nestedType: String?) -> MSONElement {
        asItem(nestedTypes: nestedType.map { [$0] } ?? [])
    }

    /// Items take the container's nested type only when it names exactly one.
    func asItem(nestedTypes: [String]) -> MSONElement {
        let nestedType = nestedTypes.count == 1 ? nestedTypes.first : nil
        var item = self
        if item.value == nil || item.name != nil, let literal = item.literal {
            if let inner = MSONSignature.emphasised(literal) {
                item.value = inner
                item.valueIsSample = true
            } else {
                item.value = literal
                item.valueIsSample = false
            }
        }
        item.name = nil
        item.nameIsVariable = false
        if item.typeName == nil, let nestedType, MSONKind(typeName: nestedType)?.isPrimitive == true {
            item.typeName = nestedType
        }
        return item
    }

    /// Has nested properties or items (not just sections).
    var hasElementMembers: Bool {
        members.contains { member in
            switch member {
            case .element, .oneOf, .include: true
            case .group(let inner): !inner.isEmpty
            }
        }
    }
}

extension MSONMember {
    var elementName: String? {
        if case .element(let element) = self { return element.name }
        return nil
    }
}

/// `Name(Argument, …)`: a use of a generic named type.
struct MSONGenericReference {
    var base: String
    var arguments: [String]

    init?(_ type: String) {
        guard type.hasSuffix(")"), let open = type.firstIndex(of: "(") else { return nil }
        base = type[..<open].trimmedBlanks
        let inside = type[type.index(after: open)..<type.index(before: type.endIndex)]
        arguments = MSONSignature.splitList(String(inside), respectingBrackets: true).map { MSONSignature.unescape($0) }
        guard !base.isEmpty, !arguments.isEmpty else { return nil }
    }
}

extension MSONElement {
    /// The variable type names (`*T*`) of a generic named type's declaration, in order.
    /// The variable type names (`*T*`) of a generic named type, in the order they first appear:
    /// its declaration, then its members'.
    var typeVariables: [String] {
        var variables: [String] = []
        func note(_ element: MSONElement, depth: Int) {
            guard depth < MSONRenderer.maximumNesting else { return }
            for type in [element.typeName].compactMap({ $0 }) + element.nestedTypes where MSONSignature.emphasised(type) != nil && !variables.contains(type) {
                variables.append(type)
            }
            func visit(_ members: [MSONMember]) {
                for member in members {
                    switch member {
                    case .element(let child): note(child, depth: depth + 1)
                    case .include(let name, _): if MSONSignature.emphasised(name) != nil, !variables.contains(name) { variables.append(name) }
                    case .oneOf(let options, _): visit(options)
                    case .group(let inner): visit(inner)
                    }
                }
            }
            visit(element.members)
        }
        note(self, depth: 0)
        return variables
    }

    /// This element with variable type names replaced, in it and every nested member.
    func binding(_ bindings: [String: String]) -> MSONElement {
        func bind(_ type: String) -> String { bindings[type] ?? type }
        func bindMembers(_ members: [MSONMember]) -> [MSONMember] {
            members.map { member in
                switch member {
                case .element(let child): .element(child.binding(bindings))
                case .include(let name, let location): .include(bind(name), location)
                case .oneOf(let options, let location): .oneOf(bindMembers(options), location)
                case .group(let inner): .group(bindMembers(inner))
                }
            }
        }
        var bound = self
        bound.typeName = typeName.map(bind)
        bound.nestedTypes = nestedTypes.map(bind)
        bound.members = bindMembers(members)
        bound.samples = samples.map { MSONValueSection(text: $0.text, members: bindMembers($0.members), location: $0.location) }
        bound.defaults = defaults.map { MSONValueSection(text: $0.text, members: bindMembers($0.members), location: $0.location) }
        return bound
    }
}
