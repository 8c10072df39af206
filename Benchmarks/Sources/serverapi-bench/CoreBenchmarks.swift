import Foundation
import ServerAPIKit
import ServerAPITesting

/// The core benchmarks: the manager's overhead per request, and key-path model decoding.
enum CoreBenchmarks {
    // MARK: Manager overhead

    /// Sequential requests through `ServerAPIManager(transport: MockTransport)` against the mock
    /// called directly with the same, already resolved request. Row 0 is the baseline, row 1 the manager.
    static func managerOverhead(requests: Int, repetitions: Int) async throws -> [Measurement] {
        let (mock, manager, api, request) = try overheadSetup()
        let json = api.format(.json).keyPath("ok")
        let envelopeManager = ServerAPIManager(
            transport: mock, formatter: .envelope(codeKey: "ok", successCodes: ["true"]))
        let envelopeAPI = api.format(.json).keyPath("~.ok")

        return try await Runner.compare(
            [
                Benchmark(name: "MockTransport.perform, direct") {
                    for _ in 0..<requests { blackHole(try await mock.perform(request)) }
                },
                Benchmark(name: "ServerAPIManager.send, .data") {
                    for _ in 0..<requests { blackHole(try await manager.send(api)) }
                },
                Benchmark(name: "ServerAPIManager.send, .json at \"ok\"") {
                    for _ in 0..<requests { blackHole(try await manager.send(json)) }
                },
                Benchmark(name: "ServerAPIManager.send, envelope .json") {
                    for _ in 0..<requests { blackHole(try await envelopeManager.send(envelopeAPI)) }
                },
            ], iterations: requests, repetitions: repetitions)
    }

    /// Runs one overhead row `count` times without timing it: `direct` (MockTransport.perform) or `manager`
    /// (ServerAPIManager.send, .data), so that a profiler sees that row alone.
    static func profileOverhead(row: String, count: Int) async throws {
        let (mock, manager, api, request) = try overheadSetup()
        switch row {
        case "direct": for _ in 0..<count { blackHole(try await mock.perform(request)) }
        case "manager": for _ in 0..<count { blackHole(try await manager.send(api)) }
        default:
            throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "--profile direct|manager"])
        }
    }

    /// What the overhead rows share: a mock answering `/ping`, a manager over it, the call and its resolved request.
    private static func overheadSetup() throws -> (MockTransport, ServerAPIManager, ServerAPI, TransportRequest) {
        let mock = MockTransport()
        mock.setRecording(false)
        mock.stub(.get, "/ping", .json(#"{"ok":true}"#))
        let api = ServerAPI(host: "https://bench.test", path: "/ping").format(.data)
        return (mock, ServerAPIManager(transport: mock), api, try api.transportRequest())
    }

    // MARK: Key-path decoding

    struct Product: Codable, Sendable {
        var id: Int
        var sku: String
        var name: String
        var price: Double
        var inStock: Bool
        var tags: [String]
        var rating: Double?
        var description: String
    }

    /// The bare products array, and the same bytes inside an envelope, about `bytes` long.
    static func payloads(bytes: Int) throws -> (bare: Data, envelope: Data, count: Int) {
        var products: [Product] = []
        var index = 0
        var size = 0
        while size < bytes {
            products.append(
                Product(
                    id: index, sku: "SKU-\(100_000 + index)", name: "Product \(index) — “quoted” & ünïcödé",
                    price: Double(index % 1000) + 0.99, inStock: index % 3 != 0,
                    tags: ["tag\(index % 7)", "sale", "new"], rating: index % 5 == 0 ? nil : Double(index % 50) / 10,
                    description: "A fine product number \(index), with \"escapes\"\n and a tab\t inside."))
            // About the size of one encoded product; the exact size is reported.
            size += 230
            index += 1
        }
        let bare = try JSONEncoder().encode(products)
        var envelope = Data(#"{"code":0,"msg":"ok","data":{"shop":{"id":42,"name":"Bench shop","products":"#.utf8)
        envelope.append(bare)
        envelope.append(Data(#"}},"meta":{"page":1,"total":\#(products.count)}}"#.utf8))
        return (bare, envelope, products.count)
    }

    /// Row 0 is the baseline (`JSONDecoder` on the bare array), row 1 `EnvelopeFormatter.decode`.
    static func keyPathDecoding(bytes: Int, repetitions: Int) async throws
        -> (envelopeBytes: Int, products: Int, rows: [Measurement])
    {
        let (bare, envelope, count) = try payloads(bytes: bytes)
        let url = URL(string: "https://bench.test/shop")!
        let response = TransportResponse(
            status: 200, headers: ["Content-Type": "application/json"], body: .data(envelope), url: url)
        let api = ServerAPI(host: "https://bench.test", path: "/shop").keyPath("shop.products")
        let envelopeFormatter = EnvelopeFormatter()
        let plainFormatter = PlainFormatter()
        let plainAPI = api.keyPath("data.shop.products")

        // Both ways decode the same products.
        let decoded = try envelopeFormatter.decode([Product].self, from: response, for: api)
        guard decoded.count == count else {
            throw ServerAPIError(.decoding, "the benchmark decoded \(decoded.count) products, not \(count)")
        }

        let rows = try await Runner.compare(
            [
                Benchmark(name: "JSONDecoder().decode, bare array") {
                    blackHole(try JSONDecoder().decode([Product].self, from: bare))
                },
                Benchmark(name: "EnvelopeFormatter.decode at shop.products") {
                    blackHole(try envelopeFormatter.decode([Product].self, from: response, for: api))
                },
                Benchmark(name: "PlainFormatter.decode at data.shop.products") {
                    blackHole(try plainFormatter.decode([Product].self, from: response, for: plainAPI))
                },
                Benchmark(name: "EnvelopeFormatter.format, JSONValue") {
                    blackHole(try envelopeFormatter.format(response, for: api))
                },
                Benchmark(name: "JSONDecoder().decode(JSONValue), bare") {
                    blackHole(try JSONDecoder().decode(JSONValue.self, from: bare))
                },
            ], iterations: 1, repetitions: repetitions)
        return (envelope.count, count, rows)
    }
}
