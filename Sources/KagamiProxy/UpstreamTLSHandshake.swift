import KagamiControl
import NIOCore
import NIOSSL
import NIOTLS
import X509

/// Follows the TLS handshake with a server: says when it is done (and how long it took, for
/// the flow's timings), and checks that the server's certificate is for the host the client
/// asked for: a DNS name against the certificate's DNS names (one `*` label allowed, RFC 6125),
/// an IP address against its IP addresses. swift-nio-ssl's own check also accepts an IP address
/// entry matching the connected address, so a certificate for 127.0.0.1 would pass for any name
/// that resolves there; this one does not.
final class UpstreamTLSHandshake: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let host: String
    private let checksName: Bool
    private let started = NIODeadline.now()
    /// The handshake's duration once it succeeded; failed with why it did not.
    let completed: EventLoopPromise<TimeAmount>
    private var settled = false
    /// What ALPN settled on, once the handshake is done.
    private(set) var negotiatedProtocol: String?

    init(host: String, checksName: Bool, eventLoop: any EventLoop) {
        self.host = host
        self.checksName = checksName
        self.completed = eventLoop.makePromise()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let event = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = event else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        negotiatedProtocol = negotiated
        if checksName {
            let peer = try? context.pipeline.syncOperations.nioSSL_peerCertificate()
            let names = peer.flatMap { try? $0.toDERBytes() }.flatMap { try? Certificate(derEncoded: $0) }.map(CertificateNames.init)
            guard let names, names.admit(host) else {
                settle(.failure(ServerNameMismatch(host: host, names: names?.listed ?? [])))
                context.close(promise: nil)
                return
            }
        }
        settle(.success(.now() - started))
        context.fireUserInboundEventTriggered(event)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        settle(.failure(error))
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        settle(.failure(ChannelError.eof))
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        settle(.failure(ChannelError.eof))
    }

    private func settle(_ outcome: Result<TimeAmount, any Error>) {
        guard !settled else { return }
        settled = true
        completed.completeWith(outcome)
    }
}

/// The server's certificate is valid but for other names.
struct ServerNameMismatch: Error, CustomStringConvertible {
    var host: String
    var names: [String]
    var description: String {
        "the certificate is for \(names.isEmpty ? "no name" : names.joined(separator: ", ")), not \(host)"
    }
}

/// The names a certificate is for.
struct CertificateNames {
    var dnsNames: [String] = []
    var addresses: [IPAddressBytes] = []
    var commonName: String?

    init(_ certificate: Certificate) {
        if let alternatives = try? certificate.extensions.subjectAlternativeNames {
            for name in alternatives {
                switch name {
                case .dnsName(let dns): dnsNames.append(dns.lowercased())
                case .ipAddress(let octets):
                    let bytes = Array(octets.bytes)
                    if bytes.count == 4 || bytes.count == 16 { addresses.append(IPAddressBytes(bytes: bytes)) }
                default: break
                }
            }
        }
        for rdn in certificate.subject {
            for attribute in rdn where attribute.type == .RDNAttributeType.commonName {
                commonName = "\(attribute.value)".lowercased()
            }
        }
    }

    init(dnsNames: [String], addresses: [IPAddressBytes], commonName: String?) {
        self.dnsNames = dnsNames
        self.addresses = addresses
        self.commonName = commonName
    }

    var listed: [String] { dnsNames + addresses.map(\.text) }

    func admit(_ host: String) -> Bool {
        if let address = IPAddressBytes(host) { return addresses.contains(address) }
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        // The common name counts only in a certificate with no alternative names at all.
        let candidates = dnsNames.isEmpty && addresses.isEmpty ? commonName.map { [$0] } ?? [] : dnsNames
        return candidates.contains { Self.matches(pattern: $0, name: name) }
    }

    /// `*.example.com` matches `api.example.com`, not `example.com` nor `a.b.example.com`.
    static func matches(pattern: String, name: String) -> Bool {
        var pattern = pattern
        if pattern.hasSuffix(".") { pattern.removeLast() }
        guard pattern.hasPrefix("*.") else { return pattern == name }
        let suffix = pattern.dropFirst(1)
        guard name.hasSuffix(suffix) else { return false }
        let label = name.dropLast(suffix.count)
        return !label.isEmpty && !label.contains(".")
    }
}
