#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Standard error, where sapi's errors, warnings and status lines go, each in its visible form
/// (`TerminalText.visible`), terminal or not.
///
/// Those lines quote the network (URLs, a redirect's `Location`, a body's first bytes, a close reason, a file name
/// from `Content-Disposition`), and standard error reaches the terminal even when standard output is piped; a log
/// of it is read on one later. The progress bar is the one writer that goes around it: its carriage returns are
/// its own, and it quotes nothing.
enum StandardError {
    /// Writes `text` (its lines ended by the caller) in its visible form.
    static func write(_ text: String) {
        Descriptor.write(TerminalText.visible(text).utf8, to: Descriptor.standardError)
    }
}
