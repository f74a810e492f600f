/// Removes the metadata blocks libvips 8.14 writes even when it was given none: its JPEG and
/// WebP savers make an EXIF block of their own (orientation, resolution) for any image not
/// saved with `strip`, and `strip` would also drop the ICC profile, which a stripped output
/// keeps (docs/image-io.md, "Metadata"). PNG and TIFF write only what the image carries, so
/// they need no edit.
///
/// Each function walks the container's own structure (JPEG marker segments before the scan,
/// WebP's RIFF chunks) and returns the bytes without the EXIF, XMP and IPTC blocks, or nil
/// when the bytes do not have that structure.
package enum MetadataStripping {
    /// A JPEG without APP1 segments holding EXIF ("Exif\0\0") or XMP (Adobe's namespace) and
    /// without APP13 (Photoshop, IPTC). Everything from the start of the scan on is kept as
    /// it is.
    package static func jpegKeepingOnlyColourProfile(_ bytes: [UInt8]) -> [UInt8]? {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        let exif: [UInt8] = Array("Exif\0\0".utf8)
        let xmp: [UInt8] = Array("http://ns.adobe.com/xap/1.0/\0".utf8)
        var out: [UInt8] = [0xFF, 0xD8]
        out.reserveCapacity(bytes.count)
        var at = 2
        while at + 1 < bytes.count {
            guard bytes[at] == 0xFF else { return nil }
            let marker = bytes[at + 1]
            if marker == 0xFF { at += 1; continue }  // a fill byte
            if marker == 0xDA || marker == 0xD9 {  // start of scan, end of image: the rest as it is
                out += bytes[at...]
                return out
            }
            if marker == 0x01 || (0xD0...0xD7).contains(marker) {  // no length
                out += bytes[at..<(at + 2)]
                at += 2
                continue
            }
            guard at + 4 <= bytes.count else { return nil }
            let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            let end = at + 2 + length
            guard length >= 2, end <= bytes.count else { return nil }
            let payload = bytes[(at + 4)..<end]
            let isMetadata =
                (marker == 0xE1 && (payload.starts(with: exif) || payload.starts(with: xmp))) || marker == 0xED
            if !isMetadata { out += bytes[at..<end] }
            at = end
        }
        return nil
    }

    /// A WebP without its EXIF and XMP chunks, the extended header's flags for them cleared
    /// and the RIFF size set to what remains.
    package static func webpKeepingOnlyColourProfile(_ bytes: [UInt8]) -> [UInt8]? {
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WEBP".utf8)
        else { return nil }
        var out = Array(bytes[0..<12])
        var at = 12
        while at < bytes.count {
            guard at + 8 <= bytes.count else { return nil }
            let fourCC = bytes[at..<(at + 4)]
            let size = (0..<4).reduce(0) { $0 | Int(bytes[at + 4 + $1]) << (8 * $1) }
            let end = at + 8 + size + size % 2  // chunks are padded to an even length
            guard end <= bytes.count else { return nil }
            if !(fourCC.elementsEqual("EXIF".utf8) || fourCC.elementsEqual("XMP ".utf8)) {
                var chunk = bytes[at..<end]
                if fourCC.elementsEqual("VP8X".utf8), size >= 1 {
                    chunk[at + 8] &= ~UInt8(0x08 | 0x04)  // the EXIF and XMP flags
                }
                out += chunk
            }
            at = end
        }
        let riffSize = out.count - 8
        guard riffSize <= Int(UInt32.max) else { return nil }
        for i in 0..<4 { out[4 + i] = UInt8(truncatingIfNeeded: riffSize >> (8 * i)) }
        return out
    }
}

