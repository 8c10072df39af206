/// The decompression-bomb rule every transport applies: a response whose content coding (gzip, deflate,
/// br, zstd) expands its bytes more than `TransportRequest.maxDecompressionRatio` times is stopped.
///
/// The size limit (`ResponseSizeRule.limit(for:streamed:)`) already bounds the decoded body; the ratio bounds
/// it where no size limit applies (a download, a stream), and stops a bomb (10 MB of zeros is 10 KB of gzip) long before a generous size limit would. The check
/// compares the decoded bytes received so far with the encoded bytes they came from: the bytes received
/// so far when the library counts them (libcurl's `CURLINFO_SIZE_DOWNLOAD_T`, counted before decoding),
/// else the encoded body's `Content-Length` (the whole encoded body: a looser, still bounded check). A
/// response that is not content-coded, or whose encoded size is not known at all, is checked against
/// `maxResponseSize` only.
///
/// Bodies up to `floor` decoded bytes are never refused: a small response compresses far beyond any
/// ratio (a 1 KB run of spaces is a 30-byte gzip) and costs nothing to hold.
@usableFromInline package enum DecompressionRule {
    /// The ratio a request allows unless it says otherwise: 100. Text and JSON compress 3 to 20 times, and
    /// rarely beyond 50; gzip's own ceiling is about 1030, reached only by runs of one byte, as bombs are.
    @usableFromInline package static let defaultRatio = 100

    /// The decoded bytes always allowed, whatever the ratio: 1 MiB.
    @usableFromInline package static let floor: Int64 = 1 << 20

    /// Whether a response's body is content-coded: its `Content-Encoding` names a coding other than
    /// `identity`.
    /// - Parameter headers: The response's headers.
    /// - Returns: `true` when the transport decodes the body (or should).
    package static func isEncoded(_ headers: HTTPHeaders) -> Bool {
        !headers.everyValue(for: "Content-Encoding") { value in
            HTTPSyntax.forEachElement(of: value) { coding in
                coding.isEmpty || HTTPSyntax.equals(coding, lowercased: "identity")
            }
        }
    }

    /// Checks the decoded bytes received so far against the encoded bytes they came from.
    /// - Parameters:
    ///   - decoded: Decoded body bytes of the current response so far.
    ///   - encoded: Encoded body bytes received so far, or the encoded body's whole length; `nil` when
    ///     not known (then nothing is checked).
    ///   - ratio: The request's `maxDecompressionRatio`; `nil` for no ratio limit.
    ///   - status: The response's status.
    /// - Returns: `responseTooLarge` once `decoded` exceeds both `floor` and `ratio` × `encoded`.
    @inlinable
    package static func check(decoded: Int64, encoded: Int64?, ratio: Int?, status: Int) -> ServerAPIError? {
        guard let ratio, let encoded, decoded > floor else { return nil }
        let (allowed, overflow) = max(encoded, 1).multipliedReportingOverflow(by: Int64(max(ratio, 1)))
        guard !overflow, decoded > allowed else { return nil }
        return .decompressionRatioExceeded(ratio: ratio, encoded: encoded, decoded: decoded, status: status)
    }
}
