import BlurfarmCore
import BlurfarmSystem
import BlurfarmImageIO
import Foundation

/// A folder blurfarm created for an output (it was not there before): the only kind of folder
/// `--prune` may remove, and only while it is empty and still the folder that was created (same
/// device and inode).
public struct CreatedFolder: Codable, Hashable, Sendable {
    /// The folder's absolute path.
    public var path: String
    /// The device and inode it had when it was created.
    public var device: UInt64
    public var inode: UInt64

    public init(path: String, device: UInt64, inode: UInt64) {
        self.path = path
        self.device = device
        self.inode = inode
    }

    /// Creates the folder `path` and any missing folders above it, as `mkdir -p` does, and
    /// returns those this call created (absolute paths, outermost first); none when it existed.
    /// A folder another process creates at the same moment is not counted as created here.
    /// With `confinement`, each is made in its parent opened beneath the roots
    /// (``RootConfinement/makeFolder(_:)``): none is ever made outside them.
    /// - Throws: ``StateError`` naming the folder that cannot be created.
    public static func make(_ path: String, confinement: RootConfinement? = nil) throws(StateError) -> [CreatedFolder] {
        // There already, as it is for every output but a folder's first: one `stat`, not a
        // `readlink` of each folder above it and two `stat`s.
        if Syscalls.isFolder(path) { return [] }
        var missing: [String] = []
        var folder = RealPath.resolveFolder(of: path, using: nil)
        do throws(SystemCallError) {
            while folder != "/", try Syscalls.identity(of: folder) == nil {
                missing.append(folder)
                folder = PathName.folder(of: folder)
            }
        } catch {
            throw StateError(path: folder, message: "cannot create the folder: \(error.reason)")
        }
        var created: [CreatedFolder] = []
        for folder in missing.reversed() {
            if let confinement {
                do throws(ImageIOError) {
                    guard try confinement.makeFolder(folder) else { continue }
                } catch {
                    var failure = StateError(path: folder, message: error.message)
                    failure.refusal = error.refusesEveryWriteThere ? error.code : nil
                    throw failure
                }
            }
            do throws(SystemCallError) {
                if confinement == nil { guard try Syscalls.makeFolder(folder) else { continue } }
                if let identity = try Syscalls.identity(of: folder) {
                    created.append(CreatedFolder(path: folder, device: identity.device, inode: identity.inode))
                }
            } catch {
                var failure = StateError(path: folder, message: "cannot create the folder: \(error.reason)")
                failure.refusal = ImageIOError.refusal(error.errno)
                throw failure
            }
        }
        // Something else than a folder in the way (a file, a dangling link) fails here.
        guard Syscalls.isFolder(path) else {
            throw StateError(path: path, message: "cannot create the folder: something else is in the way")
        }
        return created
    }

    /// What ``removeIfEmpty()`` found.
    package enum Removal {
        /// It was empty and the folder created: removed.
        case removed
        /// Nothing is there any more.
        case gone
        /// It holds something, or something else is there now: left alone.
        case kept
    }

    /// Removes this folder when it is empty and still the one created (same device and inode,
    /// not a link). A folder that holds anything, or that was replaced, is left alone.
    /// - Throws: ``StateError`` when removing it fails for another reason.
    package func removeIfEmpty() throws(StateError) -> Removal {
        do throws(SystemCallError) {
            guard let identity = try Syscalls.identity(of: path) else { return .gone }
            guard identity.isFolder, identity.device == device, identity.inode == inode else { return .kept }
            return try Syscalls.removeEmptyFolder(path) ? .removed : .kept
        } catch {
            throw StateError(path: path, message: "cannot remove the empty folder: \(error.reason)")
        }
    }
}
