import KagamiCertificates
import NIOCore
import NIOHTTP1

/// The page at http://kagami.ssl/ (a name only the proxy answers, like chls.pro/ssl and
/// mitm.it): Kagami's CA certificate to download, and how to trust it.
enum CertificatePage {
    static let host = "kagami.ssl"

    struct Response {
        var status: HTTPResponseStatus
        var contentType: String
        var disposition: String?
        var body: ByteBuffer
    }

    static func response(path: String, authority: CertificateAuthority?) -> Response {
        guard let authority else {
            return Response(status: .notFound, contentType: "text/plain; charset=utf-8", body: ByteBuffer(string: "HTTPS interception is off: there is no Kagami CA to download.\n"))
        }
        switch path.split(separator: "?").first.map(String.init) ?? path {
        case "/kagami-ca.pem", "/cert.pem":
            return Response(status: .ok, contentType: "application/x-pem-file", disposition: "attachment; filename=\"kagami-ca.pem\"", body: ByteBuffer(string: authority.certificatePEM))
        case "/kagami-ca.cer", "/kagami-ca.der", "/cert.der":
            return Response(status: .ok, contentType: "application/x-x509-ca-cert", disposition: "attachment; filename=\"kagami-ca.cer\"", body: ByteBuffer(bytes: authority.certificateDER))
        case "/":
            return Response(status: .ok, contentType: "text/html; charset=utf-8", body: ByteBuffer(string: html(authority)))
        default:
            return Response(status: .notFound, contentType: "text/plain; charset=utf-8", body: ByteBuffer(string: "Not found. Try http://kagami.ssl/\n"))
        }
    }

    static func html(_ authority: CertificateAuthority) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Kagami CA certificate</title>
        <style>
        body { font: 16px/1.5 -apple-system, system-ui, sans-serif; max-width: 44rem; margin: 2rem auto; padding: 0 1rem; color: #1d1d1f; }
        a.button { display: inline-block; padding: .6rem 1rem; margin: .25rem .5rem .25rem 0; border-radius: .5rem; background: #0a66d8; color: #fff; text-decoration: none; }
        code { background: #f2f2f5; padding: .1rem .3rem; border-radius: .25rem; word-break: break-all; }
        @media (prefers-color-scheme: dark) { body { background: #1c1c1e; color: #f2f2f7; } code { background: #2c2c2e; } }
        </style></head>
        <body>
        <h1>Kagami CA certificate</h1>
        <p>Install and trust this certificate so that Kagami can show the HTTPS traffic of this device.
        Only do this on devices you use for development.</p>
        <p><a class="button" href="/kagami-ca.pem">Download (PEM)</a><a class="button" href="/kagami-ca.cer">Download (DER, .cer)</a></p>
        <p>SHA-256 fingerprint: <code>\(authority.fingerprintSHA256)</code></p>
        <h2>iOS</h2>
        <ol><li>Open this page in Safari and download the certificate; allow the profile.</li>
        <li>Settings → General → VPN &amp; Device Management → install the Kagami profile.</li>
        <li>Settings → General → About → Certificate Trust Settings → turn on full trust for the Kagami CA.</li></ol>
        <h2>iOS Simulator</h2>
        <p><code>xcrun simctl keychain booted add-root-cert kagami-ca.pem</code></p>
        <h2>Android</h2>
        <p>Settings → Security → Encryption &amp; credentials → Install a certificate → CA certificate. Apps
        trust user CAs only when their network security config allows it (debug builds).</p>
        <h2>curl, Python and others</h2>
        <p><code>curl --cacert kagami-ca.pem -x http://PROXY:PORT https://example.com/</code></p>
        <p>See docs/HTTPS.md in the Kagami repository for macOS, Linux, Python and URLSession.</p>
        </body></html>
        """
    }
}
