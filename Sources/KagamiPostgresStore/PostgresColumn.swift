import Foundation
import PostgresNIO

/// A type whose values can be one column of rows written at once (`PostgresColumn`).
protocol PostgresColumnElement: PostgresEncodable {
    /// The PostgreSQL array type holding values of this type.
    static var columnArrayType: PostgresDataType { get }
}

extension PostgresColumnElement where Self: PostgresArrayEncodable {
    static var columnArrayType: PostgresDataType { psqlArrayType }
}

extension UUID: PostgresColumnElement {}
extension String: PostgresColumnElement {}
extension Int: PostgresColumnElement {}
extension Double: PostgresColumnElement {}
extension Bool: PostgresColumnElement {}
extension Date: PostgresColumnElement {}
extension Data: PostgresColumnElement {
    static var columnArrayType: PostgresDataType { .byteaArray }
}

/// One column of many rows, sent as one PostgreSQL array and turned back into rows by
/// `unnest($1::uuid[], $2::text[], …)`: a statement takes one parameter per column however
/// many rows it writes, so a batch stays far below the protocol's 65,535 parameters. Unlike
/// PostgresNIO's own arrays, values may be NULL, and bytea is supported.
struct PostgresColumn<Element: PostgresColumnElement>: PostgresEncodable {
    var values: [Element?]

    init(_ values: [Element?]) {
        self.values = values
    }

    init(_ values: [Element]) {
        self.values = values.map { $0 }
    }

    static var psqlType: PostgresDataType { Element.columnArrayType }
    static var psqlFormat: PostgresFormat { .binary }

    /// PostgreSQL's binary array format: dimensions, a NULL flag, the element type, the length
    /// and lower bound of the one dimension, then each element as a length (-1 for NULL) and bytes.
    func encode<JSONEncoder: PostgresJSONEncoder>(
        into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) throws {
        buffer.writeInteger(values.isEmpty ? 0 : 1, as: Int32.self)
        buffer.writeInteger(values.contains { $0 == nil } ? 1 : 0, as: Int32.self)
        buffer.writeInteger(Element.psqlType.rawValue)
        guard !values.isEmpty else { return }
        buffer.writeInteger(Int32(values.count), as: Int32.self)
        buffer.writeInteger(1, as: Int32.self)
        for value in values {
            guard let value else {
                buffer.writeInteger(-1, as: Int32.self)
                continue
            }
            let lengthIndex = buffer.writerIndex
            buffer.writeInteger(0, as: Int32.self)
            let start = buffer.writerIndex
            try value.encode(into: &buffer, context: context)
            buffer.setInteger(Int32(buffer.writerIndex - start), at: lengthIndex, as: Int32.self)
        }
    }
}
