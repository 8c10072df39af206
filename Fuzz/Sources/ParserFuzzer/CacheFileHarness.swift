import Foundation
import ServerAPIKit

@testable import ServerAPIFileCache

/// The file cache's entry format. Three ways in:
/// - an entry built from the input is encoded, then decoded as the same key and entry;
/// - the same file with one byte changed never decodes (every byte is under a checksum);
/// - the input as a metadata section behind a valid header never decodes with another key.
enum CacheFileHarness {
    static let url = URL(string: "https://api.test/items")!

    static func run(_ data: Data) {
        roundTrip(data)
        foreignMetadata(data)
    }

    /// Decodes a whole file as `FileCache` reads a small one; `nil` for a valid entry of another key.
    static func decode(_ file: [UInt8], key: CacheKey) throws -> CacheEntry? {
        try file.withUnsafeBytes { raw in
            let header = try CacheFileFormat.decodeHeader(raw)
            guard header.fileSize == raw.count else { throw CacheFileFormat.Invalid(reason: "length mismatch") }
            let metadataEnd = CacheFileFormat.headerSize + header.metadataLength
            guard
                let metadata = try CacheFileFormat.decodeMetadata(
                    UnsafeRawBufferPointer(rebasing: raw[CacheFileFormat.headerSize..<metadataEnd]), header: header,
                    key: key)
            else { return nil }
            let body = UnsafeRawBufferPointer(rebasing: raw[metadataEnd...])
            try CacheFileFormat.checkBody(body, header: header)
            guard let url = URL(string: metadata.url) else { throw CacheFileFormat.Invalid(reason: "bad URL") }
            return CacheEntry(
                status: metadata.status, headers: metadata.headers, body: Data(body), url: url,
                storedAt: header.storedAt, expiresAt: header.expiresAt, initialAge: metadata.initialAge,
                variant: metadata.variant, variantGroup: metadata.variantGroup)
        }
    }

    /// Input: key, URL, status, three header lines, then the body; the first byte also picks the byte to change.
    static func roundTrip(_ data: Data) {
        let (fields, body) = data.lines(6)
        let key = CacheKey(rawValue: fields[0])
        let status = Int(fields[2]) ?? 200
        var headers: HTTPHeaders = [:]
        for line in fields[3...] where !line.isEmpty {
            let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            headers.add(name: String(parts[0]), value: parts.count > 1 ? String(parts[1]) : "")
        }
        let seconds = Double(data.count * 1_000)
        // A variant from the header lines' names (a value, or none for every other one) and a group, on odd inputs.
        let variant = CacheVariant(
            fields: headers.enumerated().map { index, field in
                CacheVariant.Field(name: field.name.lowercased(), value: index % 2 == 0 ? field.value : nil)
            })
        let entry = CacheEntry(
            status: status, headers: headers, body: body, url: URL(string: fields[1]) ?? url,
            storedAt: Date(timeIntervalSinceReferenceDate: seconds),
            expiresAt: data.count % 2 == 0 ? nil : Date(timeIntervalSinceReferenceDate: seconds + 60),
            initialAge: .seconds(Double(data.count % 97)), variant: data.count % 2 == 0 ? CacheVariant() : variant,
            variantGroup: data.count % 2 == 0 ? nil : fields[1])
        let file = CacheFileFormat.encodePrefix(entry, key: key) + [UInt8](body)
        do {
            let decoded = try decode(file, key: key)
            var expected = entry
            // The URL is stored as its text; what counts is that the text comes back.
            if let decoded, decoded.url.absoluteString == entry.url.absoluteString { expected.url = decoded.url }
            require(decoded == expected, "the entry reads back as \(String(describing: decoded))", input: data)
        } catch {
            require(false, "a written entry does not read back: \(error)", input: data)
        }
        // Another key never reads it.
        let other = CacheKey(rawValue: key.rawValue + "x")
        require((try? decode(file, key: other)) == nil, "read as another key", input: data)
        // One changed byte anywhere: the file is invalid, never another entry.
        var damaged = file
        let position = (Int(data.first ?? 0) &* 131 &+ data.count) % damaged.count
        damaged[position] ^= data.last.map { $0 == 0 ? 1 : $0 } ?? 1
        do {
            let read = try decode(damaged, key: key)
            require(false, "a damaged file (byte \(position)) reads as \(String(describing: read))", input: data)
        } catch {}
    }

    /// The input as a metadata section behind a header with the right lengths and checksums.
    static func foreignMetadata(_ data: Data) {
        let key = CacheKey(rawValue: "GET https://api.test/items")
        let metadata = [UInt8](data)
        var header = ByteWriter()
        header.append(CacheFileFormat.magic)
        header.append(CacheFileFormat.version)
        header.append(UInt16(CacheFileFormat.headerSize))
        header.append(UInt32(0))
        header.append(UInt32(metadata.count))
        header.append(UInt64(0))
        header.append(Double(0).bitPattern)
        header.append(Double(0).bitPattern)
        header.append(XXH64.hash(metadata))
        header.append(XXH64.hash([UInt8]()))
        header.append(XXH64.hash(header.bytes))
        let file = header.bytes + metadata
        guard let entry = try? decode(file, key: key) else { return }
        // It decoded as this key: then the metadata starts with this key, length-prefixed.
        var expected = ByteWriter()
        expected.append(key.rawValue)
        require(metadata.starts(with: expected.bytes), "metadata of another key read as \(entry)", input: data)
    }
}
