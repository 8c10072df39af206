import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a transfer needs from a download writer: the core's `DownloadFileWriter`, which gives every
/// transport the same resume, error-body and 416 semantics. A protocol so that tests can watch how
/// the transport drives a writer.
///
/// - Important: Loop thread only: one transfer owns one writer.
protocol CurlDownloadWriting: AnyObject {
    /// Adds `Range`/`If-Range` when resuming; returns the offset the download resumes from.
    func prepare(_ request: inout TransportRequest) -> Int64
    /// Decides where the body of a final response head goes.
    func receiveHead(status: Int, headers: HTTPHeaders) throws(ServerAPIError) -> DownloadFileWriter.Disposition
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

extension DownloadFileWriter: CurlDownloadWriting {}

/// Makes the writer for a call with a download target, on the loop thread.
typealias CurlDownloadWriterFactory =
    @Sendable (_ target: DownloadTarget, _ requestID: RequestID, _ url: URL) throws(ServerAPIError) ->
    any CurlDownloadWriting

enum CurlDownloads {
    /// The writer every download uses unless a test injects another: the core's `DownloadFileWriter`,
    /// keeping at most `maxErrorBodySize` bytes of an error body.
    static func defaultFactory(maxErrorBodySize: Int) -> CurlDownloadWriterFactory {
        { target, requestID, url in
            DownloadFileWriter(target: target, requestID: requestID, url: url, maxErrorBodySize: maxErrorBodySize)
        }
    }
}
