import Foundation
import KagamiFlow
import KagamiGRPC

/// Charles's Map Local: requests to `from` are answered from a local file, or from a directory
/// by the path left after the location's trailing `*` (query ignored). When no such file exists
/// the request goes to the real server.
public struct MapLocalRule: Sendable, Hashable, Codable {
    public var name: String
    public var isEnabled: Bool
    public var from: Location
    /// A file or directory in one of the `MapLocalFolders`; relative paths start at their base
    /// (the rules document's directory).
    public var localPath: String

    public init(name: String, isEnabled: Bool = true, from: Location, localPath: String) {
        self.name = name
        self.isEnabled = isEnabled
        self.from = from
        self.localPath = localPath
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, isEnabled = "enabled", from, localPath = "local"
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(.name, default: "")
        isEnabled = try container.decode(.isEnabled, default: true)
        from = try container.decode(Location.self, forKey: .from)
        localPath = try container.decode(String.self, forKey: .localPath)
    }

    /// The file that answers `request`, or nil when there is none in `folders`.
    func file(for request: FlowRequest, source: LocationMatcher, folders: MapLocalFolders) -> (path: String, size: Int)? {
        let root = folders.absolute(localPath)
        let files = FileManager.default
        var isDirectory: ObjCBool = false
        guard files.fileExists(atPath: root, isDirectory: &isDirectory) else { return nil }
        var path = root
        if isDirectory.boolValue {
            let remainder = source.remainingPath(of: request) ?? ""
            let components = remainder.split(separator: "/", omittingEmptySubsequences: true)
                .map { $0.removingPercentEncoding ?? String($0) }
            // A path that climbs out of the directory is no file of ours.
            guard !components.contains(where: { $0 == ".." || $0.contains("/") }) else { return nil }
            path = ([root] + components).joined(separator: "/")
            if remainder.isEmpty || remainder.hasSuffix("/") { path += "/index.html" }
            // A gRPC method's answer in a folder: `/pkg.Service/Method` → `pkg.Service/Method.json`.
            if GRPCExchange.isGRPC(contentType: request.headers["content-type"]), !files.fileExists(atPath: path) { path += ".json" }
        }
        // Links resolved: the file itself must lie in the folders, wherever the rule points.
        guard let real = folders.readable(path), files.fileExists(atPath: real, isDirectory: &isDirectory), !isDirectory.boolValue,
              let attributes = try? files.attributesOfItem(atPath: real),
              let size = (attributes[.size] as? NSNumber)?.intValue else { return nil }
        return (real, size)
    }

    /// Media types by file extension, for the Content-Type of local answers.
    static func contentType(forFile path: String) -> String {
        let ext = (path as NSString).pathExtension.lowercased()
        switch ext {
        case "json": return "application/json"
        case "html", "htm": return "text/html; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "txt", "text", "log": return "text/plain; charset=utf-8"
        case "xml": return "application/xml"
        case "csv": return "text/csv; charset=utf-8"
        case "yaml", "yml": return "application/yaml"
        case "md": return "text/markdown; charset=utf-8"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "svg": return "image/svg+xml"
        case "webp": return "image/webp"
        case "ico": return "image/x-icon"
        case "pdf": return "application/pdf"
        case "zip": return "application/zip"
        case "gz": return "application/gzip"
        case "wasm": return "application/wasm"
        case "woff": return "font/woff"
        case "woff2": return "font/woff2"
        case "mp4": return "video/mp4"
        case "mp3": return "audio/mpeg"
        case "plist": return "application/x-plist"
        default: return "application/octet-stream"
        }
    }
}
