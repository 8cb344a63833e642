/// HTTP version names as archives write them and as flows keep them (`HTTP/1.1`, `HTTP/2.0`).
/// Readers differ: Chrome writes `http/2.0` (and `h3`), mitmproxy writes `HTTP/2` and reads
/// only `HTTP/2` or `http/2.0` as HTTP/2 (anything else is HTTP/1.1 to it).
enum HARHTTPVersion {
    /// A flow's version as the archive names it: HTTP/2 as `HTTP/2`, which mitmproxy and
    /// Chrome's readers take as HTTP/2; others as kept.
    static func written(_ version: String) -> String {
        version == "HTTP/2.0" ? "HTTP/2" : version
    }

    /// An archive's version as a flow keeps it, whoever wrote it; a name it doesn't know stays
    /// as written.
    static func read(_ version: String) -> String {
        switch version.lowercased() {
        case "h2", "h2c", "http/2", "http/2.0": "HTTP/2.0"
        case "h3", "http/3", "http/3.0": "HTTP/3"
        case "http/1.1": "HTTP/1.1"
        case "http/1.0": "HTTP/1.0"
        default: version
        }
    }
}
