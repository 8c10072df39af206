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

/// The file name `--download` without `--output` saves under, as httpie picks it.
enum DownloadName {
    /// The name the response suggests: `Content-Disposition`'s file name (`filename*` first, used as
    /// sent), else the URL's last path segment, else `index`; the last two get an extension from
    /// `Content-Type` when they have none.
    static func suggested(headers: HTTPHeaders, url: URL) -> String {
        if let name = headers["Content-Disposition"].flatMap(ContentDisposition.init)?.fileName { return name }
        var name = ContentDisposition.safeFileName(url.lastPathComponent) ?? "index"
        if !name.contains("."), let ext = fileExtension(contentType: headers["Content-Type"]) { name += "." + ext }
        return name
    }

    /// The usual extension of a common media type (parameters ignored); `nil` for others.
    static func fileExtension(contentType: String?) -> String? {
        guard let contentType else { return nil }
        let type = contentType.split(separator: ";").first.map {
            $0.trimmingWhitespace().lowercased()
        }
        switch type {
        case "text/html": return "html"
        case "text/plain": return "txt"
        case "text/css": return "css"
        case "text/csv": return "csv"
        case "text/xml", "application/xml": return "xml"
        case "text/javascript", "application/javascript": return "js"
        case "application/json": return "json"
        case "application/pdf": return "pdf"
        case "application/zip": return "zip"
        case "application/gzip", "application/x-gzip": return "gz"
        case "application/x-tar": return "tar"
        case "application/octet-stream": return "bin"
        case "image/png": return "png"
        case "image/jpeg": return "jpg"
        case "image/gif": return "gif"
        case "image/svg+xml": return "svg"
        case "image/webp": return "webp"
        case "audio/mpeg": return "mp3"
        case "video/mp4": return "mp4"
        default: return nil
        }
    }

    /// Creates an empty file for the download in `directory` under `name`, or `name-1`, `name-2`, ...
    /// (httpie's suffixes) when that name is taken, so that an existing file (or link) is never overwritten. A
    /// name whose `.part` file exists counts as taken: that partial download is kept for `--continue`.
    /// - Returns: The file created.
    /// - Throws: `UsageError` when no name can be created.
    static func reserve(_ name: String, in directory: URL) throws(UsageError) -> URL {
        for attempt in 0..<1000 {
            let candidate = directory.appendingPathComponent(attempt == 0 ? name : "\(name)-\(attempt)")
            // A partial download (a regular file) keeps its name for --continue. A symbolic link there is not
            // skipped: the download then stops with the library's error that names it, never writing through it.
            if FileState(URL(fileURLWithPath: candidate.path + ".part")) != nil { continue }
            let descriptor = open(candidate.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644)
            if descriptor >= 0 {
                close(descriptor)
                return candidate
            }
            if errno != EEXIST {
                let reason = String(cString: strerror(errno))
                throw UsageError(
                    message: "cannot create \(candidate.path) for the download: \(reason)",
                    hint: "name the file: sapi -d -o FILE URL")
            }
        }
        throw UsageError(
            message: "\(name) and its -1 to -999 variants all exist", hint: "name the file: sapi -d -o FILE URL")
    }
}
