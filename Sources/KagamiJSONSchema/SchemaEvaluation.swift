// One validation run over a SchemaProgram: walks instance and schema together, tracks the
// dynamic scope and (when unevaluated* needs them) which items and properties were evaluated.
import KagamiJSON

/// What a successful subschema evaluated at its instance location.
/// The sets stay nil until used, so that schemas without unevaluated* pay nothing here.
struct EvaluatedParts {
    var allItems = false
    var itemPrefix = 0
    var itemIndexes: Set<Int>?
    var allProperties = false
    var properties: Set<String>?

    mutating func merge(_ other: EvaluatedParts) {
        allItems = allItems || other.allItems
        itemPrefix = max(itemPrefix, other.itemPrefix)
        if let indexes = other.itemIndexes { itemIndexes = itemIndexes?.union(indexes) ?? indexes }
        allProperties = allProperties || other.allProperties
        if let names = other.properties { properties = properties?.union(names) ?? names }
    }

    mutating func insertItem(_ index: Int) {
        if itemIndexes == nil { itemIndexes = [index] } else { itemIndexes?.insert(index) }
    }

    mutating func insertProperty(_ name: String) {
        if properties == nil { properties = [name] } else { properties?.insert(name) }
    }

    func includesItem(_ index: Int) -> Bool {
        allItems || index < itemPrefix || itemIndexes?.contains(index) == true
    }

    func includesProperty(_ name: String) -> Bool {
        allProperties || properties?.contains(name) == true
    }
}

/// A struct, so that its paths and scopes need no dynamic exclusivity checks.
struct SchemaEvaluation {
    private enum InstanceToken {
        case key(String)
        case index(Int)
    }

    /// Nested subschema evaluations allowed: a self-referencing schema (`items: {$ref: "#"}`,
    /// two evaluations per level) follows a document about 500 levels deep, and a debug build
    /// stays within about 4 MB of stack.
    static let maximumDepth = 1000
    /// Below this depth the stack is not looked at; beyond it, evaluation stops while this
    /// much of the thread's stack is left (threads other than main may have 512 KB in all).
    static let stackCheckDepth = 48
    static let stackReserve: UInt = 96 * 1024

    let program: SchemaProgram
    let collectsErrors: Bool
    private(set) var errors: [JSONSchemaValidationError] = []
    private var instancePath: [InstanceToken] = []
    private var instanceDepth = 0
    private var keywordPath: [String] = []
    private var dynamicScope: [Int] = []
    /// `$ref` targets entered at each instance depth, to stop cycles that consume nothing.
    private var activeReferences: [(node: Int, instanceDepth: Int)] = []
    private var referenceDepth = 0
    private var depth = 0
    private var currentNode = 0
    private let tracks: Bool
    /// The lowest stack address evaluation may reach; found when evaluation first gets deep.
    private var stackFloor: UInt?

    init(program: SchemaProgram, collectsErrors: Bool) {
        self.program = program
        self.collectsErrors = collectsErrors
        tracks = program.tracksAnnotations
    }

    mutating func run(_ instance: JSONValue) -> Bool {
        evaluate(program.root, instance, collect: collectsErrors).valid
    }

    // MARK: Nodes

    private mutating func evaluate(_ index: Int, _ instance: JSONValue, collect: Bool) -> (valid: Bool, parts: EvaluatedParts) {
        let node = program.nodes[index]
        let previousNode = currentNode
        currentNode = index
        defer { currentNode = previousNode }
        switch node.body {
        case .alwaysValid:
            return (true, EvaluatedParts())
        case .alwaysInvalid:
            if collect { report("", "no value is allowed here (the schema is false)", keywordOnly: false) }
            return (false, EvaluatedParts())
        case .keywords:
            guard depth < Self.maximumDepth else {
                if collect { report("", "schema evaluation nested deeper than \(Self.maximumDepth) levels", keywordOnly: false) }
                return (false, EvaluatedParts())
            }
            if depth >= Self.stackCheckDepth, !stackLeft() {
                let levels = depth
                if collect { report("", "schema evaluation nested too deep (\(levels) levels) for this thread's stack", keywordOnly: false) }
                return (false, EvaluatedParts())
            }
            depth += 1
            let entersResource = dynamicScope.last != node.resource
            if entersResource { dynamicScope.append(node.resource) }
            defer {
                depth -= 1
                if entersResource { dynamicScope.removeLast() }
            }
            var parts = EvaluatedParts()
            var valid = every(node.general, collect: collect) { $0.apply($1, instance, collect: collect, parts: &parts) }
            // The instance's payload is taken out once for all keywords of its type.
            if valid || collect {
                switch instance {
                case .object(let members):
                    valid = every(node.object, collect: collect) { $0.applyObject($1, members, collect: collect, parts: &parts) } && valid
                case .array(let items):
                    valid = every(node.array, collect: collect) { $0.applyArray($1, items, collect: collect, parts: &parts) } && valid
                case .string(let text):
                    valid = every(node.string, collect: collect) { $0.applyString($1, text, collect: collect) } && valid
                case .integer, .number:
                    valid = every(node.number, collect: collect) { $0.applyNumber($1, instance, collect: collect) } && valid
                case .null, .bool:
                    break
                }
            }
            return (valid, valid ? parts : EvaluatedParts())
        }
    }

