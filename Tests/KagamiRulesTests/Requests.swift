import Foundation
import KagamiFlow
@testable import KagamiRules

/// A request as a client would send it to `url`.
func request(
    _ url: String, method: String = "GET", headers: [(String, String)] = [], body: String? = nil
) -> FlowRequest {
    guard let parts = try? AbsoluteURL(parsing: url) else { fatalError("bad test URL \(url)") }
    var request = FlowRequest(method: method, scheme: parts.scheme, host: parts.host, port: parts.port, target: parts.target)
    request.headers.add("Host", request.authority)
    for (name, value) in headers { request.headers.add(name, value) }
    if let body { request.body = FlowBody(data: Data(body.utf8)) }
    return request
}

func response(status: Int = 200, headers: [(String, String)] = [], body: String = "") -> FlowResponse {
    FlowResponse(status: status, reason: "OK", headers: HeaderFields(headers), body: FlowBody(data: Data(body.utf8)))
}

func pipeline(_ yaml: String, baseDirectory: String = "/nonexistent") throws -> RulePipeline {
    try RulePipeline(RuleSet(parsing: yaml, file: "rules.yaml"), mapLocalFolders: MapLocalFolders(base: baseDirectory, excluding: []))
}

extension RequestVerdict {
    var forwarded: FlowRequest? {
        if case .forward(let request) = action { return request }
        return nil
    }

    var blocked: BlockAction? {
        if case .block(let action) = action { return action }
        return nil
    }

    var local: LocalResponse? {
        if case .respond(let response) = action { return response }
        return nil
    }
}
