#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Asks for a password on the terminal, as httpie does (`http: password for user@host:`), without echoing it.
enum PasswordPrompt {
    /// What ended the prompt other than a password.
    enum Failure: Error {
        /// Ctrl-C (or Ctrl-D on an empty line): exit 130.
        case interrupted
    }

    /// Asks for the password of `target` (`user@host`) on `/dev/tty`.
    ///
    /// The terminal is put in non-canonical mode without echo and without signals, so that Ctrl-C arrives as
    /// a byte the prompt answers; the terminal's settings
    /// are restored on every path before this returns or throws.
    /// - Throws: `UsageError` when stdin is not a terminal (the password must then be given with `-a`)
    ///   or the terminal cannot be opened; `Failure.interrupted` on Ctrl-C.
    static func ask(_ target: String) throws -> String {
        guard isatty(STDIN_FILENO) != 0 else {
            throw UsageError(
                message: "no password for \(target): stdin is not a terminal, so it cannot be asked for",
                hint: "-a USER:PASSWORD (USER: for an empty one), or a .netrc entry")
        }
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else {
            throw UsageError(message: "cannot open the terminal to ask for the password of \(target)")
        }
        defer { close(tty) }
        var saved = termios()
        guard tcgetattr(tty, &saved) == 0 else {
            throw UsageError(message: "cannot set up the terminal to ask for the password of \(target)")
        }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        put(tty, "sapi: password for \(target): ")
        guard tcsetattr(tty, TCSAFLUSH, &raw) == 0 else {
            put(tty, "\n")
            throw UsageError(message: "cannot turn off the terminal's echo to ask for the password of \(target)")
        }
        // A SIGTERM or SIGHUP while asking restores the terminal before the signal ends the process.
        restoring = (tty, saved)
        let previous = [SIGTERM, SIGHUP].map { ($0, signal($0, restoreAndDie)) }
        defer {
            _ = tcsetattr(tty, TCSAFLUSH, &saved)
            for (number, handler) in previous { signal(number, handler) }
            restoring = nil
            put(tty, "\n")
        }
        var bytes: [UInt8] = []
        while true {
            var byte: UInt8 = 0
            let count = read(tty, &byte, 1)
            if count < 0, errno == EINTR { continue }
            guard count == 1 else { throw Failure.interrupted }
            switch byte {
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                return String(decoding: bytes, as: UTF8.self)
            case 0x03, 0x1C:  // Ctrl-C, Ctrl-\\
                throw Failure.interrupted
            case 0x1A:  // Ctrl-Z: not a password character; the prompt does not stop
                continue
            case 0x04:  // Ctrl-D: the end on an empty line, else ignored
                if bytes.isEmpty { throw Failure.interrupted }
            case 0x7F, 0x08:  // Backspace: one character, whole (a UTF-8 sequence's continuation bytes too)
                while let last = bytes.popLast(), last & 0xC0 == 0x80 {}
            case 0x15:  // Ctrl-U
                bytes.removeAll()
            default:
                bytes.append(byte)
            }
        }
    }

    /// The terminal and its settings while the prompt has changed them, for `restoreAndDie`.
    nonisolated(unsafe) private static var restoring: (Int32, termios)?

    /// Restores the terminal, then lets the signal do what it does by default.
    private static let restoreAndDie: @convention(c) (Int32) -> Void = { number in
        if var (tty, settings) = PasswordPrompt.restoring { _ = tcsetattr(tty, TCSANOW, &settings) }
        signal(number, SIG_DFL)
        raise(number)
    }

    private static func put(_ tty: Int32, _ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(tty, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}
