import BlurfarmCore
import BlurfarmSystem
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
        let folder = try JobStateFolder.openFolder(PathName.folder(of: path))
        defer { Syscalls.close(folder) }
        let fd: Int32
        do {
            // Never through a link someone planted: it could point at any file.
            fd = try Syscalls.openFile(PathName.lastName(of: path), in: folder, flags: O_RDWR | O_CREAT)
        } catch where error.errno == ELOOP {
            throw StateError(path: path, message: "is a symbolic link: refusing to use it as the lock (remove it)")
        } catch {
            throw StateError(path: path, message: "cannot open: \(error.reason)")
        }
        guard let info = try? Syscalls.status(of: fd), info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1 else {
            Syscalls.close(fd)
            throw StateError(path: path, message: "is not a plain file of its own: refusing to use it as the lock (remove it)")
        }
        do throws(SystemCallError) {
            guard try Syscalls.lockExclusively(fd, wait: wait) else {
                // The holder writes its pid just after it locks: a file without a live pid yet
                // (empty, or an earlier run's) gets a moment.
                var holder = readHolder(fd)
                for _ in 0..<50 where holder.map({ !Syscalls.isRunning($0) }) ?? true {
                    Syscalls.sleep(milliseconds: 10)
                    holder = readHolder(fd)
                }
                Syscalls.close(fd)
                return .busy(holder: holder)
            }
        } catch {
            Syscalls.close(fd)
            throw StateError(path: path, message: "cannot lock: \(error.reason)")
        }
        do throws(SystemCallError) {
            // Written over the old contents, then cut to length: never empty on the way.
            try Syscalls.overwrite(fd, with: Array("\(Syscalls.processID)\n".utf8))
        } catch {
            Syscalls.close(fd)
            throw StateError(path: path, message: "cannot write the process id: \(error.reason)")
        }
        return .acquired(JobLock(descriptor: fd, path: path))
    }

    /// The process id written in the lock file, if it names one.
    private static func readHolder(_ fd: Int32) -> Int32? {
        guard let bytes = try? Syscalls.readAll(fd, upTo: 32) else { return nil }
        return Int32(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Lets go of the lock (closing the descriptor releases the `flock`).
    deinit { Syscalls.close(descriptor) }
}
