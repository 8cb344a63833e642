// The generated `Client` (from openapi.json, written by `kagami convert notes.apib --to openapi`)
// with the transport this platform has.
import Foundation
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime

extension Client {
    /// A client of the API served at `serverURL` (a `kagami mock` of notes.apib, with its `/v1`).
    public static func notes(at serverURL: URL) -> Client {
        Client(serverURL: serverURL, transport: AsyncHTTPClientTransport())
    }
}
