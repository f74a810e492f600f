import BlurfarmCore
import BlurfarmState
import BlurfarmTestSupport
import Foundation
import Testing

@testable import BlurfarmCoordinator

/// The plan holds its files by identity as a hash and a position each (``IdentityIndex``), not
/// a dictionary of identities with their writers (63 MB of a 100,000-input plan's 125 MB heap
/// peak): what it finds must be what the dictionary found.
@Suite struct IdentityIndexTests {
    /// Random identities, many of them repeated: the candidates of each, told apart by their
    /// identities, are exactly the positions that hold it, and the runs of one hash hold every
    /// file that more than one position holds.
    /// Names of files, among them two that are one string to Swift and two files to the kernel.
    static let names = (0..<38).map { "f\($0)" } + ["\u{E9}", "e\u{301}"]

    @Test func candidatesAndSharedHashesAreWhatADictionaryFinds() {
        var generator = SplitMix(seed: 47)
        for _ in 0..<200 {
            let count = Int.random(in: 0...300, using: &generator)
            let identities: [RealPath.Identity] = (0..<count).map { _ in
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: .file(device: UInt64.random(in: 1...2, using: &generator), inode: UInt64.random(in: 1...40, using: &generator))
                case 1: .entry(device: 1, inode: UInt64.random(in: 1...3, using: &generator), name: .init(Self.names[Int.random(in: 0..<Self.names.count, using: &generator)]))
                default: .path(.init("/missing/" + Self.names[Int.random(in: 0..<Self.names.count, using: &generator)]))
                }
            }
            var index = IdentityIndex(capacity: count)
            for identity in identities { index.add(identity) }
            index.seal()
            var reference: [RealPath.Identity: [Int]] = [:]
            for (position, identity) in identities.enumerated() { reference[identity, default: []].append(position) }
            for (identity, positions) in reference {
                // Each of its positions, in order: the first from each on.
                for position in positions {
                    #expect(index.first(of: identity) { $0 >= position && identities[$0] == identity } == position)
                }
            }
            #expect(index.first(of: .path(.init("/never"))) { identities[$0] == .path(.init("/never")) } == nil)
            let whole: [[Int]] = IdentityIndex.sharedHashes(across: [index]).map { run in run.map(\.position) }
            let shared = whole.flatMap { run in
                Dictionary(grouping: run) { identities[$0] }.values.filter { $0.count > 1 }
            }
            #expect(Set(shared) == Set(reference.values.filter { $0.count > 1 }))
            // In parts (a plan's), the runs are the whole index's, the parts never put together.
            let cuts = ([0, count] + (0..<Int.random(in: 0...3, using: &generator)).map { _ in Int.random(in: 0...count, using: &generator) }).sorted()
            let parts = zip(cuts, cuts.dropFirst()).map { range -> IdentityIndex in
                var part = IdentityIndex()
                for position in range.0..<range.1 { part.add(identities[position]) }
                part.seal()
                return part
            }
            // Each part's positions count from its start.
            let across: [[Int]] = IdentityIndex.sharedHashes(across: parts).map { run in run.map { cuts[$0.index] + $0.position } }
            #expect(across == whole, "cut at \(cuts)")
        }
    }

    /// An output's number is found again as its input's place, its own among the input's
    /// outputs and the diagnostics told before it: random inputs of none to four outputs each,
    /// diagnostics told between any two outputs.
    @Test func anOutputsNumberGivesBackItsPlace() {
        var generator = SplitMix(seed: 4747)
        for _ in 0..<300 {
            var numbers = OutputNumbers()
            var expected: [(input: Int, output: Int, diagnosticsBefore: Int)] = []
            var diagnostics = Int.random(in: 0...2, using: &generator)
            for input in 0..<Int.random(in: 0...40, using: &generator) {
                for output in 0..<Int.random(in: 0...4, using: &generator) {
                    if Int.random(in: 0..<4, using: &generator) == 0 { diagnostics += Int.random(in: 1...3, using: &generator) }
                    #expect(numbers.next(input: input, diagnosticsBefore: diagnostics) == expected.count)
                    expected.append((input, output, diagnostics))
                }
            }
            #expect(numbers.count == expected.count)
            for (number, place) in expected.enumerated() {
                let found = numbers.place(of: number)
                #expect(found == place, "output \(number) of \(expected.count)")
            }
        }
    }

    /// Two outputs that are one file are found after every output is in, and each error is
    /// told where the plan came to its output, among the errors told as they were found.
    @Test func errorsOfOutputsThatAreOneFileComeInThePlansOrder() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("identities-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        for folder in ["in", "out"] { try FileManager.default.createDirectory(atPath: "\(root)/\(folder)", withIntermediateDirectories: true) }
        // Another spelling of `out`: its files are `out`'s.
        try FileManager.default.createSymbolicLink(atPath: root + "/same", withDestinationPath: "out")
        // And of `in`: its files are the inputs.
        try FileManager.default.createSymbolicLink(atPath: root + "/src", withDestinationPath: "in")
        for name in ["a", "b"] { _ = FileManager.default.createFile(atPath: "\(root)/in/\(name).png", contents: Data(name.utf8)) }
        let manifest = root + "/job.job"
        try """
            job: same
            inputs: [in/*.png]
            outputs:
              - name: one
                path: out/{stem}.png
              - name: two
                path: same/{stem}.png
              - name: three
                path: src/{stem}.png

            """.write(toFile: manifest, atomically: true, encoding: .utf8)
        let diagnostics: Diagnostics
        switch try RecipeVersionsTests.plan(manifestAt: manifest) {
        case .success: Issue.record("planned"); return
        case .failure(let failure): diagnostics = failure
        }
        let messages = diagnostics.map(\.message)
        let expected = [
            "variants 'one' (for in/a.png) and 'two' (for in/a.png) both write",
            "variant 'three' would overwrite the input 'in/a.png'",
            "variants 'one' (for in/b.png) and 'two' (for in/b.png) both write",
            "variant 'three' would overwrite the input 'in/b.png'",
        ]
        #expect(messages.count == expected.count, "\(messages)")
        for (message, start) in zip(messages, expected) { #expect(message.hasPrefix(start), "\(messages)") }
    }
}
