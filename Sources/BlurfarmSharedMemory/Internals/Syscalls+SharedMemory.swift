// The system calls of BlurfarmSharedMemory, through BlurfarmSystem's `Syscalls` (retried there
// on interruption); each failure a SharedMemoryError that carries the call's SystemCallError and
// says what it was applied to.
import BlurfarmCore
import BlurfarmSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Syscalls {
    /// Runs `body`; its failure as a ``SharedMemoryError`` about `subject`.
    private static func about<T>(_ subject: String, _ body: () throws(SystemCallError) -> T) throws(SharedMemoryError) -> T {
        do {
            return try body()
        } catch {
            throw SharedMemoryError(error, subject: subject)
        }
    }

    /// A new memfd, closed on exec.
    static func memfdCreate(name: String) throws(SharedMemoryError) -> Int32 {
        try about(name) { () throws(SystemCallError) in try memoryFile(named: name) }
    }

    /// Opens `path` for reading and writing, closed on exec.
    static func openReadWrite(_ path: String) throws(SharedMemoryError) -> Int32 {
        try about(path) { () throws(SystemCallError) in try retrying("open") { PathEncoding.withCString(path) { open($0, O_RDWR | O_CLOEXEC) } } }
    }

    /// Sets the file's size in bytes.
    static func setSize(_ fd: Int32, _ size: Int) throws(SharedMemoryError) {
        try about("\(size) bytes") { () throws(SystemCallError) in try truncate(fd, to: size) }
    }

    /// The file's size in bytes and identity.
    static func sizeAndIdentity(_ fd: Int32) throws(SharedMemoryError) -> (size: Int, identity: FileIdentity) {
        let info = try about("descriptor \(fd)") { () throws(SystemCallError) in try status(of: fd) }
        return (Int(info.st_size), FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
    }

    /// Maps `size` bytes of `fd` shared, readable and writable.
    static func mmapShared(_ fd: Int32, size: Int) throws(SharedMemoryError) -> UnsafeMutableRawPointer {
        guard let pointer = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), pointer != MAP_FAILED else {
            throw SharedMemoryError(SystemCallError(call: "mmap", errno: errno), subject: "\(size) bytes of descriptor \(fd)")
        }
        return pointer
    }

    /// Unmaps and closes; errors are ignored (nothing can be done about them on release).
    static func release(_ pointer: UnsafeMutableRawPointer, size: Int, fd: Int32) {
        munmap(pointer, size)
        close(fd)
    }
}
