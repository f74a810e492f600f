/// The IEEE 802.3 CRC-32 that closes every frame: reflected polynomial 0xEDB88320, initial
/// value and final xor 0xFFFFFFFF (zlib's `crc32`). Eight bytes a step ("slicing by 8").
struct CRC32 {
    /// The running register (before the final xor).
    private var register: UInt32 = 0xFFFF_FFFF

    /// The CRC of the bytes so far.
    var value: UInt32 { ~register }

    /// `tables[k * 256 + b]`: the register change of byte `b` followed by `k` zero bytes.
    private static let tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for b in 0..<256 {
            var c = UInt32(b)
            for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
            t[b] = c
        }
        for k in 1..<8 {
            for b in 0..<256 {
                let previous = t[(k - 1) * 256 + b]
                t[k * 256 + b] = (previous >> 8) ^ t[Int(previous & 0xFF)]
            }
        }
        return t
    }()

    /// Adds `bytes` to the CRC.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var crc = register
        Self.tables.withUnsafeBufferPointer { t in
            var i = 0
            let n = bytes.count
            while i + 8 <= n {
                let lo = crc ^ (UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16
                    | UInt32(bytes[i + 3]) << 24)
                let hi = UInt32(bytes[i + 4]) | UInt32(bytes[i + 5]) << 8 | UInt32(bytes[i + 6]) << 16
                    | UInt32(bytes[i + 7]) << 24
                crc = t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                    ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
                i += 8
            }
            while i < n {
                crc = (crc >> 8) ^ t[Int((crc ^ UInt32(bytes[i])) & 0xFF)]
                i += 1
            }
        }
        register = crc
    }

    /// The CRC of `bytes[range]`.
    static func of(_ bytes: [UInt8], _ range: Range<Int>) -> UInt32 {
        var crc = CRC32()
        bytes.withUnsafeBytes { crc.update(UnsafeRawBufferPointer(rebasing: $0[range])) }
        return crc.value
    }
}
