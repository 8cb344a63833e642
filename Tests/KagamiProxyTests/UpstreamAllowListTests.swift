import Foundation
import KagamiFlow
import KagamiControl
@testable import KagamiProxy
import KagamiTesting
import NIOCore
import NIOPosix
import Testing

/// `--upstream-allow`: destinations outside the list are refused before any lookup or
/// connection, names resolve only when listed, and what a name resolves to is checked again.
@Suite("Upstream allow list")
struct UpstreamAllowListTests {
    @Test func entriesParseAndMatch() throws {
        let list = try UpstreamAllowList(parsing: ["10.0.0.0/8", "fd00::/8", "192.168.1.7", "api.internal", "*.corp.internal"])
        #expect(list.decision(for: "10.200.3.4") == .address(try #require(IPAddressBytes("10.200.3.4"))))
        #expect(list.decision(for: "11.0.0.1").isRefused)
        #expect(list.decision(for: "fd12::1") == .address(try #require(IPAddressBytes("fd12::1"))))
        #expect(list.decision(for: "192.168.1.7") == .address(try #require(IPAddressBytes("192.168.1.7"))))
        #expect(list.decision(for: "192.168.1.8").isRefused)
        #expect(list.decision(for: "API.internal.") == .lookUp)
        #expect(list.decision(for: "db.corp.internal") == .lookUp)
        #expect(list.decision(for: "corp.internal").isRefused)
        #expect(list.decision(for: "evil-api.internal").isRefused)
        // An IPv4-mapped IPv6 address is judged as the IPv4 address it carries.
        #expect(list.decision(for: "::ffff:10.1.2.3") == .address(try #require(IPAddressBytes("10.1.2.3"))))
        #expect(UpstreamAllowList.loopback.decision(for: "::ffff:10.1.2.3").isRefused)
        #expect(UpstreamAllowList.loopback.decision(for: "::ffff:127.0.0.1") == .address(.loopbackV4))
        // Shorthand forms getaddrinfo would read as addresses are names here, and refused unlooked-up.
        for shorthand in ["127.1", "0x7f.0.0.1", "2130706433", "0177.0.0.1", "127.0.0.1.nip.io", "127.0.0.1.evil.example"] {
            #expect(UpstreamAllowList.loopback.decision(for: shorthand).isRefused, "\(shorthand)")
        }
        #expect(UpstreamAllowList.loopback.decision(for: "localhost") == .localhost)
        #expect(UpstreamAllowList.loopback.decision(for: "LOCALHOST.") == .localhost)
        #expect(UpstreamAllowList.loopback.decision(for: "app.localhost") == .localhost)
        #expect(UpstreamAllowList.loopback.decision(for: "127.255.255.254") == .address(try #require(IPAddressBytes("127.255.255.254"))))
        #expect(UpstreamAllowList.loopback.decision(for: "::1") == .address(.loopbackV6))
        #expect(UpstreamAllowList.loopback.decision(for: "::2").isRefused)
        #expect(try UpstreamAllowList(parsing: ["loopback"]) == .loopback)
    }

    @Test func badEntriesSayWhatWasWrong() {
        for bad in ["10.0.0.0/33", "::1/129", "10.0.0.0/", "http://x", "a b", "*", "-x.internal", "10.0.0.0/8/8", ""] {
            #expect(throws: UpstreamAllowList.ParseError.self, "\(bad)") { try UpstreamAllowList(parsing: [bad]) }
        }
        do {
            _ = try UpstreamAllowList(parsing: ["loopback", "10.0.0.0/99"])
            Issue.record("accepted /99")
        } catch {
            #expect(error.description.hasPrefix("--upstream-allow: \"10.0.0.0/99\" is not a network"))
        }
    }

