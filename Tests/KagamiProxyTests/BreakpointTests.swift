import Foundation
import KagamiFlow
import KagamiControl
import KagamiProxy
import KagamiRepeat
import KagamiRules
import KagamiTesting
import Testing

/// Breakpoints on live traffic: curl through the proxy, decisions through the proxy's
/// `Breakpoints` (the admin API's tests drive the same over HTTP).
@Suite("Breakpoints")
struct BreakpointTests {
    static func with(_ yaml: String, _ body: (ProxyHarness, Breakpoints) async throws -> Void) async throws {
        let breakpoints = Breakpoints()
        try await ProxyHarness.with(breakpoints: breakpoints) { h in
            let text = yaml.replacingOccurrences(of: "ORIGIN_PORT", with: String(h.origin.port))
            breakpoints.replace(with: try BreakpointSettings(parsing: text, file: "breakpoints.yaml"))
            try await body(h, breakpoints)
        }
    }

    /// The held exchanges once `count` of them wait, failing after five seconds.
    static func held(_ breakpoints: Breakpoints, count: Int) async throws -> [HeldExchange] {
        if let held = try await eventually({ breakpoints.held.count >= count ? breakpoints.held : nil }) { return held }
        Issue.record("expected \(count) held exchanges, found \(breakpoints.held.count)")
        return breakpoints.held
    }

    @Test func heldRequestEditedThenExecutedReachesTheOriginEdited() async throws {
        try await Self.with("breakpoints: [{location: {path: /echo*}, request: true}]") { h, breakpoints in
            async let answer = h.curl(["-X", "POST", "-H", "X-Original: 1", "--data-binary", "original body", "\(h.origin.baseURL)/echo"])
            let held = try await Self.held(breakpoints, count: 1)[0]
            #expect(held.phase == .request)
            #expect(held.request.method == "POST")
            #expect(held.request.url == "\(h.origin.baseURL)/echo")
            #expect(String(decoding: held.request.body.data, as: UTF8.self) == "original body")
            #expect(held.request.headers["X-Original"] == "1")
            #expect(h.origin.received.isEmpty)

            var edited = held.request
            edited.method = "PUT"
            edited.target = "/echo?edited=1"
            edited.headers.remove("X-Original")
            edited.headers.add("X-Edited", "yes")
            edited.body = FlowBody(data: Data("the edited, longer body".utf8))
            try breakpoints.resolve(held.id, with: .executeRequest(edited))

            let echo = try Echo(try await answer.stdout)
            #expect(echo.method == "PUT")
            #expect(echo.uri == "/echo?edited=1")
            let received = try #require(h.origin.received.last)
            #expect(String(decoding: received.body, as: UTF8.self) == "the edited, longer body")
            #expect(received.headers.first { $0.name.lowercased() == "content-length" }?.value == "23")
            #expect(received.headers.contains { $0.name == "X-Edited" && $0.value == "yes" })
            #expect(!received.headers.contains { $0.name == "X-Original" })

            let flow = try #require(try await h.flows(count: 1).first)
            #expect(flow.id == held.flowID)
            #expect(flow.request.method == "PUT")
            #expect(flow.request.target == "/echo?edited=1")
            #expect(String(decoding: flow.request.body.data, as: UTF8.self) == "the edited, longer body")
            #expect(flow.appliedRules.contains { $0.name.hasPrefix("Breakpoint") && $0.description.contains("executed with edits") })
            #expect(breakpoints.held.isEmpty)
        }
    }

