import Foundation
import KagamiFlow

/// The sessions of a store shared by a team, for `kagami serve`: listed, opened by name for
/// reading, and followed live as proxies record into them.
public protocol SessionCatalog: Sendable {
    /// Every session, newest first.
    func sessions() async throws -> [SessionListing]
    /// The session `name` for reading (and for imports), or nil when there is none.
    func open(session name: String) async throws -> (any FlowStore)?
    /// Flows committed into any session from now on, by whichever proxy recorded them, and
    /// word when some may have gone by unannounced.
    func writerActivity() -> AsyncStream<WriterActivity>
    /// Where the sessions live, as the UI names it (no password).
    var description: String { get }
    /// The token of a user of the store, and its right, that `secret` is; nil when it is none.
    func token(presenting secret: String) async throws -> (name: String, right: AccessRight)?
}

extension SessionCatalog {
    /// For catalogs that keep no tokens.
    public func token(presenting secret: String) async throws -> (name: String, right: AccessRight)? { nil }
}

/// One session as the list of sessions shows it.
public struct SessionListing: Sendable, Hashable {
    public var name: String
    public var recordedBy: String
    public var createdAt: Date
    public var flowCount: Int
    /// When its latest exchange started, if it has any.
    public var lastFlowAt: Date?

    public init(name: String, recordedBy: String, createdAt: Date, flowCount: Int, lastFlowAt: Date?) {
        self.name = name
        self.recordedBy = recordedBy
        self.createdAt = createdAt
        self.flowCount = flowCount
        self.lastFlowAt = lastFlowAt
    }
}

/// What following the writers of a catalog brings.
public enum WriterActivity: Sendable, Hashable {
    /// Flows a writer has just committed.
    case committed(CommittedFlows)
    /// Following the writers stopped (the connection it needs was lost, the server is
    /// restarting), for this reason; it is tried again until it resumes.
    case interrupted(String)
    /// Following the writers was interrupted and has resumed (the connection it needs was lost,
    /// the server restarted): flows committed meanwhile, into any session, were not announced.
    case resumed
}

/// Flows a writer has just committed into one session.
public struct CommittedFlows: Sendable, Hashable {
    public var session: String
    public var flowIDs: [UUID]

    public init(session: String, flowIDs: [UUID]) {
        self.session = session
        self.flowIDs = flowIDs
    }
}
