/// The path part of a template compiled for matching: literals and one step per variable,
/// matched by backtracking over normalised bytes (see docs/URI-TEMPLATES.md for the rules).
struct PathPattern: Sendable {
    enum Step: Sendable {
        case literal([UInt8])
        case variable(VariableStep)
    }

    struct VariableStep: Sendable {
        let name: String
        /// The name normalised, as it appears in `;name=value`.
        let nameBytes: [UInt8]
        let op: URITemplate.Operator
        let explode: Bool
        let maxLength: Int?
        let closesExpression: Bool
        let first: [UInt8]
        let separator: [UInt8]
        /// Raw bytes that end a value (pct-encoded ones never do).
        let stops: [Bool]

        /// Without a leading `first`, an empty or absent value would leave no trace, so these
        /// variables must match at least one character.
        var isRequired: Bool { op.first.isEmpty }
    }

    let steps: [Step]

    init(_ components: [URITemplate.Component]) {
        var steps: [Step] = []
        for component in components {
            switch component {
            case .literal(let text):
                steps.append(.literal(PercentEncoding.normalize(text)))
            case .expression(let expression):
                let op = expression.operator
                for (index, variable) in expression.variables.enumerated() {
                    let explode = variable.modifier == .explode
                    steps.append(.variable(VariableStep(
                        name: variable.name,
                        nameBytes: PercentEncoding.normalize(variable.name),
                        op: op, explode: explode, maxLength: variable.maxLength,
                        closesExpression: index == expression.variables.count - 1,
                        first: Array(op.first.utf8), separator: Array(op.separator.utf8),
                        stops: Self.stopTable(op, explode: explode))))
                }
            }
        }
        self.steps = steps
    }

    static func stopTable(_ op: URITemplate.Operator, explode: Bool) -> [Bool] {
        var stops = [Bool](repeating: false, count: 128)
        let slash = Int(UInt8(ascii: "/"))
        switch op {
        case .reserved, .fragment:
            break
        case .simple:
            stops[slash] = true
        case .label:
            stops[slash] = true
            if !explode { stops[Int(UInt8(ascii: "."))] = true }
        case .pathSegment:
            if !explode { stops[slash] = true }
        case .pathParameter, .query, .queryContinuation:
            // Named values end at the separator, which also starts the next `name=value`.
            stops[slash] = true
            stops[Int(op.separator.utf8.first ?? UInt8(ascii: ";"))] = true
        }
        return stops
    }

    /// One state of the search: before `step`, at byte `position`, with `emitted` telling
    /// whether the current expression has written a variable yet (then a separator follows).
    private struct Frame {
        let step: Int
        let emitted: Bool
        let position: Int
        /// Ends of the candidate values in the order they are tried; `-1` is "absent".
        var choices: [Int]
        var next = 0
        var chosen = -1
    }

    /// The variables captured when the whole of `bytes` (a normalised path) matches.
    func match(_ bytes: [UInt8]) -> [(name: String, value: URITemplate.Value)]? {
        // Most routes of a router fail on their leading literal; answer those without allocating.
        if case .literal(let leading)? = steps.first, !Self.has(leading, in: bytes, at: 0) { return nil }
        let n = bytes.count
        var failed = Set<Int>()
        func key(_ step: Int, _ emitted: Bool, _ position: Int) -> Int {
            (step * 2 + (emitted ? 1 : 0)) * (n + 1) + position
        }
        var frames = [makeFrame(step: 0, emitted: false, position: 0, bytes)]
        while let top = frames.last {
            let t = frames.count - 1
            if top.step == steps.count {
                if top.position == n { return captures(frames, bytes) }
                frames.removeLast()
                continue
            }
            guard top.next < top.choices.count else {
                failed.insert(key(top.step, top.emitted, top.position))
                frames.removeLast()
                continue
            }
            let choice = top.choices[top.next]
            frames[t].next += 1
            let child: (emitted: Bool, position: Int)
            switch steps[top.step] {
            case .literal:
                child = (false, choice)
            case .variable(let variable):
                let emitted = choice >= 0 || top.emitted
                child = (variable.closesExpression ? false : emitted, choice >= 0 ? choice : top.position)
            }
            if failed.contains(key(top.step + 1, child.emitted, child.position)) { continue }
            frames[t].chosen = choice
            frames.append(makeFrame(step: top.step + 1, emitted: child.emitted, position: child.position, bytes))
        }
        return nil
    }

