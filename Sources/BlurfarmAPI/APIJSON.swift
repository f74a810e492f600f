import Foundation

/// The API's JSON (docs/api.md): keys sorted, slashes as they are, dates in ISO 8601 (UTC).
/// The server writes every answer and event with ``encoder()``; a client reads them with ``decoder()``.
public enum APIJSON {
    /// The encoder of the server's answers: compact, keys sorted.
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// `value` as the API's JSON, indented: what the client commands' `--json` print.
    public static func indented(_ value: some Encodable) throws -> Data {
        let encoder = encoder()
        encoder.outputFormatting.insert(.prettyPrinted)
        return try encoder.encode(value)
    }

    /// The decoder of the server's answers.
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
