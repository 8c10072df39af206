import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Download mode (`--download`, `-d`): the body goes to a file with a progress bar, as httpie does it.
///
/// - With `--output FILE`, the library's download machinery writes `FILE.part` and moves it onto
///   `FILE` when complete. With `--continue` it resumes `FILE.part`; when there is no `FILE.part` but
///   a partial `FILE` (made by another program), `FILE` is first renamed to `FILE.part` and resumed.
///   If that attempt fails before a byte is written (an error status, no connection), `FILE` is put
///   back untouched; after bytes were written, the longer `FILE.part` is kept for the next
///   `--continue`, so a half-written file never appears under the final name.
/// - Without `--output`, the name is known only when the head arrives: the call is streamed, the
///   name picked from the head (`DownloadName`) and the body written through a `DownloadFileWriter`.
/// - An error status (3xx not followed, 4xx, 5xx) saves nothing, touches no file, and exits 3, 4 or 5.
struct Download {
    /// The call, without a download target.
    var api: ServerAPI
    var options: Options
    var manager: ServerAPIManager
    var bar: ProgressBar?
    var style: OutputStyle

    /// Runs the download and returns the exit code.
    func run() async -> ExitCode {
        if let output = options.output { return await toNamedFile(output) }
        return await toSuggestedFile()
    }

    // MARK: - --output FILE

    private func toNamedFile(_ path: String) async -> ExitCode {
        let destination = URL(fileURLWithPath: Paths.expandingTilde(path))
        let target = DownloadTarget(destination: destination, resume: options.resume)
        let adopted: FileState?
        do {
            adopted = try adopt(target)
        } catch {
            Sapi.report(error)
            return .usage
        }
        let progress: (@Sendable (TransferProgress) -> Void)?
        if let bar { progress = { bar.update($0) } } else { progress = nil }
        do {
            let result = try await manager.send(
                api.download(to: destination, resume: options.resume), progress: progress)
            bar?.finish()
            printHead(status: result.status, headers: result.headers, version: result.metrics.transport?.httpVersion)
            guard (200..<300).contains(result.status) else {
                putBack(adopted, target: target)
                return statusFailure(result.status, url: result.url)
            }
            let size = FileState(destination)?.size ?? 0
            if result.headers["Content-Range"]?.hasPrefix("bytes */") == true {
                // The library's 416 "already complete": nothing was downloaded.
                say("\(path) is already complete (\(size) bytes); nothing to download")
            } else {
                say("Saved \(size) bytes to \(path)")
            }
            return .ok
        } catch {
            bar?.finish()
            putBack(adopted, target: target)
            let failure = ServerAPIError.wrap(error)
            let kept = FileState(target.partialURL).map { $0.size > 0 } ?? false
            Sapi.reportError(failure, download: kept ? path : nil)
            return ExitCode(failure)
        }
    }

    /// With `--continue`, when only a partial `FILE` exists, renames it to `FILE.part` so that the
    /// library resumes it; returns its state before the request, to put it back if nothing changed.
    private func adopt(_ target: DownloadTarget) throws(UsageError) -> FileState? {
        guard options.resume, (FileState(target.partialURL)?.size ?? 0) == 0,
            let state = FileState(target.destination), state.size > 0
        else { return nil }
        // A validator left by another download says nothing about this file's version.
        try? FileManager.default.removeItem(at: target.validatorURL)
        guard rename(target.destination.path, target.partialURL.path) == 0 else {
            throw UsageError(
                message: "cannot resume \(target.destination.path): \(String(cString: strerror(errno)))")
        }
        return FileState(target.partialURL)
    }

    /// Puts an adopted `FILE` back when the attempt left it as it was.
    private func putBack(_ adopted: FileState?, target: DownloadTarget) {
        guard let adopted, FileState(target.destination) == nil, FileState(target.partialURL) == adopted else { return }
        _ = rename(target.partialURL.path, target.destination.path)
    }

    // MARK: - a name from the response

    private func toSuggestedFile() async -> ExitCode {
        var response: StreamedResponse?
        var reserved: URL?
        var writer: DownloadFileWriter?
        do {
            let head = try await manager.stream(api)
            response = head
            printHead(status: head.status, headers: head.headers, version: head.metrics.transport?.httpVersion)
            guard (200..<300).contains(head.status) else {
                head.cancel()
                return statusFailure(head.status, url: head.url)
            }
            let name = DownloadName.suggested(headers: head.headers, url: head.url)
            let directory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            let file = try DownloadName.reserve(name, in: directory)
            reserved = file
            let fileWriter = DownloadFileWriter(
                target: DownloadTarget(destination: file), requestID: head.requestID, url: head.url)
            writer = fileWriter
            guard try fileWriter.receiveHead(status: head.status, headers: head.headers) == .file else {
                throw ServerAPIError(.network, "the response cannot be saved", requestID: head.requestID, url: head.url)
            }
            bar?.update(fileWriter.progress)
            for try await chunk in head.body {
                try fileWriter.write(chunk)
                bar?.update(fileWriter.progress)
            }
            if Task.isCancelled { throw ServerAPIError.cancelled() }
            _ = try fileWriter.finish()
            bar?.finish()
            say("Saved \(fileWriter.bytesOnDisk) bytes to \(file.lastPathComponent)")
            return .ok
        } catch let error as UsageError {
            bar?.finish()
            response?.cancel()
            Sapi.report(error)
            return .usage
        } catch {
            bar?.finish()
            response?.cancel()
            writer?.abandon()
            var hint: String?
            if let reserved {
                // The empty file that held the name goes; a partial body stays as NAME.part.
                if FileState(reserved)?.size == 0 { try? FileManager.default.removeItem(at: reserved) }
                let part = DownloadTarget(destination: reserved).partialURL
                if (FileState(part)?.size ?? 0) > 0 { hint = reserved.lastPathComponent }
            }
            let failure = ServerAPIError.wrap(error)
            Sapi.reportError(failure, download: hint)
            return ExitCode(failure)
        }
    }

    // MARK: - reporting

    private func statusFailure(_ status: Int, url: URL) -> ExitCode {
        let reason = HTTPStatus.reason(status)
        let line =
            "sapi: error: HTTP \(status)\(reason.isEmpty ? "" : " " + reason); nothing was saved [\(SecretRedaction.redact(url))]\n"
        StandardError.write(line)
        return ExitCode.status(status) ?? .usage
    }

    /// The response head, when asked for (`-p h`, `-h`, `-v`): download mode prints no body, and no head by default.
    private func printHead(status: Int, headers: HTTPHeaders, version: String?) {
        let asked = options.print ?? (options.verbose > 0 ? options.printed(terminal: false) : [])
        guard asked.contains("h") else { return }
        let head = Printer.head(status: status, headers: headers, version: version, style: style)
        Descriptor.write((head + "\n").utf8, to: Descriptor.standardOutput)
    }

    private func say(_ text: String) {
        StandardError.write(text + "\n")
    }
}

/// A file's size and modification time, to tell whether a download attempt changed it.
struct FileState: Equatable {
    var size: Int64
    var modified: Date?

    /// The state of a regular file; `nil` when there is none.
    init?(_ url: URL) {
        guard let status = Descriptor.status(atPath: url.path), status.isRegular else { return nil }
        size = status.size
        modified = status.modified
    }
}
