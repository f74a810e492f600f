import Foundation
import Testing

@testable import BlurfarmImageIO

/// What `ImageReader.header(ofFile:)` reads of a file beside what libvips reads of it: the
/// check of every header read without libvips (`PNGHeaderTests`, `WebPHeaderTests`).
struct HeaderBesideLibvips: Equatable {
    /// The header read, or the code of its error.
    var header: ImageHeader?
    var error: ImageIOError.Code?

    init(_ read: () throws(ImageIOError) -> ImageHeader) {
        do throws(ImageIOError) { header = try read() } catch { self.error = error.code }
    }

    /// Expects the header of the file at `path` (the case `name`) to be libvips's header of it,
    /// and `readWithoutLibvips` (given the file open) to read one exactly when `plain`, which
    /// libvips then reads too.
    static func expect(
        _ path: String, _ name: String, plain: Bool, readWithoutLibvips: (Int32) -> Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let viaLibvips = HeaderBesideLibvips { () throws(ImageIOError) in try ImageReader.libvipsHeader(of: InputFile(path)) }
        #expect(
            HeaderBesideLibvips { () throws(ImageIOError) in try ImageReader.header(ofFile: path) } == viaLibvips, "\(name)",
            sourceLocation: sourceLocation)
        let descriptor = open(path, O_RDONLY)
        defer { close(descriptor) }
        #expect(readWithoutLibvips(descriptor) == plain, "\(name)", sourceLocation: sourceLocation)
        if plain { #expect(viaLibvips.header != nil, "\(name)", sourceLocation: sourceLocation) }
    }
}
