import Foundation
import KagamiFlow
import NIOHTTP1

/// The mark `kagami repeat` and the admin API put on a repeated request
/// (`Flow.repeatHeaderName`): the proxy takes it off before the request goes anywhere and
/// stores the exchange as a repeat of the one named.
enum RepeatMark {
    static func take(from headers: inout HTTPHeaders) -> UUID? {
        guard let value = headers[Flow.repeatHeaderName].first else { return nil }
        headers.remove(name: Flow.repeatHeaderName)
        return UUID(uuidString: value.trimmingCharacters(in: .whitespaces))
    }
}
