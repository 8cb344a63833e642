import Foundation
import KagamiFlow

/// A session writer's entries as journal records, for a journal that keeps every entry (a
/// shared store's spool): a flow as a session file's journal keeps it, its bodies in the record;
/// the other kinds as the entry's key (16 bytes) and its JSON, in the record's first part.
extension SessionJournal {
    private struct MessagesRecord: Codable {
        var flowID: UUID
        var messages: [WebSocketMessage]
    }

    private struct ViolationsRecord: Codable {
        var flowID: UUID
        var violations: [ContractViolation]
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        // Dates as their own number, so an entry read back is the one written.
        encoder.dateEncodingStrategy = .deferredToDate
        return encoder
    }()

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .deferredToDate
        return decoder
    }()

    /// Appends `entry` as one record. A flow's key is its id (`SessionEntry`'s default).
    package func append(_ entry: SessionEntry) throws {
        let kind: Kind, metadata: Data
        var request = Data(), response = Data()
        // Any other entry's first part: its key, then its JSON.
        func keyed(_ json: Data) -> Data { withUnsafeBytes(of: entry.key.uuid) { Data($0) } + json }
        switch entry.item {
        case .flow(let flow):
            kind = .flow
            metadata = flow.storedRecord()
            request = flow.request.body.data
            response = flow.response?.body.data ?? Data()
        case .messages(let messages, let flowID):
            kind = .messages
            metadata = keyed(try Self.encoder.encode(MessagesRecord(flowID: flowID, messages: messages)))
        case .violations(let violations, let flowID):
            kind = .violations
            metadata = keyed(try Self.encoder.encode(ViolationsRecord(flowID: flowID, violations: violations)))
        case .note(let note):
            kind = .note
            metadata = keyed(try Self.encoder.encode(note))
        }
        guard append(kind: kind, metadata: metadata, request: .inline(request), response: .inline(response)) else {
            throw FlowStoreError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// The entry and key in the first part of a record of `kind` (not a flow); nil when it
    /// holds no such entry.
    static func entry(_ kind: Kind, _ metadata: Data) -> (SessionEntry.Item, key: UUID)? {
        guard metadata.count >= 16 else { return nil }
        let key = UUID(uuid: metadata.prefix(16).withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) })
        let json = metadata.dropFirst(16)
        switch kind {
        case .flow:
            return nil
        case .messages:
            guard let record = try? decoder.decode(MessagesRecord.self, from: json) else { return nil }
            return (.messages(record.messages, flowID: record.flowID), key)
        case .violations:
            guard let record = try? decoder.decode(ViolationsRecord.self, from: json) else { return nil }
            return (.violations(record.violations, flowID: record.flowID), key)
        case .note:
            guard let note = try? decoder.decode(SessionNote.self, from: json) else { return nil }
            return (.note(note), key)
        }
    }
}

extension SessionJournal.Record {
    /// The record as a session writer's entry, a flow with its bodies (those in the record).
    package var entry: SessionEntry {
        guard case .flow(var flow) = item else { return SessionEntry(item, key: key) }
        if case .inline(let data) = request { flow.request.body.data = data }
        if case .inline(let data) = response { flow.response?.body.data = data }
        return SessionEntry(.flow(flow), key: key)
    }
}
