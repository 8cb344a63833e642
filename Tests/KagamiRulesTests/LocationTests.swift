@testable import KagamiFlow
import Testing
@testable import KagamiRules

@Suite struct LocationTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var location: Location
        var url: String
        var matches: Bool
        var testDescription: String { "\(location.displayString) \(matches ? "~" : "!~") \(url)" }
    }

    static let cases: [Case] = [
        Case(location: Location(), url: "http://any.example/x?y=1", matches: true),
        Case(location: Location(host: "api.example.com"), url: "https://api.example.com/v1", matches: true),
        Case(location: Location(host: "api.example.com"), url: "https://www.example.com/v1", matches: false),
        Case(location: Location(host: "API.Example.COM"), url: "https://api.example.com/", matches: true),
        Case(location: Location(host: "*.example.com"), url: "https://cdn.EXAMPLE.com/a", matches: true),
        Case(location: Location(host: "*.example.com"), url: "https://example.com/a", matches: false),
        Case(location: Location(host: "api?.example.com"), url: "http://api2.example.com/", matches: true),
        Case(location: Location(host: "api?.example.com"), url: "http://api.example.com/", matches: false),
        Case(location: Location(host: "api[0-3].example.com"), url: "http://api3.example.com/", matches: true),
        Case(location: Location(host: "api[0-3].example.com"), url: "http://api7.example.com/", matches: false),
        Case(location: Location(host: "api[!0-3].example.com"), url: "http://api7.example.com/", matches: true),
        Case(location: Location(protocol: "https"), url: "https://a.example/", matches: true),
        Case(location: Location(protocol: "HTTPS"), url: "http://a.example/", matches: false),
        Case(location: Location(port: 8080), url: "http://a.example:8080/", matches: true),
        Case(location: Location(port: 8080), url: "http://a.example/", matches: false),
        Case(location: Location(port: 443), url: "https://a.example/", matches: true),
        Case(location: Location(path: "/v1/users"), url: "http://a.example/v1/users", matches: true),
        Case(location: Location(path: "/v1/users"), url: "http://a.example/v1/users/7", matches: false),
        Case(location: Location(path: "/v1/users"), url: "http://a.example/V1/Users", matches: false),
        Case(location: Location(path: "/v1/users"), url: "http://a.example/v1/users?page=2", matches: true),
        Case(location: Location(path: "/v1/*"), url: "http://a.example/v1/users/7/avatar", matches: true),
        Case(location: Location(path: "/v1/*"), url: "http://a.example/v2/users", matches: false),
        Case(location: Location(path: "/v1/*/avatar"), url: "http://a.example/v1/users/7/avatar", matches: true),
        Case(location: Location(path: "/img/*.png"), url: "http://a.example/img/a/b.png", matches: true),
        Case(location: Location(path: "/img/*.png"), url: "http://a.example/img/a/b.jpg", matches: false),
        Case(location: Location(query: "debug=1"), url: "http://a.example/x?debug=1", matches: true),
        Case(location: Location(query: "debug=1"), url: "http://a.example/x?debug=10", matches: false),
        Case(location: Location(query: "*debug=1*"), url: "http://a.example/x?a=b&debug=1&c", matches: true),
        Case(location: Location(query: "debug=1"), url: "http://a.example/x", matches: false),
        Case(
            location: Location(protocol: "https", host: "*.example.com", port: 8443, path: "/api/*", query: "v=[0-9]"),
            url: "https://eu.example.com:8443/api/items?v=2", matches: true),
        Case(
            location: Location(protocol: "https", host: "*.example.com", port: 8443, path: "/api/*", query: "v=[0-9]"),
            url: "https://eu.example.com:8443/api/items?v=x", matches: false),
        Case(location: Location(path: "/a[b"), url: "http://a.example/a[b", matches: true),
    ]

    @Test(arguments: cases)
    func matching(_ testCase: Case) {
        #expect(LocationMatcher(testCase.location).matches(request(testCase.url)) == testCase.matches)
    }

    @Test func remainderAfterTrailingStar() {
        let matcher = LocationMatcher(Location(path: "/static/*"))
        #expect(matcher.remainingPath(of: request("http://a.example/static/css/site.css?v=3")) == "css/site.css")
        #expect(LocationMatcher(Location(path: "/v*/files/*")).remainingPath(of: request("http://a/v2/files/x/y")) == "x/y")
        #expect(LocationMatcher(Location(path: "/exact")).remainingPath(of: request("http://a/exact")) == nil)
        #expect(LocationMatcher(Location()).remainingPath(of: request("http://a/whole/path")) == "/whole/path")
    }

    @Test func wildcardBacktracking() {
        #expect(WildcardPattern("*a*b*c").matches("xxaxxbxxbxxc"))
        #expect(!WildcardPattern("*a*b*c").matches("xxaxxbxxbxx"))
        #expect(WildcardPattern("a**b").matches("ab"))
        #expect(WildcardPattern("").matchesEverything)
        #expect(WildcardPattern("**").matchesEverything)
    }
}

