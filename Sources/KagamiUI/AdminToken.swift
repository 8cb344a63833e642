import Foundation
import KagamiCertificates

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The secret the web UI and admin API want from every client, on loopback too (as mitmweb and
/// Jupyter do): the admin API can read and write files as the user who runs Kagami, so another
/// user of a shared machine, or a page in a browser, must not use it. One per installation,
/// kept readable by its owner only in `$KAGAMI_HOME/admin-token`; `kagami proxy` prints the UI's
/// address with it once, the browser keeps it as a cookie, and a program talking to a running
/// proxy reads it from the file.
public enum AdminToken {
    public static let fileName = "admin-token"

    public static var path: String { (KagamiHome.path as NSString).appendingPathComponent(fileName) }

    public struct FileError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The installation's token, made (128 random bits, mode 0600) the first time it is asked for.
    public static func installation(at path: String = AdminToken.path) throws -> String {
        if let token = try read(path) { return token }
        try KagamiHome.createPrivateDirectory((path as NSString).deletingLastPathComponent)
        let token = make()
        // O_EXCL: when two processes start at once, one token wins and both use it.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor < 0 {
            if errno == EEXIST, let token = try read(path) { return token }
            throw FileError(description: "cannot create the admin API's token file \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let bytes = Array((token + "\n").utf8)
        guard bytes.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == bytes.count else {
            unlink(path)
            throw FileError(description: "cannot write the admin API's token file \(path): \(String(cString: strerror(errno)))")
        }
        return token
    }

    /// The token kept at `path`, or nil when there is no file. A file others may read is
    /// refused: the token would be theirs too.
    public static func read(_ path: String = AdminToken.path) throws -> String? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
        if let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue, mode & 0o077 != 0 {
            throw FileError(description: "\(path) can be read by other users (mode \(String(mode, radix: 8))): run chmod 600 \(path), or delete it for a new token")
        }
        let text = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.count >= 32, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw FileError(description: "\(path) does not hold a token (32 or more letters and digits): delete it and a new one is made")
        }
        return text
    }

    /// 128 random bits, hex.
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(format: "%08x", UInt32.random(in: .min ... .max, using: &generator)) }.joined()
    }

    /// Compares without stopping at the first difference, so the time taken says nothing of
    /// how much of a guess was right.
    static func matches(_ presented: String, _ token: String) -> Bool {
        let a = Array(presented.utf8)
        let b = Array(token.utf8)
        var difference = a.count ^ b.count
        for index in 0..<b.count {
            difference |= Int((index < a.count ? a[index] : 0) ^ b[index])
        }
        return difference == 0
    }
}
