import SapiFull
import ServerAPIKit

@testable import SapiCommand

extension Composition {
    /// The transport `sapi-full` composes for `options`: every backend, HAR files included.
    static func transport(_ options: Options) throws -> any RequestPerforming {
        try transport(options, features: FullFeatures())
    }
}