    @Test func refusedDestinationsAreNeitherLookedUpNorDialled() async throws {
        try await ProxyHarness.with { h in
            for url in ["http://10.0.0.1/", "http://example.invalid/", "http://[2001:db8::1]/", "http://127.0.0.1.evil.example/"] {
                let result = try await h.curl(["-w", "\n%{http_code}", url])
                #expect(result.stdoutText.hasSuffix("\n403"), "\(url): \(result.stdoutText)")
                #expect(result.stdoutText.contains("destination not allowed"), "\(url)")
            }
            // CONNECT to an address outside the list: refused the same way, recorded as a tunnel.
            let tunnel = try await RawConnection.exchange(
                port: h.proxyPort, send: Data("CONNECT 10.0.0.1:443 HTTP/1.1\r\nHost: 10.0.0.1:443\r\n\r\n".utf8),
                until: { $0.contains("\r\n\r\n") })
            #expect(tunnel.hasPrefix("HTTP/1.1 403"), "\(tunnel)")
            let flows = try await h.flows(count: 5)
            #expect(flows.count == 5)
            #expect(flows.allSatisfy { $0.error?.kind == .notAllowed && $0.response?.status == 403 }, "\(flows.map(\.error))")
            #expect(flows.contains { $0.mode == .tunnel })
            let connects = h.proxy.upstreamStatistics
            #expect(connects.refusedBeforeLookup == 5)
            #expect(connects.lookups == 0)
            #expect(connects.addressesDialled == 0)

            // Loopback still works, `localhost` included, without a lookup.
            let local = try await h.curl(["-w", " %{http_code}", "-o", "/dev/null", "http://localhost:\(h.origin.port)/echo"])
            #expect(local.stdoutText == " 200")
            #expect(h.proxy.upstreamStatistics.lookups == 0)
            #expect(h.proxy.upstreamStatistics.addressesDialledOutsideLoopback == 0)
        }
    }

    /// Hosts made by mutating `127.0.0.1` as a fuzzer would: each is refused unless it is a
    /// loopback address written the strict way, and nothing is looked up or dialled elsewhere.
    @Test func mutatedAddressesStayOnLoopback() async throws {
        try await ProxyHarness.with { h in
            var rng = SeededGenerator(state: 13)
            let alphabet = Array("0123456789.abcdefx-:".utf8)
            var expectedRefusals = 0
            for _ in 0..<120 {
                var host = Array("127.0.0.1".utf8)
                for _ in 0..<Int.random(in: 1...3, using: &rng) {
                    let i = Int.random(in: 0..<host.count, using: &rng)
                    switch Int.random(in: 0..<3, using: &rng) {
                    case 0: host[i] = alphabet.randomElement(using: &rng) ?? 0x30
                    case 1 where host.count > 1: host.remove(at: i)
                    default: host.insert(alphabet.randomElement(using: &rng) ?? 0x30, at: i)
                    }
                }
                let text = String(decoding: host, as: UTF8.self)
                // Colons make an authority of a different shape: bracket them as an IPv6 literal.
                let authority = text.contains(":") ? "[\(text)]" : text
                let allowed = Self.isStrictLoopback(text)
                if !allowed { expectedRefusals += 1 }
                let answer = try await RawConnection.exchange(
                    port: h.proxyPort,
                    send: Data("GET http://\(authority):\(h.origin.port)/echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8),
                    timeout: .seconds(10), until: { $0.contains("\r\n\r\n") })
                if !allowed {
                    #expect(answer.hasPrefix("HTTP/1.1 403") || answer.hasPrefix("HTTP/1.1 400"), "\(text): \(answer.prefix(60))")
                }
            }
            let connects = h.proxy.upstreamStatistics
            #expect(connects.lookups == 0)
            #expect(connects.addressesDialledOutsideLoopback == 0)
            #expect(expectedRefusals > 60)
            #expect(connects.refusedBeforeLookup <= expectedRefusals)
            #expect(connects.refusedBeforeLookup > 0)
        }
    }

    /// A listed name is looked up; an answer outside the listed networks is refused and not
    /// dialled, an answer inside them is used. (The lookup is a stand-in, so no DNS is asked.)
    @Test func whatANameResolvesToIsCheckedAgain() async throws {
        let origin = try await OriginServer.start()
        let list = try UpstreamAllowList(parsing: ["127.0.0.0/8", "api.internal", "moved.internal"])
        let gate = UpstreamGate(allowList: list) { loop in
            StandInResolver(loop: loop, answers: ["api.internal": "127.0.0.1", "moved.internal": "10.9.8.7"])
        }
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let channel = try await gate.connect(ClientBootstrap(group: loop), host: "api.internal", port: origin.port, on: loop).get()
        #expect(channel.remoteAddress?.ipAddress == "127.0.0.1")
        try await channel.close()

        await #expect(throws: (any Error).self) {
            try await gate.connect(ClientBootstrap(group: loop), host: "moved.internal", port: origin.port, on: loop).get()
        }
        do {
            _ = try await gate.connect(ClientBootstrap(group: loop), host: "moved.internal", port: origin.port, on: loop).get()
        } catch {
            let (status, flowError) = UpstreamFailure.classify(error, target: ProxyTarget(scheme: "http", host: "moved.internal", port: 80), connectTimeout: .seconds(1))
            #expect(status == .forbidden)
            #expect(flowError.kind == .notAllowed)
            #expect(flowError.message.contains("resolved to 10.9.8.7"), "\(flowError.message)")
        }
        let connects = gate.statistics
        #expect(connects.lookups == 3)
        #expect(connects.refusedAfterLookup == 2)
        #expect(connects.addressesDialled == 1)
        #expect(connects.addressesDialledOutsideLoopback == 0)
        try await origin.stop()
    }

