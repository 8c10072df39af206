import Foundation
import Testing

/// One case of the HTTP caching conformance suite: a short script of calls, what the scripted origin
/// answers to each, and what the caller must then see.
///
/// The script is plain text, one step per block, blocks separated by a line `--`:
///
/// ```
/// GET setup pause            the call: method, then /name (a path under the case's URL), ?query and flags
/// > Foo: 1                   a header the call sets
/// >> text                    the call's body
/// < 404                      the origin's status (200 when absent)
/// < Cache-Control: max-age=1 a header the origin sends, checked on what the caller gets when the call reached it
/// <? Age: abc                a header the origin sends, not checked on delivery
/// << text                    the origin's body (the case's id when absent)
/// = cached                   expected: cached | not-cached | etag-validated | lm-validated
/// = status 304               the status the caller must get (`any`: not checked); else the origin's status
/// = header Age > 2           on the delivered response: `Name`, `Name: value`, `Name == Other`, `Name > n`
/// = no-header A              absent from the delivered response (`Name: value`: that value absent)
/// = sent Foo: 1              on the request the origin got in this step: `Name` or `Name: value`
/// = not-sent Foo             absent from that request
/// = text 01                  the delivered body (`any`: not checked); `= body unchecked` skips the body check
/// = method HEAD              the method the origin got
/// = setup-only type,status   these checks only prepare the case (reported as setup failures)
/// ```
///
/// Flags on the call line: `setup` (the step only prepares: its failures are setup failures), `pause` (three
/// seconds pass on the test clock after the step), `delay=N` (the origin takes N seconds to answer),
/// `disconnect` (the origin drops the connection after reading the request), `ims-from-previous` (an
/// `If-Modified-Since: @N` is relative to the previous response's origin time), `locations` (`Location` and
/// `Content-Location` are paths under the case's URL), `rfc850=<header>` (that date is sent in the obsolete
/// RFC 850 format).
///
/// A value `@N` of a date field (`Date`, `Expires`, `Last-Modified`, `If-Modified-Since`,
/// `If-Unmodified-Since`) is N seconds from the origin's clock when it answers. A value between `|` bars is
/// taken as it is, spaces included (`|` alone, twice: empty).
struct ConformanceCase: Sendable, CustomTestStringConvertible, CustomStringConvertible {
    /// How the suite ranks a case: a rule the specification states, what a good cache does, or a behaviour
    /// that is only observed.
    enum Kind: String, Sendable, CaseIterable, Comparable {
        case required, optimal, check

        static func < (lhs: Kind, rhs: Kind) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    /// The case's identifier, as in the HTTP WG suite, so that results can be compared with its own.
    let id: String
    let kind: Kind
    /// The group (a file of the HTTP WG suite).
    let group: String
    /// A case only a private cache is asked to pass (the HTTP WG suite runs it in browsers only).
    let privateOnly: Bool
    let steps: [ConformanceStep]

    init(_ id: String, _ kind: Kind, group: String, privateOnly: Bool = false, _ script: String) {
        self.id = id
        self.kind = kind
        self.group = group
        self.privateOnly = privateOnly
        do {
            steps = try ConformanceStep.parse(script)
        } catch {
            preconditionFailure("case \(id): \(error)")
        }
    }

    var description: String { "\(id) (\(kind.rawValue))" }
    var testDescription: String { description }
}

/// A header value: text, or a date N seconds from a reference time.
enum ConformanceValue: Sendable, Hashable, CustomStringConvertible {
    case text(String)
    case date(offset: Int)

    var description: String {
        switch self {
        case .text(let text): "\"\(text)\""
        case .date(let offset): "now\(offset >= 0 ? "+" : "")\(offset)s"
        }
    }
}

/// A header field of a script.
struct ConformanceField: Sendable, Hashable {
    var name: String
    var value: ConformanceValue
}

/// What a step's call must turn out to be.
enum ConformanceOutcome: String, Sendable {
    /// Answered by the cache: no request of this step produced the response.
    case cached
    /// Answered by the origin, in this step.
    case notCached = "not-cached"
    /// The cache sent the origin `If-None-Match`.
    case etagValidated = "etag-validated"
    /// The cache sent the origin `If-Modified-Since`.
    case lmValidated = "lm-validated"
}

/// A check on a header of the delivered response.
enum ConformanceHeaderCheck: Sendable, Hashable {
    case present(String)
    case equals(String, ConformanceValue)
    case sameAs(String, String)
    case greaterThan(String, Int)
}

/// One call of a case, the origin's answer to it and the checks on what the caller gets.
struct ConformanceStep: Sendable {
    var method = "GET"
    var pathSuffix: String?
    var query: String?
    var isSetup = false
    var pauseAfter = false
    var originDelay = 0
    var disconnect = false
    var modifiedSinceFromPrevious = false
    var relativeLocations = false
    var rfc850Dates: Set<String> = []

    var requestHeaders: [ConformanceField] = []
    var requestBody: String?

    var status: Int?
    /// The origin's headers, and whether each is checked on the delivered response.
    var responseHeaders: [(field: ConformanceField, checked: Bool)] = []
    var responseBody: String?

    var outcome: ConformanceOutcome?
    /// `.some(nil)`: any status.
    var expectedStatus: Int??
    var expectedHeaders: [ConformanceHeaderCheck] = []
    var absentHeaders: [(name: String, value: ConformanceValue?)] = []
    var sentHeaders: [(name: String, value: ConformanceValue?)] = []
    var unsentHeaders: [(name: String, value: ConformanceValue?)] = []
    /// `.some(nil)`: any body.
    var expectedText: String??
    var checksBody = true
    var expectedMethod: String?
    /// Checks that only prepare the case: `type`, `status`, `header`, `no-header`, `text`, `sent`, `not-sent`, `method`.
    var setupChecks: Set<String> = []