extension MetadataStripping {
    /// An AVIF (HEIF) without its EXIF item (type `Exif`) and XMP item (type `mime`, content
    /// type `application/rdf+xml`), which libheif stores as items of the `meta` box with their
    /// bytes in `mdat`. The file is rebuilt as `ftyp`, `meta`, `mdat`: the items' entries
    /// (`iinf`), locations (`iloc`), references (`iref`) and property links (`ipma`) lose the
    /// dropped items, and `mdat` holds the other items' bytes only, at the offsets the new
    /// `iloc` gives. The colour profile (a `colr` property) is kept. nil for a layout that
    /// libheif does not write (data in `idat`, a box this does not know at the top level).
    package static func avifKeepingOnlyColourProfile(_ bytes: [UInt8]) -> [UInt8]? {
        guard let top = ISOBox.children(of: bytes[...]),
            let ftyp = top.first(where: { $0.type == "ftyp" }), let meta = top.first(where: { $0.type == "meta" }),
            top.allSatisfy({ ["ftyp", "meta", "mdat", "free", "skip"].contains($0.type) }),
            meta.body.count >= 4, let metaChildren = ISOBox.children(of: meta.body.dropFirst(4)),
            let iinf = metaChildren.first(where: { $0.type == "iinf" }), let items = ItemInfo(iinf.body),
            let iloc = metaChildren.first(where: { $0.type == "iloc" }), let locations = ItemLocations(iloc.body)
        else { return nil }
        let dropped = Set(items.entries.filter(\.isMetadata).map(\.id))
        // The kept items' bytes, in order, for the new mdat.
        var kept: [(id: UInt32, data: [UInt8])] = []
        for location in locations.items where !dropped.contains(location.id) {
            var data: [UInt8] = []
            for extent in location.extents {
                guard extent.offset + extent.length <= bytes.count else { return nil }
                data += bytes[extent.offset..<(extent.offset + extent.length)]
            }
            kept.append((location.id, data))
        }
        /// The meta box with `iloc` offsets counted from `mdatStart`.
        func metaBox(mdatStart: Int) -> [UInt8]? {
            var children: [UInt8] = []
            for child in metaChildren {
                switch child.type {
                case "iinf": children += ISOBox.make("iinf", items.body(dropping: dropped))
                case "iloc":
                    var offset = mdatStart
                    var entries: [(id: UInt32, offset: Int, length: Int)] = []
                    for item in kept {
                        entries.append((item.id, offset, item.data.count))
                        offset += item.data.count
                    }
                    guard let body = ItemLocations.body(entries) else { return nil }
                    children += ISOBox.make("iloc", body)
                case "iref":
                    guard let body = ISOBox.itemReferences(child.body, dropping: dropped) else { return nil }
                    if let body { children += ISOBox.make("iref", body) }
                case "iprp":
                    guard let body = ISOBox.itemProperties(child.body, dropping: dropped) else { return nil }
                    children += ISOBox.make("iprp", body)
                case "idat": return nil
                default: children += child.whole
                }
            }
            return ISOBox.make("meta", Array(meta.body.prefix(4)) + children)
        }
        let head = Array(ftyp.whole)
        guard let sized = metaBox(mdatStart: 0) else { return nil }
        let mdatStart = head.count + sized.count + 8
        guard let finalMeta = metaBox(mdatStart: mdatStart), finalMeta.count == sized.count else { return nil }
        return head + finalMeta + ISOBox.make("mdat", kept.flatMap(\.data))
    }
}

/// One box of an ISO base media file (HEIF, AVIF): its type, its body and all its bytes.
struct ISOBox {
    let type: String
    let body: ArraySlice<UInt8>
    let whole: ArraySlice<UInt8>

    /// The boxes that fill `bytes`, or nil when they do not fit exactly.
    static func children(of bytes: ArraySlice<UInt8>) -> [ISOBox]? {
        var boxes: [ISOBox] = []
        var at = bytes.startIndex
        while at < bytes.endIndex {
            guard at + 8 <= bytes.endIndex else { return nil }
            var size = Int(bytes.bigEndian(at, 4)), header = 8
            if size == 1 {
                guard at + 16 <= bytes.endIndex else { return nil }
                size = Int(bytes.bigEndian(at + 8, 8))
                header = 16
            } else if size == 0 {
                size = bytes.endIndex - at
            }
            guard size >= header, at + size <= bytes.endIndex else { return nil }
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            boxes.append(ISOBox(type: type, body: bytes[(at + header)..<(at + size)], whole: bytes[at..<(at + size)]))
            at += size
        }
        return boxes
    }

