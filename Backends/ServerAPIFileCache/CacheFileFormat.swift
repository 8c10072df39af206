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

/// The layout of one cache file, version 2; every integer is little-endian.
///
/// ```
/// offset  size  field
///      0     4  magic "SAPC"
///      4     2  format version (2)
///      6     2  header size (64)
///      8     4  flags (bit 0: has an expiry)
///     12     4  metadata length M
///     16     8  body length B
///     24     8  stored at (Float64 bits, seconds since 2001-01-01)
///     32     8  expires at (same; 0 without an expiry)
///     40     8  XXH64 of the metadata
///     48     8  XXH64 of the body
///     56     8  XXH64 of bytes 0..<56
///     64     M  metadata: key, URL, status, headers, initial age (Float64 bits), variant group (a UInt8
///               flag, then the string when 1), variant fields (a count, then each name, a UInt8 flag and
///               the value when 1); strings as a UInt32 length and UTF-8
///   64+M     B  body
/// ```
/// A file is valid only if its size is exactly `64 + M + B` and all three checksums match:
/// a truncated, corrupted or foreign file is never read back as an entry. A file of another version (version 1
/// had no age or variant) is not read: it is a miss, and is removed.
enum CacheFileFormat {
    static let magic: UInt32 = 0x4350_4153  // "SAPC" read as a little-endian UInt32
    static let version: UInt16 = 2
    static let headerSize = 64
    /// Metadata larger than this is not believed (it protects the reader from absurd lengths).
    static let maxMetadataLength = 16 << 20

    /// Why a file is not a valid entry.
    struct Invalid: Error, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }

    /// The fixed header.
    struct Header: Equatable {
        var metadataLength: Int
        var bodyLength: Int
        var storedAt: Date
        var expiresAt: Date?
        var metadataChecksum: UInt64
        var bodyChecksum: UInt64

        /// The size of the whole file.
        var fileSize: Int { CacheFileFormat.headerSize + metadataLength + bodyLength }
    }

    /// What the metadata section holds (besides the key, which is only compared).
    struct Metadata: Equatable {
        var url: String
        var status: Int
        var headers: HTTPHeaders
        var initialAge: Duration
        var variant: CacheVariant
        var variantGroup: String?
    }

    // MARK: Writing

    /// The header and metadata of an entry (the body follows them in the file).
    static func encodePrefix(_ entry: CacheEntry, key: CacheKey) -> [UInt8] {
        var metadata = ByteWriter()
        metadata.append(key.rawValue)
        metadata.append(entry.url.absoluteString)
        metadata.append(UInt64(bitPattern: Int64(entry.status)))
        metadata.append(UInt32(truncatingIfNeeded: entry.headers.count))
        for field in entry.headers {
            metadata.append(field.name)
            metadata.append(field.value)
        }
        metadata.append(entry.initialAge.seconds.bitPattern)
        metadata.appendOptional(entry.variantGroup)
        metadata.append(UInt32(truncatingIfNeeded: entry.variant.fields.count))
        for field in entry.variant.fields {
            metadata.append(field.name)
            metadata.appendOptional(field.value)
        }
        var header = ByteWriter()
        header.append(magic)
        header.append(version)
        header.append(UInt16(headerSize))
        header.append(UInt32(entry.expiresAt == nil ? 0 : 1))
        header.append(UInt32(truncatingIfNeeded: metadata.bytes.count))
        header.append(UInt64(entry.body.count))
        header.append(entry.storedAt.timeIntervalSinceReferenceDate.bitPattern)
        header.append((entry.expiresAt?.timeIntervalSinceReferenceDate ?? 0).bitPattern)
        header.append(XXH64.hash(metadata.bytes))
        header.append(XXH64.hash(entry.body))
        header.append(XXH64.hash(header.bytes))
        return header.bytes + metadata.bytes
    }

    // MARK: Reading

    /// Decodes and checks the fixed header.
    /// - Throws: `Invalid` for a foreign file, another version or a damaged header.
    static func decodeHeader(_ bytes: UnsafeRawBufferPointer) throws(Invalid) -> Header {
        guard bytes.count >= headerSize else { throw Invalid(reason: "shorter than a header") }
        var reader = ByteReader(bytes)
        guard try reader.uint32() == magic else { throw Invalid(reason: "not a cache file") }
        let fileVersion = try reader.uint16()
        guard fileVersion == version else { throw Invalid(reason: "format version \(fileVersion)") }
        guard try reader.uint16() == UInt16(headerSize) else { throw Invalid(reason: "bad header size") }
        let flags = try reader.uint32()
        let metadataLength = Int(try reader.uint32())
        let bodyLength = try reader.uint64()
        let storedAt = Double(bitPattern: try reader.uint64())
        let expiresAt = Double(bitPattern: try reader.uint64())
        let metadataChecksum = try reader.uint64()
        let bodyChecksum = try reader.uint64()
        let headerChecksum = try reader.uint64()
        guard XXH64.hash(UnsafeRawBufferPointer(rebasing: bytes[0..<56])) == headerChecksum else {
            throw Invalid(reason: "header checksum mismatch")
        }
        guard metadataLength <= maxMetadataLength, bodyLength <= UInt64(Int.max / 2), storedAt.isFinite,
            expiresAt.isFinite
        else { throw Invalid(reason: "impossible lengths or dates") }
        return Header(
            metadataLength: metadataLength, bodyLength: Int(bodyLength),
            storedAt: Date(timeIntervalSinceReferenceDate: storedAt),
            expiresAt: flags & 1 == 0 ? nil : Date(timeIntervalSinceReferenceDate: expiresAt),
            metadataChecksum: metadataChecksum, bodyChecksum: bodyChecksum)
    }

    /// Decodes and checks the metadata section.
    /// - Parameters:
    ///   - key: The key the entry must have.
    /// - Returns: The metadata, or `nil` when the file is a valid entry of another key.
    /// - Throws: `Invalid` when its checksum or structure is wrong.
    static func decodeMetadata(
        _ bytes: UnsafeRawBufferPointer, header: Header, key: CacheKey
    ) throws(Invalid) -> Metadata? {
        guard bytes.count == header.metadataLength, XXH64.hash(bytes) == header.metadataChecksum else {
            throw Invalid(reason: "metadata checksum mismatch")
        }
        var reader = ByteReader(bytes)
        // Compared as bytes: no string is made for a key that is known already.
        let storedKey = try reader.field()
        var expected = key.rawValue
        let matches = expected.withUTF8 { utf8 in
            guard utf8.count == storedKey.count else { return false }
            guard let mine = utf8.baseAddress, let theirs = storedKey.baseAddress else { return utf8.isEmpty }
            return memcmp(mine, theirs, utf8.count) == 0
        }
        guard matches else { return nil }
        let url = try reader.string()
        let status = Int(Int64(bitPattern: try reader.uint64()))
        let count = Int(try reader.uint32())
        var fields: [HTTPHeaders.Field] = []
        fields.reserveCapacity(min(count, 1024))
        for _ in 0..<count {
            let name = try reader.string()
            fields.append(HTTPHeaders.Field(name: name, value: try reader.string()))
        }
        let initialAge = try age(Double(bitPattern: try reader.uint64()))
        let variantGroup = try reader.optionalString()
        let variantCount = Int(try reader.uint32())
        var variantFields: [CacheVariant.Field] = []
        variantFields.reserveCapacity(min(variantCount, 64))
        for _ in 0..<variantCount {
            let name = try reader.string()
            variantFields.append(CacheVariant.Field(name: name, value: try reader.optionalString()))
        }
        guard reader.isAtEnd else { throw Invalid(reason: "trailing metadata") }
        return Metadata(
            url: url, status: status, headers: HTTPHeaders(fields), initialAge: initialAge,
            variant: CacheVariant(fields: variantFields), variantGroup: variantGroup)
    }

    /// The most seconds a stored initial age may hold: RFC 9111 caps an age at 2^31 s, and twice that leaves room for
    /// the delays added to it. A larger one is damage (and would overflow `Duration`).
    static let maximumAge: Double = 4_294_967_296

    /// A stored initial age, in seconds, as a `Duration`.
    /// - Throws: `Invalid` for a value no writer stores: not finite, negative, or past `maximumAge`.
    static func age(_ seconds: Double) throws(Invalid) -> Duration {
        guard seconds.isFinite, seconds >= 0, seconds <= maximumAge else { throw Invalid(reason: "impossible age") }
        return .seconds(seconds)
    }

    /// Checks the body against the header's checksum.
    static func checkBody(_ bytes: UnsafeRawBufferPointer, header: Header) throws(Invalid) {
        guard bytes.count == header.bodyLength, XXH64.hash(bytes) == header.bodyChecksum else {
            throw Invalid(reason: "body checksum mismatch")
        }
    }
}

