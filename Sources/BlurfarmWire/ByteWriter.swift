import BlurfarmCore

/// Appends payload fields in the protocol's encodings (see the header of WireProtocol.swift).
struct ByteWriter {
    /// The bytes written so far.
    var bytes: [UInt8]

    init(reservingCapacity capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    mutating func integer<T: FixedWidthInteger>(_ value: T) {
        var v = value.littleEndian
        withUnsafeBytes(of: &v) { bytes.append(contentsOf: $0) }
    }

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }
    mutating func i64(_ value: Int) { integer(Int64(value)) }
    mutating func f64(_ value: Double) { integer(value.bitPattern) }

    /// A count of list elements or string bytes, as u32.
    mutating func count(_ value: Int) {
        precondition(value >= 0 && value <= Int(UInt32.max), "a count does not fit a u32")
        integer(UInt32(value))
    }

    mutating func string(_ value: String) {
        count(value.utf8.count)
        bytes.append(contentsOf: value.utf8)
    }

    mutating func rect(_ r: Rect) {
        i64(r.x)
        i64(r.y)
        i64(r.width)
        i64(r.height)
    }

    /// The floats' bit patterns, each as a little-endian u32.
    mutating func floats(_ samples: [Float]) {
        #if _endian(little)
        samples.withUnsafeBytes { bytes.append(contentsOf: $0) }
        #else
        for s in samples { integer(s.bitPattern) }
        #endif
    }

    /// Overwrites the little-endian u32 at `offset`.
    mutating func patch(u32 value: UInt32, at offset: Int) {
        for k in 0..<4 { bytes[offset + k] = UInt8(truncatingIfNeeded: value >> (8 * k)) }
    }
}
