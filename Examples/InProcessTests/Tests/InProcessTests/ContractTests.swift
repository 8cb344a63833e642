import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import KagamiKit
import KagamiKitOpenAPI
import Testing

/// A backend that drifted from its description fails the app's test: the proxy checks each
/// exchange against notes.apib, and the test asserts there are no violations.
@Suite struct ContractTests {
    /// What an app's suite would call after running the code under test.
    func expectConforms(_ flows: [Flow], sourceLocation: SourceLocation = #_sourceLocation) {
        for flow in flows {
            for violation in flow.violations {
                Issue.record("\(flow.request.method) \(flow.request.path): \(violation.instancePointer ?? "") \(violation.message)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test func aDriftedBackendFailsTheTest() async throws {
        let backend = try await KagamiMockServer.start(descriptionText: try Fixtures.drifted())
        do {
            let base = backend.baseURL.absoluteString + "/v1"
            try await withKagamiProxy(configuration: .init(reverseTarget: backend.baseURL.absoluteString, contracts: ["\(Fixtures.notes)=\(base)"])) { proxy in
                var request = URLRequest(url: proxy.proxyURL.appendingPathComponent("v1/notes/1"))
                request.httpMethod = "GET"
                _ = try await URLSession.shared.data(for: request)
                let flows = try await proxy.flows(count: 1)
                let violation = try #require(flows[0].violations.first)
                #expect(violation.instancePointer == "/id")
                withKnownIssue("the drifted backend answers an id as a string") {
                    expectConforms(flows)
                }
            }
        } catch {
            try? await backend.shutdown()
            throw error
        }
        try await backend.shutdown()
    }

    @Test func theRealDescriptionConforms() async throws {
        try await withKagamiMock(description: Fixtures.notes) { mock in
            let base = mock.baseURL.absoluteString + "/v1"
            try await withKagamiProxy(configuration: .init(reverseTarget: mock.baseURL.absoluteString, contracts: ["\(Fixtures.notes)=\(base)"])) { proxy in
                let (_, response) = try await URLSession.shared.data(from: proxy.proxyURL.appendingPathComponent("v1/notes/1"))
                #expect((response as? HTTPURLResponse)?.statusCode == 200)
                expectConforms(try await proxy.flows(count: 1))
            }
        }
    }
}
