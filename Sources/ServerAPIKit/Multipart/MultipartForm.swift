#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A `multipart/form-data` body: text fields and file parts, in order.
///
/// File parts are never read into memory by the core: the encoder produces segments that
/// the transport streams from disk.
public struct MultipartForm: Sendable, Hashable {
    /// One part of the form.
    public struct Part: Sendable, Hashable {
        /// Where a part's bytes come from.
        public enum Content: Sendable, Hashable {
            /// Bytes in memory.
            case data(Data)
            /// A file, streamed from disk.
            case file(URL)
        }

        /// The form field name.
        public var name: String
        /// The file name sent in `Content-Disposition`, if any.
        public var filename: String?
        /// The part's `Content-Type`, if any.
        public var contentType: String?
        /// The part's bytes.
        public var content: Content

        /// Creates a part: a field, or a file when it has a `filename`.
        public init(name: String, filename: String? = nil, contentType: String? = nil, content: Content) {
            self.name = name
            self.filename = filename
            self.contentType = contentType
            self.content = content
        }

        /// A text field.
        public static func field(_ name: String, _ value: String) -> Part {
            Part(name: name, content: .data(Data(value.utf8)))
        }

        /// A file part streamed from disk; the file name defaults to the file's last path component.
        public static func file(
            _ name: String, url: URL, filename: String? = nil, contentType: String = "application/octet-stream"
        ) -> Part {
            Part(name: name, filename: filename ?? url.lastPathComponent, contentType: contentType, content: .file(url))
        }

        /// A file part from bytes in memory.
        public static func data(
            _ name: String, _ data: Data, filename: String, contentType: String = "application/octet-stream"
        ) -> Part {
            Part(name: name, filename: filename, contentType: contentType, content: .data(data))
        }
    }

    /// The boundary between parts.
    public var boundary: String
    /// The parts, in order.
    public var parts: [Part]

    /// Creates a `multipart/form-data` body from its parts, in order.
    /// - Parameters:
    ///   - parts: The parts, in order.
    ///   - boundary: The boundary; a random one by default. Tests pass a fixed one to compare bytes.
    public init(_ parts: [Part] = [], boundary: String = MultipartForm.randomBoundary()) {
        self.parts = parts
        self.boundary = boundary
    }

    /// Returns a copy with a part appended.
    public func appending(_ part: Part) -> MultipartForm {
        var copy = self
        copy.parts.append(part)
        return copy
    }

    /// The `Content-Type` header value for this form.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// A random boundary of the usual shape.
    public static func randomBoundary() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return "ServerAPIKit-" + String((0..<24).map { _ in alphabet.randomElement()! })
    }

    /// Encodes the form into segments: header bytes in memory, file contents by reference.
    ///
    /// Adjacent in-memory bytes are merged, so a form of fields only is one segment.
    /// - Throws: `invalidRequest` when the boundary is unusable or a file part is not a file URL.
    package func encodedSegments() throws(ServerAPIError) -> [BodySegment] {
        guard !boundary.isEmpty, boundary.utf8.count <= 70,
            boundary.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") })
        else {
            throw ServerAPIError(.invalidRequest, "the multipart boundary \"\(boundary)\" is not valid")
        }
        var segments: [BodySegment] = []
        var pending = Data()
        func flush() {
            if !pending.isEmpty {
                segments.append(.data(pending))
                pending = Data()
            }
        }
        for part in parts {
            var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.escape(part.name))\""
            if let filename = part.filename { head += "; filename=\"\(Self.escape(filename))\"" }
            head += "\r\n"
            if let contentType = part.contentType { head += "Content-Type: \(contentType)\r\n" }
            head += "\r\n"
            pending.append(contentsOf: head.utf8)
            switch part.content {
            case .data(let data):
                pending.append(data)
            case .file(let url):
                guard url.isFileURL else {
                    throw ServerAPIError(
                        .invalidRequest, "multipart part \"\(part.name)\" needs a file URL, not \(url)")
                }
                flush()
                segments.append(.file(url))
            }
            pending.append(contentsOf: "\r\n".utf8)
        }
        pending.append(contentsOf: "--\(boundary)--\r\n".utf8)
        flush()
        return segments
    }

    /// Escapes a name as browsers do (WHATWG HTML): `"` → `%22`, CR → `%0D`, LF → `%0A`.
    static func escape(_ name: String) -> String {
        var out = ""
        for scalar in name.unicodeScalars {
            switch scalar {
            case "\"": out += "%22"
            case "\r": out += "%0D"
            case "\n": out += "%0A"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
