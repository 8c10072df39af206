#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension String {
    /// A number written by the C library's `printf` format (`"%.1f"`, `"%02x"`): what `String(format:)`
    /// gives for these, without Foundation (FoundationEssentials has no `String(format:)`).
    /// - Important: For numbers only; the C library's locale is "C" unless the program changed it.
    package init(cFormat format: String, _ arguments: any CVarArg...) {
        self = withVaList(arguments) { list in
            var buffer = [CChar](repeating: 0, count: 128)
            let count = Int(vsnprintf(&buffer, buffer.count, format, list))
            let length = Swift.max(0, Swift.min(count, buffer.count - 1))
            return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }
}
