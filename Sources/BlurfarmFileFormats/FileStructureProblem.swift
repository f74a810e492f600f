/// Why a file is not the whole image its format says it is (``JPEGStructure``,
/// ``PNMStructure``): the words of the error that names the file.
package struct FileStructureProblem: Error {
    package let message: String
}
