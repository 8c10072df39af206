import Foundation
import ServerAPICurl
import Testing

/// The libcurl a run loaded is the one the run meant to test: `scripts/test.sh` runs the conformance suite once on
/// the system's libcurl and once on bookworm-backports' (`scripts/libcurl-backports.sh`, through
/// `LD_LIBRARY_PATH`), and says which version each run expects in `SAPI_EXPECTED_LIBCURL`. Without it, a run by
/// hand skips the test, and reports it as skipped; under CI (`CI=true`) a run that does not say fails.
@Suite("Conformance: the libcurl loaded")
struct LoadedLibcurlTests {
    static let expected = ProcessInfo.processInfo.environment["SAPI_EXPECTED_LIBCURL"]
    static let underCI = ProcessInfo.processInfo.environment["CI"] == "true"

    @Test(
        "the run loaded the libcurl it was meant to test",
        .enabled(if: expected != nil || underCI, "SAPI_EXPECTED_LIBCURL is not set"))
    func loadedVersion() {
        let loaded = CurlTransport.libcurlVersion
        guard let expected = Self.expected else {
            Issue.record(
                "SAPI_EXPECTED_LIBCURL is not set: a CI run must say which libcurl it tests (loaded \(loaded))")
            return
        }
        #expect(
            loaded == expected || loaded.hasPrefix(expected + "."), "loaded libcurl \(loaded), expected \(expected)")
    }
}
