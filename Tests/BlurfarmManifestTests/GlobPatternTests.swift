import Foundation
import BlurfarmManifest
import PropertyBased
import Testing

@Suite struct GlobPatternTests {
    /// Which folders a search must list: those below which a path could match.
    @Test(arguments: [
        ("photos/*.png", "", true),
        ("photos/*.png", "photos", true),
        ("photos/*.png", "photos/archive", false),
        ("photos/*.png", "other", false),
        ("photos/**/*.png", "photos/a/b/c", true),
        ("photos/**/*.png", "photos/.thumbs", false),
        ("photos/**/.thumbs/*.png", "photos/a/.thumbs", true),
        ("photos/private/**", "photos/private/x", true),
        ("photos/private/**", "photos/public", false),
        ("{a,b}/x/*.png", "b/x", true),
        ("{a,b}/x/*.png", "c", false),
        ("*.png", "photos", false),
        ("*/*.png", "photos", true),
    ])
    func mayMatchBelowAFolder(pattern: String, folder: String, expected: Bool) throws {
        #expect(try GlobPattern(pattern).mayMatch(below: folder) == expected)
    }

    @Test(arguments: [
        ("photos/**/*.jpg", "photos/a.jpg", true),
        ("photos/**/*.jpg", "photos/2024/trip/a.jpg", true),
        ("photos/**/*.jpg", "photos/a.png", false),
        ("photos/**/*.jpg", "other/a.jpg", false),
        ("photos/*.jpg", "photos/2024/a.jpg", false),
        ("photos/private/**", "photos/private/x/y.jpg", true),
        ("photos/private/**", "photos/public/x.jpg", false),
        ("*.jpg", ".hidden.jpg", false),
        ("*.jpg", "._IMG.jpg", false),
        ("?_IMG.jpg", "._IMG.jpg", false),
        ("[.]x", ".x", false),
        (".*.jpg", "._IMG.jpg", true),
        ("photos/**/*.jpg", "photos/.thumbs/a.jpg", false),
        ("photos/**/*.jpg", "photos/2024/.thumbs/a.jpg", false),
        ("photos/**/.thumbs/*.jpg", "photos/2024/.thumbs/a.jpg", true),
        ("photos/private/**", "photos/private/.DS_Store", false),
        ("*.{jpg,JPG}", "IMG_0042.JPG", true),
        ("*.{jpg,JPG}", "IMG_0042.jpg", true),
        ("*.{jpg,JPG}", "IMG_0042.Jpg", false),
        ("*.jpg", "IMG_0042.JPG", false),
        ("{.*,*}.jpg", ".a.jpg", true),
        ("{*,.*}.jpg", "a.jpg", true),
        ("a{b,c{d,e}}f", "acef", true),
        ("a{b,c{d,e}}f", "acf", false),
        ("a{,b}c", "ac", true),
        ("{a,b}/x", "b/x", true),
        ("\\{a,b\\}", "{a,b}", true),
        ("x,y", "x,y", true),
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
        ("/srv/*.jpg", "/srv/a.jpg", true),
        ("/srv/*.jpg", "srv/a.jpg", false),
        ("srv/*.jpg", "/srv/a.jpg", false),
        ("**/*.jpg", "/srv/a.jpg", false),
        ("/**/*.jpg", "/srv/x/a.jpg", true),
        ("/*.jpg", "/a.jpg", true),
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
        #expect(try GlobPattern("a/{b,c}/d.jpg").fixedPrefix == "a")
        let absolute = try GlobPattern("/srv/photos/**/*.jpg")
        #expect(absolute.isAbsolute && absolute.fixedPrefix == "/srv/photos")
        #expect(absolute.relativeFolder(of: "/srv/photos/2024/a.jpg") == "2024")
        #expect(absolute.mayMatch(below: "/srv") && !absolute.mayMatch(below: "/etc"))
        #expect(try GlobPattern("/*.jpg").fixedPrefix == "/")
        #expect(try GlobPattern("/*.jpg").belowFixedPrefix("a.jpg") == "/a.jpg")
    }

    @Test(arguments: [
        ("", 0, "empty glob"),
        ("/", 0, "a glob needs a name after '/'"),
        ("//a", 1, "empty folder name in glob"),
        ("a//b", 2, "empty folder name in glob"),
        ("a/**x", 2, "'**' must be a whole path segment, as in 'photos/**/*.jpg'"),
        ("a/[bc", 2, "'[' is not closed by ']'"),
        ("a\\", 1, "'\\' at the end of a glob escapes nothing"),
        ("[z-a]", 1, "range 'z-a' is backwards"),
        ("a{b,c", 1, "'{' is not closed by '}'"),
        ("x/{a,b/c}", 2, "'{' is not closed by '}' within the name ('/' ends it)"),
        ("a}b", 1, "'}' without its '{' (write '\\}' for the character)"),
        ("x/{**,a}", 3, "'**' must be a whole path segment, as in 'photos/**/*.jpg'"),
        ("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}", 0, "this name has 2048 alternatives, more than 1024"),
    ])
    func syntaxErrors(_ pattern: String, _ offset: Int, _ message: String) {
        #expect(throws: GlobPattern.SyntaxError(offset: offset, message: message)) { try GlobPattern(pattern) }
    }

    /// The names a pattern with braces stands for, expanded as text (`a{b,c}` is `a` `b`, `ac`).
    static func expandBraces(_ p: [Character]) -> [[Character]] {
        guard let open = p.firstIndex(of: "{") else { return [p] }
        var depth = 0
        var commas: [Int] = []
        var close = open
        for k in open..<p.count {
            if p[k] == "{" { depth += 1 }
            if p[k] == "}" { depth -= 1 }
            if p[k] == ",", depth == 1 { commas.append(k) }
            if depth == 0 { close = k; break }
        }
        let bounds = [open] + commas + [close]
        return zip(bounds, bounds.dropFirst()).flatMap { from, to in
            expandBraces(Array(p[..<open]) + Array(p[(from + 1)..<to]) + Array(p[(close + 1)...]))
        }
    }

    /// An obviously correct (exponential) matcher to check the fast one against: braces
    /// expanded as text, then the shell's rules, a leading `.` of a name matched only by a
    /// literal `.`. `**` is special only as written (a whole name), not when braces put two
    /// `*` together: it becomes `§` before the braces are expanded.
    static func reference(_ p: [Character], _ s: [Character]) -> Bool {
        let written = Array(String(p).replacingOccurrences(of: "**", with: "§"))
        return expandBraces(written).contains { reference($0, s, atNameStart: true) }
    }

    static func reference(_ p: [Character], _ s: [Character], atNameStart: Bool) -> Bool {
        if p.isEmpty { return s.isEmpty }
        let hidden = atNameStart && s.first == "."
        if p.count >= 2, p[0] == "§", p[1] == "/" {
            // `**/`: zero or more whole folders, none hidden.
            if reference(Array(p[2...]), s, atNameStart: true) { return true }
            var k = 0
            while let slash = s[k...].firstIndex(of: "/") {
                if s[k] == "." { return false }
                if reference(p, Array(s[(slash + 1)...]), atNameStart: true) { return true }
                k = slash + 1
            }
            return false
        }
        if p == ["§"] {
            // At the end: at least one name, none hidden.
            return !s.isEmpty && !s.split(separator: "/").contains { $0.first == "." }
        }
        switch p[0] {
        case "*":
            if hidden { return false }
            for k in 0...s.count {
                if s[..<k].contains("/") { break }
                if reference(Array(p[1...]), Array(s[k...]), atNameStart: k == 0 && atNameStart) { return true }
            }
            return false
        case "?":
            return !hidden && !s.isEmpty && s[0] != "/" && reference(Array(p[1...]), Array(s[1...]), atNameStart: false)
        default:
            return !s.isEmpty && s[0] == p[0] && reference(Array(p[1...]), Array(s[1...]), atNameStart: s[0] == "/")
        }
    }

    @Test func agreesWithAReferenceMatcher() async {
        let patternPieces = ["a", "b", "é", ".", "/", "*", "?", "**/", "{a,.b}", "{*,.}", "{,a{b,*}}"]
        let pathPieces = ["a", "b", "é", ".", "/"]
        let patterns = Gen.element(of: patternPieces).array(of: 1...6).map { $0.map { $0! }.joined() }
            .filter { (try? GlobPattern($0)) != nil }
        let paths = Gen.element(of: pathPieces).array(of: 1...8).map { $0.map { $0! }.joined() }
            .filter { path in
                !path.hasPrefix("/") && !path.hasSuffix("/")
                    && !path.split(separator: "/", omittingEmptySubsequences: false).contains { $0.isEmpty || $0 == "." || $0 == ".." }
            }
        await propertyCheck(count: 3000, input: patterns, paths) { pattern, path in
            let fast = try GlobPattern(pattern).matches(path)
            #expect(fast == Self.reference(Array(pattern), Array(path)), "\(pattern) vs \(path)")
        }
    }
}
