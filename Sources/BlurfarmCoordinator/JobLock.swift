import Foundation

/// The lock a run holds on one job: an `flock` on the file `lock` in the job's state folder.
/// The kernel releases it when the process ends, however it ends, so a killed run never leaves
/// a job locked. The file holds the holder's process id, for the message another run prints.
/// The descriptor is closed on exec, so worker processes never hold it.
public final class JobLock: Sendable {
    private let descriptor: Int32
    /// The lock file.
    public let path: String

    /// The result of trying to take a lock.
    public enum Outcome: Sendable {
        /// Taken: held until the ``JobLock`` is released or the process ends.
        case acquired(JobLock)
        /// Another process holds it; its process id when the file names one.
        case busy(holder: Int32?)
    }

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    /// Takes the lock at `path` (creating the file and its folder if need be), never through a
    /// symbolic link nor in a folder others can write (``JobStateFolder/openFolder(_:)``). With `wait`,
    /// blocks until the holder lets go; without, returns ``Outcome/busy(holder:)`` at once.
    /// - Throws: ``StateError`` naming the file when it cannot be created or locked.
    public static func acquire(_ path: String, wait: Bool) throws(StateError) -> Outcome {
        let folder = try JobStateFolder.openFolder((path as NSString).deletingLastPathComponent)
        defer { close(folder) }
        let fd: Int32
        do {
            // Never through a link someone planted: it could point at any file.
            fd = try Syscalls.openFile((path as NSString).lastPathComponent, in: folder, flags: O_RDWR | O_CREAT)
        } catch where error.errno == ELOOP {
            throw StateError(path: path, message: "is a symbolic link: refusing to use it as the lock (remove it)")
        } catch {
            throw StateError(path: path, message: "cannot open: \(error.reason)")
        }
        guard let info = try? Syscalls.status(of: fd), info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1 else {
            close(fd)
            throw StateError(path: path, message: "is not a plain file of its own: refusing to use it as the lock (remove it)")
        }
        while flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0 {
            if errno == EINTR { continue }
            let reason = errno
            if reason == EWOULDBLOCK {
                // The holder writes its pid just after it locks: a file without a live pid yet
                // (empty, or an earlier run's) gets a moment.
                var holder = readHolder(fd)
                for _ in 0..<50 where holder.map({ kill($0, 0) != 0 && errno == ESRCH }) ?? true {
                    usleep(10_000)
                    holder = readHolder(fd)
                }
                close(fd)
                return .busy(holder: holder)
            }
            close(fd)
            throw StateError(path: path, message: "cannot lock: \(String(cString: strerror(reason)))")
        }
        let pid = Data("\(getpid())\n".utf8)
        // Written over the old contents, then cut to length: never empty on the way.
        let wrote = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } == pid.count
            && ftruncate(fd, off_t(pid.count)) == 0
        if !wrote {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw StateError(path: path, message: "cannot write the process id: \(reason)")
        }
        return .acquired(JobLock(descriptor: fd, path: path))
    }

    /// The process id written in the lock file, if it names one.
    private static func readHolder(_ fd: Int32) -> Int32? {
        var bytes = [UInt8](repeating: 0, count: 32)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        return Int32(String(decoding: bytes[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Lets go of the lock (closing the descriptor releases the `flock`).
    deinit { close(descriptor) }
}