    private mutating func stackLeft() -> Bool {
        if stackFloor == nil {
            stackFloor = ThreadStack.lowerBound().map { $0 + Self.stackReserve } ?? 0
        }
        return ThreadStack.currentAddress() > stackFloor ?? 0
    }

    /// Evaluates a subschema, with the keyword path (and instance path) extended for it.
    private mutating func descend(
        _ node: Int, _ instance: JSONValue, _ keyword: String, _ subkey: String? = nil,
        at token: InstanceToken? = nil, collect: Bool
    ) -> (valid: Bool, parts: EvaluatedParts) {
        // Paths are only kept while errors are collected; the depth always counts.
        if collect {
            keywordPath.append(keyword)
            if let subkey { keywordPath.append(subkey) }
            if let token { instancePath.append(token) }
        }
        if token != nil { instanceDepth += 1 }
        defer {
            if collect {
                keywordPath.removeLast()
                if subkey != nil { keywordPath.removeLast() }
                if token != nil { instancePath.removeLast() }
            }
            if token != nil { instanceDepth -= 1 }
        }
        return evaluate(node, instance, collect: collect)
    }

    private mutating func follow(_ target: Int, _ instance: JSONValue, _ keyword: String, collect: Bool, parts: inout EvaluatedParts) -> Bool {
        for entry in activeReferences.reversed() {
            guard entry.instanceDepth == instanceDepth else { break }
            if entry.node == target {
                if collect {
                    let location = display(program.nodes[target].location)
                    report(keyword, "the reference leads back to itself without consuming any of the instance (\(location))")
                }
                return false
            }
        }
        activeReferences.append((target, instanceDepth))
        referenceDepth += 1
        defer {
            activeReferences.removeLast()
            referenceDepth -= 1
        }
        let outcome = descend(target, instance, keyword, collect: collect)
        if outcome.valid { parts.merge(outcome.parts) }
        return outcome.valid
    }

    // MARK: Keywords

