import Foundation
import KagamiControl
import KagamiProxy
import KagamiRepeat
import KagamiUI

extension LiveProxy {
    /// The proxy server running in this process, as `kagami proxy` and the tests give it to the
    /// UI: its breakpoints, its WebSockets and its SSL Proxying list (kept in `sslProxyingFile`
    /// when given).
    package init(proxy: ProxyServer, repeatRoute: RequestRepeater.Route, sslProxyingFile: String? = nil, certificatePath: String? = nil) {
        self.init(
            breakpoints: proxy.breakpoints, webSockets: proxy.webSockets, repeatRoute: repeatRoute,
            sslProxying: SSLProxyingControl(proxy: proxy, file: sslProxyingFile), certificatePath: certificatePath,
            clients: proxy.clientAccess, scenarios: proxy.scenarios)
    }
}

extension SSLProxyingControl {
    /// The list of `proxy`; replacing it writes `file` first (atomically), and a failed write
    /// keeps the list in force.
    package init(proxy: ProxyServer, file: String?) {
        let lock = NSLock()
        self.init(
            intercepting: proxy.intercepts,
            current: { proxy.sslProxying.current },
            replace: { list in
                try lock.withLock {
                    if let file {
                        try Data((list.json.serialized(.prettyPrinted) + "\n").utf8).write(to: URL(fileURLWithPath: file), options: .atomic)
                    }
                    proxy.sslProxying.replace(with: list)
                }
            },
            file: file)
    }
}