    private func makeFrame(step: Int, emitted: Bool, position: Int, _ bytes: [UInt8]) -> Frame {
        guard step < steps.count else { return Frame(step: step, emitted: emitted, position: position, choices: []) }
        var choices: [Int] = []
        switch steps[step] {
        case .literal(let literal):
            if Self.has(literal, in: bytes, at: position) { choices.append(position + literal.count) }
        case .variable(let variable):
            let prefix = emitted ? variable.separator : variable.first
            if Self.has(prefix, in: bytes, at: position) {
                let start = position + prefix.count
                choices = variable.op.isNamed
                    ? namedEnds(variable, bytes, from: start)
                    : valueEnds(variable, bytes, from: start, allowEmpty: !variable.isRequired)
            }
            if !variable.isRequired { choices.append(-1) }
            // A literal right after the expression rules out most ends of a value that may
            // span segments; checking it here keeps long paths from making a frame per byte.
            if variable.closesExpression, step + 1 < steps.count, case .literal(let next) = steps[step + 1] {
                choices.removeAll { $0 >= 0 && !Self.has(next, in: bytes, at: $0) }
            }
        }
        return Frame(step: step, emitted: emitted, position: position, choices: choices)
    }

    static func has(_ needle: [UInt8], in bytes: [UInt8], at position: Int) -> Bool {
        guard position + needle.count <= bytes.count else { return false }
        var i = 0
        while i < needle.count {
            if bytes[position + i] != needle[i] { return false }
            i += 1
        }
        return true
    }

    /// Where a value starting at `start` may end, shortest first. A triplet is one unit, and
    /// no end splits the triplets of one UTF-8 character.
    private func valueEnds(_ variable: VariableStep, _ bytes: [UInt8], from start: Int, allowEmpty: Bool) -> [Int] {
        var ends: [Int] = allowEmpty ? [start] : []
        var j = start
        var characters = 0
        while j < bytes.count {
            let b = bytes[j]
            if let decoded = PercentEncoding.triplet(in: bytes, at: j) {
                if decoded & 0xC0 != 0x80 { characters += 1 }
                j += 3
            } else {
                if b >= 128 || variable.stops[Int(b)] { break }
                characters += 1
                j += 1
            }
            if let max = variable.maxLength, characters > max { break }
            if j < bytes.count, let next = PercentEncoding.triplet(in: bytes, at: j), next & 0xC0 == 0x80 { continue }
            ends.append(j)
        }
        return ends
    }

    /// Ends of `name`, `name=value` (and with explode `name=v1;name=v2…`), shortest first.
    private func namedEnds(_ variable: VariableStep, _ bytes: [UInt8], from start: Int) -> [Int] {
        var ends: [Int] = []
        var itemStart = start
        while Self.has(variable.nameBytes, in: bytes, at: itemStart) {
            var j = itemStart + variable.nameBytes.count
            // `name` is complete there when the bare name is how an empty value expands (`;x`).
            if variable.op.ifEmpty.isEmpty && (j == bytes.count || bytes[j] != UInt8(ascii: "=")) {
                ends.append(j)
            }
            if j < bytes.count && bytes[j] == UInt8(ascii: "=") {
                j += 1
                ends.append(contentsOf: valueEnds(variable, bytes, from: j, allowEmpty: true))
            } else if !variable.op.ifEmpty.isEmpty {
                break
            }
            guard variable.explode, let last = ends.last, Self.has(variable.separator, in: bytes, at: last) else { break }
            itemStart = last + variable.separator.count
        }
        return ends
    }

    private func captures(_ frames: [Frame], _ bytes: [UInt8]) -> [(name: String, value: URITemplate.Value)] {
        var result: [(name: String, value: URITemplate.Value)] = []
        for frame in frames.dropLast() {
            guard case .variable(let variable) = steps[frame.step], frame.chosen >= 0 else { continue }
            let prefix = frame.emitted ? variable.separator : variable.first
            let raw = bytes[(frame.position + prefix.count)..<frame.chosen]
            result.append((variable.name, value(of: variable, raw: raw)))
        }
        return result
    }

    private func value(of variable: VariableStep, raw: ArraySlice<UInt8>) -> URITemplate.Value {
        guard variable.op.isNamed else {
            guard variable.explode else { return .string(PercentEncoding.decode(raw)) }
            return .list(Self.split(raw, on: variable.separator).map { PercentEncoding.decode($0) })
        }
        let values = Self.split(raw, on: variable.separator).map { item -> String in
            let afterName = item.dropFirst(variable.nameBytes.count)
            return PercentEncoding.decode(afterName.first == UInt8(ascii: "=") ? afterName.dropFirst() : afterName)
        }
        return variable.explode ? .list(values) : .string(values.first ?? "")
    }

    static func split(_ raw: ArraySlice<UInt8>, on separator: [UInt8]) -> [ArraySlice<UInt8>] {
        guard let byte = separator.first else { return [raw] }
        return raw.split(separator: byte, omittingEmptySubsequences: false)
    }
}
