import Foundation

/// What a token of a shared store lets its holder do in `kagami serve`.
public enum AccessRight: String, Sendable, Hashable, CaseIterable, Comparable {
    /// Browse sessions and export them.
    case read
    /// Also import into sessions and delete from them.
    case write

    public static func < (lhs: AccessRight, rhs: AccessRight) -> Bool { lhs == .read && rhs == .write }
}

/// A token given to one user of a shared store: its name and right. The secret itself is
/// shown once, when the token is made; the store keeps only its SHA-256.
public struct AccessToken: Sendable, Hashable {
    public var name: String
    public var right: AccessRight
    /// `user@host` of whoever made it.
    public var createdBy: String
    public var createdAt: Date

    public init(name: String, right: AccessRight, createdBy: String, createdAt: Date) {
        self.name = name
        self.right = right
        self.createdBy = createdBy
        self.createdAt = createdAt
    }
}
