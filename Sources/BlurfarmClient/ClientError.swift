import Foundation

/// Why a request to the farm service failed.
public enum ClientError: Error, CustomStringConvertible {
    /// No answer from `server`: not listening, refused, timed out; `reason` as the system says it.
    case unreachable(server: URL, reason: String)
    /// The server answered `status` (not 2xx) with `message` (its `error`, or `HTTP <status>`).
    case refused(status: Int, message: String)
    /// The submitted manifest is invalid (422): `diagnostics` as `blurfarm check` prints them.
    case invalidManifest(diagnostics: String)
    /// The server answered `status` with a body that is not the API's JSON (`reason`: the decoder's word).
    case unexpectedAnswer(status: Int, reason: String)

    public var description: String {
        switch self {
        case .unreachable(let server, let reason): "cannot reach the farm service at \(server.absoluteString): \(reason)"
        case .refused(_, let message): message
        case .invalidManifest: "the manifest is invalid"
        case .unexpectedAnswer(let status, let reason):
            "the farm service's answer (HTTP \(status)) is not the API's JSON: \(reason)"
        }
    }
}
