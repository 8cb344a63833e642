import Foundation

/// Kagami's own folder, for its CA and sessions: `$KAGAMI_HOME` when set, else `.kagami` in
/// `$HOME` (the passwd entry's home only when `HOME` is unset).
public enum KagamiHome {
    public static var path: String {
        let environment = ProcessInfo.processInfo.environment
        if let home = environment["KAGAMI_HOME"], !home.isEmpty {
            return expand(home)
        }
        return (userHome as NSString).appendingPathComponent(".kagami")
    }

    /// `$HOME`, or the passwd entry's home when it is unset.
    public static var userHome: String {
        ProcessInfo.processInfo.environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
    }

    /// `~` and `~/…` in a path given by the user, with `$HOME` as the shell would.
    public static func expand(_ path: String) -> String {
        if path == "~" { return userHome }
        if path.hasPrefix("~/") { return (userHome as NSString).appendingPathComponent(String(path.dropFirst(2))) }
        return path
    }

    /// Where `kagami proxy` and `kagami mock` put a new session when not given one.
    public static var sessions: String { (path as NSString).appendingPathComponent("sessions") }

    /// Creates `directory` (and its parents) readable by its owner only when it is missing.
    public static func createPrivateDirectory(_ directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }
}
