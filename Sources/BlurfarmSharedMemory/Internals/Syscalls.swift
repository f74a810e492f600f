// Every system call of BlurfarmSharedMemory, each retried on EINTR where that can happen and
// failing with a SharedMemoryError that names the call.
import CSystemShims

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The identity of an open file: device and inode.
struct FileIdentity: Hashable {
    let device: UInt64
    let inode: UInt64
}

enum Syscalls {
    /// Runs `call` until it does not fail with EINTR; -1 throws with the call's name.
    private static func retrying(
        _ name: String, _ subject: String, _ call: () -> Int32
    ) throws(SharedMemoryError) -> Int32 {
        while true {
            let result = call()
            if result != -1 { return result }
            if errno != EINTR { throw SharedMemoryError(call: name, errno: errno, subject: subject) }
        }
    }

    /// A new memfd, closed on exec.
    static func memfdCreate(name: String) throws(SharedMemoryError) -> Int32 {
        try retrying("memfd_create", name) { blurfarm_memfd_create(name) }
    }

    /// Opens `path` for reading and writing, closed on exec.
    static func openReadWrite(_ path: String) throws(SharedMemoryError) -> Int32 {
        try retrying("open", path) { open(path, O_RDWR | O_CLOEXEC) }
    }

    /// Sets the file's size in bytes.
    static func ftruncate(_ fd: Int32, size: Int) throws(SharedMemoryError) {
        _ = try retrying("ftruncate", "\(size) bytes") { Glibc.ftruncate(fd, off_t(size)) }
    }

    /// The file's size in bytes and identity.
    static func fstat(_ fd: Int32) throws(SharedMemoryError) -> (size: Int, identity: FileIdentity) {
        var info = stat()
        _ = try retrying("fstat", "descriptor \(fd)") { Glibc.fstat(fd, &info) }
        return (Int(info.st_size), FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
    }

    /// Maps `size` bytes of `fd` shared, readable and writable.
    static func mmapShared(_ fd: Int32, size: Int) throws(SharedMemoryError) -> UnsafeMutableRawPointer {
        guard let pointer = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), pointer != MAP_FAILED else {
            throw SharedMemoryError(call: "mmap", errno: errno, subject: "\(size) bytes of descriptor \(fd)")
        }
        return pointer
    }

    /// Unmaps and closes; errors are ignored (nothing can be done about them on release).
    static func release(_ pointer: UnsafeMutableRawPointer, size: Int, fd: Int32) {
        munmap(pointer, size)
        close(fd)  // not retried: on Linux the descriptor is gone even when close reports EINTR
    }

    /// Closes `fd`, ignoring errors (see ``release(_:size:fd:)``).
    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }
}
