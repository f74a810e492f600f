import BlurfarmAPI
import Foundation

extension FarmClient {
    /// Why the settings name no client.
    public enum SettingsError: Error, Sendable, CustomStringConvertible {
        /// The server is not an http(s) URL with a host.
        case notAURL(String)
        /// The token file cannot be read.
        case unreadableTokenFile(String)

        public var description: String {
            switch self {
            case .notAURL(let server): "the server must be a URL such as http://127.0.0.1:8765, not '\(server)'"
            case .unreadableTokenFile(let file): "token file '\(file)': cannot be read"
            }
        }
    }

    /// The service asked when none is named: loopback, port 8765.
    public static let defaultServer = "http://127.0.0.1:8765"

    /// The client of `server`, else of `$BLURFARM_SERVER` in `environment` (when not empty), else
    /// of `configuredServer`, else of ``defaultServer``; with the token in the file `tokenFile`,
    /// else `$BLURFARM_TOKEN_FILE`, else `configuredTokenFile` (surrounding whitespace dropped),
    /// or none.
    /// - Throws: ``SettingsError`` when the server is no URL or the token file cannot be read.
    public init(
        server: String?, tokenFile: String?, environment: [String: String], configuredServer: String?,
        configuredTokenFile: String?
    ) throws(SettingsError) {
        func named(_ key: String) -> String? { environment[key].flatMap { $0.isEmpty ? nil : $0 } }
        let server = server ?? named("BLURFARM_SERVER") ?? configuredServer ?? Self.defaultServer
        guard let base = URL(string: server), base.scheme == "http" || base.scheme == "https", base.host != nil else {
            throw .notAURL(server)
        }
        var token: String?
        if let file = tokenFile ?? named("BLURFARM_TOKEN_FILE") ?? configuredTokenFile {
            guard let read = APIToken.read(file: file) else { throw .unreadableTokenFile(file) }
            token = read
        }
        self.init(base: base, token: token)
    }
}
