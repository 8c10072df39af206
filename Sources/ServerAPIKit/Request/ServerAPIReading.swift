#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension ServerAPI {
    /// How a response is read into a result: which statuses count as success, the result format and
    /// where in the JSON the result is found.
    package struct Reading: Sendable, Hashable {
        /// How the response body is turned into a result (`.json` by default).
        package var resultFormat: ResultFormat
        /// Where in the JSON the result is found (`data.items`, `list[0]`, `#.items`, `~.meta`); `nil` for
        /// the whole payload.
        package var keyPath: String?
        /// Which HTTP statuses count as success (2xx by default).
        package var acceptableStatus: StatusValidation

        /// Creates reading settings; the defaults are those of a new `ServerAPI`.
        /// - Parameters:
        ///   - resultFormat: How the body becomes a result.
        ///   - keyPath: Where in the JSON the result is found; `nil` for the whole payload.
        ///   - acceptableStatus: Which statuses count as success.
        package init(
            resultFormat: ResultFormat = .json, keyPath: String? = nil, acceptableStatus: StatusValidation = .successful
        ) {
            self.resultFormat = resultFormat
            self.keyPath = keyPath
            self.acceptableStatus = acceptableStatus
        }
    }
}
