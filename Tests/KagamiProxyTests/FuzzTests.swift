import Foundation
import KagamiControl
@testable import KagamiProxy
import KagamiRules
import KagamiTesting
import Testing

/// Seeded, repeatable mutations of what clients send: the proxy answers or closes, never crashes,
/// and keeps serving well-behaved clients.
@Suite("Fuzzing what clients send")
struct FuzzTests {
    static func mutate(_ bytes: [UInt8], _ rng: inout SeededGenerator) -> [UInt8] {
        var out = bytes
        for _ in 0..<Int.random(in: 1...6, using: &rng) {
            guard !out.isEmpty else { break }
            let i = Int.random(in: 0..<out.count, using: &rng)
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: out[i] = UInt8.random(in: 0...255, using: &rng)
            case 1: out.remove(at: i)
            case 2: out.insert(UInt8.random(in: 0...255, using: &rng), at: i)
            case 3: out.insert(contentsOf: out[i..<min(out.count, i + 16)], at: i)
            default: out = Array(out[..<i])
            }
        }
        return out
    }

    static func u16(_ n: Int) -> [UInt8] { [UInt8(n >> 8), UInt8(n & 0xFF)] }

    @Test func targetAndClientHelloParsersTakeAnyInput() throws {
        var rng = SeededGenerator(state: 0x5EED)
        let seeds = ["http://example.com:8080/a?b=c", "https://[::1]:443/", "http://user@host/x#f", "host:443", "[2001:db8::1]:8443"]
        for _ in 0..<20_000 {
            let seed = Array(seeds[Int.random(in: 0..<seeds.count, using: &rng)].utf8)
            let text = String(decoding: Self.mutate(seed, &rng), as: UTF8.self)
            if let target = try? ProxyTarget(absoluteURL: text) {
                #expect((1...65535).contains(target.port))
                #expect(!target.host.isEmpty)
            }
            _ = try? ProxyTarget(connectAuthority: text)
            _ = Location(hostAndPort: text).map(LocationMatcher.init)?.matches(host: text, port: 443)
        }
        // A real ClientHello (TLS 1.2 record, SNI "api.example.com"), then mutations of it.
        var hello: [UInt8] = [0x01, 0x00, 0x00, 0x00, 0x03, 0x03] + Array(repeating: 7, count: 32) + [0x00, 0x00, 0x02, 0x13, 0x01, 0x01, 0x00]
        let name = Array("api.example.com".utf8)
        let sni: [UInt8] = [0x00, 0x00] + Self.u16(name.count + 5) + Self.u16(name.count + 3) + [0x00] + Self.u16(name.count) + name
        hello += Self.u16(sni.count) + sni
        hello[3] = UInt8(hello.count - 4)
        let record: [UInt8] = [0x16, 0x03, 0x01] + Self.u16(hello.count) + hello
        #expect(TLSClientHello.inspect(record) == .tls(serverName: "api.example.com"))
        #expect(TLSClientHello.inspect(Array(record.prefix(20))) == .needMoreBytes)
        #expect(TLSClientHello.inspect(Array("GET / HTTP/1.1\r\n".utf8)) == .notTLS)
        for _ in 0..<20_000 {
            _ = TLSClientHello.inspect(Self.mutate(record, &rng))
        }
    }

    @Test func mutatedRequestsNeverTakeTheProxyDown() async throws {
        try await ProxyHarness.with { h in
            var rng = SeededGenerator(state: 42)
            let seeds = [
                "GET \(h.origin.baseURL)/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: b\r\n\r\n",
                "POST \(h.origin.baseURL)/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello",
                "POST \(h.origin.baseURL)/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
                "CONNECT 127.0.0.1:\(h.origin.port) HTTP/1.1\r\nHost: x\r\n\r\n",
                "GET \(h.origin.baseURL)/bytes/10 HTTP/1.0\r\n\r\n",
            ]
            for round in 0..<150 {
                let seed = Array(seeds[round % seeds.count].utf8)
                let bytes = Self.mutate(seed, &rng)
                _ = try await RawConnection.exchange(port: h.proxyPort, send: Data(bytes), timeout: .milliseconds(100), until: { $0.contains("\r\n\r\n") })
            }
            let after = try await h.curl(["-w", " %{http_code}", "-o", "/dev/null", "\(h.origin.baseURL)/echo"])
            #expect(after.stdoutText == " 200")
            // A mutated 127.0.0.1 is often another real address, and a mutated name a DNS query:
            // the proxy refused them all before looking anything up or dialling.
            let connects = h.proxy.upstreamStatistics
            #expect(connects.lookups == 0)
            #expect(connects.addressesDialledOutsideLoopback == 0)
            #expect(connects.addressesDialled > 0)
        }
    }
}