    private mutating func apply(_ keyword: CompiledKeyword, _ instance: JSONValue, collect: Bool, parts: inout EvaluatedParts) -> Bool {
        switch keyword.check {
        case .ref(let target):
            return follow(target, instance, keyword.name, collect: collect, parts: &parts)
        case .dynamicRef(let target, let anchor):
            var resolved = target
            if let anchor {
                for resource in dynamicScope {
                    if let candidate = program.resources[resource].dynamicAnchors[anchor] {
                        resolved = candidate
                        break
                    }
                }
            }
            return follow(resolved, instance, keyword.name, collect: collect, parts: &parts)
        case .allOf(let schemas):
            return every(schemas.indices, collect: collect) { evaluation, n in
                let outcome = evaluation.descend(schemas[n], instance, keyword.name, String(n), collect: collect)
                if outcome.valid { parts.merge(outcome.parts) }
                return outcome.valid
            }
        case .anyOf(let schemas):
            var matched = false
            for schema in schemas {
                let outcome = evaluate(schema, instance, collect: false)
                if outcome.valid {
                    matched = true
                    parts.merge(outcome.parts)
                    if !tracks { break }
                }
            }
            if !matched, collect {
                let causes = alternativeErrors(schemas, instance, keyword.name)
                report(keyword.name, "value does not match any of the \(schemas.count) schemas in anyOf", causes: causes)
            }
            return matched
        case .oneOf(let schemas):
            var matches: [Int] = []
            var matchedParts = EvaluatedParts()
            for (n, schema) in schemas.enumerated() {
                let outcome = evaluate(schema, instance, collect: false)
                if outcome.valid {
                    matches.append(n)
                    matchedParts = outcome.parts
                    if matches.count > 1 && !collect { return false }
                }
            }
            if matches.count == 1 {
                parts.merge(matchedParts)
                return true
            }
            if collect {
                if matches.isEmpty {
                    let causes = alternativeErrors(schemas, instance, keyword.name)
                    report(keyword.name, "value does not match any of the \(schemas.count) schemas in oneOf", causes: causes)
                } else {
                    report(keyword.name, "value matches \(matches.count) schemas in oneOf (at \(matches.map(String.init).joined(separator: ", "))), expected exactly one")
                }
            }
            return false
        case .not(let schema):
            if evaluate(schema, instance, collect: false).valid {
                if collect { report(keyword.name, "value must not match the schema in not") }
                return false
            }
            return true
        case .conditional(let condition, let then, let otherwise):
            let test = evaluate(condition, instance, collect: false)
            if test.valid { parts.merge(test.parts) }
            guard let branch = test.valid ? then : otherwise else { return true }
            let outcome = descend(branch, instance, test.valid ? "then" : "else", collect: collect)
            if outcome.valid { parts.merge(outcome.parts) }
            return outcome.valid
        case .type(let types):
            if types.contains(where: { $0.matches(instance) }) { return true }
            if collect {
                let expected = types.map(\.rawValue).joined(separator: " or ")
                report(keyword.name, "expected \(expected), found \(Self.instanceTypeName(instance))")
            }
            return false
        case .enumeration(let options):
            if options.contains(where: { $0.isJSONEqual(to: instance) }) { return true }
            if collect {
                report(keyword.name, "value \(Self.abbreviated(instance)) is not one of \(Self.abbreviated(.array(options)))")
            }
            return false
        case .constant(let expected):
            if expected.isJSONEqual(to: instance) { return true }
            if collect { report(keyword.name, "value must be \(Self.abbreviated(expected)), found \(Self.abbreviated(instance))") }
            return false
        default:
            // The node sorted every other keyword under the instance type it constrains.
            return true
        }
    }

    private mutating func applyNumber(_ keyword: CompiledKeyword, _ instance: JSONValue, collect: Bool) -> Bool {
        guard instance.doubleValue != nil else { return true }
        switch keyword.check {
        case .multipleOf(let divisor):
            if divisor.divides(instance) { return true }
            if collect { report(keyword.name, "\(instance) is not a multiple of \(Self.formatted(divisor.value))") }
            return false
        case .minimum(let limit, let exclusive):
            let order = limit.order(of: instance) ?? 0
            if exclusive ? order > 0 : order >= 0 { return true }
            if collect {
                report(keyword.name, "\(instance) is \(exclusive ? "not greater than" : "less than") the \(exclusive ? "exclusive " : "")minimum \(Self.formatted(limit))")
            }
            return false
        case .maximum(let limit, let exclusive):
            let order = limit.order(of: instance) ?? 0
            if exclusive ? order < 0 : order <= 0 { return true }
            if collect {
                report(keyword.name, "\(instance) is \(exclusive ? "not less than" : "greater than") the \(exclusive ? "exclusive " : "")maximum \(Self.formatted(limit))")
            }
            return false
        case .integerFormat(let name, let range):
            let fits: Bool
            switch instance {
            case .integer(let value): fits = range.contains(Int64(value))
            case .number(let value):
                // A whole number parsed as a double lies beyond `Int` (as `NumericLimit` reads
                // it): 2^63 and -2^63 - 1 round to 64-bit bounds, yet are outside them.
                fits = value.rounded() == value && abs(value) < 9_223_372_036_854_775_808.0
                    && value >= Double(range.lowerBound) && value <= Double(range.upperBound)
            default: fits = true
            }
            if fits { return true }
            if collect { report(keyword.name, "\(instance) is not a valid \(name)") }
            return false
        case .floatFormat:
            let magnitude = instance.doubleValue.map(abs) ?? 0
            if magnitude <= Double(Float.greatestFiniteMagnitude) { return true }
            if collect { report(keyword.name, "\(instance) is not a valid float (beyond single precision)") }
            return false
        default:
            return true  // not a keyword for this type (sorted at compile time)
        }
    }

