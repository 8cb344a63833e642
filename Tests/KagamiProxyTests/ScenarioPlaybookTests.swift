// The scenario hook driven with bytes and a manual clock: each state as the client sees it,
// and a scenario switched between two requests of one connection.
import Foundation
import KagamiFlow
import KagamiScenarios
import NIOCore
import Testing
@testable import KagamiProxy

@Suite struct ScenarioPlaybookTests {
    static let file = """
        scenarios:
          - name: states
            states:
              - operation: GET /feed
                state: empty
              - operation: GET /slow
                state: loading
                seconds: 2
              - operation: GET /spinner
                state: loading
              - operation: POST /checkout
                state: error
                status: 503
              - operation: GET /gone
                state: offline
                offline: closed
              - operation: GET /silent
                state: offline
                offline: timeout
              - operation: GET /throttled
                state: slow
                profile: {downloadKbps: 0, uploadKbps: 0, latencyMs: 300}
        """

    static func playbook() throws -> Playbook {
        let scenarios = try ActiveScenario(file: try ScenarioFile(parsing: Self.file, file: "scenarios.yaml"), active: "states")
        return try Playbook(scenarios: scenarios)
    }

    @Test func loadingHoldsTheRequestForItsSecondsOnTheClock() throws {
        let playbook = try Self.playbook()
        defer { try? playbook.finish() }
        try playbook.clientSends("GET /slow HTTP/1.1\r\nHost: app.test\r\n\r\n")
        playbook.advance(by: .milliseconds(1999))
        #expect(playbook.servers.opened.isEmpty)
        playbook.advance(by: .milliseconds(1))
        #expect(try playbook.serverReceived().hasPrefix("GET /slow HTTP/1.1\r\n"))
        try playbook.serverSends("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        #expect(try playbook.clientReceived().hasSuffix("\r\n\r\nok"))
        #expect(playbook.sink.flows.first?.appliedRules.first == RuleApplication(name: "Scenario 'states'", description: "GET /slow: loading 2 s"))
        #expect(playbook.breakpoints.held.isEmpty)
    }

    /// A loading request is listed with the breakpoints' holds, with its reason, and released
    /// from there: it goes on to its server as it came and the client gets the real answer.
    @Test func endlessLoadingIsListedAndReleasedToItsServer() throws {
        let playbook = try Self.playbook()
        defer { try? playbook.finish() }
        try playbook.clientSends("POST /spinner HTTP/1.1\r\nHost: app.test\r\nContent-Length: 5\r\n\r\nhello")
        #expect(playbook.breakpoints.held.isEmpty)
        try playbook.clientSends("GET /spinner HTTP/1.1\r\nHost: app.test\r\n\r\n")
        _ = try playbook.serverReceived()
        try playbook.serverSends("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno")
        _ = try playbook.clientReceived()
        let held = try #require(playbook.breakpoints.held.first)
        #expect(held.reason == "scenario states: loading")
        #expect(held.request.target == "/spinner" && held.locations.isEmpty)
        playbook.advance(by: .hours(1))
        #expect(playbook.breakpoints.held.count == 1)
        try playbook.breakpoints.resolve(held.id, with: .cancel)
        playbook.loop.run()
        #expect(try playbook.serverReceived().hasPrefix("GET /spinner HTTP/1.1\r\n"))
        try playbook.serverSends("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nreal")
        #expect(try playbook.clientReceived().hasSuffix("\r\n\r\nreal"))
        #expect(playbook.breakpoints.held.isEmpty)
        let rules = playbook.sink.flows.last?.appliedRules ?? []
        #expect(rules.first == RuleApplication(name: "Scenario 'states'", description: "GET /spinner: loading (until released)"))
        #expect(rules.last?.name == "Loading")
        #expect(rules.last?.description.hasPrefix("scenario states: loading: held ") == true)
        #expect(rules.last?.description.hasSuffix(", then continued unchanged") == true)
    }

    /// A timed loading state is listed too, and ends by itself after its seconds.
    @Test func timedLoadingIsListedUntilItsSecondsPass() throws {
        let playbook = try Self.playbook()
        defer { try? playbook.finish() }
        try playbook.clientSends("GET /slow HTTP/1.1\r\nHost: app.test\r\n\r\n")
        #expect(playbook.breakpoints.held.first?.reason == "scenario states: loading")
        playbook.advance(by: .seconds(2))
        #expect(playbook.breakpoints.held.isEmpty)
        #expect(try playbook.serverReceived().hasPrefix("GET /slow HTTP/1.1\r\n"))
    }

    /// Released early, a timed loading state goes on at once and its timer does nothing later.
    @Test func timedLoadingReleasedEarlyGoesOnOnce() throws {
        let playbook = try Self.playbook()
        defer { try? playbook.finish() }
        try playbook.clientSends("GET /slow HTTP/1.1\r\nHost: app.test\r\n\r\n")
        let held = try #require(playbook.breakpoints.held.first)
        try playbook.breakpoints.resolve(held.id, with: .cancel)
        playbook.loop.run()
        #expect(try playbook.serverReceived().hasPrefix("GET /slow HTTP/1.1\r\n"))
        playbook.advance(by: .seconds(3))
        #expect(try playbook.serverReceived().isEmpty)
        #expect(playbook.servers.opened.count == 1)
    }

    @Test func slowHoldsTheRequestForTheProfilesLatencyOnTheClock() throws {
        let playbook = try Self.playbook()
        defer { try? playbook.finish() }
        try playbook.clientSends("GET /throttled HTTP/1.1\r\nHost: app.test\r\n\r\n")
        playbook.advance(by: .milliseconds(299))
        #expect(playbook.servers.opened.isEmpty)
        playbook.advance(by: .milliseconds(1))
        #expect(try playbook.serverReceived().hasPrefix("GET /throttled HTTP/1.1\r\n"))
        try playbook.serverSends("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        #expect(try playbook.clientReceived().hasSuffix("\r\n\r\nok"))
        #expect(playbook.sink.flows.first?.appliedRules.first == RuleApplication(
            name: "Scenario 'states'", description: "GET /throttled: slow (unlimited down, 300 ms)"))
    }

