import Foundation
import SapiCommand
import ServerAPIKit
import ServerAPITesting
import ServerAPIURLSession

/// `sapi-full`'s `FoundationFeatures`: `URLSessionTransport`, and `RecordingTransport` and `ReplayingTransport`.
package struct FullFeatures: FoundationFeatures {
    package init() {}

    package func urlSessionRefusal(_ version: HTTPVersion) -> String? {
        URLSessionTransport.refusal(version)?.message
    }

    package func urlSessionRefusal(_ tls: TLSOptions) -> String {
        do throws(ServerAPIError) {
            _ = try URLSessionTransport(tls: tls)
            return "the urlsession backend cannot use these TLS options"
        } catch {
            return error.message
        }
    }

    package func urlSessionRefusal(_ credentials: HTTPCredentials) -> String {
        URLSessionTransport.refusal(credentials).message
    }

    package func urlSessionTransport(proxy: Proxy?) throws(ServerAPIError) -> any RequestPerforming {
        try URLSessionTransport(proxy: proxy)
    }

    package func recorded(_ transport: any RequestPerforming, to file: URL, redacted: Bool) -> any RequestPerforming {
        RecordingTransport(recording: transport, to: file, redaction: redacted ? .default : .none)
    }

    package func replaying(_ file: URL) throws(ServerAPIError) -> any RequestPerforming {
        var configuration = ReplayingTransport.Configuration()
        configuration.recordingAdvice = Self.recordingAdvice
        return try ReplayingTransport(file: file, configuration: configuration)
    }

    /// What `--replay`'s errors say to do to record what the file lacks: `sapi` has no record modes and reads no
    /// `SAPI_HAR_MODE`; it records with `--har`, which writes a new file.
    static let recordingAdvice = ReplayingTransport.RecordingAdvice(
        missing: "sapi --har NEW.har and the same arguments (--har writes a new file with that run's exchanges)",
        again: "sapi --har NEW.har and the same arguments (--har writes a new file with that run's exchanges)")

    package var replayHint: String {
        "give --replay a HAR 1.2 file of at most \(HARArchive.defaultMaximumFileSize >> 20) MiB, as sapi --har FILE "
            + "URL writes one"
    }
}
