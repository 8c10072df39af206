// What `trimmingCharacters(in:)` and `padding(toLength:withPad:startingAt:)` did, for the text sapi prints: they
// are Foundation's, and sapi keeps to FoundationEssentials (`String(format:)`'s is the core's `String(cFormat:)`).
extension String {
    /// The text padded with spaces at its end to `length` characters.
    func padded(to length: Int) -> String {
        self + String(repeating: " ", count: Swift.max(0, length - count))
    }
}

extension StringProtocol {
    /// The text without the spaces and tabs around it (`CharacterSet.whitespaces`).
    func trimmingWhitespace() -> String {
        trimming { $0 == "\t" || $0.properties.generalCategory == .spaceSeparator }
    }

    /// The text without the spaces, tabs and line ends around it (`CharacterSet.whitespacesAndNewlines`).
    func trimmingWhitespaceAndNewlines() -> String {
        trimming { scalar in
            switch scalar.value {
            case 0x09...0x0D, 0x85: return true
            default:
                switch scalar.properties.generalCategory {
                case .spaceSeparator, .lineSeparator, .paragraphSeparator: return true
                default: return false
                }
            }
        }
    }

    private func trimming(_ isTrimmed: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isTrimmed($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !isTrimmed($0) }) ?? first
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars[first...last])
        return text
    }
}
