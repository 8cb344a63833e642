// Times the rule pipeline on a typical request: no rules, then 20 enabled rules that don't match.
import Foundation
import KagamiFlow
import KagamiRules

let request = FlowRequest(
    method: "GET", scheme: "https", host: "api.example.com", port: 443, target: "/v1/users/42?expand=profile",
    headers: HeaderFields([
        ("Host", "api.example.com"), ("User-Agent", "App/1.0"), ("Accept", "application/json"),
        ("Authorization", "Bearer abc.def"), ("Accept-Encoding", "gzip"),
    ]))
let response = FlowResponse(
    status: 200, reason: "OK",
    headers: HeaderFields([("Content-Type", "application/json"), ("Content-Length", "512"), ("ETag", "\"x\"")]))

func nonMatching(_ index: Int) -> Location {
    Location(host: "*.unrelated\(index).example", path: "/other/*")
}

var rules = RuleSet()
for index in 0..<4 {
    rules.blockList.append(BlockListRule(name: "block \(index)", locations: [nonMatching(index)]))
    rules.mapLocal.append(MapLocalRule(name: "local \(index)", from: nonMatching(index + 4), localPath: "/tmp"))
    rules.mapRemote.append(MapRemoteRule(name: "remote \(index)", from: nonMatching(index + 8), to: Location(host: "x")))
    rules.noCaching.append(NoCachingRule(name: "fresh \(index)", locations: [nonMatching(index + 12)]))
    rules.rewrite.append(RewriteSet(
        name: "rewrite \(index)", locations: [nonMatching(index + 16)],
        rules: [RewriteRule(.addHeader, target: .both, replace: RewriteReplacement(name: "X-A", value: "1"))]))
}

func measure(_ pipeline: RulePipeline, iterations: Int) -> Double {
    var forwarded = 0
    let start = ContinuousClock.now
    for _ in 0..<iterations {
        let verdict = pipeline.processRequest(request)
        if case .forward = verdict.action { forwarded += 1 }
        _ = pipeline.throttleProfile(for: request)
        _ = pipeline.requestBodyNeeded(for: request)
        _ = pipeline.responseBodyNeeded(for: request)
        forwarded += pipeline.processResponse(response, for: request).applications.count
    }
    let elapsed = start.duration(to: .now)
    precondition(forwarded == iterations, "a rule matched the benchmark request")
    let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
    return nanoseconds / Double(iterations)
}

let iterations = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 200_000
do {
    let empty = try RulePipeline(RuleSet())
    let twenty = try RulePipeline(rules)
    _ = measure(twenty, iterations: iterations / 10)
    let base = measure(empty, iterations: iterations)
    let loaded = measure(twenty, iterations: iterations)
    print(String(format: "rules none: %.0f ns/request", base))
    print(String(format: "rules 20 non-matching: %.0f ns/request (+%.0f ns)", loaded, loaded - base))
} catch {
    print("rules bench: \(error)")
    exit(1)
}
