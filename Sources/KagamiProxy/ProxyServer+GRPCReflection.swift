import Foundation
import KagamiFlow
import KagamiGRPC

extension ProxyServer {
    /// Server reflection asked through this proxy's own upstream connections (its allow list,
    /// never its own listeners), unrecorded: where the session's gRPC schemas and Map Local
    /// learn a server's methods when no `.proto` is given.
    public var grpcReflection: GRPCSchemas.Reflection {
        { [self] request, service in
            try await ServerReflection.files(defining: service, send: self.grpcReflectionSend(host: request.host, port: request.port, tls: request.scheme == "https"))
        }
    }

    /// Reflection requests to one server, through this proxy's upstream connections (the
    /// contract check's `grpc-reflection=URL`, too).
    public func grpcReflectionSend(host: String, port: Int, tls: Bool) -> ServerReflection.Send {
        { [self] path, body in
            let answer = try await self.upstreamHTTP2Request(
                host: host, port: port, tls: tls, path: path,
                headers: HeaderFields([("content-type", "application/grpc"), ("te", "trailers")]), body: body)
            return ServerReflection.Answer(body: answer.body, status: GRPCExchange.status(trailers: answer.trailers, headers: answer.headers))
        }
    }
}
