// The libvips side of reading and writing images band by band (CVipsShim's cvips_bands.c):
// a region that computes an image's rows top to bottom, and an image whose rows are supplied
// by the caller while a saver reads them.
import CVips
import CVipsShim

/// A region of an image, to compute its rows one band after another (sequential images must
/// be read top to bottom).
final class VipsRegionRef {
    private let pointer: UnsafeMutablePointer<VipsRegion>
    /// The image the region reads, kept alive as long as the region.
    let image: VipsImageRef

    init(_ image: VipsImageRef) throws(LibvipsFailure) {
        var region: UnsafeMutablePointer<VipsRegion>?
        guard cvips_region_new(image.pointer, &region) == 0, let region else {
            throw LibvipsFailure(message: Libvips.takeErrorMessage() ?? "vips_region_new failed")
        }
        pointer = region
        self.image = image
    }

    deinit { g_object_unref(UnsafeMutableRawPointer(pointer)) }

    /// Bytes of one row of the image, no padding.
    var rowBytes: Int { image.width * image.bands * Int(vips_format_sizeof(image.format)) }

    /// Computes rows `top ..< top + count` and copies them to `out` (`count * rowBytes` bytes).
    func readRows(top: Int, count: Int, into out: UnsafeMutableRawBufferPointer) throws(LibvipsFailure) {
        precondition(out.count >= count * rowBytes, "room for the rows")
        guard cvips_region_read_rows(pointer, Int32(top), Int32(count), out.baseAddress) == 0 else {
            throw LibvipsFailure(message: Libvips.takeErrorMessage() ?? "decoding rows \(top)..<\(top + count) failed")
        }
    }
}

/// An image whose pixels are rows supplied by the caller (``supply(_:rows:)``) while libvips
/// computes it (a saver on another thread): computing a row waits for it. A ring of rows holds
/// what was supplied and not yet read; each row is read once.
final class SuppliedRowsImage: @unchecked Sendable {
    /// The image, to be saved.
    let image: VipsImageRef
    // Lives as long as `image`; its functions are thread-safe.
    private let rows: OpaquePointer
    /// Bytes of one row.
    let rowBytes: Int

    /// A `width` × `height` image of `bands` samples of `format`, with `interpretation`, whose
    /// saver reads up to `capacity` rows supplied at a time.
    init(
        width: Int, height: Int, bands: Int, format: VipsBandFormat, interpretation: VipsInterpretation, capacity: Int
    ) throws(LibvipsFailure) {
        var image: UnsafeMutablePointer<VipsImage>?
        var rows: OpaquePointer?
        guard
            cvips_rows_image(
                Int32(width), Int32(height), Int32(bands), format, interpretation, Int32(capacity), &image, &rows) == 0,
            let image, let rows
        else {
            throw LibvipsFailure(message: Libvips.takeErrorMessage() ?? "cannot make the image to save")
        }
        self.image = VipsImageRef(adopting: image)
        self.rows = rows
        rowBytes = width * bands * Int(vips_format_sizeof(format))
    }

    /// Supplies the next `count` rows (`count * rowBytes` bytes) and waits until the saver has
    /// copied them out of `samples` (read in place: keep them alive until this returns). False
    /// when the rows were closed before it took them all (``close()``, the saver is done or
    /// failed).
    func supply(_ samples: UnsafeRawBufferPointer, rows count: Int) -> Bool {
        precondition(samples.count == count * rowBytes, "whole rows")
        return cvips_rows_supply(rows, samples.baseAddress, Int32(count)) == 0
    }

    /// No more rows come or are wanted: a saver waiting for a row fails, a supplier waiting
    /// returns once no copy from its samples is under way.
    func close() { cvips_rows_close(rows) }
}
