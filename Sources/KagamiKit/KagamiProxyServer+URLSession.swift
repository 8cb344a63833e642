// URLSession routed through an in-process proxy. Apple's Foundation reads the proxy from
// connectionProxyDictionary; swift-corelibs-foundation on Linux ignores it and reads the
// http_proxy environment variable instead (docs/LIBRARY.md says what works where).
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension KagamiProxyServer {
    /// Sets `configuration` (and returns it) so its sessions send HTTP and HTTPS through this proxy, by
    /// `connectionProxyDictionary`. On macOS and iOS that is all it takes. On Linux URLSession
    /// ignores the dictionary: use a reverse proxy (``Configuration/reverseTarget``) and
    /// ``proxyURL`` as the client's base URL, or set `http_proxy` for a client process.
    public func routing(_ configuration: URLSessionConfiguration) -> URLSessionConfiguration {
        // The keys are CFNetwork's kCFNetworkProxiesHTTP* and kCFNetworkProxiesHTTPS* values,
        // spelled out because Linux has no CFNetwork to take the constants from.
        configuration.connectionProxyDictionary = [
            "HTTPEnable": 1, "HTTPProxy": self.configuration.proxy.host, "HTTPPort": port,
            "HTTPSEnable": 1, "HTTPSProxy": self.configuration.proxy.host, "HTTPSPort": port,
        ]
        return configuration
    }
}
