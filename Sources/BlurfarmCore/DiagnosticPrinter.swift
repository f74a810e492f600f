/// Renders diagnostics the way a compiler prints them: one line per diagnostic, then one
/// count line per file.
///
/// ```
/// jobs/backdrops.job:12:7: error: unknown key 'sigam' in 'gaussian'
/// jobs/backdrops.job:12:7: note: did you mean 'sigma'?
/// jobs/backdrops.job: 1 error
/// ```
///
/// The count line names the file and counts errors only (notes are hints); `1 error`,
/// `2 errors`. Diagnostics without a location are counted on a line of their own,
/// `1 error` with no file name. Files appear in the order of their first diagnostic.
public enum DiagnosticPrinter {
    /// The lines for `diagnostics`, each ending in a newline; empty when there are none.
    /// `program`: the name that stands for the file of a diagnostic without a location
    /// (`blurfarm: error: cannot read 'nope.job': …`, `blurfarm: 1 error`), as a compiler
    /// driver names itself; without it such lines have no prefix.
    public static func render(_ diagnostics: some Sequence<Diagnostic>, program: String? = nil) -> String {
        var text = ""
        var files: [String?] = []
        var counts: [String?: Int] = [:]
        for diagnostic in diagnostics {
            if diagnostic.location == nil, let program { text += "\(program): " }
            text += diagnostic.description
            text += "\n"
            let file = diagnostic.location?.file ?? program
            if counts[file] == nil {
                files.append(file)
                counts[file] = 0
            }
            if diagnostic.severity == .error { counts[file, default: 0] += 1 }
        }
        for file in files {
            guard let count = counts[file], count > 0 else { continue }
            let summary = countPhrase(count)
            text += file.map { "\($0): \(summary)" } ?? summary
            text += "\n"
        }
        return text
    }

    /// `1 error`, `2 errors`.
    public static func countPhrase(_ errors: Int) -> String {
        counted(errors, "error")
    }
}
