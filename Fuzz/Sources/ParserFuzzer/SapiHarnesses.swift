import Foundation

@testable import SapiParsers

/// `sapi`'s request items (`name=value`, `Header:Value`, `name==value`, `name:=json`, `field@path`): the
/// first unescaped separator decides, and the name never holds it unescaped.
enum RequestItemHarness {
    static func run(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        guard let item = RequestItem.parse(text) else { return }
        let (name, value): (String, String) =
            switch item {
            case .header(let name, let value), .query(let name, let value), .field(let name, let value),
                .rawJSON(let name, let value), .file(let name, let value):
                (name, value)
            }
        require(!name.isEmpty, "an item without a name: \(item)", input: data)
        // The value is the end of the argument, as it was written.
        require(text.hasSuffix(value), "the value \(value) is not the end of \(text)", input: data)
        // Without escapes, the name is the start of the argument and holds no separator.
        if !text.contains("\\") {
            require(text.hasPrefix(name), "the name \(name) is not the start of \(text)", input: data)
            require(
                !name.contains { ":=@".contains($0) }, "the name \(name) holds a separator: \(item)", input: data)
        }
    }
}

/// `sapi`'s `.netrc` reader: never fails, and what it gives for a host comes from the file.
enum NetrcHarness {
    /// Input: a host line, then the file.
    static func run(_ data: Data) {
        let (fields, file) = data.lines(1)
        let text = String(decoding: file, as: UTF8.self)
        let netrc = Netrc(parsing: text)
        for entry in netrc.entries {
            if let machine = entry.machine { require(machine == machine.lowercased(), "machine case", input: data) }
        }
        guard let credentials = netrc.credentials(for: fields[0]) else { return }
        // Compared without quotes and backslashes, which the tokenizer removes or keeps by their escapes.
        let login = credentials.login.filter { $0 != "\"" && $0 != "\\" }
        guard !login.isEmpty else { return }
        require(
            text.filter { $0 != "\"" && $0 != "\\" }.contains(login),
            "the login \(credentials.login) is not in the file", input: data)
    }
}
