internal import CCurl
import Foundation
import ServerAPIKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension CurlTransfer {
    // MARK: Response head

    /// Takes one header line. libcurl passes every head it receives: 1xx heads, then redirects we
    /// follow ourselves, then the final one, and trailers after the body. Only the final head is kept.
    /// - Returns: `false` to stop the transfer (`failure` or `restartDownload` says why).
    func receiveHeaderLine(_ line: UnsafeRawBufferPointer) -> Bool {
        var end = line.count
        while end > 0, line[end - 1] == UInt8(ascii: "\r") || line[end - 1] == UInt8(ascii: "\n") { end -= 1 }
        if end == 0 { return headEnded() }
        let text = UnsafeRawBufferPointer(rebasing: line[..<end])
        if text.starts(with: "HTTP/".utf8) {
            headStarted(statusLine: text)
            return true
        }
        // Lines after the final head are trailers: the head the caller sees is already decided.
        guard status > 0, !headComplete else { return true }
        if text[0] == UInt8(ascii: " ") || text[0] == UInt8(ascii: "\t") {
            // An obsolete folded line continues the previous field's value.
            var fields = headers.fields
            guard !fields.isEmpty else { return true }
            fields[fields.count - 1].value += " " + Self.trimmed(text)
            headers = HTTPHeaders(fields)
            return true
        }
        guard let colon = text.firstIndex(of: UInt8(ascii: ":")) else { return true }
        let name = String(decoding: UnsafeRawBufferPointer(rebasing: text[..<colon]), as: UTF8.self)
        let value = Self.trimmed(UnsafeRawBufferPointer(rebasing: text[(colon + 1)...]))
        headers.add(name: name, value: value)
        return true
    }

    private func headStarted(statusLine: UnsafeRawBufferPointer) {
        status = 0
        headers = HTTPHeaders()
        headComplete = false
        followsRedirect = false
        redirectTarget = nil
        // "HTTP/1.1 200 OK", "HTTP/2 200": the code is the three digits after the first space.
        guard let space = statusLine.firstIndex(of: UInt8(ascii: " ")) else { return }
        var code = 0
        for byte in statusLine[(space + 1)...].prefix(3) {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return }
            code = code * 10 + Int(byte - UInt8(ascii: "0"))
        }
        status = code
    }

    private func headEnded() -> Bool {
        // A 1xx head (100 Continue, 103 Early Hints) is followed by the real one.
        guard status >= 200, !headComplete else { return true }
        headComplete = true
        switch RedirectRule.decide(request, status: status, location: headers["Location"], followed: redirects) {
        case .deliver:
            break
        case .follow(let next):
            followsRedirect = true
            redirectTarget = next
            return true
        case .fail(let error):
            failure = error
            return false
        }
        if let download {
            do throws(ServerAPIError) {
                disposition = try download.receiveHead(status: status, headers: headers)
            } catch {
                failure = error
                return false
            }
            if disposition == .restart {
                // The body is not wanted: stop now and send the request again.
                restartDownload = true
                return false
            }
            if disposition == .file, let progress = request.progress {
                // A resumed download starts where the partial file ends: say so before any byte arrives.
                reportedDownload = download.bytesOnDisk
                progress(
                    TransferProgress(
                        direction: .download, completed: download.bytesOnDisk, total: download.expectedTotal))
            }
        }
        expectedLength = ResponseSizeRule.decodedLength(of: headers)
        if let tooLarge = ResponseSizeRule.check(
            announced: expectedLength, status: status, method: request.method, limit: request.maxResponseSize)
        {
            failure = tooLarge
            return false
        }
        if download == nil, request.method != .head, let expectedLength {
            body.reserveCapacity(Int(min(expectedLength, Self.maxReservation)))
        }
        return true
    }

    /// The most memory reserved up front from a `Content-Length`, however large it claims to be.
    static let maxReservation: Int64 = 16 << 20

    private static func trimmed(_ bytes: UnsafeRawBufferPointer) -> String {
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") { start += 1 }
        while end > start, bytes[end - 1] == UInt8(ascii: " ") || bytes[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }

    // MARK: Response body

    /// Takes the next body bytes, decoded.
    /// - Returns: `false` to stop the transfer (`failure` says why).
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        // The body of a redirect we follow is not the caller's.
        if followsRedirect || restartDownload { return true }
        bodyBytes += Int64(bytes.count)
        if let tooLarge = ResponseSizeRule.check(received: bodyBytes, status: status, limit: request.maxResponseSize) {
            failure = tooLarge
            return false
        }
        guard let download else {
            body.append(bytes.assumingMemoryBound(to: UInt8.self))
            return true
        }
        switch disposition {
        case .file, .memory:
            do throws(ServerAPIError) {
                try download.write(bytes)
            } catch {
                failure = error
                return false
            }
            reportDownloadProgress()
        case .alreadyComplete, .restart, nil:
            break
        }
        return true
    }

    // MARK: Request body

    /// Copies the next body bytes into libcurl's buffer.
    func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let reader else { return 0 }
        do throws(ServerAPIError) {
            return try reader.read(into: buffer)
        } catch {
            failure = error
            return Int(CURL_READFUNC_ABORT)
        }
    }

    /// Starts the body again from its first byte (libcurl asks for nothing else when it resends).
    func rewindBody(to offset: Int64, origin: Int32) -> Int32 {
        guard offset == 0, origin == SEEK_SET else { return Int32(CURL_SEEKFUNC_CANTSEEK) }
        do throws(ServerAPIError) {
            reader = try request.body.makeReader()
            return Int32(CURL_SEEKFUNC_OK)
        } catch {
            failure = error
            return Int32(CURL_SEEKFUNC_FAIL)
        }
    }

    // MARK: Progress

    /// Reports what moved since the last report. Download progress counts body bytes after decoding
    /// (libcurl's own count is of the bytes on the wire), with the total when the server announced it.
    func reportProgress(downloaded: Int64, downloadTotal: Int64, uploaded: Int64, uploadTotal: Int64) {
        guard let progress = request.progress else { return }
        if uploaded != reportedUpload, uploaded > 0 || uploadTotal > 0 {
            reportedUpload = uploaded
            progress(
                TransferProgress(direction: .upload, completed: uploaded, total: uploadTotal > 0 ? uploadTotal : nil))
        }
        reportDownloadProgress()
    }

    /// Reports the body bytes received so far, when they changed. Called from libcurl's progress
    /// callback and after every piece of a download's body, which with the large download buffer
    /// can arrive faster than libcurl calls back.
    func reportDownloadProgress() {
        guard let progress = request.progress, headComplete, !followsRedirect, !restartDownload else { return }
        let report: TransferProgress
        if let download, disposition == .file {
            report = TransferProgress(
                direction: .download, completed: download.bytesOnDisk, total: download.expectedTotal)
        } else {
            report = TransferProgress(direction: .download, completed: bodyBytes, total: expectedLength)
        }
        guard report.completed > 0, report.completed != reportedDownload else { return }
        reportedDownload = report.completed
        progress(report)
    }

    /// Reports the final counts, so the last report a caller sees is the whole transfer.
    func reportFinalProgress(uploaded: Int64) {
        guard let progress = request.progress else { return }
        if uploaded > 0, uploaded != reportedUpload {
            reportedUpload = uploaded
            progress(TransferProgress(direction: .upload, completed: uploaded, total: uploaded))
        }
        let completed =
            download.map { disposition == .file || disposition == .alreadyComplete ? $0.bytesOnDisk : bodyBytes }
            ?? bodyBytes
        if completed > 0, completed != reportedDownload {
            reportedDownload = completed
            progress(TransferProgress(direction: .download, completed: completed, total: completed))
        }
    }
}
