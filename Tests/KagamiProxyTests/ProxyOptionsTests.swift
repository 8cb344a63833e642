import KagamiContractCheck
import KagamiControl
import KagamiProxy
import KagamiRecording
import KagamiRecordingProxy
import Testing

/// The one options type and its one reader: what `kagami proxy`'s flags and KagamiKit fill is
/// read in one place, and an unusable value is named with its option before anything opens.
@Suite("Proxy options")
struct ProxyOptionsTests {
    @Test func theTextOptionsAreReadOnce() throws {
        let resolved = try ProxyOptions(
            reverse: "http://127.0.0.1:3000/api", upstreamAllow: ["loopback", "*.internal"], allowClients: ["192.168.1.0/24", "10.0.0.7"]
        ).resolved()
        #expect(resolved.mode == .reverse(ProxyTarget(scheme: "http", host: "127.0.0.1", port: 3000, path: "/api")))
        #expect(resolved.upstreamAllowList?.description.contains("*.internal") == true)
        #expect(resolved.allowedClients.map(\.description) == ["192.168.1.0/24", "10.0.0.7"])
        #expect(try ProxyOptions().resolved().mode == .forward)
    }

    @Test(arguments: [
        (ProxyOptions(reverse: "ftp://127.0.0.1/"), "--reverse ftp://127.0.0.1/"),
        (ProxyOptions(upstreamAllow: ["not a host/99"]), "--upstream-allow: \"not a host/99\""),
        (ProxyOptions(allowClients: ["192.168.1.0/99"]), "--allow-client 192.168.1.0/99: not a network"),
    ])
    func anUnusableOptionIsNamed(_ options: ProxyOptions, _ message: String) {
        #expect {
            _ = try ProxySetup(options)
        } throws: { error in
            guard case .option(let reason) = error as? ProxySetupError else { return false }
            return reason.description.hasPrefix(message)
        }
    }

    @Test func anUnreadableDescriptionIsAContractError() {
        #expect {
            _ = try ProxySetup(ProxyOptions(contracts: ["/nonexistent/kagami/api.apib"]))
        } throws: { error in
            guard case .contracts(let reason) = error as? ProxySetupError else { return false }
            return reason.description.contains("/nonexistent/kagami/api.apib")
        }
    }
}
