import BlurfarmManifest
import Testing

@Suite struct PathTemplateTests {
    @Test func expandsEveryPlaceholder() throws {
        let t = try PathTemplate("out/{job}/{variant}/{relpath}/{stem}-{ext}/{name}.webp")
        #expect(t.expand(stem: "IMG_1", ext: "JPG", name: "IMG_1.JPG", relpath: "2024/trip", job: "j", variant: "v")
            == "out/j/v/2024/trip/IMG_1-JPG/IMG_1.JPG.webp")
    }

    @Test func anEmptyRelpathTakesItsSlashAlong() throws {
        let t = try PathTemplate("out/{relpath}/{stem}.jpg")
        #expect(t.expand(stem: "a", ext: "jpg", name: "a.jpg", relpath: "", job: "j", variant: "v") == "out/a.jpg")
        #expect(t.expand(stem: "a", ext: "jpg", name: "a.jpg", relpath: "x", job: "j", variant: "v") == "out/x/a.jpg")
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
            message: "unknown placeholder '{stme}'; the placeholders are {stem} {ext} {name} {relpath} {job} {variant}",
            suggestion: "{stem}")) { try PathTemplate("out/{stme}.jpg") }
        #expect(throws: PathTemplate.SyntaxError(offset: 4, message: "placeholder is not closed by '}'", suggestion: nil)) {
            try PathTemplate("out/{stem.jpg")
        }
        #expect(throws: PathTemplate.SyntaxError(offset: 3, message: "'}' closes no placeholder", suggestion: nil)) {
            try PathTemplate("out}.jpg")
        }
    }
}
