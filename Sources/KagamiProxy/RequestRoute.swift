import KagamiControl
import Foundation
import NIOHTTP1

/// Where a request goes, decided from its head alone: its server and the head sent there, or
/// an answer Kagami gives itself. Pure: the proxy's mode and, for a request inside an
/// intercepted CONNECT, the tunnel's destination are all it reads.
enum RequestRoute: Equatable {
    /// To `target`, with `head` (hop-by-hop fields gone, Host naming the server); `repeatOf`
    /// when `kagami repeat` sent it, naming the exchange repeated.
    case server(ProxyTarget, HTTPRequestHead, repeatOf: UUID?)
    /// The page serving Kagami's CA certificate (`http://kagami.proxy/`).
    case certificatePage
    /// Refused with this status and message; the connection closes after it, since the
    /// request's body (if any) is not read.
    case refuse(HTTPResponseStatus, String)

    init(_ head: HTTPRequestHead, mode: ProxyServer.Mode, origin: InterceptedOrigin?) {
        var headers = head.headers
        HopByHopFields.remove(from: &headers, keepingUpgrade: head.requestsUpgrade, keepingTrailers: head.version.major == 2)
        if head.version.major == 2 {
            // HTTP/2 may split Cookie into one field per pair; HTTP/1.1 has one (RFC 9113 §8.2.3).
            let cookies = headers[canonicalForm: "cookie"]
            if cookies.count > 1 { headers.replaceOrAdd(name: "cookie", value: cookies.joined(separator: "; ")) }
        }
        let repeatOf = RepeatMark.take(from: &headers)
        let target: ProxyTarget
        switch (mode, origin) {
        case (.forward, let origin?):
            // Inside an intercepted tunnel: origin-form names a path on the tunnel's server.
            if head.uri.hasPrefix("/") || head.uri == "*" {
                target = ProxyTarget(scheme: origin.scheme, host: origin.host, port: origin.port, path: head.uri)
            } else if let absolute = try? ProxyTarget(absoluteURL: head.uri) {
                target = absolute
            } else {
                self = .refuse(.badRequest, "Kagami: invalid request target \"\(head.uri)\"")
                return
            }
        case (.forward, nil):
            do {
                // HTTP/2 has no absolute form: a stream names its server in :authority (Host
                // here) and its path in :path (RFC 9113 §8.3.1).
                if head.version.major == 2, head.uri.hasPrefix("/"), let authority = headers["host"].first, !authority.isEmpty {
                    target = try ProxyTarget(absoluteURL: "http://" + authority + head.uri)
                } else {
                    target = try ProxyTarget(absoluteURL: head.uri)
                }
            } catch {
                self = .refuse(.badRequest, "Kagami is an HTTP proxy: send requests in absolute form (http://host/path). \(error)")
                return
            }
            if target.host.lowercased() == CertificatePage.host {
                self = .certificatePage
                return
            }
            // A repeat (kagami repeat) may ask for https in absolute form: Kagami talks TLS itself.
            guard target.scheme == "http" || repeatOf != nil else {
                self = .refuse(.notImplemented, "https:// URLs must be sent through a CONNECT tunnel")
                return
            }
            headers.remove(name: "proxy-authorization")
            // The target names the server; a Host that disagrees is replaced (RFC 9112 §3.2.2).
            headers.setHost(target.hostHeader)
        case (.reverse(let upstream), _):
            let base = upstream.path.hasSuffix("/") ? String(upstream.path.dropLast()) : upstream.path
            target = ProxyTarget(scheme: upstream.scheme, host: upstream.host, port: upstream.port, path: base + (head.uri.hasPrefix("/") ? head.uri : "/" + head.uri))
            // As Charles's reverse proxies do unless told to preserve it: the server sees its own name.
            headers.setHost(target.hostHeader)
        }
        self = .server(target, HTTPRequestHead(version: .http1_1, method: head.method, uri: target.path, headers: headers), repeatOf: repeatOf)
    }
}
