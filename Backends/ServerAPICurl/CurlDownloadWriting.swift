import Foundation
import ServerAPIKit

/// Where the body of the current response goes (the core's `DownloadFileWriter.Disposition`).
enum CurlDownloadDisposition {
    /// A 2xx body: written to the partial file.
    case file
    /// A non-2xx body: kept in memory, the files untouched.
    case memory
    /// A 416 that says the partial file is already whole: ignore the body and finish.
    case alreadyComplete
    /// Ignore this response and send the request again after `prepare(_:)`.
    case restart
}

/// What a transfer needs from a download writer: the shape of the core's `DownloadFileWriter`, which
/// gives every transport the same resume, error-body and 416 semantics.
///
/// - Important: Loop thread only: one transfer owns one writer.
protocol CurlDownloadWriting: AnyObject {
    /// Adds `Range`/`If-Range` when resuming; returns the offset the download resumes from.
    func prepare(_ request: inout TransportRequest) -> Int64
    /// Decides where the body of a final response head goes.
    func receiveHead(status: Int, headers: HTTPHeaders) throws(ServerAPIError) -> CurlDownloadDisposition
    /// Writes the next body bytes where `receiveHead` decided.
    func write(_ bytes: UnsafeRawBufferPointer) throws(ServerAPIError)
    /// Completes the download (moves the file into place) or returns the error body.
    func finish() throws(ServerAPIError) -> ResponseBody
    /// Keeps the partial file for a resume after a failure or cancellation.
    func abandon()
    /// Bytes in the partial file, including what an earlier attempt left.
    var bytesOnDisk: Int64 { get }
    /// The size of the whole file, when the server said it.
    var expectedTotal: Int64? { get }
}

/// Makes the writer for a call with a download target, on the loop thread.
typealias CurlDownloadWriterFactory =
    @Sendable (_ target: DownloadTarget, _ requestID: RequestID, _ url: URL) throws(ServerAPIError) ->
    any CurlDownloadWriting

enum CurlDownloads {
    /// The writer every download uses unless a test injects another.
    ///
    /// The core's `DownloadFileWriter` (one writer, the same resume, 404 and 416 semantics for every
    /// transport) is not part of this build yet: until it is, a call with a download target fails
    /// with `invalidRequest` instead of writing a file with other semantics. Adopting it is one line
    /// here plus `extension DownloadFileWriter: CurlDownloadWriting` mapping its `Disposition`.
    static let defaultFactory: CurlDownloadWriterFactory = { _, requestID, url throws(ServerAPIError) in
        throw ServerAPIError(
            .invalidRequest, "downloads to a file are not available in this build of the curl transport",
            requestID: requestID, url: url)
    }
}
