// A tour of ServerAPIKit, run against MockTransport so that it works anywhere, offline.
// Swap `MockTransport()` for `URLSessionTransport()` or `CurlTransport()` to talk to a real server.
import Foundation
import ServerAPIKit
import ServerAPITesting

struct Product: Decodable, Sendable {
    var id: Int
    var name: String
    var price: Double
}

/// The discrete style: one type per endpoint, with its model and key path.
struct ProductsRequest: APIRequest {
    typealias Response = [Product]
    var shopID: Int
    var keyPath: String? { "shop.products" }  // relative to the envelope's data key
    var api: ServerAPI { ServerAPI(host: "https://shop.example.com", path: "/shops/\(shopID)") }
}

/// Prints every call as it starts and ends.
struct PrintPlugin: ServerAPIPlugin {
    func willSend(_ request: TransportRequest, for api: ServerAPI) {
        print("   → \(request.method) \(request.url.absoluteString) (attempt \(request.attempt))")
    }
}

let mock = MockTransport()
mock.stub(.get, "/v1/search", .json(#"{"code":0,"msg":"ok","data":{"total":2,"items":["tea","coffee"]}}"#))
mock.stub(
    .get, "/shops/7",
    .json(
        #"{"code":0,"msg":"ok","data":{"shop":{"name":"Corner","products":[{"id":1,"name":"Tea","price":2.5},{"id":2,"name":"Coffee","price":3}]}}}"#
    ))
mock.stub(.post, "/v1/orders", .json(#"{"code":4001,"msg":"this product is sold out","data":null}"#))
mock.stub(.get, "/v1/flaky", .status(503), .status(503), .json(#"{"code":0,"msg":"ok","data":"third time lucky"}"#))
mock.stub(.get, "/v1/slow", .json(#"{"code":0,"msg":"ok","data":null}"#, delay: .seconds(30)))

let manager = ServerAPIManager(transport: mock, formatter: .envelope(), plugins: [PrintPlugin()])
let api = ServerAPI(host: "https://api.example.com/v1")

print("1. An intensive call, built inline with chainable modifiers:")
let search = try await manager.send(api.path("search").query("q", "hot drinks").tag("search").timeout(.seconds(5)))
print("   items: \(search.json?["items"]?.arrayValue?.compactMap(\.stringValue) ?? [])")

print("2. A discrete APIRequest, decoded at the key path shop.products:")
for product in try await manager.send(ProductsRequest(shopID: 7)) {
    print("   #\(product.id) \(product.name): \(product.price)")
}

print("3. A business-code failure:")
do {
    _ = try await manager.send(api.path("orders").method(.post).json(["product": 2]))
} catch let error as ServerAPIError {
    print("   \(error.kind) error, code \(error.code ?? "?"): \(error.message)")
}

print("4. A retry: two 503s, then success:")
let flaky = try await manager.send(api.path("flaky").retry(2, policy: RetryPolicy(baseDelay: .milliseconds(10))))
print("   \(flaky.json?.stringValue ?? "") after \(flaky.metrics.attempts) attempts")

print("5. Cancellation by tag and by last:")
let first = Task { try await manager.send(api.path("slow").tag("feed")) }
let second = Task { try await manager.send(api.path("slow").tag("profile")) }
while manager.inFlight.count < 2 { await Task.yield() }
print("   in flight: \(manager.inFlight.map { $0.tag ?? "-" })")
print("   cancel(tag: \"feed\") cancelled \(manager.cancel(tag: "feed").count) call")
print("   cancelLast() cancelled the call tagged \(manager.cancelLast()?.tag ?? "nothing")")
for task in [first, second] {
    do {
        _ = try await task.value
    } catch let error as ServerAPIError {
        print("   a call ended: \(error.kind)")
    }
}
print("Done: \(mock.requestCount) requests reached the (mock) transport.")
