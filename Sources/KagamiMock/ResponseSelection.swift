// Which documented response answers: the matching request example, then Prefer, then Accept.
import KagamiContract
import KagamiContractCheck
import KagamiJSON

enum ResponseSelection {
    static func select(
        action: Action, route: OperationRoute, request: MockRequest, body: JSONValue?, preference: ResponsePreference
    ) -> Response? {
        let examples = action.examples
        guard !examples.isEmpty else { return nil }
        var chosen = matchingExample(route: route, request: request, body: body)
        if let name = preference.example {
            if let index = examples.firstIndex(where: { $0.name == name }) {
                chosen = index
            } else {
                // OpenAPI names its examples per response.
                let named = examples.flatMap(\.responses).filter { $0.name == name }
                return negotiate(named.filter { preference.status == nil || $0.status == preference.status }, request: request)
            }
        }
        // The chosen example first, then the others in document order.
        let ordered = [examples[chosen]] + examples.enumerated().filter { $0.offset != chosen }.map(\.element)
        if let status = preference.status {
            return documented(status: status, in: ordered, request: request)
        }
        guard let example = ordered.first(where: { !$0.responses.isEmpty }), let first = example.responses.first else { return nil }
        return negotiate(example.responses.filter { $0.status == first.status }, request: request)
    }

    /// The response documented for `status`: one with exactly that status, else a status class
    /// (`4XX`), else `default`, answered with `status`. Nil when nothing documents it.
    static func documented(status: Int, in examples: [TransactionExample], request: MockRequest) -> Response? {
        let responses = examples.flatMap(\.responses)
        let exact = responses.filter { $0.status == status && !$0.isStatusClass }
        let candidates = exact.isEmpty
            ? responses.filter { $0.isStatusClass && $0.documents(status: status) }
            : exact
        let chosen = candidates.isEmpty ? responses.filter { $0.status == 0 } : candidates
        guard var response = negotiate(chosen, request: request) else { return nil }
        response.status = status
        return response
    }

    /// Among responses of one status, the one the `Accept` header wants most (document order breaks ties).
    static func negotiate(_ candidates: [Response], request: MockRequest) -> Response? {
        guard let accept = request.header("Accept"), candidates.count > 1 else { return candidates.first }
        var best: (response: Response, q: Double)?
        for candidate in candidates {
            let q = MediaType.quality(of: candidate.payload.mediaType ?? "", accept: accept)
            if q > (best?.q ?? 0) { best = (candidate, q) }
        }
        // Nothing acceptable: answer the default rather than 406, so a client still sees the documented shape.
        return best?.response ?? candidates.first
    }

    /// The index of the example whose request matches the incoming one best; 0 when none says more than the default.
    static func matchingExample(route: OperationRoute, request: MockRequest, body: JSONValue?) -> Int {
        var best = (index: 0, score: 0)
        for (index, example) in route.action.examples.enumerated() {
            for (requestIndex, documented) in example.requests.enumerated() {
                let schema = route.requestSchema(example: index, index: requestIndex)
                guard let score = score(of: documented, schema: schema != nil, validates: {
                    body.map { schema?.isValid($0) ?? false } ?? false
                }, request: request, body: body), score > best.score else { continue }
                best = (index, score)
            }
        }
        return best.index
    }

    /// How many of the documented request's headers and body the incoming request matches; nil on a mismatch.
    private static func score(
        of documented: Request, schema hasSchema: Bool, validates: () -> Bool, request: MockRequest, body: JSONValue?
    ) -> Int? {
        var score = 0
        for header in documented.payload.headers where header.name.caseInsensitiveCompare("Content-Length") != .orderedSame {
            guard let sent = request.header(header.name) else { return nil }
            let isContentType = header.name.caseInsensitiveCompare("Content-Type") == .orderedSame
            let same = isContentType
                ? MediaType.essence(sent) == MediaType.essence(header.value)
                : sent.trimmingCharacters(in: .whitespaces) == header.value.trimmingCharacters(in: .whitespaces)
            guard same else { return nil }
            score += 1
        }
        if let expected = documented.payload.bodyJSON, let body, expected.isJSONEqual(to: body) {
            score += 2
        } else if hasSchema {
            guard validates() else { return nil }
            score += 1
        } else if let text = documented.payload.body, !text.isEmpty {
            let sent = String(decoding: request.body, as: UTF8.self)
            guard sent.trimmingCharacters(in: .whitespacesAndNewlines) == text.trimmingCharacters(in: .whitespacesAndNewlines) else { return nil }
            score += 2
        }
        return score
    }
}
