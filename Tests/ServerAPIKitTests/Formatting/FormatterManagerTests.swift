import Foundation
import ServerAPIKit
import ServerAPITesting
import Testing

@Suite struct FormatterManagerTests {
    struct ProductsRequest: APIRequest {
        typealias Response = [FixtureProduct]
        var keyPath: String? { "shop.products" }
        var api: ServerAPI { ServerAPI(host: "https://shop.test", path: "/shops/7") }
    }

    static let envelope = #"""
        {"code":"0","msg":"ok","data":{"shop":{"products":[{"id":1,"name":"Tea","price":2.5}]}},"meta":{"total":1}}
        """#

    @Test("Through the manager: the envelope formatter reads JSON at key paths and decodes models")
    func envelopeEndToEnd() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/shops/7", .json(Self.envelope))
        let manager = ServerAPIManager(transport: mock, formatter: .envelope())
        let base = ServerAPI(host: "https://shop.test", path: "/shops/7")

        let products = try await manager.send(ProductsRequest())
        #expect(products == [FixtureProduct(id: 1, name: "Tea", price: 2.5)])
        let total = try await manager.send(base.keyPath("~.meta.total"))
        #expect(total.json == .int(1))
        #expect(total.status == 200)
        let name = try await manager.send(base.keyPath("shop.products[0].name"), decoding: String.self)
        #expect(name == "Tea")
    }

    @Test("Through the manager: a business code and a key path miss arrive as typed errors with the call's context")
    func errorsEndToEnd() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/login", .json(#"{"code":401,"msg":"token expired"}"#))
        mock.stub(.get, "/shops/7", .json(Self.envelope))
        let manager = ServerAPIManager(transport: mock, formatter: .envelope())

        let login = ServerAPI(host: "https://shop.test", path: "/login")
        do {
            _ = try await manager.send(login)
            Issue.record("a business code must fail the call")
        } catch let error as ServerAPIError {
            #expect(error.kind == .business)
            #expect(error.code == "401")
            #expect(error.message == "token expired")
            #expect(error.requestID == login.id)
        }

        let missing = ServerAPI(host: "https://shop.test", path: "/shops/7").keyPath("shop.items")
        do {
            _ = try await manager.send(missing, decoding: [FixtureProduct].self)
            Issue.record("a missing key path must fail the call")
        } catch let error as ServerAPIError {
            #expect(error.kind == .decoding)
            #expect(error.keyPath == "data.shop.items")
            #expect(
                error.message.contains(#"no key "items" in the object at "data.shop", which has keys ["products"]"#))
            #expect(error.requestID == missing.id)
        }
    }

    @Test("Through the manager: the plain formatter returns text in the declared charset")
    func plainEndToEnd() async throws {
        let mock = MockTransport()
        mock.stub(
            .get, "/motd",
            .data(Data([0x63, 0x61, 0x66, 0xE9]), headers: ["Content-Type": "text/plain; charset=ISO-8859-1"]))
        let manager = ServerAPIManager(transport: mock)
        let result = try await manager.send(ServerAPI(host: "https://shop.test", path: "/motd").format(.string))
        #expect(result.string == "café")
    }
}
