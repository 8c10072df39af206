import Foundation
import ServerAPITestSupport
import ServerAPITesting
import Testing

@testable import ServerAPIKit

@Suite("Business codes", .timeLimit(.minutes(1)))
struct BusinessRulesTests {
    private static func mock() -> MockTransport {
        let mock = MockTransport()
        mock.stub(.get, "/expired", .json(#"{"code":1001,"msg":"token expired"}"#))
        mock.stub(.get, "/in-cart", .json(#"{"code":2001,"msg":"already in cart"}"#))
        mock.stub(.get, "/other", .json(#"{"code":3001,"msg":"quota exceeded"}"#))
        mock.stub(.get, "/empty", .json(#"{"code":0,"data":null}"#))
        mock.stub(.get, "/full", .json(#"{"code":0,"data":{"id":1}}"#))
        return mock
    }

    private static let rules = BusinessRules(
        messages: ["1001": "Please sign in again."], silentCodes: ["2001"],
        messageProvider: { error in "Something went wrong (\(error.code ?? "?"))." })

    @Test("codes map to user-facing messages by table, then by closure; the server's message is kept")
    func messages() async throws {
        let manager = ServerAPIManager(
            transport: Self.mock(), formatter: TestEnvelopeFormatter(), configuration: .init(businessRules: Self.rules))
        let expired = try #require(await expectError { try await manager.send(.test("/expired")) })
        #expect(expired.kind == .business && expired.code == "1001")
        #expect(expired.userMessage == "Please sign in again.")
        #expect(expired.errorDescription == "Please sign in again.")
        #expect(expired.message == "token expired")
        #expect(expired.isSilent == false)
        let other = await expectError { try await manager.send(.test("/other")) }
        #expect(other?.kind == .business)
        #expect(other?.userMessage == "Something went wrong (3001).")
    }

    @Test("silent codes are marked so the caller can skip showing them")
    func silent() async {
        let manager = ServerAPIManager(
            transport: Self.mock(), formatter: TestEnvelopeFormatter(), configuration: .init(businessRules: Self.rules))
        let inCart = await expectError { try await manager.send(.test("/in-cart")) }
        #expect(inCart?.kind == .business && inCart?.isSilent == true)
        let other = await expectError { try await manager.send(.test("/other")) }
        #expect(other?.kind == .business && other?.isSilent == false)
        // The rules apply to the decoding API as well.
        struct Item: Decodable, Sendable { var id: Int }
        let decoded = await expectError { try await manager.send(.test("/in-cart"), decoding: Item.self) }
        #expect(decoded?.kind == .business && decoded?.isSilent == true)
    }

    @Test("a call's rules override the manager's: messages code by code, silence both ways, or none at all")
    func perCall() async {
        let manager = ServerAPIManager(
            transport: Self.mock(), formatter: TestEnvelopeFormatter(), configuration: .init(businessRules: Self.rules))
        let expired = await expectError {
            try await manager.send(.test("/expired").businessMessages(["1001": "Your session ended."]))
        }
        #expect(expired?.kind == .business)
        #expect(expired?.userMessage == "Your session ended.")
        let silenced = await expectError { try await manager.send(.test("/other").silentBusinessCodes("3001")) }
        #expect(silenced?.kind == .business && silenced?.isSilent == true)
        let audible = await expectError { try await manager.send(.test("/in-cart").audibleBusinessCodes("2001")) }
        #expect(audible?.kind == .business)
        #expect(audible?.isSilent == false)
        let raw = await expectError { try await manager.send(.test("/in-cart").businessRules(.none)) }
        #expect(raw?.kind == .business)
        #expect(raw?.isSilent == false && raw?.userMessage == nil && raw?.code == "2001")
    }

    @Test("a success interceptor turns a business success into a failure; a call's interceptor replaces the manager's")
    func interceptor() async throws {
        var rules = BusinessRules()
        rules.successInterceptor = { response, _ in
            let envelope = try JSONDecoder().decode(JSONValue.self, from: response.data ?? Data())
            if envelope["data"] == .null { throw ServerAPIError.business(code: "EMPTY", message: "no data") }
        }
        let mock = Self.mock()
        let manager = ServerAPIManager(
            transport: mock, formatter: TestEnvelopeFormatter(), configuration: .init(businessRules: rules))
        let empty = await expectError { try await manager.send(.test("/empty")) }
        #expect(empty?.kind == .business && empty?.code == "EMPTY" && empty?.requestID != nil)
        #expect(try await manager.send(.test("/full")).json?["id"] == .int(1))

        struct Rejected: Error {}
        let replaced = await expectError {
            try await manager.send(.test("/full").successInterceptor { _, _ in throw Rejected() })
        }
        #expect(replaced?.kind == .business && replaced?.underlying is Rejected)
        // The call's interceptor replaced the manager's, so an empty payload now passes.
        _ = try await manager.send(.test("/empty").successInterceptor { _, _ in })
        // A business failure never reaches the interceptor.
        let expired = await expectError { try await manager.send(.test("/expired")) }
        #expect(expired?.kind == .business && expired?.code == "1001")
    }

    @Test("business errors raised by a plugin, not the formatter, get the same treatment")
    func anyProducer() async {
        struct Maintenance: ServerAPIPlugin {
            func process(_ response: TransportResponse, for api: ServerAPI) async throws -> TransportResponse {
                throw ServerAPIError.business(code: "503-M", message: "maintenance")
            }
        }
        let mock = MockTransport()
        mock.stub(.get, "/x", .json("{}"))
        let rules = BusinessRules(messages: ["503-M": "We'll be back soon."], silentCodes: ["503-M"])
        let manager = ServerAPIManager(
            transport: mock, plugins: [Maintenance()], configuration: .init(businessRules: rules))
        let error = await expectError { try await manager.send(.test()) }
        #expect(error?.kind == .business)
        #expect(error?.userMessage == "We'll be back soon." && error?.isSilent == true)
    }

    @Test("rules with closures stay Hashable by identity, so calls that carry them stay Hashable")
    func hashable() {
        let interceptor: BusinessRules.SuccessInterceptor = { _, _ in }
        var a = BusinessRules(messages: ["1": "one"])
        var b = BusinessRules(messages: ["1": "one"])
        #expect(a == b)
        a.successInterceptor = interceptor
        #expect(a != b)
        b = a
        #expect(a == b && a.hashValue == b.hashValue)
        let api = ServerAPI.test().businessRules(a)
        #expect(Set([api, api]).count == 1)
    }
}
