import BlurfarmCore

/// Reads payload fields from `bytes[index ..< end]`; every read checks that its bytes are there
/// and throws a ``PayloadProblem`` naming the field when they are not (or are invalid).
struct ByteReader {
    private let bytes: [UInt8]
    private(set) var index: Int
    let end: Int

    init(_ bytes: [UInt8], range: Range<Int>) {
        self.bytes = bytes
        index = range.lowerBound
        end = range.upperBound
    }

    var remaining: Int { end - index }

    private mutating func take(_ n: Int, _ field: @autoclosure () -> String) throws(PayloadProblem) -> Int {
        guard n <= remaining else { throw .truncated(field: field()) }
        defer { index += n }
        return index
    }

    mutating func integer<T: FixedWidthInteger>(_: T.Type, _ field: @autoclosure () -> String) throws(PayloadProblem) -> T {
        let at = try take(MemoryLayout<T>.size, field())
        var v = T.zero
        for k in 0..<MemoryLayout<T>.size { v |= T(truncatingIfNeeded: bytes[at + k]) << (8 * k) }
        return v
    }

    mutating func u8(_ field: @autoclosure () -> String) throws(PayloadProblem) -> UInt8 {
        bytes[try take(1, field())]
    }

    mutating func bool(_ field: @autoclosure () -> String) throws(PayloadProblem) -> Bool {
        switch try u8(field()) {
        case 0: return false
        case 1: return true
        case let tag: throw .badTag(field: field(), tag: tag)
        }
    }

    /// An i64 as an `Int` (which has 64 bits on the platforms blurfarm runs on).
    mutating func i64(_ field: @autoclosure () -> String) throws(PayloadProblem) -> Int {
        Int(try integer(Int64.self, field()))
    }

    /// A u64 that must fit an `Int` (offsets, strides).
    mutating func u64AsInt(_ field: @autoclosure () -> String) throws(PayloadProblem) -> Int {
        let v = try integer(UInt64.self, field())
        guard let i = Int(exactly: v) else { throw .invalidValue(field: field(), reason: "\(v) is too large") }
        return i
    }

    mutating func f64(_ field: @autoclosure () -> String) throws(PayloadProblem) -> Double {
        Double(bitPattern: try integer(UInt64.self, field()))
    }

    mutating func count(_ field: @autoclosure () -> String) throws(PayloadProblem) -> Int {
        Int(try integer(UInt32.self, field()))
    }

    mutating func string(_ field: @autoclosure () -> String) throws(PayloadProblem) -> String {
        let n = try count(field())
        let at = try take(n, field())
        guard let s = String(validating: bytes[at..<at + n], as: UTF8.self) else { throw .invalidUTF8(field: field()) }
        return s
    }

    /// Bytes: a u32 count, then that many bytes.
    mutating func byteArray(_ field: @autoclosure () -> String) throws(PayloadProblem) -> [UInt8] {
        let n = try count(field())
        let at = try take(n, field())
        return Array(bytes[at..<at + n])
    }

    mutating func rect(_ field: @autoclosure () -> String) throws(PayloadProblem) -> Rect {
        let x = try i64(field() + ".x"), y = try i64(field() + ".y")
        let width = try i64(field() + ".width"), height = try i64(field() + ".height")
        guard width >= 0, height >= 0 else {
            throw .invalidValue(field: field(), reason: "negative size \(width)x\(height)")
        }
        guard !x.addingReportingOverflow(width).overflow, !y.addingReportingOverflow(height).overflow else {
            throw .invalidValue(field: field(), reason: "the far edge overflows")
        }
        return Rect(x: x, y: y, width: width, height: height)
    }

    /// `count` floats from their little-endian u32 bit patterns.
    mutating func floats(count: Int, _ field: @autoclosure () -> String) throws(PayloadProblem) -> [Float] {
        let (byteCount, overflow) = count.multipliedReportingOverflow(by: MemoryLayout<Float>.size)
        guard !overflow, byteCount <= remaining else { throw .truncated(field: field()) }
        let at = try take(byteCount, field())
        #if _endian(little)
        return [Float](unsafeUninitializedCapacity: count) { buffer, initialized in
            bytes.withUnsafeBytes { raw in
                UnsafeMutableRawBufferPointer(buffer).copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[at..<at + byteCount]))
            }
            initialized = count
        }
        #else
        return (0..<count).map { k in
            var bits: UInt32 = 0
            for b in 0..<4 { bits |= UInt32(bytes[at + 4 * k + b]) << (8 * b) }
            return Float(bitPattern: bits)
        }
        #endif
    }
}
