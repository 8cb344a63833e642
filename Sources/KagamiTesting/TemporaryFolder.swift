import Foundation

/// A test's own files, in a new folder under the system's temporary folder, readable by its
/// owner only.
public enum TemporaryFolder {
    /// A new empty folder named `kagami-<purpose>-<UUID>`.
    public static func make(_ purpose: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kagami-\(purpose)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return folder
    }

    /// The path of a file called `name` in a new folder, for the test to create.
    public static func path(_ purpose: String, _ name: String) throws -> String {
        try make(purpose).appendingPathComponent(name).path
    }
}

/// The path of a file called `name` in a new folder of its own (`TemporaryFolder.path`); when
/// that folder can't be made, a path under the temporary folder whose use will fail and say so.
public func temporaryPath(_ name: String) -> String {
    (try? TemporaryFolder.path("tests", name)) ?? NSTemporaryDirectory() + "kagami-unwritable/" + name
}
