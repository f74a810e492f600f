import BlurfarmSystem

/// The size of a binary PNM file (PBM `P4`, PGM `P5`, PPM `P6`), checked before decoding: the
/// file must hold every row its header claims.
///
/// libvips 8.14's PNM loader does not always notice that the data is missing: a header that
/// claims 99999 × 1 pixels over no data at all decoded to a black image in about one run in
/// fifteen (`FailureTests`), the loader's error lost between its threads. The header is text
/// (magic, width, height and, but for `P4`, the largest sample, separated by white space and
/// `#` comments up to the end of their line), then one white-space byte, then the samples.
/// Plain (text) PNM, `P1`–`P3`, and PFM are left to the loader.
package enum PNMStructure {
    /// Checks the PNM open on `fd`.
    package static func check(_ fd: Int32) throws(FileStructureProblem) {
        var header = [UInt8](repeating: 0, count: 1024)
        let read = header.withUnsafeMutableBytes { raw in
            Result { () throws(SystemCallError) -> Int in try Syscalls.read(fd, into: raw, at: 0) }
        }
        let (count, size): (Int, Int)
        do throws(SystemCallError) {
            (count, size) = (try read.get(), Int(try Syscalls.status(of: fd).st_size))
        } catch {
            throw FileStructureProblem(message: "cannot read: \(error.reason)")
        }
        let bytes = header[0..<count]
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "P"), let kind = [UInt8(ascii: "4"), UInt8(ascii: "5"), UInt8(ascii: "6")].firstIndex(of: bytes[1])
        else { return }
        var at = 2
        func number() -> Int? {
            while at < bytes.count {
                if bytes[at] == UInt8(ascii: "#") {
                    while at < bytes.count, bytes[at] != 0x0A, bytes[at] != 0x0D { at += 1 }
                } else if [0x20, 0x09, 0x0A, 0x0D, 0x0B, 0x0C].contains(bytes[at]) {
                    at += 1
                } else {
                    break
                }
            }
            var value = 0
            let start = at
            while at < bytes.count, (0x30...0x39).contains(bytes[at]), value < 1 << 32 {
                value = value * 10 + Int(bytes[at] - 0x30)
                at += 1
            }
            return at > start ? value : nil
        }
        // A header longer than 1 KiB, or not of this shape, is the loader's to refuse.
        guard let width = number(), let height = number() else { return }
        let maximum = kind == 0 ? 1 : number()
        guard let maximum, at < bytes.count else { return }
        let rowBytes: Int
        switch kind {
        case 0: rowBytes = (width + 7) / 8
        case 1: rowBytes = width * (maximum > 255 ? 2 : 1)
        default: rowBytes = width * 3 * (maximum > 255 ? 2 : 1)
        }
        let needed = at + 1 + rowBytes * height
        guard size >= needed else {
            throw FileStructureProblem(
                message: "the file holds \(size) bytes, but its header claims \(width)x\(height) pixels, "
                    + "\(needed) bytes: it is truncated")
        }
    }
}
