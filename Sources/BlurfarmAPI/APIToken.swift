import Foundation

/// The API's bearer token as a token file holds it (`serve --token-file`, the client's
/// `--token-file`, `$BLURFARM_TOKEN_FILE`, the configuration's `token-file`): its text,
/// surrounding whitespace dropped. The server and the client read it the same way.
public enum APIToken {
    /// The token in the file at `path`, or nil when the file cannot be read.
    public static func read(file path: String) -> String? {
        FileManager.default.contents(atPath: path).map {
            String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}
