import Foundation

@testable import ServerAPIKit

/// `Content-Disposition` parsing and safe file names: a name to create is never a path, hidden, empty,
/// longer than 200 bytes or holding a control character, and making a safe name safe keeps it.
enum ContentDispositionHarness {
    static func run(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        if let disposition = ContentDisposition(text) {
            require(!disposition.type.isEmpty, "an empty type", input: data)
            require(disposition.type == disposition.type.lowercased(), "the type is not lowercased", input: data)
            for name in disposition.parameters.keys {
                require(!name.isEmpty && name == name.lowercased(), "the parameter name \(name)", input: data)
            }
            if let name = disposition.fileName { checkSafe(name, data) }
        }
        if let name = ContentDisposition.safeFileName(text) { checkSafe(name, data) }
    }

    static func checkSafe(_ name: String, _ data: Data) {
        let bytes = Array(name.utf8)
        require(!bytes.isEmpty && bytes.count <= 200, "the safe name \(name) has \(bytes.count) bytes", input: data)
        require(
            !bytes.contains(UInt8(ascii: "/")) && !bytes.contains(UInt8(ascii: "\\")),
            "the safe name \(String(reflecting: name)) is a path", input: data)
        require(bytes.first != UInt8(ascii: "."), "the safe name \(name) is hidden", input: data)
        require(
            !name.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
            "the safe name \(String(reflecting: name)) holds a control character", input: data)
        require(
            ContentDisposition.safeFileName(name) == name,
            "the safe name \(String(reflecting: name)) is not safe as it is", input: data)
    }
}
