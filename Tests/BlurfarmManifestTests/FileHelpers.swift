#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct FileError: Error, CustomStringConvertible {
    let description: String
}

/// The whole file's bytes (tests only; no size limit).
func readFile(_ path: String) throws -> [UInt8] {
    guard let f = fopen(path, "rb") else { throw FileError(description: "cannot open \(path)") }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buffer, 1, buffer.count, f)
        if n == 0 { break }
        bytes.append(contentsOf: buffer[0..<n])
    }
    return bytes
}

/// The names in a folder, without `.` and `..`.
func listFolder(_ path: String) throws -> [String] {
    guard let dir = opendir(path) else { throw FileError(description: "cannot list \(path)") }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let name = withUnsafePointer(to: entry.pointee.d_name) {
            $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
        }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}