    @Test func heldResponseEditedIsWhatTheClientGets() async throws {
        try await Self.with("breakpoints: [{location: {path: /status/*}, request: false, response: true}]") { h, breakpoints in
            async let answer = h.curl(["-D", "-", "\(h.origin.baseURL)/status/200"])
            let held = try await Self.held(breakpoints, count: 1)[0]
            #expect(held.phase == .response)
            let response = try #require(held.response)
            #expect(response.status == 200)
            #expect(String(decoding: response.body.data, as: UTF8.self) == "status 200\n")
            #expect(h.origin.received.count == 1)

            var edited = response
            edited.status = 418
            edited.reason = "I'm a teapot"
            edited.headers.add("X-Edited", "response")
            edited.body = FlowBody(data: Data("short and stout".utf8))
            try breakpoints.resolve(held.id, with: .executeResponse(edited))

            let text = try await answer.stdoutText
            #expect(text.hasPrefix("HTTP/1.1 418 I'm a teapot\r\n"))
            #expect(text.contains("X-Edited: response\r\n"))
            #expect(text.lowercased().contains("content-length: 15\r\n"))
            #expect(text.hasSuffix("\r\n\r\nshort and stout"))
            let flow = try #require(try await h.flows(count: 1).first)
            #expect(flow.response?.status == 418)
            #expect(String(decoding: flow.response?.body.data ?? Data(), as: UTF8.self) == "short and stout")
        }
    }

    @Test func abortFailsTheExchangeAtEitherPhaseAndStoresItAborted() async throws {
        try await Self.with("""
            breakpoints:
              - {location: {path: /echo}, request: true}
              - {location: {path: /bytes/*}, request: false, response: true}
            """) { h, breakpoints in
            async let atRequest = h.curl(["-w", " %{http_code}", "\(h.origin.baseURL)/echo"])
            let heldRequest = try await Self.held(breakpoints, count: 1)[0]
            try breakpoints.resolve(heldRequest.id, with: .abort)
            let requestAnswer = try await atRequest.stdoutText
            #expect(requestAnswer.hasSuffix(" 502"))
            #expect(requestAnswer.contains("aborted at a request breakpoint"))
            #expect(h.origin.received.isEmpty)

            async let atResponse = h.curl(["-w", " %{http_code}", "\(h.origin.baseURL)/bytes/100"])
            let heldResponse = try await Self.held(breakpoints, count: 1)[0]
            #expect(heldResponse.phase == .response)
            try breakpoints.resolve(heldResponse.id, with: .abort)
            #expect(try await atResponse.stdoutText.hasSuffix(" 502"))

            let flows = try await h.flows(count: 2)
            #expect(flows.count == 2)
            #expect(flows.map(\.error?.kind) == [.aborted, .aborted])
            #expect(flows[0].error?.message == "aborted at a request breakpoint")
            #expect(flows[1].error?.message == "aborted at a response breakpoint")
        }
    }

