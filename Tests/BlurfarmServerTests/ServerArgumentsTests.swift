import BlurfarmCommandSupport
import BlurfarmFarm
import BlurfarmServer
import Foundation
import Testing

/// `serve`'s arguments as BlurfarmServer reads them (`ServerSettings+Arguments`), by value.
@Suite struct ServerArgumentsTests {
    @Test func anAddressIsHostAndPortWithIPv6InBrackets() {
        #expect(ServerSettings.address("127.0.0.1:8765").map { "\($0.host) \($0.port)" } == "127.0.0.1 8765")
        #expect(ServerSettings.address("[::1]:0").map { "\($0.host) \($0.port)" } == "::1 0")
        #expect(ServerSettings.address("host") == nil)
        #expect(ServerSettings.address(":80") == nil)
        #expect(ServerSettings.address("h:70000") == nil)
    }

    @Test func aPublicURLGivesItsHostAndPort() {
        #expect(ServerSettings.publicHost("https://farm.example.com") == "farm.example.com")
        #expect(ServerSettings.publicHost("http://farm:8080/x") == "farm:8080")
        #expect(ServerSettings.publicHost("ftp://farm") == nil)
        // The scheme's own port is the Host a proxy sends without it.
        #expect(ServerSettings.publicHost("https://farm.example.com:443") == "farm.example.com")
        #expect(ServerSettings.publicHost("http://farm.example.com:80/") == "farm.example.com")
        #expect(ServerSettings.publicHost("https://farm.example.com:80") == "farm.example.com:80")
    }

    /// A token may be left out only on a loopback address written as one: a name that starts
    /// with `127.` may resolve anywhere.
    @Test func onlyLoopbackAddressesAreLoopback() {
        for host in ["127.0.0.1", "127.1.2.3", "localhost", "::1"] { #expect(ServerSettings.isLoopback(host), "\(host)") }
        for host in ["127.example.com", "127.0.0", "127.0.0.256", "127.0.0.1.nip.io", "0.0.0.0", "128.0.0.1", "::"] {
            #expect(!ServerSettings.isLoopback(host), "\(host)")
        }
    }

    @Test func aTokenIsOneWordOf16CharactersOrMore() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("token-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try Data("  0123456789abcdef\n".utf8).write(to: URL(fileURLWithPath: file))
        #expect(try ServerSettings.token(inFile: file) == "0123456789abcdef")
        try Data("short".utf8).write(to: URL(fileURLWithPath: file))
        #expect(throws: OptionError.self) { try ServerSettings.token(inFile: file) }
        #expect(throws: OptionError.self) { try ServerSettings.token(inFile: file + ".missing") }
    }
}
