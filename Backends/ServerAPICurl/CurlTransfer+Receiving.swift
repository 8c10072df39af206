internal import CCurl
import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
    /// follow ourselves, then the final one, and trailers after the body. Each complete head goes to
    /// `exchange`, which keeps the final one.
    /// - Returns: `false` to stop the transfer (`exchange` knows why).
    func receiveHeaderLine(_ line: UnsafeRawBufferPointer) -> Bool {
        let headLine = CurlHeadLine(line)
        switch headLine {
        case .end: return headEnded()
        case .status(let code): return headStarted(code: code)
        case .continuation, .field, .ignored: break
        }
        // Lines after the final head are trailers: the head the caller sees is already decided.
        guard status > 0 else { return true }
        guard exchange.awaitsHead else { return receiveTrailerLine(headLine) }
        switch headLine {
        case .continuation(let text):
            // An obsolete folded line continues the previous field's value.
            headers.continueLastField(with: text)
        case .field(let name, let value):
            headers.addReceived(name: name, value: value)
        case .end, .status, .ignored:
            break
        }
        return true
    }

    /// Keeps a trailer field (libcurl passes trailers through the header callback once the body has ended,
    /// over HTTP/1.1 and HTTP/2 alike), within `TrailerRule`'s limits.
    private func receiveTrailerLine(_ line: CurlHeadLine) -> Bool {
        switch line {
        case .field(let name, let value):
            trailers.addReceived(name: name, value: value)
            trailerSize += name.count + value.count
        case .continuation(let text):
            if trailers.continueLastField(with: text) { trailerSize += text.count + 1 }
        case .end, .status, .ignored:
            return true
        }
        guard !TrailerRule.exceedsLimits(count: trailers.count, size: trailerSize) else {
            exchange.failed(TrailerRule.tooLarge)
            return false
        }
        return true
    }

    private func headStarted(code: Int) -> Bool {
        // The head after a Digest challenge is libcurl's answer to it: the challenge is not the caller's.
        if case .pending = challenge { challenge = .answered }
        guard exchange.awaitsHead else {
            // Another head after the final one: the exchange decides what that means (it fails).
            guard case .fail = exchange.headReceived(status: code, headers: HTTPHeaders(), request: request) else {
                return true
            }
            return false
        }
        status = code
        // Most heads have a handful of fields: room for them at once.
        headers = HTTPHeaders(receiving: 12)
        return true
    }

    func headEnded() -> Bool {
        // A blank line ends a head, and also the trailers after the final head.
        guard status > 0, exchange.awaitsHead else { return true }
        if interceptsChallenge() { return true }
        switch exchange.headReceived(status: status, headers: headers, request: request) {
        case .interim, .dropBody, .ignore:
            return true
        case .fail:
            return false
        case .receiveBody:
            if let streaming = job.streaming { return deliverStreamedHead(streaming) }
            if request.method != .head, let expectedLength = exchange.expectedLength {
                body.reserveCapacity(Int(min(expectedLength, Self.maxReservation)))
            }
            return true
        case .decideDownload:
            return decideDownload()
        }
    }

    /// Asks the writer where the final head's body goes.
    private func decideDownload() -> Bool {
        guard let download else { return true }
        let disposition: DownloadFileWriter.Disposition
        do throws(ServerAPIError) {
            disposition = try download.receiveHead(status: status, headers: headers)
        } catch {
            exchange.failed(error)
            return false
        }
        switch exchange.downloadDecided(disposition) {
        case .writeToFile:
            if let progress = request.progress {
                // A resumed download starts where the partial file ends: say so before any byte arrives.
                reportedDownload = download.bytesOnDisk
                progress(
                    TransferProgress(
                        direction: .download, completed: download.bytesOnDisk, total: download.expectedTotal))
            }
            return true
        case .keepInMemory, .alreadyComplete, .ignore:
            return true
        case .restart, .fail:
            // The body is not wanted: stop now, and `complete` sends the request again (or fails).
            return false
        }
    }

    /// The most memory reserved up front from a `Content-Length`, however large it claims to be.
    static let maxReservation: Int64 = 16 << 20

    // MARK: Response body

    /// Takes the next body bytes: decoded, or a full-duplex call's raw chunks (see `CurlTransfer+Duplex`).
    /// - Returns: `false` to stop the transfer (`exchange` knows why).
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if chunkDecoder != nil { return receiveChunks(bytes) }
        guard receiveDecodedBody(bytes) else { return false }
        if isFullDuplex { checkFullDuplexEnd() }
        return true
    }

    /// Takes the next body bytes, decoded.
    /// - Returns: `false` to stop the transfer (`exchange` knows why).
    func receiveDecodedBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if keepsChallengeBody(bytes) { return true }
        // For a content-coded body, the encoded bytes so far: libcurl counts body bytes as they come off
        // the connection (after chunked framing, before content decoding) and before it decodes them and
        // calls us, so the count includes the bytes this piece was decoded from.
        let encoded = exchange.isContentCoded ? easy.offset(CURLINFO_SIZE_DOWNLOAD_T) : nil
        switch exchange.bodyReceived(count: bytes.count, encoded: encoded) {
        case .keep:
            if let source { return streamBody(bytes, to: source) }
            body.append(bytes.assumingMemoryBound(to: UInt8.self))
            return true
        case .write:
            guard let download else { return true }
            do throws(ServerAPIError) {
                try download.write(bytes)
            } catch {
                exchange.failed(error)
                return false
            }
            reportDownloadProgress()
            return true
        case .drop:
            // A redirect's body, or one that a download does not need: not the caller's.
            return true
        case .fail:
            return false
        }
    }

    // MARK: Request body

    /// Copies the next body bytes into libcurl's buffer.
    func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if let pump { return sendStreamedBody(pump, into: buffer) }
        guard let reader else { return 0 }
        do throws(ServerAPIError) {
            return try reader.read(into: buffer)
        } catch {
            exchange.failed(error)
            return Int(CURL_READFUNC_ABORT)
        }
    }

    /// Starts the body again from its first byte (libcurl asks for nothing else when it resends).
    func rewindBody(to offset: Int64, origin: Int32) -> Int32 {
        if let pump { return rewindStreamedBody(pump, to: offset, origin: origin) }
        guard offset == 0, origin == SEEK_SET else { return Int32(CURL_SEEKFUNC_CANTSEEK) }
        do throws(ServerAPIError) {
            reader = try request.body.makeReader()
            return Int32(CURL_SEEKFUNC_OK)
        } catch {
            exchange.failed(error)
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
        guard let progress = request.progress, exchange.receivesBody else { return }
        let report: TransferProgress
        if let download, exchange.disposition == .file {
            report = TransferProgress(
                direction: .download, completed: download.bytesOnDisk, total: download.expectedTotal)
        } else {
            report = TransferProgress(
                direction: .download, completed: exchange.receivedBytes, total: exchange.expectedLength)
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
        let received = exchange.receivedBytes
        let completed =
            download.map {
                exchange.disposition == .file || exchange.disposition == .alreadyComplete ? $0.bytesOnDisk : received
            } ?? received
        if completed > 0, completed != reportedDownload {
            reportedDownload = completed
            progress(TransferProgress(direction: .download, completed: completed, total: completed))
        }
    }
}