    @Test func cancelContinuesUnchangedThroughBothPhases() async throws {
        try await Self.with("breakpoints: [{location: {host: 127.0.0.1, port: ORIGIN_PORT}, request: true, response: true}]") { h, breakpoints in
            async let answer = h.curl(["-H", "X-Keep: as is", "--data-binary", "unchanged", "\(h.origin.baseURL)/echo?q=1"])
            let atRequest = try await Self.held(breakpoints, count: 1)[0]
            #expect(atRequest.phase == .request)
            // An edit the cancel must throw away.
            #expect(throws: BreakpointError.self) {
                try breakpoints.resolve(atRequest.id, with: .executeResponse(FlowResponse(status: 500)))
            }
            try breakpoints.resolve(atRequest.id, with: .cancel)
            let atResponse = try await Self.held(breakpoints, count: 1)[0]
            #expect(atResponse.phase == .response)
            #expect(atResponse.flowID == atRequest.flowID)
            try breakpoints.resolve(atResponse.id, with: .cancel)
            let echo = try Echo(try await answer.stdout)
            #expect(echo.method == "POST")
            #expect(echo.uri == "/echo?q=1")
            #expect(echo.headers.contains(["X-Keep", "as is"]))
            #expect(echo.bodySHA256 == OriginServer.sha256Hex(Data("unchanged".utf8)))
            #expect(throws: BreakpointError.notHeld(atResponse.id)) {
                try breakpoints.resolve(atResponse.id, with: .cancel)
            }
        }
    }

    @Test func twoHeldExchangesWaitSideBySideAndResolveInAnyOrder() async throws {
        try await Self.with("breakpoints: [{location: {path: /echo*}}]") { h, breakpoints in
            async let first = h.curl(["\(h.origin.baseURL)/echo?n=1"])
            _ = try await Self.held(breakpoints, count: 1)
            async let second = h.curl(["\(h.origin.baseURL)/echo?n=2"])
            let held = try await Self.held(breakpoints, count: 2)
            #expect(held.map(\.request.target) == ["/echo?n=1", "/echo?n=2"])
            try breakpoints.resolve(held[1].id, with: .cancel)
            #expect(try Echo(try await second.stdout).uri == "/echo?n=2")
            // The first still waits while the second has finished.
            #expect(breakpoints.held.map(\.id) == [held[0].id])
            #expect(h.origin.received.map(\.uri) == ["/echo?n=2"])
            try breakpoints.resolve(held[0].id, with: .cancel)
            #expect(try Echo(try await first.stdout).uri == "/echo?n=1")
        }
    }

    @Test func otherTrafficFlowsWhileOneExchangeIsHeld() async throws {
        try await Self.with("breakpoints: [{location: {path: /echo}}]") { h, breakpoints in
            async let heldAnswer = h.curl(["\(h.origin.baseURL)/echo"])
            let held = try await Self.held(breakpoints, count: 1)[0]
            for index in 0..<5 {
                let other = try await h.curl(["-w", " %{http_code}", "\(h.origin.baseURL)/status/20\(index)"])
                #expect(other.stdoutText.hasSuffix(" 20\(index)"))
            }
            #expect(breakpoints.held.map(\.id) == [held.id])
            try breakpoints.resolve(held.id, with: .cancel)
            #expect(try Echo(try await heldAnswer.stdout).uri == "/echo")
            #expect(try await h.flows(count: 6).count == 6)
        }
    }

    @Test func aClientThatLeavesWhileHeldIsReleasedAndStored() async throws {
        try await Self.with("breakpoints: [{location: {path: /echo}}]") { h, breakpoints in
            let events = breakpoints.events()
            let gone = try await h.curl(["--max-time", "1", "\(h.origin.baseURL)/echo"])
            #expect(gone.status == 28)  // curl's time limit
            let flows = try await h.flows(count: 1)
            #expect(flows.first?.error?.kind == .clientDisconnected)
            #expect(breakpoints.held.isEmpty)
            var seen: [String] = []
            for await event in events {
                switch event {
                case .held: seen.append("held")
                case .released(_, let flowID, let how):
                    seen.append(how)
                    #expect(flowID == flows.first?.id)
                }
                if seen.count == 2 { break }
            }
            #expect(seen == ["held", "client disconnected"])
            #expect(h.origin.received.isEmpty)
        }
    }

    @Test func autoContinueLetsAForgottenExchangeGoOnUnchanged() async throws {
        try await Self.with("autoContinue: 0.3\nbreakpoints: [{location: {path: /echo}}]") { h, breakpoints in
            let events = breakpoints.events()
            let answer = try await h.curl(["\(h.origin.baseURL)/echo"])
            #expect(try Echo(answer.stdout).uri == "/echo")
            var how: String?
            for await event in events {
                if case .released(_, _, let reason) = event {
                    how = reason
                    break
                }
            }
            #expect(how == "auto-continue")
            // The wait is booked as held, before the connection: not as connecting.
            let flow = try #require(try await h.flows(count: 1).first)
            let held = try #require(flow.timings.heldAtRequest)
            #expect(held >= 0.25)
            let connected = try #require(flow.timings.connected)
            #expect(connected.timeIntervalSince(flow.timings.start) >= held)
        }
    }

    @Test func disabledOrNonMatchingBreakpointsHoldNothing() async throws {
        try await Self.with("enabled: false\nbreakpoints: [{location: {path: /echo}}]") { h, breakpoints in
            #expect(try Echo(try await h.curl(["\(h.origin.baseURL)/echo"]).stdout).uri == "/echo")
            breakpoints.replace(with: try BreakpointSettings(parsing: "breakpoints: [{location: {path: /other}}]"))
            #expect(try Echo(try await h.curl(["\(h.origin.baseURL)/echo"]).stdout).uri == "/echo")
            #expect(breakpoints.held.isEmpty)
        }
    }

    @Test func interceptedHTTPSExchangesStopAndTakeEdits() async throws {
        let breakpoints = Breakpoints(BreakpointSettings(breakpoints: [Breakpoint(location: Location(protocol: "https", path: "/echo"), request: true, response: true)]))
        try await HTTPSHarness.with(breakpoints: breakpoints) { h in
            async let answer = h.curl(["\(h.origin.localhostURL)/echo"])
            let atRequest = try await Self.held(breakpoints, count: 1)[0]
            #expect(atRequest.request.url == "\(h.origin.localhostURL)/echo")
            var request = atRequest.request
            request.headers.add("X-Through-TLS", "edited")
            try breakpoints.resolve(atRequest.id, with: .executeRequest(request))
            let atResponse = try await Self.held(breakpoints, count: 1)[0]
            var response = try #require(atResponse.response)
            response.body = FlowBody(data: Data("replaced inside TLS".utf8))
            try breakpoints.resolve(atResponse.id, with: .executeResponse(response))
            let result = try await answer
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdoutText == "replaced inside TLS")
            #expect(h.origin.received.last?.headers.contains { $0.name == "X-Through-TLS" && $0.value == "edited" } == true)
            let flow = try #require(try await h.proxy.flows(count: 1).first)
            #expect(flow.request.scheme == "https")
            #expect(flow.tls != nil)
        }
    }

    @Test func aRequestBodyTooLargeToHoldStreamsOnWithoutStopping() async throws {
        try await Self.with("breakpoints: [{location: {path: /echo}}]") { h, breakpoints in
            let (path, data) = try randomFile(size: (32 << 20) + 100_000, seed: 7)
            let result = try await h.curl(["--data-binary", "@\(path)", "\(h.origin.baseURL)/echo"])
            let echo = try Echo(result.stdout)
            #expect(echo.bodySize == data.count)
            #expect(echo.bodySHA256 == OriginServer.sha256Hex(data))
            let flow = try #require(try await h.flows(count: 1).first)
            #expect(flow.request.body.size == data.count)
            #expect(flow.appliedRules.map(\.description) == ["request body over 32 MB: passed on without stopping"])
            #expect(breakpoints.held.isEmpty)
        }
    }

    @Test func badBreakpointDocumentsAreRefusedWithTheField() {
        #expect(throws: RuleDocumentError.self) { try BreakpointSettings(parsing: "breakpoints: [{location: {pth: /x}}]") }
        do {
            _ = try BreakpointSettings(parsing: "autoContinue: -1\n", file: "b.yaml")
            Issue.record("a negative auto-continue time was accepted")
        } catch {
            #expect(error.field == "autoContinue")
            #expect(error.line == 1)
        }
    }
}