    @Test func endlessLoadingNeverAsksTheServerAndEndsWhenTheClientLeaves() throws {
        let playbook = try Self.playbook()
        try playbook.clientSends("GET /spinner HTTP/1.1\r\nHost: app.test\r\n\r\n")
        playbook.advance(by: .hours(1))
        #expect(playbook.servers.opened.isEmpty)
        #expect(try playbook.clientReceived().isEmpty)
        #expect(playbook.breakpoints.held.count == 1)
        try playbook.clientDisconnects()
        #expect(playbook.breakpoints.held.isEmpty)
        #expect(playbook.sink.flows.count == 1)
        #expect(playbook.sink.flows.first?.response == nil && playbook.sink.flows.first?.error != nil)
    }

    @Test func emptyEmptiesTheServersListsAndErrorAnswersWithoutAServer() throws {
        let playbook = try Self.playbook()
        defer { try? playbook.finish() }
        try playbook.clientSends("GET /feed HTTP/1.1\r\nHost: app.test\r\n\r\n")
        _ = try playbook.serverReceived()
        let body = #"{"items":[{"id":1},{"id":2}],"total":2}"#
        try playbook.serverSends("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        let emptied = try playbook.clientReceived()
        #expect(emptied.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(emptied.contains("Content-Length: 22\r\n"))
        #expect(emptied.hasSuffix("\r\n\r\n{\"items\":[],\"total\":2}"))

        try playbook.clientSends("POST /checkout HTTP/1.1\r\nHost: app.test\r\nContent-Length: 2\r\n\r\n{}")
        let failed = try playbook.clientReceived()
        #expect(failed.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"))
        #expect(failed.contains("Content-Type: application/problem+json\r\n"))
        #expect(failed.contains("Scenario states puts POST /checkout in its error state."))
        #expect(playbook.servers.opened.count == 1)
        #expect(playbook.clientIsOpen)
    }

    @Test func aScenarioSwitchedBetweenRequestsActsOnTheNextOne() throws {
        let playbook = try Self.playbook()
        defer { try? playbook.finish() }
        try playbook.clientSends("POST /checkout HTTP/1.1\r\nHost: app.test\r\nContent-Length: 0\r\n\r\n")
        #expect(try playbook.clientReceived().hasPrefix("HTTP/1.1 503 "))
        playbook.scenarios.off()
        try playbook.clientSends("POST /checkout HTTP/1.1\r\nHost: app.test\r\nContent-Length: 0\r\n\r\n")
        #expect(try playbook.serverReceived().hasPrefix("POST /checkout HTTP/1.1\r\n"))
        try playbook.serverSends("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")
        #expect(try playbook.clientReceived().hasPrefix("HTTP/1.1 201 Created\r\n"))
        #expect(playbook.sink.flows.map { $0.appliedRules.map(\.name) } == [["Scenario 'states'"], []])
    }

    @Test func offlineClosesTheConnectionWithoutAnAnswer() throws {
        let playbook = try Self.playbook()
        try playbook.clientSends("GET /gone HTTP/1.1\r\nHost: app.test\r\n\r\n")
        #expect(try playbook.clientReceived().isEmpty)
        #expect(!playbook.clientIsOpen)
        #expect(playbook.servers.opened.isEmpty)
        #expect(playbook.sink.flows.first?.error?.message == "scenario: offline (connection closed without an answer)")
    }

    /// Offline as a timeout: nothing ever comes, the connection stays open, no server is asked,
    /// however long the clock runs, and nothing is listed to release.
    @Test func offlineTimeoutLeavesTheClientWaitingOnAnOpenConnection() throws {
        let playbook = try Self.playbook()
        defer { try? playbook.finish() }
        try playbook.clientSends("GET /silent HTTP/1.1\r\nHost: app.test\r\n\r\n")
        playbook.advance(by: .seconds(3600))
        #expect(try playbook.clientReceived().isEmpty)
        #expect(playbook.clientIsOpen)
        #expect(playbook.servers.opened.isEmpty)
        #expect(playbook.breakpoints.held.isEmpty)
    }
}
