import Foundation
import ServerAPIKit

/// Key-path syntax: a path that parses is written back by `description` as text that parses to the same path.
enum KeyPathHarness {
    static func run(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        let path: JSONKeyPath
        do {
            path = try JSONKeyPath(parsing: text)
        } catch {
            require(error.kind == .invalidRequest, "a bad key path threw \(error)", input: data)
            return
        }
        for component in path.components {
            if case .index(let index) = component { require(index >= 0, "a negative index in \(path)", input: data) }
        }
        do {
            let again = try JSONKeyPath(parsing: path.description)
            require(again == path, "\(path.description) reads back as \(again), not \(path)", input: data)
        } catch {
            require(false, "the description \(path.description) does not parse: \(error)", input: data)
        }
    }
}
