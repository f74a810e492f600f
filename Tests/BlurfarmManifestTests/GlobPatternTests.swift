import BlurfarmManifest
import PropertyBased
import Testing

@Suite struct GlobPatternTests {
    @Test(arguments: [
        ("photos/**/*.jpg", "photos/a.jpg", true),
        ("photos/**/*.jpg", "photos/2024/trip/a.jpg", true),
        ("photos/**/*.jpg", "photos/a.png", false),
        ("photos/**/*.jpg", "other/a.jpg", false),
        ("photos/*.jpg", "photos/2024/a.jpg", false),
        ("photos/private/**", "photos/private/x/y.jpg", true),
        ("photos/private/**", "photos/public/x.jpg", false),
        ("*.jpg", ".hidden.jpg", true),
        ("a?c", "abc", true),
        ("a?c", "a/c", false),
        ("[a-c]x", "bx", true),
        ("[!a-c]x", "bx", false),
        ("[!a-c]x", "dx", true),
        ("\\*.jpg", "*.jpg", true),
        ("\\*.jpg", "a.jpg", false),
        ("**/x", "x", true),
        ("**/x", "a/b/x", true),
        ("a/**/b/**/c", "a/b/c", true),
        ("a/**/b/**/c", "a/x/b/y/z/c", true),
        ("a/**/b/**/c", "a/x/y/c", false),
        ("*a*a*a*a*b", String(repeating: "a", count: 60), false),
    ])
    func matches(_ pattern: String, _ path: String, _ expected: Bool) throws {
        #expect(try GlobPattern(pattern).matches(path) == expected)
    }

    @Test func theFixedPrefixAndRelativeFolders() throws {
        let glob = try GlobPattern("photos/2024/**/*.jpg")
        #expect(glob.fixedPrefix == "photos/2024")
        #expect(glob.relativeFolder(of: "photos/2024/trip/day1/a.jpg") == "trip/day1")
        #expect(glob.relativeFolder(of: "photos/2024/a.jpg") == "")
        #expect(glob.relativeFolder(of: "photos/2023/a.jpg") == nil)
        #expect(try GlobPattern("*.jpg").fixedPrefix == "")
        #expect(try GlobPattern("a/b/c.jpg").fixedPrefix == "a/b")
        #expect(try GlobPattern("a/b?/c.jpg").fixedPrefix == "a")
    }

    @Test(arguments: [
        ("", 0, "empty glob"),
        ("/abs/*.jpg", 0, "a glob is relative to the manifest's folder; remove the leading '/'"),
        ("a//b", 2, "empty folder name in glob"),
        ("a/**x", 2, "'**' must be a whole path segment, as in 'photos/**/*.jpg'"),
        ("a/[bc", 2, "'[' is not closed by ']'"),
        ("a\\", 1, "'\\' at the end of a glob escapes nothing"),
        ("[z-a]", 1, "range 'z-a' is backwards"),
    ])
    func syntaxErrors(_ pattern: String, _ offset: Int, _ message: String) {
        #expect(throws: GlobPattern.SyntaxError(offset: offset, message: message)) { try GlobPattern(pattern) }
    }

    /// An obviously correct (exponential) matcher to check the fast one against.
    static func reference(_ p: [Character], _ s: [Character]) -> Bool {
        if p.isEmpty { return s.isEmpty }
        if p.count >= 3, p[0] == "*", p[1] == "*", p[2] == "/" {
            // `**/`: zero or more whole folders.
            if reference(Array(p[3...]), s) { return true }
            for (k, c) in s.enumerated() where c == "/" && reference(p, Array(s[(k + 1)...])) { return true }
            return false
        }
        if p.count == 2, p[0] == "*", p[1] == "*" { return true }
        switch p[0] {
        case "*":
            for k in 0...s.count {
                if s[..<k].contains("/") { break }
                if reference(Array(p[1...]), Array(s[k...])) { return true }
            }
            return false
        case "?":
            return !s.isEmpty && s[0] != "/" && reference(Array(p[1...]), Array(s[1...]))
        default:
            return !s.isEmpty && s[0] == p[0] && reference(Array(p[1...]), Array(s[1...]))
        }
    }

    @Test func agreesWithAReferenceMatcher() async {
        let patternPieces = ["a", "b", "/", "*", "?", "**/"]
        let pathPieces = ["a", "b", "/"]
        let patterns = Gen.element(of: patternPieces).array(of: 1...6).map { $0.map { $0! }.joined() }
            .filter { (try? GlobPattern($0)) != nil }
        let paths = Gen.element(of: pathPieces).array(of: 1...8).map { $0.map { $0! }.joined() }
            .filter { !$0.hasPrefix("/") && !$0.hasSuffix("/") && !$0.contains("//") }
        await propertyCheck(count: 3000, input: patterns, paths) { pattern, path in
            let fast = try GlobPattern(pattern).matches(path)
            #expect(fast == Self.reference(Array(pattern), Array(path)), "\(pattern) vs \(path)")
        }
    }
}
