import Foundation
import ServerAPITestSupport
import Testing

/// A terminal for the tests that need one: a tmux server of its own (a private socket) with one bash pane.
/// `scripts/test.sh` installs tmux; without it these tests fail, they are never skipped.
struct Terminal {
    static let tmux = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    struct Screen {
        var text: String
        /// The status the command line's `echo EXIT=$?` printed.
        var exitCode: Int32?
    }

    /// The tmux server's socket, removed with its configuration file when the terminal is done.
    let socket = FileManager.default.temporaryDirectory.appendingPathComponent(
        "sapi-tmux-\(UUID().uuidString.prefix(8))")

    /// Runs `body` with a fresh terminal, and stops its tmux server afterwards.
    static func with(_ body: (Terminal) async throws -> Void) async throws {
        let terminal = Terminal()
        let config = terminal.socket.appendingPathExtension("conf")
        try Data("set -g remain-on-exit on\n".utf8).write(to: config)
        defer {
            try? FileManager.default.removeItem(at: config)
            try? FileManager.default.removeItem(at: terminal.socket)
        }
        _ = try await terminal.tmux([
            "-f", config.path, "new-session", "-d", "-s", "t", "-x", "200", "-y", "50",
            // A user's terminal: not the test runner's NO_COLOR (swift test sets it when its output is not a terminal).
            "env -u NO_COLOR PS1='$ ' bash --norc --noprofile",
        ])
        do {
            try await body(terminal)
        } catch {
            _ = try? await terminal.tmux(["kill-server"])
            throw error
        }
        _ = try await terminal.tmux(["kill-server"])
    }

    /// Types a command line, followed by `echo EXIT=$?`, and presses Enter.
    func run(_ command: String) async throws {
        _ = try await tmux(["send-keys", "-t", "t", "-l", command + "; echo EXIT=$?"])
        _ = try await tmux(["send-keys", "-t", "t", "Enter"])
    }

    /// Types text as it is (no key names), without pressing Enter.
    func type(_ text: String) async throws {
        _ = try await tmux(["send-keys", "-t", "t", "-l", text])
    }

    /// Presses a key, such as `C-c`.
    func press(_ key: String) async throws {
        _ = try await tmux(["send-keys", "-t", "t", key])
    }

    /// What the pane shows; with `escapes`, its colours as escape sequences.
    func screen(escapes: Bool = false) async throws -> String {
        try await tmux(["capture-pane", "-p", "-t", "t"] + (escapes ? ["-e"] : []))
    }

    /// The pane's title: the host's name until a program in the pane sets it (OSC 0 or 2).
    func title() async throws -> String {
        try await tmux(["display-message", "-p", "-t", "t", "#{pane_title}"]).trimmingCharacters(in: .newlines)
    }

    /// Polls the pane until `condition` holds for what it shows.
    func waitFor(escapes: Bool = false, _ condition: (String) -> Bool) async throws -> String {
        var text = ""
        try await poll("the terminal to show what was expected", within: .seconds(30), every: .milliseconds(20)) {
            text = try await screen(escapes: escapes)
            return condition(text)
        }
        return text
    }

    /// Waits for the `EXIT=N` line of the command `run` typed.
    func waitForExit(escapes: Bool = false) async throws -> Screen {
        let exitLine = { (text: String) in
            text.split(separator: "\n").first { $0.hasPrefix("EXIT=") && $0.dropFirst(5).allSatisfy(\.isNumber) }
        }
        let text = try await waitFor(escapes: escapes) { exitLine($0) != nil }
        return Screen(text: text, exitCode: exitLine(text).flatMap { Int32($0.dropFirst(5)) })
    }

    private func tmux(_ arguments: [String]) async throws -> String {
        guard let tmux = Self.tmux else { throw TestFailure("tmux is not installed") }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("sapi-tmux-out-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: out) }
        // tmux starts with no descriptor but 0-2 (the server it forks would keep the one through which
        // Foundation sees the client exit) and no signal blocked (the test process blocks some).
        let unblocked =
            "import os, signal, sys; os.closerange(3, 65536); signal.pthread_sigmask(signal.SIG_SETMASK, []); "
            + "os.execv(sys.argv[1], sys.argv[1:])"
        let process = try await FixtureProcess.launch(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", unblocked, tmux, "-S", socket.path] + arguments
        ) { process in
            process.standardOutput = try FileHandle(forWritingTo: out)
            process.standardInput = FileHandle.nullDevice
        }
        let status = try await process.exitStatus(within: .seconds(20))
        guard status == 0 else { throw TestFailure("tmux \(arguments.joined(separator: " ")) exited \(status)") }
        return String(decoding: try Data(contentsOf: out), as: UTF8.self)
    }
}
