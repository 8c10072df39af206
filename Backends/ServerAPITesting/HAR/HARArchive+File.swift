import Foundation
import ServerAPIKit

extension HARArchive {
    /// Reads an archive from a HAR file.
    /// - Parameter file: The file.
    /// - Throws: `fileSystem` when it cannot be read; `decoding` when it is not a HAR file.
    public init(contentsOf file: URL) throws(ServerAPIError) {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw ServerAPIError(.fileSystem, "cannot read the HAR file \(file.path)", underlying: error)
        }
        try self.init(data: data, name: file.lastPathComponent)
    }

    /// Reads an archive from HAR JSON.
    /// - Parameters:
    ///   - data: The JSON.
    ///   - name: What to call it in errors.
    /// - Throws: `decoding` when it is not a HAR archive.
    public init(data: Data, name: String = "the HAR archive") throws(ServerAPIError) {
        do {
            self = try JSONDecoder().decode(HARArchive.self, from: data)
        } catch {
            throw ServerAPIError(.decoding, "\(name) is not a HAR 1.2 archive: \(error)", underlying: error)
        }
    }

    /// The archive as HAR JSON: indented, keys sorted, so that a re-recorded file diffs well.
    public func encoded() throws(ServerAPIError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(self)
        } catch {
            throw ServerAPIError(.invalidRequest, "the HAR archive cannot be encoded: \(error)", underlying: error)
        }
    }

    /// Writes the archive to a file atomically: to a temporary file in the same folder, then renamed over
    /// `file`, so that a crash leaves the old file or the new one, never half of one. Creates the folder.
    /// - Parameter file: The file.
    /// - Throws: `fileSystem` when it cannot be written.
    public func write(to file: URL) throws(ServerAPIError) {
        let data = try encoded()
        do {
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: file, options: .atomic)
        } catch {
            throw ServerAPIError(.fileSystem, "cannot write the HAR file \(file.path)", underlying: error)
        }
    }
}