    private mutating func applyString(_ keyword: CompiledKeyword, _ text: String, collect: Bool) -> Bool {
        switch keyword.check {
        case .minLength(let minimum):
            // Lengths count Unicode code points, not UTF-16 units or grapheme clusters.
            let length = text.unicodeScalars.count
            if length >= minimum { return true }
            if collect { report(keyword.name, "string has \(length) character\(length == 1 ? "" : "s"), fewer than the minimum \(minimum)") }
            return false
        case .maxLength(let maximum):
            let length = text.unicodeScalars.count
            if length <= maximum { return true }
            if collect { report(keyword.name, "string has \(length) characters, more than the maximum \(maximum)") }
            return false
        case .pattern(let regex):
            switch regex.test(text) {
            case .matched:
                return true
            case .unmatched:
                if collect { report(keyword.name, "string \(Self.abbreviated(.string(text))) does not match the pattern \(Self.abbreviated(.string(regex.source)))") }
            case .timedOut:
                if collect { report(keyword.name, "the pattern \(Self.abbreviated(.string(regex.source))) ran longer than \(ECMARegex.timeLimit) on this string; it counts as not matching") }
            }
            return false
        case .format(let format, let draft):
            if format.accepts(text, draft: draft) { return true }
            if collect { report(keyword.name, "\(Self.abbreviated(.string(text))) is not a valid \(format.rawValue)") }
            return false
        default:
            return true  // not a keyword for this type (sorted at compile time)
        }
    }

    private mutating func applyArray(_ keyword: CompiledKeyword, _ items: [JSONValue], collect: Bool, parts: inout EvaluatedParts) -> Bool {
        switch keyword.check {
        case .minItems(let minimum):
            if items.count >= minimum { return true }
            if collect { report(keyword.name, "array has \(items.count) item\(items.count == 1 ? "" : "s"), fewer than the minimum \(minimum)") }
            return false
        case .maxItems(let maximum):
            if items.count <= maximum { return true }
            if collect { report(keyword.name, "array has \(items.count) items, more than the maximum \(maximum)") }
            return false
        case .uniqueItems:
            guard let (first, second) = firstDuplicate(items) else { return true }
            if collect { report(keyword.name, "items at \(first) and \(second) are equal; items must be unique") }
            return false
        case .prefixItems(let schemas):
            let valid = every(0..<min(schemas.count, items.count), collect: collect) { evaluation, n in
                evaluation.descend(schemas[n], items[n], keyword.name, String(n), at: .index(n), collect: collect).valid
            }
            if tracks { parts.itemPrefix = max(parts.itemPrefix, min(schemas.count, items.count)) }
            return valid
        case .items(let schema, let start):
            let valid = every(min(start, items.count)..<items.count, collect: collect) { evaluation, n in
                evaluation.descend(schema, items[n], keyword.name, at: .index(n), collect: collect).valid
            }
            if tracks { parts.allItems = true }
            return valid
        case .contains(let schema, let minimum, let maximum):
            var matched = 0
            for (n, item) in items.enumerated() {
                instanceDepth += 1
                let outcome = evaluate(schema, item, collect: false)
                instanceDepth -= 1
                if outcome.valid {
                    matched += 1
                    if tracks { parts.insertItem(n) }
                }
            }
            if matched < minimum {
                if collect { report(keyword.name, "array has \(matched) item\(matched == 1 ? "" : "s") matching contains, expected at least \(minimum)") }
                return false
            }
            if let maximum, matched > maximum {
                if collect { report(keyword.name, "array has \(matched) items matching contains, expected at most \(maximum)") }
                return false
            }
            return true
        case .unevaluatedItems(let schema):
            let valid = every(items.indices, collect: collect) { evaluation, n in
                parts.includesItem(n) || evaluation.descend(schema, items[n], keyword.name, at: .index(n), collect: collect).valid
            }
            parts.allItems = true
            return valid
        default:
            return true  // not a keyword for this type (sorted at compile time)
        }
    }

