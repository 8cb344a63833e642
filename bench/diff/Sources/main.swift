// Two sessions for bench/diff/run.sh: an app's API traffic as two builds record it, COUNT
// exchanges each, written straight into session files (no proxy: the benchmark times the diff).
// About 40 operations on two hosts, ids in paths, JSON bodies of 0.3 to 6 KB with nested objects
// and arrays, new ids, times and tokens in every exchange; the after build drops a field, adds
// one, answers one operation with another status, calls a new operation, stops calling one and
// is slower on one.
// Usage: diff-bench DIRECTORY COUNT   (writes DIRECTORY/before.sqlite and DIRECTORY/after.sqlite)
import Foundation
import KagamiFlow
import KagamiStore

/// The same numbers on every run (xorshift64*).
struct Numbers {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 2685821657736338717
    }
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    mutating func hex(_ count: Int) -> String { String((0..<count).map { _ in "0123456789abcdef".randomElement(using: &self) ?? "0" }) }
}

extension Numbers: RandomNumberGenerator {}

let resources = ["users", "posts", "comments", "orders", "products", "carts", "notifications", "messages", "groups", "photos"]
let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"]

func timestamp(_ date: Date) -> String {
    date.formatted(.iso8601)
}

/// One resource item as the API answers it.
func item(_ resource: String, id: Int, after: Bool, numbers: inout Numbers, at date: Date) -> String {
    let tags = (0..<(1 + numbers.below(4))).map { _ in "\"\(words[numbers.below(words.count)])\"" }.joined(separator: ",")
    let lines = (0..<(2 + numbers.below(6))).map { n in
        #"{"sku":"SKU-\#(numbers.below(99999))","name":"\#(words[n % words.count]) item","quantity":\#(1 + numbers.below(5)),"price":\#(Double(numbers.below(10000)) / 100),"available":\#(numbers.below(2) == 0)}"#
    }.joined(separator: ",")
    var fields = [
        #""id":\#(id)"#,
        #""uuid":"\#(UUID().uuidString.lowercased())""#,
        #""created_at":"\#(timestamp(date.addingTimeInterval(-Double(numbers.below(1_000_000)))))""#,
        #""updated_at":"\#(timestamp(date))""#,
        #""name":"\#(words[numbers.below(words.count)]) \#(resource)""#,
        #""description":"\#(String(repeating: words[numbers.below(words.count)] + " ", count: 5 + numbers.below(30)))""#,
        #""status":"\#(["active", "pending", "archived"][numbers.below(3)])""#,
        #""count":\#(numbers.below(1000))"#,
        #""score":\#(Double(numbers.below(1000)) / 10)"#,
        #""owner":{"id":\#(numbers.below(100000)),"name":"\#(words[numbers.below(words.count)])","avatar_url":"https://cdn.example.com/a/\#(numbers.hex(16)).png"}"#,
        #""tags":[\#(tags)]"#,
        #""lines":[\#(lines)]"#,
        #""currency":"EUR""#,
    ]
    // The after build's changes: products lose `currency`, users gain `pronouns`.
    if after, resource == "products" { fields.removeLast() }
    if after, resource == "users" { fields.append(#""pronouns":"they/them""#) }
    return "{" + fields.joined(separator: ",") + "}"
}

func flow(_ n: Int, after: Bool, numbers: inout Numbers, start: Date) -> Flow {
    let date = start.addingTimeInterval(Double(n) * 0.01)
    var resource = resources[numbers.below(resources.count)]
    // The before build calls groups, the after build calls photos in their place... and a new
    // search operation.
    if after, resource == "groups" { resource = numbers.below(2) == 0 ? "photos" : "search" }
    let id = numbers.below(1_000_000)
    let kind = numbers.below(4)
    let host = resource == "notifications" || resource == "messages" ? "push.example.com" : "api.example.com"
    var method = "GET", target = "/v2/\(resource)/\(id)", status = 200, requestBody = "", responseBody: String
    var duration = 0.02 + Double(numbers.below(80)) / 1000
    switch (resource, kind) {
    case ("search", _):
        target = "/v2/search?q=\(words[numbers.below(words.count)])&limit=20"
        responseBody = #"{"results":[\#(item("products", id: id, after: after, numbers: &numbers, at: date))],"total":1}"#
    case (_, 0):
        target = "/v2/\(resource)?page=\(1 + numbers.below(20))&limit=20"
        let items = (0..<(3 + numbers.below(8))).map { _ in item(resource, id: numbers.below(1_000_000), after: after, numbers: &numbers, at: date) }
        responseBody = #"{"data":[\#(items.joined(separator: ","))],"next_cursor":"\#(numbers.hex(24))","total":\#(numbers.below(10000))}"#
    case (_, 1):
        responseBody = item(resource, id: id, after: after, numbers: &numbers, at: date)
    case (_, 2):
        method = "POST"
        target = "/v2/\(resource)"
        requestBody = #"{"name":"\#(words[numbers.below(words.count)])","note":"\#(numbers.hex(12))","quantity":\#(1 + numbers.below(9))}"#
        status = after && resource == "orders" ? 202 : 201
        responseBody = item(resource, id: id, after: after, numbers: &numbers, at: date)
    default:
        method = "PATCH"
        requestBody = #"{"status":"\#(["active", "archived"][numbers.below(2)])"}"#
        responseBody = item(resource, id: id, after: after, numbers: &numbers, at: date)
    }
    if after, resource == "comments" { duration *= 4 }
    let requestHeaders = HeaderFields([
        ("Host", host), ("User-Agent", "Example/\(after ? "2.1" : "2.0") (iPhone; iOS 18.1)"), ("Accept", "application/json"),
        ("Accept-Encoding", "gzip, deflate, br"), ("Authorization", "Bearer \(numbers.hex(40))"), ("X-App-Version", after ? "2.1.0" : "2.0.0"),
        ("X-Request-Id", UUID().uuidString),
    ] + (requestBody.isEmpty ? [] : [("Content-Type", "application/json")]))
    let responseHeaders = HeaderFields([
        ("Content-Type", "application/json; charset=utf-8"), ("Content-Length", String(responseBody.utf8.count)), ("Date", "Sat, 28 Nov 2026 10:00:00 GMT"),
        ("ETag", "\"\(numbers.hex(12))\""), ("X-Request-Id", UUID().uuidString), ("Cache-Control", "private, max-age=0"),
        ("X-RateLimit-Remaining", String(numbers.below(5000))),
    ])
    return Flow(
        mode: .forward, clientAddress: "127.0.0.1:50000", serverAddress: "10.0.0.1:443",
        request: FlowRequest(method: method, scheme: "https", host: host, port: 443, target: target, headers: requestHeaders, body: FlowBody(data: Data(requestBody.utf8))),
        response: FlowResponse(status: status, reason: "", headers: responseHeaders, body: FlowBody(data: Data(responseBody.utf8))),
        timings: FlowTimings(start: date, connected: date, requestSent: date.addingTimeInterval(0.001), firstByte: date.addingTimeInterval(duration * 0.9), end: date.addingTimeInterval(duration)))
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let count = Int(arguments[2]), count > 0 else {
    FileHandle.standardError.write(Data("usage: diff-bench DIRECTORY COUNT\n".utf8))
    exit(64)
}
let directory = arguments[1]
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
for (name, after) in [("before", false), ("after", true)] {
    let path = directory + "/\(name).sqlite"
    for suffix in ["", "-wal", "-shm", "-flows", "-bodies"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    let store = try SQLiteFlowStore(path: path)
    var numbers = Numbers(state: after ? 0x9E37_79B9_7F4A_7C15 : 0xD1B5_4A32_D192_ED03)
    let start = Date(timeIntervalSince1970: 1_795_000_000)
    var bytes = 0
    for n in 0..<count {
        let flow = flow(n, after: after, numbers: &numbers, start: start)
        bytes += flow.request.body.size + (flow.response?.body.size ?? 0)
        store.record(flow)
        if n % 5000 == 4999 { try await store.flush() }
    }
    try await store.flush()
    print("\(name): \(count) exchanges, \(bytes / count) body bytes each on average, in \(path)")
}
