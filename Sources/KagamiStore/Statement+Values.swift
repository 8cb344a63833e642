import Foundation
import GRDB
import GRDBSQLite

/// One value bound to an SQL parameter by `Statement.run(_:in:)`.
enum SQLiteValue {
    case text(String)
    case integer(Int)
    case double(Double)
    case blob(Data)
    case null

    init(_ text: String?) { self = text.map(SQLiteValue.text) ?? .null }
    init(_ number: Int?) { self = number.map(SQLiteValue.integer) ?? .null }
    init(_ number: Double?) { self = number.map(SQLiteValue.double) ?? .null }
}

extension Statement {
    /// Runs a statement that returns no rows with `values` bound to its parameters in order,
    /// straight through SQLite's own calls: the writer's inserts run once per flow, and GRDB's
    /// `StatementArguments` would box each value into an existential first. Errors are GRDB's
    /// own `DatabaseError`, with SQLite's extended code, so callers tell a constraint apart.
    func run(_ values: [SQLiteValue], in db: Database) throws {
        let statement = sqliteStatement
        // A value short would leave the previous row's in its place.
        guard sqlite3_bind_parameter_count(statement) == values.count else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "\(values.count) values for \(sqlite3_bind_parameter_count(statement)) parameters", sql: sql)
        }
        sqlite3_reset(statement)
        for (offset, value) in values.enumerated() {
            let index = CInt(offset + 1)
            let code: CInt
            switch value {
            case .text(var text):
                code = text.withUTF8 { utf8 in
                    utf8.withMemoryRebound(to: CChar.self) { characters in
                        guard let start = characters.baseAddress else { return sqlite3_bind_text(statement, index, "", 0, transientBytes) }
                        return sqlite3_bind_text(statement, index, start, CInt(characters.count), transientBytes)
                    }
                }
            case .integer(let number):
                code = sqlite3_bind_int64(statement, index, sqlite3_int64(number))
            case .double(let number):
                code = sqlite3_bind_double(statement, index, number)
            case .blob(let data):
                // An empty blob is a zero-length blob, not NULL.
                code = data.withUnsafeBytes { bytes in
                    sqlite3_bind_blob(statement, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), CInt(bytes.count), transientBytes)
                }
            case .null:
                code = sqlite3_bind_null(statement, index)
            }
            guard code == SQLITE_OK else { throw error(in: db) }
        }
        guard sqlite3_step(statement) == SQLITE_DONE else {
            let failure = error(in: db)
            sqlite3_reset(statement)
            throw failure
        }
        sqlite3_reset(statement)
    }

    private func error(in db: Database) -> DatabaseError {
        let message = sqlite3_errmsg(db.sqliteConnection).map { String(cString: $0) }
        return DatabaseError(resultCode: ResultCode(rawValue: sqlite3_extended_errcode(db.sqliteConnection)), message: message, sql: sql)
    }
}

/// SQLite copies the bytes before the call returns.
private let transientBytes = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
