#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a file of the type `mode & S_IFMT` is, as messages say it ("a FIFO", "a folder"): one
/// wording for every refusal of a file that is not the regular file expected (inputs, manifests,
/// the planner's glob walk).
public func fileKindName(_ mode: mode_t) -> String {
    switch mode & S_IFMT {
    case S_IFREG: "a regular file"
    case S_IFDIR: "a folder"
    case S_IFIFO: "a FIFO"
    case S_IFSOCK: "a socket"
    case S_IFCHR: "a character device"
    case S_IFBLK: "a block device"
    case S_IFLNK: "a symbolic link"
    default: "a special file"
    }
}
