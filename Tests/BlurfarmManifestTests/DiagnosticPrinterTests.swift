import BlurfarmCore
import Testing

@Suite struct DiagnosticPrinterTests {
    func at(_ file: String, _ line: Int, _ column: Int) -> BlurfarmCore.SourceLocation {
        BlurfarmCore.SourceLocation(file: file, line: line, column: column)
    }

    @Test func printsLikeACompilerAndCountsErrorsPerFile() {
        let diagnostics: [Diagnostic] = [
            .error("unknown key 'sigam' in 'gaussian'", at: at("jobs/backdrops.job", 12, 7)),
            .note("did you mean 'sigma'?", at: at("jobs/backdrops.job", 12, 7)),
            .error("'quality' must be an integer from 1 to 100", at: at("jobs/backdrops.job", 20, 14)),
            .error("unknown key 'x'", at: at("blurfarm.conf", 1, 1)),
            .error("cannot read 'x.job': No such file or directory", at: nil),
        ]
        #expect(DiagnosticPrinter.render(diagnostics) == """
            jobs/backdrops.job:12:7: error: unknown key 'sigam' in 'gaussian'
            jobs/backdrops.job:12:7: note: did you mean 'sigma'?
            jobs/backdrops.job:20:14: error: 'quality' must be an integer from 1 to 100
            blurfarm.conf:1:1: error: unknown key 'x'
            error: cannot read 'x.job': No such file or directory
            jobs/backdrops.job: 2 errors
            blurfarm.conf: 1 error
            1 error

            """)
        #expect(Diagnostics(diagnostics).errorCount == 4)
        #expect(DiagnosticPrinter.render([]) == "")
    }

    @Test func sortingByLocationKeepsNotesWithTheirErrors() {
        let d = Diagnostics([
            .error("second", at: at("f", 9, 1)),
            .note("first given here", at: at("f", 2, 1)),
            .error("first", at: at("f", 3, 5)),
            .error("same place, later", at: at("f", 3, 5)),
        ]).sortedByLocation()
        #expect(d.map(\.message) == ["first", "same place, later", "second", "first given here"])
    }
}
