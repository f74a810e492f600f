import BlurfarmCommandSupport
import BlurfarmAPI
import BlurfarmFarm
import Foundation

/// `blurfarm serve`'s arguments read: the address, the public URLs, the token file.
extension ServerSettings {
    /// `host:port` (`[::1]:8765` for IPv6) as its parts; nil when it is not one.
    public static func address(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port)
        else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }

    /// The `host[:port]` of a public URL (`https://farm.example.com` → `farm.example.com`); the
    /// scheme's own port is left out (`https://farm.example.com:443` → `farm.example.com`, the
    /// Host a proxy sends); nil when it is not an http(s) URL with a host.
    public static func publicHost(_ url: String) -> String? {
        guard let parsed = URL(string: url), parsed.scheme == "http" || parsed.scheme == "https", let host = parsed.host,
            !host.isEmpty
        else { return nil }
        let own = parsed.scheme == "https" ? 443 : 80
        return parsed.port.flatMap { $0 == own ? nil : "\(host):\($0)" } ?? host
    }

    /// The token in the file at `path` (`--token-file`), surrounding whitespace dropped.
    /// - Throws: ``OptionError`` when the file cannot be read, or its token is not one word of
    ///   16 characters or more.
    public static func token(inFile path: String) throws(OptionError) -> String {
        guard let token = APIToken.read(file: path) else { throw OptionError("--token-file '\(path)': cannot be read") }
        guard token.count >= 16, !token.contains(where: \.isWhitespace) else {
            throw OptionError("--token-file '\(path)': the token must be one word of 16 characters or more")
        }
        return token
    }
}