/// Appends little-endian integers and length-prefixed strings.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    mutating func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func append(_ string: String) {
        append(UInt32(truncatingIfNeeded: string.utf8.count))
        bytes.append(contentsOf: string.utf8)
    }

    /// A flag byte, then the string when there is one.
    mutating func appendOptional(_ string: String?) {
        append(UInt8(string == nil ? 0 : 1))
        if let string { append(string) }
    }
}

/// Reads what `ByteWriter` wrote, failing on any overrun.
struct ByteReader {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func uint16() throws(CacheFileFormat.Invalid) -> UInt16 { try integer() }
    mutating func uint32() throws(CacheFileFormat.Invalid) -> UInt32 { try integer() }
    mutating func uint64() throws(CacheFileFormat.Invalid) -> UInt64 { try integer() }

    mutating func string() throws(CacheFileFormat.Invalid) -> String {
        String(decoding: try field(), as: UTF8.self)
    }

    /// What `ByteWriter.appendOptional` wrote.
    mutating func optionalString() throws(CacheFileFormat.Invalid) -> String? {
        let flag: UInt8 = try integer()
        switch flag {
        case 0: return nil
        case 1: return try string()
        default: throw CacheFileFormat.Invalid(reason: "bad flag")
        }
    }

    /// The bytes of a length-prefixed field.
    mutating func field() throws(CacheFileFormat.Invalid) -> UnsafeRawBufferPointer {
        let length = Int(try uint32())
        guard length <= bytes.count - offset else { throw CacheFileFormat.Invalid(reason: "field overruns") }
        let field = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length])
        offset += length
        return field
    }

    private mutating func integer<T: FixedWidthInteger>() throws(CacheFileFormat.Invalid) -> T {
        let size = MemoryLayout<T>.size
        guard size <= bytes.count - offset, let base = bytes.baseAddress else {
            throw CacheFileFormat.Invalid(reason: "truncated")
        }
        let value = T(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: T.self))
        offset += size
        return value
    }
}
