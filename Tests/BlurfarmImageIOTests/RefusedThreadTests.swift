@testable import BlurfarmImageIO
import Testing

/// A decode that failed because the system refused libvips a thread is told apart from a
/// file that does not decode: the file may be fine.
@Suite struct RefusedThreadTests {
    @Test(arguments: [
        "vips_threadset_run: unable to create thread",
        "webp2vips: Error creating thread: Resource temporarily unavailable",
        "GLib: creating thread 'vips-worker': Resource temporarily unavailable",
    ])
    func aThreadTheSystemRefusedIsNotADecodeFailure(message: String) {
        let error = ImageIOError.decoding("in/a.webp", LibvipsFailure(message: message))
        #expect(error.code == .systemRefusedThread)
        #expect(error.description == "in/a.webp: \(message)")
        #expect(!error.isTheInputsFault, "a run does not remember it: the next run tries the file again")
    }

    @Test(arguments: ["VipsJpeg: Premature end of input file", "libpng read error", "VipsForeignLoad: threads.png is not a known file format"])
    func corruptDataIsADecodeFailure(message: String) {
        let error = ImageIOError.decoding("in/a.jpg", LibvipsFailure(message: message))
        #expect(error.code == .decodeFailed)
        #expect(error.isTheInputsFault)
    }
}
