// Session store throughput: how many flows a second SQLiteFlowStore writes, and what encoding
// a flow's metadata costs written by hand (what the store does) against Foundation's JSONEncoder;
// with KAGAMI_BENCH_POSTGRES_URL, the same flows into PostgreSQL against SQLite session files,
// one writer and four at once.
// Usage: bench/store/run.sh [FLOWS]
import Foundation
import KagamiFlow
import KagamiPostgresStore
import KagamiStore

let count = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 200_000 : 200_000

/// A flow like the proxy records for a small JSON API call.
func sampleFlow(_ n: Int) -> Flow {
    let start = Date()
    let request = FlowRequest(
        method: "GET", scheme: "http", host: "api.example.com", port: 80, target: "http://api.example.com/v1/users/\(n)?fields=name,email",
        version: "HTTP/1.1",
        headers: HeaderFields([("Host", "api.example.com"), ("User-Agent", "Example/1.0 (iPhone; iOS 18.1)"), ("Accept", "application/json"),
                               ("Accept-Encoding", "gzip, deflate, br"), ("Authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.abc.def"),
                               ("Cookie", "session=abc123; theme=dark")]),
        body: FlowBody(data: Data(), size: 0, isTruncated: false))
    let response = FlowResponse(
        status: 200, reason: "OK", version: "HTTP/1.1",
        headers: HeaderFields([("Content-Type", "application/json; charset=utf-8"), ("Content-Length", "100"), ("Cache-Control", "no-cache"),
                               ("Date", "Sat, 21 Nov 2026 04:00:00 GMT"), ("Server", "nginx/1.22.1"), ("ETag", "\"5f3c-1a\"")]),
        body: FlowBody(data: Data(repeating: 0x6B, count: 100), size: 100, isTruncated: false))
    let timings = FlowTimings(start: start, connected: start.addingTimeInterval(0.0001), requestSent: start.addingTimeInterval(0.0002),
                              firstByte: start.addingTimeInterval(0.001), end: start.addingTimeInterval(0.0012))
    return Flow(mode: .reverse, clientAddress: "127.0.0.1:50000", serverAddress: "127.0.0.1:8080", request: request, response: response, timings: timings)
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    let elapsed = try clock.measure(body)
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

let flows = (0..<count).map(sampleFlow)
let metadata = flows.prefix(50_000).map(\.withoutBodyBytes)
let foundation = JSONEncoder()
foundation.dateEncodingStrategy = .deferredToDate
var bytes = 0
let foundationSeconds = try seconds { for flow in metadata { bytes &+= try foundation.encode(flow).count } }
let streamingSeconds = seconds { for flow in metadata { bytes &+= flow.storedRecord().count } }

let path = NSTemporaryDirectory() + "kagami-store-bench-\(UUID().uuidString).sqlite"
let store = try SQLiteFlowStore(path: path)
let storeSeconds = try await {
    let clock = ContinuousClock()
    let started = clock.now
    for flow in flows { store.record(flow) }
    try await store.flush()
    let elapsed = clock.now - started
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}()
let stored = try await store.count()
for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }

func rate(_ n: Int, _ s: Double) -> String { String(format: "%.0f", Double(n) / s) }
print("| measure | flows/s | µs per flow |")
print("|---|--:|--:|")
print("| encode metadata, Foundation JSONEncoder | \(rate(metadata.count, foundationSeconds)) | \(String(format: "%.2f", foundationSeconds / Double(metadata.count) * 1e6)) |")
print("| encode metadata, Flow.storedRecord | \(rate(metadata.count, streamingSeconds)) | \(String(format: "%.2f", streamingSeconds / Double(metadata.count) * 1e6)) |")
print("| SQLiteFlowStore.record + flush (\(stored) flows, 100-byte bodies) | \(rate(stored, storeSeconds)) | \(String(format: "%.2f", storeSeconds / Double(stored) * 1e6)) |")
print("\nstored record / JSONEncoder speed: \(String(format: "%.2f", foundationSeconds / streamingSeconds))× (checksum \(bytes))")

// Drivers side by side: `writers` stores (proxies) record at once, each its share of the flows
// into a session of its own — a session file each for SQLite, one database for PostgreSQL —
// until every one has flushed: flows/s over all of them.
guard let postgresURL = ProcessInfo.processInfo.environment["KAGAMI_BENCH_POSTGRES_URL"], !postgresURL.isEmpty else {
    print("\n(KAGAMI_BENCH_POSTGRES_URL not set: PostgreSQL not measured)")
    exit(0)
}
let location = try PostgresLocation(url: postgresURL)
let run = UUID().uuidString.prefix(8)

enum Driver: String { case sqlite = "SQLite (session files)", postgres = "PostgreSQL" }

func measure(_ driver: Driver, writers: Int) async throws -> (flows: Int, seconds: Double) {
    var stores: [any FlowStore] = []
    var paths: [String] = []
    for index in 0..<writers {
        switch driver {
        case .sqlite:
            let path = NSTemporaryDirectory() + "kagami-store-bench-\(run)-\(writers)-\(index).sqlite"
            paths.append(path)
            stores.append(try SQLiteFlowStore(path: path))
        case .postgres:
            stores.append(try await PostgresFlowStore.open(location, session: "bench-\(run)-\(writers)w-\(index)", recordedBy: "store-bench"))
        }
    }
    let share = flows.count / writers
    let clock = ContinuousClock()
    let started = clock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for (index, store) in stores.enumerated() {
            group.addTask {
                for flow in flows[(index * share)..<((index + 1) * share)] { store.record(flow) }
                try await store.flush()
            }
        }
        try await group.waitForAll()
    }
    let elapsed = clock.now - started
    var written = 0
    for store in stores {
        written += try await store.count()
        if let postgres = store as? PostgresFlowStore {
            try await postgres.removeAll()
        }
        await store.close()
    }
    for path in paths { for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
    return (written, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

print("\n| store | writers | flows | flows/s | ratio to SQLite, same writers |")
print("|---|--:|--:|--:|--:|")
for writers in [1, 4] {
    let sqlite = try await measure(.sqlite, writers: writers)
    let postgres = try await measure(.postgres, writers: writers)
    let sqliteRate = Double(sqlite.flows) / sqlite.seconds
    let postgresRate = Double(postgres.flows) / postgres.seconds
    print("| \(Driver.sqlite.rawValue) | \(writers) | \(sqlite.flows) | \(String(format: "%.0f", sqliteRate)) | 1.00 |")
    print("| \(Driver.postgres.rawValue) | \(writers) | \(postgres.flows) | \(String(format: "%.0f", postgresRate)) | \(String(format: "%.2f", postgresRate / sqliteRate)) |")
}