@Suite("Repeat")
struct RepeatTests {
    @Test func repeatAdvancedSendsAHundredWithEightInFlightAndStoresEachAsARepeat() async throws {
        try await ProxyHarness.with { h in
            _ = try await h.curl(["-H", "X-Token: abc", "--data-binary", "payload", "\(h.origin.baseURL)/echo?from=original"])
            let original = try #require(try await h.flows(count: 1).first)
            let repeater = RequestRepeater(route: .forwardProxy(host: "127.0.0.1", port: h.proxyPort))
            let summary = try await repeater.run(original.request, of: original.id, plan: try .init(count: 100, concurrency: 8))
            #expect(summary.sends.count == 100)
            #expect(summary.countsByStatus.map(\.status) == [200])
            #expect(summary.countsByStatus.first?.count == 100)
            #expect(summary.failures == 0)
            let durations = try #require(summary.durations)
            #expect(durations.min <= durations.median && durations.median <= durations.max)
            #expect(summary.text.hasPrefix("100 sent: 200 ×100; duration min "))

            let flows = try await h.flows(count: 101)
            #expect(flows.count == 101)
            let repeats = try await h.store.repeats(of: original.id)
            #expect(repeats.count == 100)
            #expect(Set(repeats.map(\.id)).count == 100)
            #expect(flows.filter { $0.repeatOf == original.id }.count == 100)
            // Each one is the same request again, and the mark never reaches the server.
            #expect(h.origin.received.count == 101)
            for received in h.origin.received {
                #expect(received.uri == "/echo?from=original")
                #expect(String(decoding: received.body, as: UTF8.self) == "payload")
                #expect(received.headers.contains { $0.name == "X-Token" && $0.value == "abc" })
                #expect(!received.headers.contains { $0.name.lowercased() == "x-kagami-repeat-of" })
            }
        }
    }