    private mutating func applyObject(_ keyword: CompiledKeyword, _ members: JSONObject, collect: Bool, parts: inout EvaluatedParts) -> Bool {
        switch keyword.check {
        case .minProperties(let minimum):
            if members.count >= minimum { return true }
            if collect { report(keyword.name, "object has \(members.count) propert\(members.count == 1 ? "y" : "ies"), fewer than the minimum \(minimum)") }
            return false
        case .maxProperties(let maximum):
            if members.count <= maximum { return true }
            if collect { report(keyword.name, "object has \(members.count) properties, more than the maximum \(maximum)") }
            return false
        case .required(let names):
            var valid = true
            for name in names where members[name] == nil {
                valid = false
                guard collect else { return false }
                report(keyword.name, "missing required property \(Self.quoted(name))")
            }
            return valid
        case .dependentRequired(let dependencies):
            var valid = true
            for (property, required) in dependencies where members[property] != nil {
                for name in required where members[name] == nil {
                    valid = false
                    guard collect else { return false }
                    report(keyword.name, "property \(Self.quoted(name)) is required when \(Self.quoted(property)) is present")
                }
            }
            return valid
        case .dependentSchemas(let dependencies):
            return every(dependencies, collect: collect) { evaluation, dependency in
                guard members[dependency.property] != nil else { return true }
                let outcome = evaluation.descend(dependency.schema, .object(members), keyword.name, dependency.property, collect: collect)
                if outcome.valid { parts.merge(outcome.parts) }
                return outcome.valid
            }
        case .properties(let ordered, let table):
            // Walk the smaller side: schemas often declare many optional properties.
            if ordered.count <= members.count {
                return every(ordered, collect: collect) { evaluation, declared in
                    guard let value = members[declared.name] else { return true }
                    return evaluation.checkProperty(declared.schema, value, declared.name, keyword.name, collect: collect, parts: &parts)
                }
            }
            return every(members, collect: collect) { evaluation, member in
                guard let schema = table[member.key] else { return true }
                return evaluation.checkProperty(schema, member.value, member.key, keyword.name, collect: collect, parts: &parts)
            }
        case .patternProperties(let entries):
            return every(members, collect: collect) { evaluation, member in
                evaluation.every(entries, collect: collect) { evaluation, entry in
                    !entry.regex.matches(member.key)
                        || evaluation.checkProperty(entry.schema, member.value, member.key, keyword.name, subkey: entry.regex.source, collect: collect, parts: &parts)
                }
            }
        case .additionalProperties(let schema, let declared, let patterns):
            return every(members, collect: collect) { evaluation, member in
                guard !declared.contains(member.key), !patterns.contains(where: { $0.matches(member.key) }) else { return true }
                if evaluation.tracks { parts.insertProperty(member.key) }
                return evaluation.checkAdditional(schema, member.value, member.key, keyword.name, collect: collect)
            }
        case .propertyNames(let schema):
            var valid = true
            for name in members.keys where !evaluateName(schema, name) {
                valid = false
                guard collect else { return false }
                report(keyword.name, "property name \(Self.quoted(name)) does not match the propertyNames schema")
            }
            return valid
        case .unevaluatedProperties(let schema):
            let valid = every(members, collect: collect) { evaluation, member in
                parts.includesProperty(member.key)
                    || evaluation.checkAdditional(schema, member.value, member.key, keyword.name, collect: collect)
            }
            parts.allProperties = true
            return valid
        default:
            return true  // not a keyword for this type (sorted at compile time)
        }
    }

    /// Runs `check` on each element; the first failure ends the loop unless errors are collected.
    private mutating func every<S: Sequence>(
        _ elements: S, collect: Bool, _ check: (inout SchemaEvaluation, S.Element) -> Bool
    ) -> Bool {
        var valid = true
        for element in elements where !check(&self, element) {
            valid = false
            if !collect { return false }
        }
        return valid
    }

    /// A property name is evaluated as an instance one level below the object.
    private mutating func evaluateName(_ schema: Int, _ name: String) -> Bool {
        instanceDepth += 1
        defer { instanceDepth -= 1 }
        return evaluate(schema, .string(name), collect: false).valid
    }

    private mutating func checkProperty(
        _ schema: Int, _ value: JSONValue, _ name: String, _ keyword: String, subkey: String? = nil,
        collect: Bool, parts: inout EvaluatedParts
    ) -> Bool {
        if tracks { parts.insertProperty(name) }
        return descend(schema, value, keyword, subkey ?? name, at: .key(name), collect: collect).valid
    }

    /// additionalProperties / unevaluatedProperties: a `false` schema gets a message naming
    /// the property rather than "no value is allowed here".
    private mutating func checkAdditional(_ schema: Int, _ value: JSONValue, _ name: String, _ keyword: String, collect: Bool) -> Bool {
        if case .alwaysInvalid = program.nodes[schema].body {
            if collect {
                instancePath.append(.key(name))
                report(keyword, "property \(Self.quoted(name)) is not allowed (\(keyword) is false)")
                instancePath.removeLast()
            }
            return false
        }
        return descend(schema, value, keyword, at: .key(name), collect: collect).valid
    }

