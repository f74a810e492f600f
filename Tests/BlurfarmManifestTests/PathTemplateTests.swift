import BlurfarmManifest
import Testing

@Suite struct PathTemplateTests {
    @Test func expandsEveryPlaceholder() throws {
        let t = try PathTemplate("out/{job}/{variant}/{relpath}/{stem}-{ext}/{name}.webp")
        #expect(try t.expand(stem: "IMG_1", ext: "JPG", name: "IMG_1.JPG", relpath: "2024/trip", job: "j", variant: "v")
            == "out/j/v/2024/trip/IMG_1-JPG/IMG_1.JPG.webp")
    }

    @Test func anEmptyRelpathTakesItsSlashAlong() throws {
        let t = try PathTemplate("out/{relpath}/{stem}.jpg")
        #expect(try t.expand(stem: "a", ext: "jpg", name: "a.jpg", relpath: "", job: "j", variant: "v") == "out/a.jpg")
        #expect(try t.expand(stem: "a", ext: "jpg", name: "a.jpg", relpath: "x", job: "j", variant: "v") == "out/x/a.jpg")
    }

    @Test func fixedExtension() throws {
        #expect(try PathTemplate("out/{stem}.webp").fixedExtension == "webp")
        #expect(try PathTemplate("out.d/{stem}").fixedExtension == nil)
        #expect(try PathTemplate("out/{stem}.{ext}").fixedExtension == nil)
        #expect(try PathTemplate("out/{stem}.tar.TIFF").fixedExtension == "TIFF")
    }

    @Test func unknownPlaceholdersAreRefusedAtTheirOffset() {
        #expect(throws: PathTemplate.SyntaxError(
            offset: 4,
            message: "unknown placeholder '{stme}'; the placeholders are {stem} {ext} {name} {relpath} {job} {variant} {size}",
            suggestion: "{stem}")) { try PathTemplate("out/{stme}.jpg") }
        #expect(throws: PathTemplate.SyntaxError(offset: 4, message: "placeholder is not closed by '}'", suggestion: nil)) {
            try PathTemplate("out/{stem.jpg")
        }
        #expect(throws: PathTemplate.SyntaxError(offset: 3, message: "'}' closes no placeholder", suggestion: nil)) {
            try PathTemplate("out}.jpg")
        }
    }
}

@Suite struct PathTemplateClimbTests {
    /// `{stem}` of `...png` is `..`: as a whole segment it would climb out of `out/`.
    @Test func aPlaceholderThatMakesADotDotSegmentIsRefused() throws {
        let t = try PathTemplate("out/{stem}/{variant}.png")
        #expect(throws: PathTemplate.ClimbError(placeholder: .stem, segment: "..")) {
            try t.expand(stem: "..", ext: "png", name: "...png", relpath: "", job: "j", variant: "v")
        }
        #expect(throws: PathTemplate.ClimbError(placeholder: .stem, segment: ".")) {
            try t.expand(stem: ".", ext: "png", name: "..png", relpath: "", job: "j", variant: "v")
        }
        let dotted = try PathTemplate("out/{stem}./x.png")
        #expect(throws: PathTemplate.ClimbError(placeholder: .stem, segment: "..")) {
            try dotted.expand(stem: ".", ext: "png", name: "..png", relpath: "", job: "j", variant: "v")
        }
    }

    /// Dots inside a longer segment, and `..` written in the template itself, are not climbing.
    @Test func dotsThatMakeNoWholeSegmentAreKept() throws {
        let t = try PathTemplate("../out/{stem}.png")
        #expect(try t.expand(stem: "..", ext: "png", name: "...png", relpath: "", job: "j", variant: "v") == "../out/...png")
        let nested = try PathTemplate("out/{relpath}/{stem}.png")
        #expect(try nested.expand(stem: "a", ext: "png", name: "a.png", relpath: "x/y", job: "j", variant: "v") == "out/x/y/a.png")
    }
}
