import CFuzzerDriver
import Foundation

/// One fuzz target: a parser fed the fuzzer's bytes, and the properties it must keep.
struct Harness: Sendable {
    var name: String
    /// Runs one input; a violated property stops the process (`fatalError`), which libFuzzer records as a crash.
    var run: @Sendable (Data) -> Void

    static let all: [Harness] = [
        Harness(name: "json", run: JSONHarness.run),
        Harness(name: "keypath", run: KeyPathHarness.run),
        Harness(name: "formatter", run: FormatterHarness.run),
        Harness(name: "charset", run: CharsetHarness.run),
        Harness(name: "curlhead", run: CurlHeadHarness.run),
        Harness(name: "cachefile", run: CacheFileHarness.run),
        Harness(name: "contentdisposition", run: ContentDispositionHarness.run),
        Harness(name: "setcookie", run: SetCookieHarness.run),
        Harness(name: "sse", run: ServerSentEventsHarness.run),
        Harness(name: "deflate", run: DeflateHarness.run),
        Harness(name: "proxy", run: ProxyHarness.run),
        Harness(name: "requestitem", run: RequestItemHarness.run),
        Harness(name: "netrc", run: NetrcHarness.run),
    ]

    /// The harness `FUZZ_HARNESS` names; the process exits with the list when it names none.
    static let selected: Harness = {
        let name = ProcessInfo.processInfo.environment["FUZZ_HARNESS"] ?? ""
        if let harness = all.first(where: { $0.name == name }) { return harness }
        let names = all.map(\.name).joined(separator: " ")
        FileHandle.standardError.write(Data("ParserFuzzer: set FUZZ_HARNESS to one of: \(names)\n".utf8))
        exit(2)
    }()
}

/// libFuzzer's entry point: one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    // The fuzzer's own buffer, not a copy: AddressSanitizer then sees a read one byte past the input.
    let data =
        if let start, count > 0 {
            Data(bytesNoCopy: UnsafeMutablePointer(mutating: start), count: count, deallocator: .none)
        } else {
            Data()
        }
    Harness.selected.run(data)
    return 0
}

/// Picks the harness, then runs libFuzzer's loop over it with the command line's flags and corpora.
@main
enum ParserFuzzer {
    static func main() {
        _ = Harness.selected
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzerTestOneInput))
    }
}

/// Stops the process when a property does not hold: libFuzzer saves the input as a crash.
func require(_ condition: Bool, _ message: @autoclosure () -> String, input: Data) {
    guard !condition else { return }
    fatalError("property violated: \(message())\ninput: \(String(reflecting: String(decoding: input, as: UTF8.self)))")
}

extension Data {
    /// The input cut at its first `count` newlines: header-like fields first, the rest as bytes.
    func lines(_ count: Int) -> (fields: [String], rest: Data) {
        var fields: [String] = []
        var start = startIndex
        while fields.count < count {
            guard let newline = self[start...].firstIndex(of: UInt8(ascii: "\n")) else {
                fields.append(String(decoding: self[start...], as: UTF8.self))
                start = endIndex
                continue
            }
            fields.append(String(decoding: self[start..<newline], as: UTF8.self))
            start = index(after: newline)
        }
        return (fields, Data(self[start...]))
    }
}
