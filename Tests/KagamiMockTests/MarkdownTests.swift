@testable import KagamiMock
import Testing

struct MarkdownTests {
    @Test func proseOfTheGistFoxExampleRendersAsApiaryShowsIt() {
        let html = Markdown.html("""
        Gist Fox API is a **pastes service** similar to [GitHub's Gist](http://gist.github.com).

        ## Authentication
        *Public* read-only access uses `access_token`:

        - one
        - two with `code`
          continued

        1. first
        2. second

        > quoted *text*

            GET /gists HTTP/1.1

        ```
        {"a": "<b>"}
        ```
        """)
        #expect(html.contains("<p>Gist Fox API is a <strong>pastes service</strong> similar to <a href=\"http://gist.github.com\">GitHub&#39;s Gist</a>.</p>")
            || html.contains("<p>Gist Fox API is a <strong>pastes service</strong> similar to <a href=\"http://gist.github.com\">GitHub's Gist</a>.</p>"), "\(html)")
        #expect(html.contains("<h4 class=\"md\">Authentication</h4>"))
        #expect(html.contains("<em>Public</em> read-only access uses <code>access_token</code>:"))
        #expect(html.contains("<ul><li>one</li><li>two with <code>code</code> continued</li></ul>"))
        #expect(html.contains("<ol><li>first</li><li>second</li></ol>"))
        #expect(html.contains("<blockquote><p>quoted <em>text</em></p></blockquote>"))
        #expect(html.contains("<pre class=\"md-code\"><code>GET /gists HTTP/1.1</code></pre>"))
        #expect(html.contains("<pre class=\"md-code\"><code>{&quot;a&quot;: &quot;&lt;b&gt;&quot;}</code></pre>"))
    }

    @Test func htmlAndUnsafeLinksAreShownNotRun() {
        let html = Markdown.html("""
        <script>alert(1)</script> [click](javascript:alert(1)) [data](data:text/html,x) <javascript:alert(1)>
        [ok](#notes) [mail](mailto:a@example.com) <https://example.com/docs>
        """)
        #expect(!html.contains("<script"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!html.contains("href=\"javascript:"))
        #expect(!html.contains("href=\"data:"))
        #expect(html.contains("<a href=\"#notes\">ok</a>"))
        #expect(html.contains("<a href=\"mailto:a@example.com\">mail</a>"))
        #expect(html.contains("<a href=\"https://example.com/docs\">https://example.com/docs</a>"))
    }

    @Test func snakeCaseAndLoneMarkersStayText() {
        #expect(Markdown.inline("created_at and updated_at") == "created_at and updated_at")
        #expect(Markdown.inline("2 * 3 * 4") == "2 * 3 * 4")
        #expect(Markdown.inline("a ` lone backtick") == "a ` lone backtick")
        #expect(Markdown.inline("[not a link] (x)") == "[not a link] (x)")
    }

    @Test func anyTextRendersWithoutCrashingOrOpeningTags() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ab *_`[]()<>#>-+1.\\\n \t:/\"'&")
        for _ in 0..<3_000 {
            let text = String((0..<Int.random(in: 0...80, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "a" })
            let html = Markdown.html(text)
            #expect(!html.contains("<script") && !html.contains("href=\"javascript"), "\(text.debugDescription) → \(html)")
        }
    }
}