    /// A box of `type` around `body`.
    static func make(_ type: String, _ body: [UInt8]) -> [UInt8] {
        UInt32(8 + body.count).bigEndianBytes + Array(type.utf8) + body
    }

    /// An `iref` body without references from dropped items or to them; `.some(nil)` when
    /// none is left, nil when it cannot be read.
    static func itemReferences(_ body: ArraySlice<UInt8>, dropping dropped: Set<UInt32>) -> [UInt8]?? {
        guard body.count >= 4, let references = children(of: body.dropFirst(4)) else { return nil }
        let idSize = body[body.startIndex] == 0 ? 2 : 4
        var out: [UInt8] = []
        for reference in references {
            let b = reference.body
            guard b.count >= idSize + 2 else { return nil }
            let from = UInt32(b.bigEndian(b.startIndex, idSize))
            let count = Int(b.bigEndian(b.startIndex + idSize, 2))
            guard b.count == idSize + 2 + count * idSize else { return nil }
            let to = (0..<count).map { UInt32(b.bigEndian(b.startIndex + idSize + 2 + $0 * idSize, idSize)) }
                .filter { !dropped.contains($0) }
            if dropped.contains(from) || to.isEmpty { continue }
            var entry = from.bigEndianBytes.suffix(idSize) + UInt16(to.count).bigEndianBytes
            for id in to { entry += id.bigEndianBytes.suffix(idSize) }
            out += make(reference.type, Array(entry))
        }
        return out.isEmpty ? .some(nil) : .some(Array(body.prefix(4)) + out)
    }

    /// An `iprp` body whose `ipma` has no entries for dropped items.
    static func itemProperties(_ body: ArraySlice<UInt8>, dropping dropped: Set<UInt32>) -> [UInt8]? {
        guard let boxes = children(of: body) else { return nil }
        var out: [UInt8] = []
        for box in boxes {
            guard box.type == "ipma" else {
                out += box.whole
                continue
            }
            let b = box.body
            guard b.count >= 8 else { return nil }
            let version = b[b.startIndex], flags = b.bigEndian(b.startIndex + 1, 3)
            let idSize = version < 1 ? 2 : 4, associationSize = flags & 1 == 1 ? 2 : 1
            var at = b.startIndex + 8
            var entries: [UInt8] = []
            var count: UInt32 = 0
            for _ in 0..<b.bigEndian(b.startIndex + 4, 4) {
                guard at + idSize + 1 <= b.endIndex else { return nil }
                let id = UInt32(b.bigEndian(at, idSize))
                let length = idSize + 1 + Int(b[at + idSize]) * associationSize
                guard at + length <= b.endIndex else { return nil }
                if !dropped.contains(id) {
                    entries += b[at..<(at + length)]
                    count += 1
                }
                at += length
            }
            guard at == b.endIndex else { return nil }
            out += make("ipma", Array(b.prefix(4)) + count.bigEndianBytes + entries)
        }
        return out
    }
}

/// The item entries of an `iinf` box (`infe` version 2 or 3, as libheif writes them).
struct ItemInfo {
    struct Entry {
        let id: UInt32
        let type: String
        let contentType: String
        let whole: ArraySlice<UInt8>
        /// EXIF, or XMP (a `mime` item of RDF).
        var isMetadata: Bool { type == "Exif" || (type == "mime" && contentType == "application/rdf+xml") }
    }

    let header: ArraySlice<UInt8>
    let entries: [Entry]

    init?(_ body: ArraySlice<UInt8>) {
        guard body.count >= 6 else { return nil }
        let countSize = body[body.startIndex] == 0 ? 2 : 4
        guard let boxes = ISOBox.children(of: body.dropFirst(4 + countSize)) else { return nil }
        var entries: [Entry] = []
        for box in boxes where box.type == "infe" {
            let b = box.body
            guard b.count >= 4, b[b.startIndex] == 2 || b[b.startIndex] == 3 else { return nil }
            let idSize = b[b.startIndex] == 2 ? 2 : 4
            let typeAt = b.startIndex + 4 + idSize + 2
            guard typeAt + 4 <= b.endIndex else { return nil }
            let type = String(decoding: b[typeAt..<(typeAt + 4)], as: UTF8.self)
            // After the type: the item's name, then for `mime` its content type, each ending in 0.
            let strings = b[(typeAt + 4)...].split(separator: 0, omittingEmptySubsequences: false)
            let contentType = strings.count > 1 ? String(decoding: strings[1], as: UTF8.self) : ""
            entries.append(Entry(
                id: UInt32(b.bigEndian(b.startIndex + 4, idSize)), type: type, contentType: contentType,
                whole: box.whole))
        }
        header = body.prefix(4)
        self.entries = entries
    }