    @Test func repeatsGoThroughTheRulesAndBreakpoints() async throws {
        let rules = ActiveRules()
        let breakpoints = Breakpoints()
        try await ProxyHarness.with(rules: rules, breakpoints: breakpoints) { h in
            _ = try await h.curl(["\(h.origin.baseURL)/echo"])
            let original = try #require(try await h.flows(count: 1).first)
            rules.replace(with: try RulePipeline(try RuleSet(parsing: """
                rewrite:
                  - name: tag
                    locations: [{path: /echo}]
                    rules: [{type: Add Header, where: request, replace: {name: X-Rewritten, value: "yes"}}]
                """), mapLocalFolders: MapLocalFolders(base: NSTemporaryDirectory(), excluding: [])))
            breakpoints.replace(with: BreakpointSettings(breakpoints: [Breakpoint(location: Location(path: "/echo"))]))
            let repeater = RequestRepeater(route: .forwardProxy(host: "127.0.0.1", port: h.proxyPort))
            async let summary = repeater.run(original.request, of: original.id, plan: try .init(count: 1))
            let held = try await BreakpointTests.held(breakpoints, count: 1)[0]
            #expect(held.request.headers["X-Rewritten"] == "yes")
            try breakpoints.resolve(held.id, with: .cancel)
            #expect(try await summary.countsByStatus.first?.status == 200)
            #expect(h.origin.received.last?.headers.contains { $0.name == "X-Rewritten" } == true)
            let repeats = try await h.store.repeats(of: original.id)
            #expect(repeats.count == 1)
        }
    }

    @Test func httpsRepeatsGoThroughTheProxyWhichTalksTLSItself() async throws {
        try await HTTPSHarness.with { h in
            let first = try await h.curl(["-H", "X-Secure: 1", "\(h.origin.localhostURL)/echo?tls=1"])
            #expect(first.status == 0, "\(first.stderr)")
            let original = try #require(try await h.proxy.flows(count: 1).first)
            #expect(original.request.scheme == "https")
            let repeater = RequestRepeater(route: .forwardProxy(host: "127.0.0.1", port: h.proxy.proxyPort))
            let summary = try await repeater.run(original.request, of: original.id, plan: try .init(count: 3, concurrency: 3))
            #expect(summary.countsByStatus.map(\.status) == [200], "\(summary.text)")
            let repeats = try await h.proxy.store.repeats(of: original.id)
            #expect(repeats.count == 3)
            #expect(repeats.allSatisfy { $0.request.scheme == "https" && $0.tls?.version != nil })
            #expect(h.origin.received.count == 4)
            // curl speaks HTTP/2 to Kagami, where field names are lowercase (RFC 9113 §8.2.1).
            #expect(h.origin.received.allSatisfy { $0.uri == "/echo?tls=1" && $0.headers.contains { $0.name.lowercased() == "x-secure" } })
        }
    }

    @Test func planRefusesValuesOutOfRange() {
        #expect(throws: RepeatError.outOfRange(field: "concurrency", value: 0, range: 1...64)) { try RequestRepeater.Plan(count: 1, concurrency: 0) }
        #expect(throws: RepeatError.self) { try RequestRepeater.Plan(count: 10_001) }
        #expect(throws: RepeatError.self) { try RequestRepeater.Plan(delayMilliseconds: -1) }
    }
}