    struct ParseError: Error, CustomStringConvertible {
        var description: String
    }

    static let dateFields: Set<String> = [
        "date", "expires", "last-modified", "if-modified-since", "if-unmodified-since",
    ]

    static func parse(_ script: String) throws -> [ConformanceStep] {
        var steps: [ConformanceStep] = []
        var current: ConformanceStep?
        for raw in script.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw)
            if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            if line == "--" {
                guard let step = current else { throw ParseError(description: "empty step") }
                steps.append(step)
                current = nil
                continue
            }
            if current == nil {
                current = try callLine(line)
                continue
            }
            try current!.read(line)
        }
        if let current { steps.append(current) }
        guard !steps.isEmpty else { throw ParseError(description: "no step") }
        return steps
    }

    private static func callLine(_ line: String) throws -> ConformanceStep {
        var step = ConformanceStep()
        let words = line.split(separator: " ").map(String.init)
        step.method = words[0]
        for word in words.dropFirst() {
            if word.hasPrefix("/") {
                step.pathSuffix = String(word.dropFirst())
            } else if word.hasPrefix("?") {
                step.query = String(word.dropFirst())
            } else if word == "setup" {
                step.isSetup = true
            } else if word == "pause" {
                step.pauseAfter = true
            } else if word.hasPrefix("delay="), let seconds = Int(word.dropFirst(6)) {
                step.originDelay = seconds
            } else if word == "disconnect" {
                step.disconnect = true
            } else if word == "ims-from-previous" {
                step.modifiedSinceFromPrevious = true
            } else if word == "locations" {
                step.relativeLocations = true
            } else if word.hasPrefix("rfc850=") {
                step.rfc850Dates.insert(String(word.dropFirst(7)).lowercased())
            } else {
                throw ParseError(description: "unknown flag \(word) in \(line)")
            }
        }
        return step
    }

    private static func value(_ text: String, name: String) -> ConformanceValue {
        if text.count >= 2, text.hasPrefix("|"), text.hasSuffix("|") {
            return .text(String(text.dropFirst().dropLast()))
        }
        if text.hasPrefix("@"), let offset = Int(text.dropFirst()), dateFields.contains(name.lowercased()) {
            return .date(offset: offset)
        }
        return .text(text)
    }

    /// `Name: value` or `Name`.
    private static func field(_ text: String) -> (name: String, value: ConformanceValue?) {
        guard let colon = text.range(of: ": ") else {
            if text.hasSuffix(":") { return (String(text.dropLast()), .text("")) }
            return (text, nil)
        }
        let name = String(text[..<colon.lowerBound])
        return (name, value(String(text[colon.upperBound...]), name: name))
    }

    private mutating func read(_ line: String) throws {
        func rest(after prefix: String) -> String { String(line.dropFirst(prefix.count)) }
        if line.hasPrefix(">> ") {
            requestBody = rest(after: ">> ")
        } else if line.hasPrefix("> ") {
            let (name, value) = Self.field(rest(after: "> "))
            requestHeaders.append(ConformanceField(name: name, value: value ?? .text("")))
        } else if line.hasPrefix("<< ") {
            responseBody = rest(after: "<< ")
        } else if line.hasPrefix("<? ") {
            let (name, value) = Self.field(rest(after: "<? "))
            responseHeaders.append((ConformanceField(name: name, value: value ?? .text("")), false))
        } else if line.hasPrefix("< ") {
            let text = rest(after: "< ")
            if let code = Int(text) {
                status = code
            } else {
                let (name, value) = Self.field(text)
                responseHeaders.append((ConformanceField(name: name, value: value ?? .text("")), true))
            }
        } else if line.hasPrefix("= ") {
            try expectation(rest(after: "= "))
        } else {
            throw ParseError(description: "unreadable line: \(line)")
        }
    }

    private mutating func expectation(_ text: String) throws {
        let (word, argument) =
            text.firstIndex(of: " ").map { (String(text[..<$0]), String(text[text.index(after: $0)...])) }
            ?? (text, "")
        switch word {
        case "cached", "not-cached", "etag-validated", "lm-validated":
            outcome = ConformanceOutcome(rawValue: word)
        case "status":
            expectedStatus = argument == "any" ? .some(nil) : .some(Int(argument))
        case "header":
            let parts = argument.split(separator: " ", maxSplits: 2).map(String.init)
            if parts.count == 3, parts[1] == "==" {
                expectedHeaders.append(.sameAs(parts[0], parts[2]))
            } else if parts.count == 3, parts[1] == ">", let bound = Int(parts[2]) {
                expectedHeaders.append(.greaterThan(parts[0], bound))
            } else {
                let (name, value) = Self.field(argument)
                expectedHeaders.append(value.map { .equals(name, $0) } ?? .present(name))
            }
        case "no-header": absentHeaders.append(Self.field(argument))
        case "sent": sentHeaders.append(Self.field(argument))
        case "not-sent": unsentHeaders.append(Self.field(argument))
        case "text":
            expectedText = argument == "any" ? .some(nil) : .some(Self.plain(argument))
        case "body" where argument == "unchecked": checksBody = false
        case "method": expectedMethod = argument
        case "setup-only": setupChecks = Set(argument.split(separator: ",").map(String.init))
        default: throw ParseError(description: "unknown expectation: \(text)")
        }
    }

    private static func plain(_ text: String) -> String {
        if text.count >= 2, text.hasPrefix("|"), text.hasSuffix("|") { return String(text.dropFirst().dropLast()) }
        return text
    }
}
