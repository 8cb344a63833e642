import KagamiFlow
import Testing

/// The one URL parser, with the cases where the three parsers it replaced disagreed.
@Suite struct AbsoluteURLTests {
    @Test(arguments: [
        // (url, scheme, host, port, target)
        ("http://example.com", "http", "example.com", 80, "/"),
        ("HTTPS://Example.com:8443/a/b?c=d", "https", "Example.com", 8443, "/a/b?c=d"),
        ("http://host?q=1", "http", "host", 80, "/?q=1"),
        ("ws://chat.local/socket", "ws", "chat.local", 80, "/socket"),
        ("wss://chat.local/socket", "wss", "chat.local", 443, "/socket"),
        ("http://[::1]:8080/x?y", "http", "::1", 8080, "/x?y"),
        ("http://[2001:db8::1]/", "http", "2001:db8::1", 80, "/"),
        // User info never goes on the wire (Rewrite's URL rule used to keep it in the host).
        ("http://user:secret@api.local/v1", "http", "api.local", 80, "/v1"),
        // Nor does the fragment (Rewrite's URL rule used to send it).
        ("http://api.local/page#section", "http", "api.local", 80, "/page"),
        ("http://api.local#top", "http", "api.local", 80, "/"),
        // An empty port is the scheme's default (RFC 3986 §3.2.3); the proxy used to refuse it.
        ("http://api.local:/p", "http", "api.local", 80, "/p"),
        // Read byte by byte: characters beyond ASCII stay whole, delimiters are found where they are.
        ("http://bücher.example/straße?q=ü", "http", "bücher.example", 80, "/straße?q=ü"),
        ("Svn+SSH.1-a://host:22/repo", "svn+ssh.1-a", "host", 22, "/repo"),
        ("http://host/a://b@c:1", "http", "host", 80, "/a://b@c:1"),
        ("http://host:00080", "http", "host", 80, "/"),
        ("http://host:65535?", "http", "host", 65535, "/?"),
    ])
    func parses(text: String, scheme: String, host: String, port: Int, target: String) throws {
        let url = try AbsoluteURL(parsing: text)
        #expect(url.scheme == scheme)
        #expect(url.host == host)
        #expect(url.port == port)
        #expect(url.target == target)
    }

    @Test(arguments: [
        ("example.com/path", "expected an absolute URL such as http://host/path, got \"example.com/path\""),
        ("1http://x/", "\"1http\" is not a URL scheme (a letter, then letters, digits, '+', '-' or '.')"),
        ("http:///path", "invalid host or port in \"\""),
        // Archive import used to take any number as a port.
        ("http://host:99999/", "invalid host or port in \"host:99999\""),
        ("http://host:0/", "invalid host or port in \"host:0\""),
        ("http://host:8o/", "invalid host or port in \"host:8o\""),
        ("http://::1/", "invalid host or port in \"::1\""),
        ("http://[::1/", "invalid host or port in \"[::1\""),
        ("http://a b/", "invalid host or port in \"a b\""),
        ("http://host:65536/", "invalid host or port in \"host:65536\""),
        ("http://host:123456789012345678901234567890/", "invalid host or port in \"host:123456789012345678901234567890\""),
        ("http://[::1]x/", "invalid host or port in \"[::1]x\""),
        ("é://host/", "\"é\" is not a URL scheme (a letter, then letters, digits, '+', '-' or '.')"),
        ("://host/", "\"\" is not a URL scheme (a letter, then letters, digits, '+', '-' or '.')"),
        ("http:/host/", "expected an absolute URL such as http://host/path, got \"http:/host/\""),
    ])
    func refuses(text: String, message: String) {
        #expect(throws: AbsoluteURL.ParseError.self) { try AbsoluteURL(parsing: text) }
        do {
            _ = try AbsoluteURL(parsing: text)
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func authoritiesAreWrittenOneWay() throws {
        #expect(Authority(host: "::1", port: 8080).description == "[::1]:8080")
        #expect(Authority(host: "api.local", port: 443).text(omittingPort: 443) == "api.local")
        #expect(Authority(host: "::1", port: 80).text(omittingPort: 80) == "[::1]")
        #expect(Authority(parsing: "[::1]:9000", defaultPort: nil) == Authority(host: "::1", port: 9000))
        #expect(Authority(parsing: "api.local", defaultPort: nil) == nil)
        #expect(Authority(parsing: "api.local", defaultPort: 443)?.port == 443)
        #expect(try AbsoluteURL(parsing: "https://[::1]:443/a?b#c").text == "https://[::1]/a?b")
        var request = FlowRequest(method: "GET", scheme: "https", host: "::1", port: 8443, target: "/")
        #expect(request.authority == "[::1]:8443")
        request.port = 443
        #expect(request.url == "https://[::1]/")
    }
}
