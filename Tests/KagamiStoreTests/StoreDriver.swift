import Foundation
import KagamiFlow
import KagamiPostgresStore
import KagamiStore
import KagamiTesting
import Testing

/// The drivers the store suite runs against. PostgreSQL needs a server: `./scripts/test.sh`
/// starts a throwaway one and passes its URL in `KAGAMI_TEST_POSTGRES_URL`.
enum StoreDriver: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    static let postgresURLVariable = "KAGAMI_TEST_POSTGRES_URL"

    /// The test server's location; a test that needs it fails when it is not given, so a run
    /// without a server can't pass by leaving PostgreSQL out.
    static func postgresLocation() throws -> PostgresLocation {
        guard let url = ProcessInfo.processInfo.environment[postgresURLVariable], !url.isEmpty else {
            let message = """
                \(postgresURLVariable) is not set, so the PostgreSQL store can't be tested. ./scripts/test.sh starts a \
                throwaway server and sets it; by hand: eval "$(scripts/postgres-cluster.sh start)"
                """
            throw FlowStoreError(message)
        }
        return try PostgresLocation(url: url)
    }

    /// A new, empty session of this driver's kind.
    func newSession() -> TestSession {
        switch self {
        case .sqlite: TestSession(driver: self, name: temporaryPath("session.sqlite"))
        case .postgres: TestSession(driver: self, name: "test-" + UUID().uuidString)
        }
    }

    /// A location where no store can be opened, and what the error names.
    func unreachableSession() throws -> (session: TestSession, named: String) {
        switch self {
        case .sqlite:
            return (TestSession(driver: self, name: "/proc/definitely/not/here.sqlite"), "cannot open session file /proc/definitely/not/here.sqlite")
        case .postgres:
            var location = try Self.postgresLocation()
            location.port = try closedLoopbackPort()
            return (TestSession(driver: self, name: "unreachable", location: location), "cannot open session unreachable at \(location)")
        }
    }
}

/// One session, opened as often as a test likes, as separate processes would.
struct TestSession: Sendable {
    let driver: StoreDriver
    let name: String
    var location: PostgresLocation?

    /// Both drivers are held to the same round trips: values kept as they are unless a test
    /// gives a `redaction`.
    func open(maximumPendingBodyBytes: Int = 256 << 20, recordedBy: String = "kagami-tests", redaction: FlowRedaction = .none) async throws -> any FlowStore {
        switch driver {
        case .sqlite:
            return try SQLiteFlowStore(path: name, maximumPendingBodyBytes: maximumPendingBodyBytes, redaction: redaction)
        case .postgres:
            return try await PostgresFlowStore.open(
                location ?? StoreDriver.postgresLocation(), session: name, recordedBy: recordedBy,
                maximumPendingBodyBytes: maximumPendingBodyBytes, redaction: redaction)
        }
    }
}

/// Ends a store's connections at the end of a test (a dropped store ends them too, later).
func shutDown(_ stores: (any FlowStore)...) async {
    for store in stores {
        await (store as? PostgresFlowStore)?.close()
    }
}


/// A loopback port nothing listens on: bound and released.
func closedLoopbackPort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw FlowStoreError("socket: \(String(cString: strerror(errno)))") }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
            bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
        }
    }
    guard bound else { throw FlowStoreError("bind: \(String(cString: strerror(errno)))") }
    return Int(UInt16(bigEndian: address.sin_port))
}
