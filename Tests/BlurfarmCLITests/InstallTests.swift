import BlurfarmTestSupport
import Foundation
import Testing

/// What `scripts/install.sh` installs besides the executable, generated from the argument
/// parser: the shell completions, and the description of every command the man page is made
/// from (swift-argument-parser's generate-manual plugin reads `--experimental-dump-help`).
@Suite(.tags(.process), .blocking) struct InstallTests {
    /// Completing `blurfarm ap` in a real bash, as bash calls the script's function (the
    /// command, the word and the word before it), offers `apply`; `blurfarm run --wa` offers
    /// `--wait` and `--watch`.
    @Test func bashCompletesCommandsAndOptions() throws {
        let script = try Blurfarm.run(["--generate-completion-script", "bash"])
        #expect(script.status == 0)
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("blurfarm.bash")
        try script.stdout.write(to: file, atomically: true, encoding: .utf8)
        func complete(_ words: [String]) throws -> [String] {
            let line = words.map { "'\($0)'" }.joined(separator: " ")
            let driver = folder.appendingPathComponent("complete.bash")
            try """
                source '\(file.path)'
                COMP_WORDS=(\(line)); COMP_CWORD=\(words.count - 1)
                COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
                _blurfarm '\(words[0])' '\(words[words.count - 1])' '\(words[words.count - 2])'
                printf '%s\\n' "${COMPREPLY[@]}"

                """.write(to: driver, atomically: true, encoding: .utf8)
            let result = try Blurfarm.run(["-c", "exec bash '\(driver.path)'"], shell: true)
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout.split(separator: "\n").map(String.init)
        }
        #expect(try complete(["blurfarm", "ap"]) == ["apply"])
        #expect(Set(try complete(["blurfarm", "run", "--wa"])) == ["--wait", "--watch"])
        // The internal worker command is not offered.
        #expect(!(try complete(["blurfarm", "w"])).contains("worker"))
    }

    /// The zsh and fish scripts are generated too (checked for their shells' own markers).
    @Test func zshAndFishScriptsAreGenerated() throws {
        let zsh = try Blurfarm.run(["--generate-completion-script", "zsh"])
        #expect(zsh.status == 0 && zsh.stdout.hasPrefix("#compdef blurfarm"), "\(zsh.stdout.prefix(80))")
        let fish = try Blurfarm.run(["--generate-completion-script", "fish"])
        #expect(fish.status == 0 && fish.stdout.contains("complete -c 'blurfarm'"), "\(fish.stdout.prefix(200))")
    }

    /// The man page's source: every command users run, with its abstract; the worker hidden.
    @Test func theManPagesSourceDescribesEveryCommand() throws {
        let dump = try Blurfarm.run(["--experimental-dump-help"])
        #expect(dump.status == 0)
        let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        let command = try #require(root["command"] as? [String: Any])
        let subcommands = try #require(command["subcommands"] as? [[String: Any]])
        let shown = subcommands.filter { $0["shouldDisplay"] as? Bool != false }.compactMap { $0["commandName"] as? String }
        #expect(Set(shown).isSuperset(of: ["apply", "check", "run", "filters", "bench"]))
        #expect(!shown.contains("worker"))
        for subcommand in subcommands where subcommand["shouldDisplay"] as? Bool != false {
            #expect((subcommand["abstract"] as? String)?.isEmpty == false, "\(subcommand["commandName"] ?? "?")")
        }
    }

    /// `scripts/install.sh --prefix P --from BUILD` (twice: it is safe to run again) installs both
    /// executables; the installed `blurfarm` finds its worker in `P/libexec/blurfarm/`; without
    /// it, the error says where it looked and how to mend it, and `$BLURFARM_WORKER` names
    /// another.
    @Test func installedExecutablesFindTheirWorkerAndSayHowWhenItIsMissing() throws {
        let prefix = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: prefix) }
        let build = Blurfarm.executable.deletingLastPathComponent().path
        let script = Fixtures.repository.appendingPathComponent("scripts/install.sh").path
        for _ in 0..<2 {
            let install = try Blurfarm.run(["-c", "exec bash \"$0\" --prefix \"$1\" --from \"$2\"", script, prefix.path, build], shell: true)
            #expect(install.status == 0, "\(install.stderr)")
            #expect(install.stdout.contains("installed blurfarm"), "\(install.stdout)")
        }
        let blurfarm = prefix.appendingPathComponent("bin/blurfarm").path
        let worker = prefix.appendingPathComponent("libexec/blurfarm/blurfarm-worker").path
        #expect(FileManager.default.isExecutableFile(atPath: blurfarm))
        #expect(FileManager.default.isExecutableFile(atPath: worker))
        let sample = Fixtures.repository.appendingPathComponent("samples/plasma-Kite.jpg").path
        func apply(_ environment: [String: String] = [:]) throws -> CommandResult {
            let output = prefix.appendingPathComponent("kite.png").path
            try? FileManager.default.removeItem(atPath: output)
            let process = ["-c", "exec \"$0\" apply \"$1\" \"$2\" --filter 'gaussian sigma=2' --workers 1", blurfarm, sample, output]
            return try Blurfarm.run(process, environment: environment, shell: true)
        }
        let installed = try apply()
        #expect(installed.status == 0, "\(installed.stderr)")

        let moved = prefix.appendingPathComponent("elsewhere-worker").path
        try FileManager.default.moveItem(atPath: worker, toPath: moved)
        let missing = try apply()
        #expect(missing.status == 1)
        #expect(missing.stderr.contains(
            "cannot start the workers: the worker executable \(prefix.path)/bin/blurfarm-worker: No such file or directory; "
                + "blurfarm runs blurfarm-worker from beside its own executable, else from ../libexec/blurfarm/ "
                + "(scripts/install.sh installs both executables), or the one $BLURFARM_WORKER names; "
                + "--workers 0 renders in this process without it"), "\(missing.stderr)")
        let named = try apply(["BLURFARM_WORKER": moved])
        #expect(named.status == 0, "\(named.stderr)")
    }

    /// An installed `blurfarm serve` started by name (found on the PATH, from another working
    /// folder, as a systemd unit or docs/serve.md starts it) serves its status page: its files
    /// are found from the kernel's answer for the executable (`/proc/self/exe`), not `argv[0]`.
    @Test func anInstalledServeStartedByNameServesItsPage() throws {
        let prefix = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: prefix) }
        let build = Blurfarm.executable.deletingLastPathComponent().path
        let script = Fixtures.repository.appendingPathComponent("scripts/install.sh").path
        let install = try Blurfarm.run(["-c", "exec bash \"$0\" --prefix \"$1\" --from \"$2\"", script, prefix.path, build], shell: true)
        #expect(install.status == 0, "\(install.stderr)")
        // Not below the prefix: from there `argv[0]` resolved against the working folder would
        // find the page too.
        let elsewhere = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        let server = try ServedFarm(
            folder: elsewhere, workers: 1, byName: prefix.appendingPathComponent("bin").path, workingFolder: elsewhere)
        defer { server.stop() }
        for path in ["/", "/app.js", "/style.css"] {
            let (status, body) = try server.raw("GET", path)
            #expect(status == 200, "GET \(path): \(status) \(String(decoding: body, as: UTF8.self))")
        }
        let (_, page) = try server.raw("GET", "/")
        #expect(String(decoding: page, as: UTF8.self).contains("<html"))
    }
}