    private func firstDuplicate(_ items: [JSONValue]) -> (Int, Int)? {
        var seen: [JSONEqualityKey: Int] = [:]
        for (n, item) in items.enumerated() {
            if let earlier = seen.updateValue(n, forKey: JSONEqualityKey(item)) {
                return (earlier, n)
            }
        }
        return nil
    }

    // MARK: Reporting

    /// The message is an autoclosure so that its formatting stays out of the (recursive)
    /// callers' stack frames.
    /// Why each alternative of a failed anyOf/oneOf failed, for the error's `causes`.
    private mutating func alternativeErrors(_ schemas: [Int], _ instance: JSONValue, _ keyword: String) -> [JSONSchemaValidationError] {
        let outer = errors
        errors = []
        for (n, schema) in schemas.enumerated() {
            _ = descend(schema, instance, keyword, String(n), collect: true)
        }
        let causes = errors
        errors = outer
        return causes
    }

    private mutating func report(
        _ keyword: String, _ message: @autoclosure () -> String, keywordOnly: Bool = true,
        causes: [JSONSchemaValidationError] = []
    ) {
        var tokens = keywordPath
        if keywordOnly { tokens.append(keyword) }
        let absolute: String?
        if referenceDepth > 0 {
            let base = program.nodes[currentNode].location
            absolute = display(keywordOnly ? base + "/" + JSONPointer.escape(keyword) : base)
        } else {
            absolute = nil
        }
        errors.append(JSONSchemaValidationError(
            instanceLocation: instancePointer(), keywordLocation: JSONPointer.string(tokens),
            absoluteKeywordLocation: absolute, keyword: keyword, message: message(), causes: causes))
    }

    private func instancePointer() -> String {
        var pointer = ""
        for token in instancePath {
            switch token {
            case .key(let key): pointer += "/" + JSONPointer.escape(key)
            case .index(let index): pointer += "/" + String(index)
            }
        }
        return pointer
    }

    /// Locations in the schema itself read as `#/pointer`.
    private func display(_ location: String) -> String {
        location.hasPrefix(program.implicitBase + "#") ? String(location.dropFirst(program.implicitBase.count)) : location
    }

    private static func instanceTypeName(_ value: JSONValue) -> String {
        if case .number(let d) = value, d.isFinite, d.rounded() == d { return "integer" }
        return value.typeName
    }

    private static func quoted(_ text: String) -> String {
        JSONValue.string(text).serialized()
    }

    private static func formatted(_ limit: NumericLimit) -> String {
        limit.integer.map(String.init) ?? formatted(limit.value)
    }

    private static func formatted(_ number: Double) -> String {
        if number.isFinite, number.rounded() == number, abs(number) < 1e15 { return String(Int(number)) }
        return "\(number)"
    }

    private static func abbreviated(_ value: JSONValue) -> String {
        let text = value.serialized()
        return text.count > 80 ? String(text.prefix(77)) + "..." : text
    }
}

/// Hashes JSON values so that JSON-equal values (1 and 1.0, objects in any member order)
/// land in the same bucket; equality is `isJSONEqual`.
struct JSONEqualityKey: Hashable {
    let value: JSONValue

    init(_ value: JSONValue) { self.value = value }

    static func == (lhs: JSONEqualityKey, rhs: JSONEqualityKey) -> Bool {
        lhs.value.isJSONEqual(to: rhs.value)
    }

    func hash(into hasher: inout Hasher) {
        Self.feed(value, into: &hasher)
    }

    private static func feed(_ value: JSONValue, into hasher: inout Hasher) {
        switch value {
        case .null: hasher.combine(0)
        case .bool(let b): hasher.combine(b)
        case .integer(let i): hasher.combine(Double(i))
        case .number(let d): hasher.combine(d)
        case .string(let s): hasher.combine(s)
        case .array(let items):
            hasher.combine(items.count)
            for item in items { feed(item, into: &hasher) }
        case .object(let members):
            // Member order must not matter: combine member hashes commutatively.
            var sum = 0
            for (key, member) in members {
                var memberHasher = Hasher()
                memberHasher.combine(key)
                feed(member, into: &memberHasher)
                sum &+= memberHasher.finalize()
            }
            hasher.combine(members.count)
            hasher.combine(sum)
        }
    }
}
