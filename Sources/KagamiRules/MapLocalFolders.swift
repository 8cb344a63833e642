import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The folders Map Local may answer from and a response may be saved into ("save as the local
/// file"): the folders the user named for it, and nothing else. Whoever may change the rules
/// (the admin API, a rules file written back) can then make the proxy serve only files placed
/// there, never any other file the user can read — and never Kagami's own folder (its CA key,
/// its admin token, its sessions), even when a named folder holds it. Paths are judged with
/// every symbolic link resolved, so a link inside a folder can't point out of it.
public struct MapLocalFolders: Sendable, Hashable, CustomStringConvertible {
    /// Where a relative path starts (the rules file's folder, or the first folder named), and
    /// the first of `roots`.
    public let base: String
    /// Every folder files may be in, with their links resolved.
    public let roots: [String]
    /// Folders never read from or written to, whatever `roots` say: Kagami's own folder, but
    /// for its `map-local` folder (`openFolderName`), the default place for Map Local's files.
    public let excluded: [String]

    /// The one folder open inside an excluded folder.
    public static let openFolderName = "map-local"

    public init(base: String, roots: [String] = [], excluding excluded: [String]) {
        let base = Self.realPath(Self.absolute(base, from: FileManager.default.currentDirectoryPath))
        self.base = base
        var all = [base]
        for root in roots.map({ Self.realPath(Self.absolute($0, from: base)) }) where !all.contains(root) {
            all.append(root)
        }
        self.roots = all
        self.excluded = excluded.map { Self.realPath(Self.absolute($0, from: base)) }
    }

    /// No folder at all: Map Local answers from no file (the default of a pipeline built
    /// without folders, for rules that don't map anything locally).
    public static let none = MapLocalFolders(base: "/", roots: [], excluded: ["/"])

    private init(base: String, roots: [String], excluded: [String]) {
        self.base = base
        self.roots = roots
        self.excluded = excluded
    }

    public var description: String { roots.isEmpty ? "none" : roots.joined(separator: ", ") }

    /// Folders among `roots` that lie in an excluded folder, and so open nothing.
    public var closedRoots: [String] {
        roots.filter { root in
            excluded.contains { Self.isWithin(root, $0) && !Self.isWithin(root, $0 + "/" + Self.openFolderName) }
        }
    }

    /// `path` made absolute: a relative one starts at `base`, `~` at the user's home.
    public func absolute(_ path: String) -> String {
        Self.absolute(path, from: base)
    }

    /// The file at `path` (relative paths start at `base`) with its links resolved, when it lies
    /// in one of the folders; nil when it doesn't (or doesn't exist).
    public func readable(_ path: String) -> String? {
        guard let real = Self.resolved(absolute(path)) else { return nil }
        return permits(real) ? real : nil
    }

    /// Where a file saved as `path` would be written (relative paths start at `base`, links in its
    /// folders resolved), or why it may not be.
    public func writable(_ path: String) -> Result<String, AccessRefused> {
        let given = absolute(path)
        let components = given.split(separator: "/", omittingEmptySubsequences: true)
        guard !components.contains(where: { $0 == ".." || $0 == "." }), let name = components.last else {
            return .failure(AccessRefused(path: path, folders: self))
        }
        let real = Self.realPath((given as NSString).deletingLastPathComponent) + "/" + name
        // A link in the file's place would be followed by nothing that writes atomically
        // (a new file is renamed over it), so the file's own name needs no resolving.
        return permits(real) ? .success(real) : .failure(AccessRefused(path: path, folders: self))
    }

    /// Whether `path` (absolute, links resolved) is in a root and not in an excluded folder
    /// (but for the folder open inside it).
    func permits(_ path: String) -> Bool {
        roots.contains { Self.isWithin(path, $0) }
            && !excluded.contains { Self.isWithin(path, $0) && !Self.isWithin(path, $0 + "/" + Self.openFolderName) }
    }

    /// Refusal of a path outside the folders, saying which they are.
    public struct AccessRefused: Error, Sendable, Hashable, CustomStringConvertible {
        public var path: String
        public var folders: MapLocalFolders
        public var description: String {
            "\(path) is outside the folders Map Local may use (\(folders)); Kagami's own folder is never one. Put the file in one of them, or name its folder with --map-local-root"
        }
    }

    static func isWithin(_ path: String, _ folder: String) -> Bool {
        folder == "/" || path == folder || path.hasPrefix(folder + "/")
    }

    static func absolute(_ path: String, from base: String) -> String {
        if path == "~" || path.hasPrefix("~/") {
            let home = ProcessInfo.processInfo.environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            return path == "~" ? home : home + "/" + path.dropFirst(2)
        }
        return path.hasPrefix("/") ? path : (base as NSString).appendingPathComponent(path)
    }

    /// `path` with every link resolved (`realpath(3)`), or nil when it doesn't exist.
    static func resolved(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard realpath(path, &buffer) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `path` with every link resolved, as far as it exists; the parts that don't exist yet are
    /// appended as they are (with `.` and `..` taken out by the path's standardisation first).
    static func realPath(_ path: String) -> String {
        var missing: [String] = []
        var existing = (path as NSString).standardizingPath
        while true {
            if let real = resolved(existing) {
                return missing.isEmpty ? real : ([real == "/" ? "" : real] + missing.reversed()).joined(separator: "/")
            }
            let parent = (existing as NSString).deletingLastPathComponent
            if parent == existing || parent.isEmpty { return path }
            missing.append((existing as NSString).lastPathComponent)
            existing = parent
        }
    }
}
