import KagamiControl
import KagamiFlow
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns what went wrong talking to a server into the status the client gets and the error
/// stored with the exchange.
enum UpstreamFailure {
    static func classify(_ error: any Error, target: ProxyTarget, connectTimeout: TimeAmount) -> (HTTPResponseStatus, FlowError) {
        let server = target.authority
        if let refusal = error as? DestinationNotAllowed ?? (error as? NIOConnectionError).flatMap({ ($0.dnsAError ?? $0.dnsAAAAError) as? DestinationNotAllowed }) {
            return (.forbidden, FlowError(.notAllowed, refusal.description))
        }
        if let upgrade = error as? UpgradeError {
            return (.badGateway, FlowError(.badResponse, "\(server) \(upgrade.description)"))
        }
        if let broken = error as? UpstreamHTTP2Failure {
            return (.badGateway, FlowError(.badResponse, "\(server) \(broken.description)"))
        }
        if let reset = error as? NIOHTTP2Errors.StreamClosed {
            return (.badGateway, FlowError(.connectionReset, "\(server) reset the stream (RST_STREAM \(reset.errorCode.rfcName))"))
        }
        if let loss = error as? ThrottleLoss {
            return (.badGateway, FlowError(.aborted, loss.description))
        }
        if let channelError = error as? ChannelError {
            switch channelError {
            case .connectTimeout:
                return (.gatewayTimeout, FlowError(.timeout, "connecting to \(server) timed out after \(seconds(connectTimeout))"))
            case .eof, .ioOnClosedChannel, .alreadyClosed:
                return (.badGateway, FlowError(.connectionReset, "\(server) closed the connection without a response"))
            default:
                break
            }
        }
        if let connectionError = error as? NIOConnectionError {
            if connectionError.connectionErrors.isEmpty {
                return (.badGateway, FlowError(.dnsFailure, "could not resolve \(target.host)"))
            }
            let errnos = connectionError.connectionErrors.compactMap { ($0.error as? IOError)?.errnoCode }
            if !errnos.isEmpty, errnos.allSatisfy({ $0 == ECONNREFUSED }) {
                return (.badGateway, FlowError(.connectionRefused, "connection refused by \(server)"))
            }
            let first = connectionError.connectionErrors.first.map { "\($0.error)" } ?? "\(error)"
            return (.badGateway, FlowError(.other, "could not connect to \(server): \(first)"))
        }
        if let ioError = error as? IOError {
            switch ioError.errnoCode {
            case ECONNREFUSED:
                return (.badGateway, FlowError(.connectionRefused, "connection refused by \(server)"))
            case ECONNRESET, EPIPE:
                return (.badGateway, FlowError(.connectionReset, "\(server) reset the connection"))
            case ETIMEDOUT:
                return (.gatewayTimeout, FlowError(.timeout, "connection to \(server) timed out"))
            default:
                return (.badGateway, FlowError(.other, "error talking to \(server): \(ioError)"))
            }
        }
        if let mismatch = error as? ServerNameMismatch {
            return (.badGateway, FlowError(.tlsFailure, "TLS handshake with \(server) failed: \(mismatch)"))
        }
        if error is NIOSSLError || error is NIOSSLExtraError || error is BoringSSLError {
            return (.badGateway, FlowError(.tlsFailure, "TLS handshake with \(server) failed: \(TLSNames.reason(error))"))
        }
        if error is HTTPParserError {
            return (.badGateway, FlowError(.badResponse, "invalid HTTP response from \(server): \(error)"))
        }
        return (.badGateway, FlowError(.other, "error talking to \(server): \(error)"))
    }

    /// A failure after the response head went to the client: a body cut short.
    static func classifyDuringBody(_ error: any Error, target: ProxyTarget, received: Int) -> FlowError {
        let cutShort: Bool
        switch error {
        case let parserError as HTTPParserError: cutShort = parserError == .invalidEOFState
        case let channelError as ChannelError: cutShort = channelError == .eof
        case let ioError as IOError: cutShort = ioError.errnoCode == ECONNRESET || ioError.errnoCode == EPIPE
        default: cutShort = false
        }
        if cutShort {
            return FlowError(.connectionReset, "\(target.authority) closed the connection after \(received) bytes of the response body")
        }
        return classify(error, target: target, connectTimeout: .seconds(0)).1
    }

    /// The server stayed silent for `limit`: it stopped reading the request's body (`stalled`)
    /// or didn't answer.
    static func silence(of target: ProxyTarget, stalled: Bool, for limit: TimeAmount) -> FlowError {
        let within = seconds(limit)
        return stalled
            ? FlowError(.timeout, "\(target.authority) stopped reading the request for \(within)")
            : FlowError(.timeout, "no response from \(target.authority) within \(within)")
    }

    static func seconds(_ amount: TimeAmount) -> String {
        let ms = amount.nanoseconds / 1_000_000
        return ms % 1000 == 0 ? "\(ms / 1000) s" : "\(ms) ms"
    }
}
