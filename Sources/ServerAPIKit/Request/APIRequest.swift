/// One endpoint as a type: the discrete style.
///
/// ```swift
/// struct ProductsRequest: APIRequest {
///     typealias Response = [Product]
///     var shopID: Int
///     var keyPath: String? { "data.shop.products" }
///     var api: ServerAPI { ServerAPI(host: "https://shop.example.com", path: "/shops/\(shopID)") }
/// }
/// let products = try await manager.send(ProductsRequest(shopID: 7))
/// ```
public protocol APIRequest: Sendable {
    /// The model the response decodes into.
    associatedtype Response: Decodable & Sendable

    /// The call this endpoint makes.
    var api: ServerAPI { get }

    /// Where in the JSON the model is found; `nil` (the default) for the whole payload, or the
    /// key path already set on `api`.
    var keyPath: String? { get }
}

extension APIRequest {
    public var keyPath: String? { nil }

    /// The call with this endpoint's key path applied.
    package var resolvedAPI: ServerAPI {
        let api = self.api
        guard let keyPath else { return api }
        return api.keyPath(keyPath)
    }
}
