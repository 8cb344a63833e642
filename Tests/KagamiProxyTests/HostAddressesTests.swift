import Foundation
import KagamiTesting
import Testing

/// Kagami against addresses of this host other than 127.0.0.1 — an interface's address, a
/// device on the network — made inside a private network namespace (`unshare -n`), so nothing
/// can leave this machine: Tests/Security/host_addresses.py says what it checks.
@Suite("This host's other addresses")
struct HostAddressesTests {
    static var script: String { WebSocketPeer.root.appendingPathComponent("Tests/Security/host_addresses.py").path }

    @Test func theAdminAPIAtAnInterfaceAddressAndDevicesNotAllowedYet() async throws {
        let result = try await CommandLineClient("/usr/bin/unshare").run(["-n", try WebSocketPeer.python(), Self.script, try CommandLineClient.kagamiPath()])
        #expect(result.status == 0, "\(result.stdoutText)\n\(result.stderr)")
        #expect(result.stdoutText.hasSuffix("ok\n"), "\(result.stdoutText)")
    }
}
