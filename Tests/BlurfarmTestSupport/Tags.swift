// The tags of the tests that need more than the library under test (README.md, "Tests").
import Testing

extension Tag {
    /// Starts a program: `blurfarm`, `blurfarm-worker` (a worker pool too), a server on a
    /// socket, or another program (Python, curl, cc, vips, useradd…). Untagged tests run in
    /// the test process alone.
    @Tag public static var process: Self

    /// Needs the one-node Slurm cluster of `scripts/slurm-local.sh` (its daemons, as root).
    @Tag public static var slurm: Self

    /// Drives headless Chromium (Selenium, from `scripts/setup.sh`).
    @Tag public static var browser: Self

    /// Needs root, or a second user (`SecondUser`, `useradd`), to mean what it says.
    @Tag public static var root: Self
}
