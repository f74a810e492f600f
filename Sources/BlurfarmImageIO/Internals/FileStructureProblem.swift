/// Why a file is not the whole image its format says it is (``JPEGStructure``,
/// ``PNMStructure``): the words of the error that names the file.
struct FileStructureProblem: Error {
    let message: String
}