    /// The body without the dropped items' entries (entry count as a 32-bit number, version 1).
    func body(dropping dropped: Set<UInt32>) -> [UInt8] {
        let left = entries.filter { !dropped.contains($0.id) }
        return [1, 0, 0, 0] + UInt32(left.count).bigEndianBytes + left.flatMap(\.whole)
    }
}

/// The extents of each item in an `iloc` box, as absolute file offsets (construction method 0).
struct ItemLocations {
    struct Item {
        let id: UInt32
        let extents: [(offset: Int, length: Int)]
    }

    let items: [Item]

    init?(_ body: ArraySlice<UInt8>) {
        guard body.count >= 8 else { return nil }
        let version = body[body.startIndex]
        guard version <= 2 else { return nil }
        let sizes = body[body.startIndex + 4], more = body[body.startIndex + 5]
        let offsetSize = Int(sizes >> 4), lengthSize = Int(sizes & 15), baseSize = Int(more >> 4)
        let indexSize = version == 0 ? 0 : Int(more & 15)
        let idSize = version < 2 ? 2 : 4
        var at = body.startIndex + 6
        func read(_ size: Int) -> Int? {
            guard at + size <= body.endIndex else { return nil }
            defer { at += size }
            return size == 0 ? 0 : Int(body.bigEndian(at, size))
        }
        guard let count = read(version < 2 ? 2 : 4) else { return nil }
        var items: [Item] = []
        for _ in 0..<count {
            guard let id = read(idSize) else { return nil }
            if version >= 1 {
                guard let method = read(2), method & 15 == 0 else { return nil }  // in the file, not idat
            }
            guard let reference = read(2), reference == 0, let base = read(baseSize), let extentCount = read(2)
            else { return nil }
            var extents: [(offset: Int, length: Int)] = []
            for _ in 0..<extentCount {
                guard read(indexSize) != nil, let offset = read(offsetSize), let length = read(lengthSize) else {
                    return nil
                }
                extents.append((base + offset, length))
            }
            items.append(Item(id: UInt32(id), extents: extents))
        }
        self.items = items
    }

    /// A version 1 body with one extent per item, 4-byte (or 8-byte) offsets and lengths.
    static func body(_ entries: [(id: UInt32, offset: Int, length: Int)]) -> [UInt8]? {
        guard entries.allSatisfy({ $0.id <= UInt16.max }), entries.count <= UInt16.max else { return nil }
        let wide = entries.contains { $0.offset + $0.length > Int(UInt32.max) }
        let size = wide ? 8 : 4
        var out: [UInt8] = [1, 0, 0, 0, UInt8(size << 4 | size), 0] + UInt16(entries.count).bigEndianBytes
        for entry in entries {
            out += UInt16(entry.id).bigEndianBytes + [0, 0] + [0, 0] + [0, 1]  // method 0, this file, 1 extent
            out += UInt64(entry.offset).bigEndianBytes.suffix(size) + UInt64(entry.length).bigEndianBytes.suffix(size)
        }
        return out
    }
}

extension ArraySlice<UInt8> {
    /// The `count`-byte big-endian number at `index`.
    func bigEndian(_ index: Int, _ count: Int) -> UInt64 {
        (0..<count).reduce(UInt64(0)) { $0 << 8 | UInt64(self[index + $1]) }
    }
}

extension FixedWidthInteger {
    /// The number's bytes, most significant first.
    var bigEndianBytes: [UInt8] {
        (0..<(Self.bitWidth / 8)).reversed().map { UInt8(truncatingIfNeeded: self >> ($0 * 8)) }
    }
}
