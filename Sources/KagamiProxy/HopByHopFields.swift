import NIOHTTP1

/// Fields that describe one connection, not the message (RFC 9110 §7.6.1): a proxy removes them
/// before forwarding, together with every field the Connection header names. A request asking to
/// switch protocols keeps its Connection and Upgrade fields, which the server must see.
enum HopByHopFields {
    static let fixed: Set<String> = ["connection", "keep-alive", "te", "upgrade", "proxy-connection"]
    /// Framing and routing stay whatever Connection says: the proxy relays bodies as framed.
    static let kept: Set<String> = ["host", "content-length", "transfer-encoding"]

    /// `keepingTrailers`: an HTTP/2 request's `TE: trailers` (the one TE value HTTP/2 allows,
    /// RFC 9113 §8.2.2) stays, replaced by Kagami's own: it relays trailers, and gRPC servers
    /// require the field.
    static func remove(from headers: inout HTTPHeaders, keepingUpgrade: Bool, keepingTrailers: Bool = false) {
        if keepingUpgrade {
            headers.remove(name: "proxy-connection")
            headers.remove(name: "keep-alive")
            return
        }
        var names = fixed
        for token in headers[canonicalForm: "connection"] {
            let name = token.lowercased()
            if !kept.contains(name) { names.insert(String(name)) }
        }
        guard headers.contains(where: { names.contains($0.name.lowercased()) }) else { return }
        let acceptsTrailers = keepingTrailers && headers[canonicalForm: "te"].contains { $0.lowercased() == "trailers" }
        for name in names { headers.remove(name: name) }
        if acceptsTrailers { headers.add(name: "te", value: "trailers") }
    }
}

extension HTTPHeaders {
    /// Host set to `value` where it stands among the fields (first when there is none, where
    /// RFC 9112 §3.2 asks clients to put it); any further Host is dropped. A request already
    /// naming its server is left as it is.
    mutating func setHost(_ value: String) {
        let hosts = self["host"]
        if hosts.count == 1, hosts[0] == value { return }
        var fields: [(String, String)] = []
        fields.reserveCapacity(count + 1)
        var placed = false
        for (name, existing) in self {
            guard name.caseInsensitiveCompare("host") == .orderedSame else {
                fields.append((name, existing))
                continue
            }
            if !placed { fields.append((name, value)) }
            placed = true
        }
        if !placed { fields.insert(("Host", value), at: 0) }
        self = HTTPHeaders(fields)
    }
}