@Suite struct WildcardShapeTests {
    /// The prefix and suffix shortcuts agree with the general matcher on every input.
    @Test func shortcutsAgreeWithTheGeneralMatcher() {
        let patterns = ["*.example.com", "*.EXAMPLE.com", "/api/*", "/API/*", "*x", "x*", "*", "ab", "*ab*", "a?c*"]
        let inputs = ["api.example.com", "API.Example.COM", "example.com", ".example.com", "/api/v1", "/api", "/API/x", "x", "", "xx",
                      "abc", "zab", "a", "éx", "/api/é"]
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ax./éAEXbc*")
        let random = (0..<300).map { _ in String((0..<Int.random(in: 0...6, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "a" }) }
        for source in patterns {
            for caseInsensitive in [false, true] {
                let pattern = WildcardPattern(source, caseInsensitive: caseInsensitive)
                let steps = pattern.steps
                for input in inputs + random {
                    var copy = input
                    let general = copy.withUTF8 { WildcardPattern.match(steps, $0, lowercasing: caseInsensitive) }
                    #expect(pattern.matches(input) == general, "\(source) (case-insensitive \(caseInsensitive)) on \(input.debugDescription)")
                }
            }
        }
        #expect(WildcardPattern("*.example.com", caseInsensitive: true).matches("API.EXAMPLE.COM"))
        #expect(!WildcardPattern("/api/*").matches("/API/x"))
    }

    /// The SSL Proxying list's `host[:port]` entries are locations: read, written back the same,
    /// and matched with the same wildcards as a rule's (sets included).
    @Test func hostAndPortEntries() {
        let read: [(String, Location?)] = [
            ("api.example.com", Location(host: "api.example.com")),
            (" *.Test:8443 ", Location(host: "*.test", port: 8443)),
            ("*:443", Location(host: "*", port: 443)),
            ("[::1]:8443", Location(host: "::1", port: 8443)),
            ("::1", Location(host: "::1")),
            ("api-[0-9].test", Location(host: "api-[0-9].test")),
            ("", nil), ("host:", nil), ("host:0", nil), ("host:70000", nil), ("host:x", nil),
            ("[::1", nil), ("[::1]x", nil), (":443", nil), ("example.com/path", nil),
        ]
        for (text, expected) in read {
            #expect(Location(hostAndPort: text) == expected, "\(text)")
            if let expected { #expect(Location(hostAndPort: expected.hostAndPort) == expected) }
        }
        #expect(Location(host: "::1", port: 8443).hostAndPort == "[::1]:8443")
        #expect(Location(protocol: "https", host: "::1", port: 8443, path: "/v1/*").displayString == "https://[::1]:8443/v1/*")
        #expect(Location().displayString == "*://*/*")

        func matches(_ entry: String, _ host: String, _ port: Int) -> Bool {
            guard let location = Location(hostAndPort: entry) else { return false }
            let ssl = LocationMatcher(location).matches(host: host, port: port)
            // A rule's location with the same host and port agrees on any path.
            let rule = LocationMatcher(location).matches(request("https://\(host.contains(":") ? "[\(host)]" : host):\(port)/any/path?q=1"))
            #expect(ssl == rule, "\(entry) against \(host):\(port)")
            return ssl
        }
        #expect(matches("*.example.com", "api.example.com", 443))
        #expect(!matches("*.example.com:8443", "api.example.com", 443))
        #expect(matches("api-[0-9].test", "api-7.test", 443))
        #expect(!matches("api-[0-9].test", "api-x.test", 443))
        #expect(matches("API-?.test", "api-x.test", 8443))
        #expect(matches("*:443", "anything.test", 443))
        #expect(matches("[::1]:8443", "::1", 8443))
    }
}
