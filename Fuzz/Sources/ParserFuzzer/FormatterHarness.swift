import Foundation
import ServerAPIKit

/// The envelope and plain formatters over any body, content type, key path and result format: they give a
/// value or a typed error of the kinds they document, never a crash.
enum FormatterHarness {
    static let url = URL(string: "https://api.test/items")!
    static let envelope = EnvelopeFormatter()
    static let plain = PlainFormatter()
    static let formats: [ResultFormat] = [.json, .string, .data]

    /// Input: a key path line, a `Content-Type` line, then the body.
    static func run(_ data: Data) {
        let (fields, body) = data.lines(2)
        let keyPath = fields[0].isEmpty ? nil : fields[0]
        var headers: HTTPHeaders = [:]
        if !fields[1].isEmpty { headers.add(name: "Content-Type", value: fields[1]) }
        let response = TransportResponse(status: 200, headers: headers, body: .data(body), url: url)
        let format = formats[(body.first.map(Int.init) ?? 0) % formats.count]
        let api = ServerAPI(host: "https://api.test", path: "/items").format(format).keyPath(keyPath)
        for outcome in [
            Result { _ = try envelope.format(response, for: api) },
            Result { _ = try envelope.decode(JSONValue.self, from: response, for: api) },
            Result { _ = try plain.format(response, for: api) },
            Result { _ = try plain.decode(JSONValue.self, from: response, for: api) },
        ] {
            guard case .failure(let error) = outcome else { continue }
            let kind = (error as? ServerAPIError)?.kind
            require(
                kind == .decoding || kind == .business || kind == .invalidRequest,
                "a formatter threw \(error)", input: data)
        }
    }
}