    static func isStrictLoopback(_ host: String) -> Bool {
        if host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "127" else { return false }
        return parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isNumber) && (part.count == 1 || !part.hasPrefix("0")) && (Int(part) ?? 256) <= 255
        }
    }
}

extension UpstreamAllowList.Decision {
    var isRefused: Bool { if case .refused = self { true } else { false } }
}

/// Answers A queries from a table, as a DNS server would, without one.
private final class StandInResolver: Resolver, Sendable {
    let loop: any EventLoop
    let answers: [String: String]

    init(loop: any EventLoop, answers: [String: String]) {
        self.loop = loop
        self.answers = answers
    }

    func initiateAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        loop.makeCompletedFuture { try answers[host].map { [try SocketAddress(ipAddress: $0, port: port)] } ?? [] }
    }

    func initiateAAAAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        loop.makeSucceededFuture([])
    }

    func cancelQueries() {}
}

/// `kagami proxy --upstream-allow` and `KAGAMI_UPSTREAM_ALLOW` as a user gives them.
@Suite("Upstream allow list on the command line")
struct UpstreamAllowCommandTests {
    @Test func theOptionRefusesOtherServersAndSaysSoAtStart() async throws {
        let origin = try await OriginServer.start()
        let session = temporaryPath("allow.sqlite")
        let proxy = try await KagamiProcess.start(["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--session", session, "--upstream-allow", "127.0.0.1"])
        let proxyArgument = ["-s", "--max-time", "30", "-x", "http://127.0.0.1:\(proxy.port)", "-w", "\n%{http_code}"]
        let allowed = try await CommandLineClient.curl.run(proxyArgument + ["-o", "/dev/null", "\(origin.baseURL)/echo"])
        // 127.0.0.2 is loopback too, but only 127.0.0.1 was listed.
        let refused = try await CommandLineClient.curl.run(proxyArgument + ["http://127.0.0.2:\(origin.port)/echo"])
        proxy.stop()
        try await origin.stop()
        #expect(allowed.stdoutText == "\n200")
        #expect(refused.stdoutText.hasSuffix("\n403"))
        #expect(refused.stdoutText.contains("destination not allowed: 127.0.0.2 is outside the upstream allow list (127.0.0.1)"), "\(refused.stdoutText)")
    }

    @Test func aBadEntryStopsTheProxyWithWhereItCameFrom() async throws {
        let binary = try CommandLineClient.kagamiPath()
        let directory = (temporaryPath("x") as NSString).deletingLastPathComponent
        let byOption = try await CommandLineClient(binary).run(["proxy", "--port", "0", "--no-ui", "--session", directory + "/a.sqlite", "--upstream-allow", "10.0.0.0/99"])
        #expect(byOption.status != 0)
        #expect(byOption.stderr.contains(#"--upstream-allow: "10.0.0.0/99" is not a network"#), "\(byOption.stderr)")
        let byEnvironment = try await CommandLineClient(binary).run(
            ["proxy", "--port", "0", "--no-ui", "--session", directory + "/b.sqlite"],
            environment: ProcessInfo.processInfo.environment.merging(["KAGAMI_UPSTREAM_ALLOW": "loopback, nowhere/1"]) { $1 })
        #expect(byEnvironment.status != 0)
        #expect(byEnvironment.stderr.contains(#"KAGAMI_UPSTREAM_ALLOW: "nowhere/1" is not"#), "\(byEnvironment.stderr)")
    }
}
