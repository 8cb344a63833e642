// Session store throughput: how many flows a second SQLiteFlowStore writes, and what encoding
// a flow's metadata costs written by hand (what the store does) against Foundation's JSONEncoder.
// Usage: bench/store/run.sh [FLOWS]
import Foundation
import KagamiFlow
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
let streamingSeconds = seconds { for flow in metadata { bytes &+= flow.storedJSON().count } }

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
print("| encode metadata, Flow.storedJSON (by hand) | \(rate(metadata.count, streamingSeconds)) | \(String(format: "%.2f", streamingSeconds / Double(metadata.count) * 1e6)) |")
print("| SQLiteFlowStore.record + flush (\(stored) flows, 100-byte bodies) | \(rate(stored, storeSeconds)) | \(String(format: "%.2f", storeSeconds / Double(stored) * 1e6)) |")
print("\nby hand / JSONEncoder speed: \(String(format: "%.2f", foundationSeconds / streamingSeconds))× (checksum \(bytes))")
