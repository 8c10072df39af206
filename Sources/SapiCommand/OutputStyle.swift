#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How `sapi` prints: colours (and in which theme), formatting (indentation, sorted keys and headers), and whether
/// what came from the network shows its control characters.
///
/// `--pretty all|colors|format|none` sets the first two as httpie does; the default is `all` on a
/// terminal and `none` when piped, and `NO_COLOR` (set and not empty) turns colours off unless
/// `--pretty` asks for them. Control characters are visible on a terminal whatever `--pretty` says.
struct OutputStyle: Sendable, Equatable {
    enum Pretty: String, CaseIterable, Sendable {
        case all, colors, format, none
    }

    /// The colour themes `--style` names.
    enum Theme: String, CaseIterable, Sendable {
        /// For dark backgrounds (the default; `auto` is an alias).
        case dark
        /// For light backgrounds.
        case light

        var palette: Palette {
            switch self {
            case .dark:
                Palette(
                    key: "\u{1B}[34m", string: "\u{1B}[32m", number: "\u{1B}[36m", literal: "\u{1B}[35m",
                    fieldName: "\u{1B}[36m", status: "\u{1B}[1m", meta: "\u{1B}[2m")
            case .light:
                Palette(
                    key: "\u{1B}[34;1m", string: "\u{1B}[31m", number: "\u{1B}[35m", literal: "\u{1B}[33m",
                    fieldName: "\u{1B}[34m", status: "\u{1B}[1m", meta: "\u{1B}[2m")
            }
        }
    }

    /// The colours (SGR sequences) of a theme.
    struct Palette: Sendable, Equatable {
        var key: String
        var string: String
        var number: String
        var literal: String
        var fieldName: String
        var status: String
        var meta: String

        static let reset = "\u{1B}[0m"

        /// `text` in `color`, reset right after it: a reset never lands past a line break.
        func paint(_ text: String, _ color: String) -> String { color + text + Self.reset }
    }

    /// Colours, or `nil` for plain text.
    var palette: Palette?
    /// Indent JSON (and sort, with `sorted`).
    var format: Bool
    /// Sort JSON object keys and header fields (`--sorted`, httpie's default); `--unsorted` keeps them as
    /// they came.
    var sorted: Bool
    /// Show the control characters of what came from the network in their visible form (`TerminalText`): the output
    /// is a terminal. Otherwise bodies, messages and header fields are written exactly as received.
    var visibleControls = false

    static let plain = OutputStyle(palette: nil, format: false, sorted: true)

    /// The style the options ask for, on this output.
    static func resolve(
        pretty: Pretty?, sorted: Bool?, theme: Theme?, terminal: Bool, environment: [String: String]
    ) -> OutputStyle {
        let noColor = !(environment["NO_COLOR"] ?? "").isEmpty
        let pretty = pretty ?? (terminal ? (noColor ? .format : .all) : .none)
        let colors = pretty == .all || pretty == .colors
        let format = pretty == .all || pretty == .format
        return OutputStyle(
            palette: colors ? (theme ?? .dark).palette : nil, format: format, sorted: sorted ?? true,
            visibleControls: terminal)
    }

    /// Text from the network as this output shows it: in its visible form on a terminal, else as it came.
    func shown(_ text: String) -> String {
        visibleControls ? TerminalText.visible(text) : text
    }

    /// Bytes from the network as this output shows them: in their visible form on a terminal, else as they came.
    func shown(_ data: Data) -> Data {
        visibleControls ? TerminalText.visible(data) : data
    }

    /// `text` in a colour of the palette (picked by `color`), or as it is without colours.
    func paint(_ text: String, _ color: (Palette) -> String) -> String {
        guard let palette else { return text }
        return palette.paint(text, color(palette))
    }
}
