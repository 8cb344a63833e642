/// The query part of a template compiled for matching: named parameters looked up in any order.
struct QueryPattern: Sendable {
    enum Parameter: Sendable {
        /// From `{?name}` / `{&name*}`: optional; explode collects every repetition.
        case variable(name: String, key: String, explode: Bool, maxLength: Int?)
        /// From literal text `key=value` (or `key`): required, value compared exactly.
        case literal(key: String, value: String?)
        /// From literal text `key={name}`: required, value captured.
        case bound(key: String, name: String, maxLength: Int?)
    }

    let parameters: [Parameter]

    private enum Pending {
        case text(String)
        case bound(key: String, name: String, maxLength: Int?)
        /// Query text of a shape matching does not check (documented as not supported).
        case ignored
    }

    init(_ components: [URITemplate.Component]) {
        var parameters: [Parameter] = []
        var pending = Pending.text("")
        var atStart = true
        func flush() {
            switch pending {
            case .text(let text) where !text.isEmpty:
                let normalized = PercentEncoding.normalize(text)
                if let equals = normalized.firstIndex(of: UInt8(ascii: "=")) {
                    parameters.append(.literal(
                        key: PercentEncoding.decode(normalized[..<equals], plusIsSpace: true),
                        value: PercentEncoding.decode(normalized[(equals + 1)...], plusIsSpace: true)))
                } else {
                    parameters.append(.literal(key: PercentEncoding.decode(normalized[...], plusIsSpace: true), value: nil))
                }
            case .bound(let key, let name, let maxLength):
                parameters.append(.bound(key: key, name: name, maxLength: maxLength))
            case .text, .ignored:
                break
            }
            pending = .text("")
        }
        for component in components {
            switch component {
            case .literal(let literal):
                for c in literal {
                    if c == "&" || (c == "?" && atStart) {
                        flush()
                    } else if case .text(let text) = pending {
                        pending = .text(text + String(c))
                    } else {
                        pending = .ignored
                    }
                    atStart = false
                }
            case .expression(let expression):
                atStart = false
                let op = expression.operator
                if op == .query || op == .queryContinuation {
                    flush()
                    for variable in expression.variables {
                        let key = PercentEncoding.decode(PercentEncoding.normalize(variable.name)[...])
                        parameters.append(.variable(
                            name: variable.name, key: key, explode: variable.modifier == .explode, maxLength: variable.maxLength))
                    }
                } else if case .text(let text) = pending, text.hasSuffix("="), !text.dropLast().contains("="),
                          op == .simple || op == .reserved, expression.variables.count == 1,
                          let variable = expression.variables.first, variable.modifier != .explode {
                    let key = PercentEncoding.decode(PercentEncoding.normalize(text.dropLast())[...], plusIsSpace: true)
                    pending = .bound(key: key, name: variable.name, maxLength: variable.maxLength)
                } else {
                    pending = .ignored
                }
            }
        }
        flush()
        self.parameters = parameters
    }

    /// The captured variables and the parameters no part of the template asked for, or `nil`
    /// when a required parameter is missing or a value is longer than its prefix modifier.
    func match(_ query: [URITemplate.QueryParameter])
        -> (variables: [(name: String, value: URITemplate.Value)], unmatched: [URITemplate.QueryParameter])?
    {
        var used = [Bool](repeating: false, count: query.count)
        var variables: [(name: String, value: URITemplate.Value)] = []
        func take(_ key: String, where accept: (URITemplate.QueryParameter) -> Bool = { _ in true }) -> URITemplate.QueryParameter? {
            for (i, parameter) in query.enumerated() where !used[i] && parameter.name == key && accept(parameter) {
                used[i] = true
                return parameter
            }
            return nil
        }
        func fits(_ value: String, _ maxLength: Int?) -> Bool {
            guard let maxLength else { return true }
            return value.unicodeScalars.count <= maxLength
        }
        for parameter in parameters {
            switch parameter {
            case .literal(let key, let value):
                let found = take(key) { ($0.value ?? "") == (value ?? "") }
                if found == nil { return nil }
            case .bound(let key, let name, let maxLength):
                guard let found = take(key), fits(found.value ?? "", maxLength) else { return nil }
                variables.append((name, .string(found.value ?? "")))
            case .variable(let name, let key, let explode, let maxLength):
                if explode {
                    var items: [String] = []
                    while let found = take(key) { items.append(found.value ?? "") }
                    if !items.isEmpty { variables.append((name, .list(items))) }
                } else if let found = take(key) {
                    guard fits(found.value ?? "", maxLength) else { return nil }
                    variables.append((name, .string(found.value ?? "")))
                }
            }
        }
        let unmatched = query.indices.filter { !used[$0] }.map { query[$0] }
        return (variables, unmatched)
    }
}
