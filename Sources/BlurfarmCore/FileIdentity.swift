/// Which file: its device and inode, as `fstat` gives them. A shared segment's (the coordinator
/// names it in a task beside the descriptor number, and the worker checks the file it opens
/// against it: docs/protocol.md, "Shared segments").
public struct FileIdentity: Hashable, Sendable, CustomStringConvertible {
    public let device: UInt64
    public let inode: UInt64

    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    /// E.g. `device 23, inode 4711`.
    public var description: String { "device \(device), inode \(inode)" }
}
