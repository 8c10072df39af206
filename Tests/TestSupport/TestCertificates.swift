import Foundation
import Testing

/// Certificates that `make_test_certificates.sh` made for one test, in a temporary directory: a throw-away
/// CA that no transport trusts unless told, server certificates signed by it (`server` for 127.0.0.1,
/// `wrong-host`, `expired`), client certificates and keys, and the public-key pins (see the script for the
/// full list).
public struct TestCertificates: Sendable {
    /// The directory holding the set.
    public let directory: URL

    /// A file of the set, such as `"ca.pem"`.
    public func file(_ name: String) -> URL { directory.appendingPathComponent(name) }

    /// The base64 SHA-256 pin in `name` (`"server.pin"`, `"backup.pin"`).
    /// - Throws: When the file cannot be read; records an issue and throws when it holds no SHA-256 digest.
    public func pin(_ name: String) throws -> String {
        let pin = try String(contentsOf: file(name), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        // A SHA-256 digest in base64: an empty or truncated file would make the pin tests meaningless.
        try #require(Data(base64Encoded: pin)?.count == 32)
        return pin
    }

    /// Runs `body` with a fresh set of certificates, removed afterwards.
    /// - Parameter body: Work that gets the certificates.
    /// - Returns: What `body` returns.
    /// - Throws: When the script fails (an issue is recorded), or what `body` throws.
    public static func with<T>(_ body: (TestCertificates) async throws -> T) async throws -> T {
        try await withTemporaryDirectory { directory in
            try await FixtureProcess.run(
                URL(fileURLWithPath: "/bin/bash"), [FixtureScript.makeTestCertificates.path, directory.path])
            return try await body(TestCertificates(directory: directory))
        }
    }
}
