import Foundation
import KagamiTesting
import NIOCore
import NIOPosix

/// nginx (Debian's, which scripts/test.sh installs) as an HTTP/2 origin on 127.0.0.1: one server
/// with TLS offering h2 and http/1.1 by ALPN, one in clear text speaking HTTP/2 with prior
/// knowledge only (as nginx 1.22's `listen … http2` does). Both serve `files` from a folder and
/// answer `/echo` with the method, the protocol the request arrived in and its cookies, and set
/// two cookies on every answer.
final class NginxOrigin: Sendable {
    struct NotInstalled: Error, CustomStringConvertible {
        var description: String { "nginx is not installed: run scripts/test.sh once, which installs it" }
    }

    struct DidNotStart: Error, CustomStringConvertible {
        var log: String
        var description: String { "nginx did not start: \(log)" }
    }

    static let binary = "/usr/sbin/nginx"

    let directory: String
    let tlsPort: Int
    let clearTextPort: Int
    private let process: ChildProcess

    private init(directory: String, tlsPort: Int, clearTextPort: Int, process: ChildProcess) {
        self.directory = directory
        self.tlsPort = tlsPort
        self.clearTextPort = clearTextPort
        self.process = process
    }

    /// Starts nginx serving `files` (name → contents) with a certificate for `localhost` and
    /// 127.0.0.1 from `certificates`. Ports are picked free; a lost race for one is retried.
    static func start(files: [String: Data], certificates: TestCertificates) async throws -> NginxOrigin {
        guard FileManager.default.isExecutableFile(atPath: binary) else { throw NotInstalled() }
        let directory = NSTemporaryDirectory() + "kagami-nginx-" + UUID().uuidString
        let www = directory + "/www"
        try FileManager.default.createDirectory(atPath: www, withIntermediateDirectories: true)
        for (name, contents) in files {
            try contents.write(to: URL(fileURLWithPath: www + "/" + name))
        }
        let pem = try certificates.serverIdentity(for: "localhost").writePEM(to: directory)
        var lastLog = ""
        for _ in 0..<5 {
            let tlsPort = try await freePort(), clearTextPort = try await freePort()
            let configuration = """
            daemon off; master_process off; pid \(directory)/nginx.pid; error_log \(directory)/error.log;
            events {}
            http {
                access_log off;
                client_body_temp_path \(directory)/body; proxy_temp_path \(directory)/proxy;
                fastcgi_temp_path \(directory)/fastcgi; uwsgi_temp_path \(directory)/uwsgi; scgi_temp_path \(directory)/scgi;
                default_type application/octet-stream;
                add_header Set-Cookie "a=1" always;
                add_header Set-Cookie "b=2" always;
                server {
                    listen 127.0.0.1:\(tlsPort) ssl http2;
                    ssl_certificate \(pem.certificate);
                    ssl_certificate_key \(pem.key);
                    root \(www);
                    location = /echo { return 200 "$request_method $server_protocol cookie=$http_cookie\\n"; }
                }
                server {
                    listen 127.0.0.1:\(clearTextPort) http2;
                    root \(www);
                    location = /echo { return 200 "$request_method $server_protocol cookie=$http_cookie\\n"; }
                }
            }
            """
            let path = directory + "/nginx.conf"
            try configuration.write(toFile: path, atomically: true, encoding: .utf8)
            let process = try ChildProcess(binary, ["-c", path, "-p", directory, "-e", directory + "/error.log"], stdout: .null, stderr: .null)
            let origin = NginxOrigin(directory: directory, tlsPort: tlsPort, clearTextPort: clearTextPort, process: process)
            if try await origin.waitUntilListening() { return origin }
            origin.stop()
            lastLog = (try? String(contentsOfFile: directory + "/error.log", encoding: .utf8)) ?? ""
        }
        throw DidNotStart(log: lastLog)
    }

    /// True once both ports accept connections; false when nginx exited (a port was taken).
    private func waitUntilListening() async throws -> Bool {
        for _ in 0..<200 {
            guard process.isRunning else { return false }
            if await Self.accepts(tlsPort), await Self.accepts(clearTextPort) { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    private static func accepts(_ port: Int) async -> Bool {
        guard let channel = try? await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port).get() else { return false }
        try? await channel.close()
        return true
    }

    private static func freePort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        try await channel.close()
        return port
    }

    /// SIGKILL, as nginx without its master process exits only then.
    func stop() {
        process.signal(SIGKILL)
        process.waitUntilExit()
    }
}
