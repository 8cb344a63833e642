import KagamiFlow

/// Header fields whose values must not reach a store a team shares: each value is replaced by
/// a marker before the flow is queued for writing (the name stays, so the inspector still shows
/// that the request carried credentials). Applies to request and response headers and to
/// trailers, whatever the case of the name.
public struct HeaderRedaction: Sendable, Hashable {
    /// Credentials and session cookies.
    public static let defaultNames = ["Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"]
    public static let defaultMarker = "[redacted by Kagami]"
    /// Keeps every value.
    public static let none = HeaderRedaction(names: [])

    /// Lowercased.
    public private(set) var names: Set<String>
    public var marker: String

    public init(names: [String] = defaultNames, marker: String = defaultMarker) {
        self.names = Set(names.map { $0.lowercased() })
        self.marker = marker
    }

    public var isEmpty: Bool { names.isEmpty }

    public func apply(to flow: Flow) -> Flow {
        guard !names.isEmpty else { return flow }
        var flow = flow
        apply(to: &flow.request.headers)
        if var response = flow.response {
            apply(to: &response.headers)
            if var trailers = response.trailers {
                apply(to: &trailers)
                response.trailers = trailers
            }
            flow.response = response
        }
        return flow
    }

    private func apply(to headers: inout HeaderFields) {
        for index in headers.fields.indices where names.contains(headers.fields[index].name.lowercased()) {
            headers.fields[index].value = marker
        }
    }
}
