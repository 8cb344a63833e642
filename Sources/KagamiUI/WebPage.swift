import Foundation
import Hummingbird

/// The page's files (HTML, CSS, JavaScript modules), read once from the module's resources.
/// Only files that exist in the folder are served, so no request path reaches the file system.
struct WebPage: Sendable {
    struct File: Sendable {
        var bytes: ByteBuffer
        var contentType: String
    }

    let files: [String: File]

    static func load() throws -> WebPage {
        guard let folder = Bundle.module.url(forResource: "Web", withExtension: nil) else {
            throw UIServerError("the web UI's files are missing from the Kagami build (resource folder Web)")
        }
        var files: [String: File] = [:]
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        for name in names where !name.hasPrefix(".") {
            let data = try Data(contentsOf: folder.appendingPathComponent(name))
            files[name] = File(bytes: ByteBuffer(bytes: data), contentType: contentType(of: name))
        }
        guard files["index.html"] != nil else { throw UIServerError("the web UI's index.html is missing from \(folder.path)") }
        return WebPage(files: files)
    }

    static func contentType(of name: String) -> String {
        switch (name as NSString).pathExtension {
        case "html": "text/html; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        default: "application/octet-stream"
        }
    }

    func register(on router: Router<some RequestContext>) {
        router.get("/") { _, _ in try self.response(for: "index.html") }
        router.get("/:file") { _, context in try self.response(for: context.parameters.get("file") ?? "") }
    }

    func response(for name: String) throws(APIError) -> Response {
        guard let file = files[name] else { throw APIError(.notFound, "no such file: /\(name)") }
        return Response(
            status: .ok,
            headers: [.contentType: file.contentType, .cacheControl: "no-cache"],
            body: .init(byteBuffer: file.bytes)
        )
    }
}
