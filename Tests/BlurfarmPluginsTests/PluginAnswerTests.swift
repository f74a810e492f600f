import BlurfarmCore
import BlurfarmKernels
import BlurfarmPlugins
import BlurfarmTestSupport
import Foundation
import Testing

/// A plugin's answers are untrusted input: its rectangles are bounded before any use, what it
/// writes past its tile is caught, and its messages are data.
@Suite(.tags(.process), .blocking) struct PluginAnswerTests {
    static func filter(_ name: String, defines: [String]) throws -> (PluginFilter, URL) {
        let folder = try TestPlugins.folder()
        try TestPlugins.compile("misbehave.c", as: name, into: folder, defines: ["NAME=\"\(name)\""] + defines)
        let plugin = try PluginLoader(folders: [folder.path]).load(named: name)
        return (PluginFilter(plugin: plugin, spec: FilterSpec(name: name, arguments: [:]), mayRun: true), folder)
    }

    @Test func aPluginsMessageHasItsControlCharactersEscaped() throws {
        let (filter, folder) = try Self.filter("shout", defines: ["FAIL", "MESSAGE=\"bad\\nnews \\033[31mred\""])
        defer { try? FileManager.default.removeItem(at: folder) }
        let image = PixelBuffer(rect: Rect(width: 4, height: 4))
        #expect(throws: FilterFailure(
            filter: "shout",
            message: "plugin 'shout' run failed (BLURFARM_ERROR_FAILED, -3): bad\\nnews \\u{001B}[31mred"
        )) { try filter.apply(input: image, output: PixelBuffer(rect: image.rect), image: image.rect) }
    }

    /// The output is a view of a larger buffer, as a tile of the shared output segment is:
    /// the pixel the plugin writes past its tile belongs to the neighbouring tile.
    @Test func aPluginWritingPastItsTileFailsItsTaskAndTheNeighboursAreUntouched() throws {
        let (filter, folder) = try Self.filter("overrun", defines: ["OVERRUN"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let image = Rect(width: 12, height: 12)
        let input = PixelBuffer(rect: image)
        let whole = PixelBuffer(rect: image)
        for y in 0..<12 { for x in 0..<12 { whole[x, y] = SIMD4(repeating: 0.25) } }
        let tile = Rect(x: 4, y: 4, width: 4, height: 4)
        #expect(throws: FilterFailure(
            filter: "overrun",
            message: "plugin 'overrun' run wrote outside its tile 4x4+4+4 (the guard pixels around it changed)"
        )) { try filter.apply(input: input, output: whole.view(tile), image: image) }
        for y in 0..<12 {
            for x in 0..<12 where !tile.contains(x: x, y: y) {
                #expect(whole[x, y] == SIMD4(repeating: 0.25), "pixel (\(x), \(y)) of a neighbouring tile changed")
            }
        }
    }

    /// The input may be a view of the shared source, which other tiles read: the plugin reads
    /// a copy of its own, so what it writes there changes nothing.
    @Test func aPluginWritingIntoItsInputChangesNothingOutsideIt() throws {
        let (filter, folder) = try Self.filter("scribble", defines: ["SCRIBBLE"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let image = Rect(width: 12, height: 12)
        let source = PixelBuffer(rect: image)
        for y in 0..<12 { for x in 0..<12 { source[x, y] = SIMD4(repeating: 0.25) } }
        let tile = Rect(x: 4, y: 4, width: 4, height: 4)
        try filter.apply(input: source.view(tile), output: PixelBuffer(rect: tile), image: image)
        #expect(source[4, 4] == SIMD4(repeating: 0.25), "the plugin wrote into the shared source")
    }

    /// 44722 × 44722 is 2·10⁹ pixels; 2^40 × 2^40 overflows any product of the sides.
    @Test(arguments: [("huge", "44722,44722", "44722x44722+0+0"), ("vast", "1LL<<40,1LL<<40", "1099511627776x1099511627776+0+0")])
    func aDomainOfDefinitionOutOfBoundsIsRefusedNamingThePlugin(name: String, domain: String, shown: String) throws {
        let (filter, folder) = try Self.filter(name, defines: ["DOMAIN=\(domain)"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let image = Rect(width: 64, height: 40)
        let chain = FilterChain(filters: [filter], edge: .grow)
        #expect(chain.problem(forImage: image)?.message == """
            plugin '\(name)' domain_of_definition returned the rectangle \(shown) for 64x40+0+0, out of bounds: \
            at most 224x152+-80+-56 (the rectangle given and the image, grown on each side by the size of either, the larger, and 16 px)
            """)
        // Nothing uses the answer: the output stays the image.
        #expect(chain.outputRect(forImage: image) == image)
    }
}
