import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

/// Many requests at once on one transport: each gets its own answer.
@Suite("Conformance: concurrency")
struct ConcurrencyConformanceTests {
    @Test("200 concurrent requests each get their own response", arguments: TransportKind.allCases)
    func concurrent(kind: TransportKind) async throws {
        let transport = kind.make()
        let base = try kind.httpbin()
        let answers = try await withThrowingTaskGroup(of: (Int, Int, JSONValue?).self) { group in
            for index in 0..<200 {
                group.addTask {
                    let response = try await transport.send(
                        URL(string: "\(base)/anything?i=\(index)")!, timeout: .seconds(60))
                    return (
                        index, response.status, try? JSONDecoder().decode(JSONValue.self, from: response.data ?? Data())
                    )
                }
            }
            var answers: [(Int, Int, JSONValue?)] = []
            for try await answer in group { answers.append(answer) }
            return answers
        }
        #expect(answers.count == 200)
        for (index, status, json) in answers {
            #expect(status == 200)
            #expect(json?["args"]?["i"] == .string("\(index)"))
        }
    }

    @Test("simultaneous first calls on a new transport run side by side", arguments: TransportKind.allCases)
    func sideBySideFromTheFirstCall(kind: TransportKind) async throws {
        // A fresh transport: no connection is open yet, so every call must open its own at once.
        let transport = kind.make()
        let calls = 3
        // The fixture holds each call until all of them have arrived, and answers 504 to a call that
        // waited 30 s in vain: calls run one after the other get a 504, calls run side by side get 200.
        let url = try kind.fixture("/barrier?n=\(calls)&key=\(UUID().uuidString)")
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<calls {
                group.addTask { try await transport.send(url, timeout: .seconds(60)).status }
            }
            var statuses: [Int] = []
            for try await status in group { statuses.append(status) }
            return statuses
        }
        #expect(statuses == Array(repeating: 200, count: calls))
    }

    @Test("concurrent uploads and downloads on one transport do not mix bodies", arguments: TransportKind.allCases)
    func mixed(kind: TransportKind) async throws {
        let transport = kind.make()
        let scratch = try Scratch()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask {
                    let body =
                        Data("body \(index) ".utf8) + FixturePayload(seed: index).bytes(0..<(10_000 * (index + 1)))
                    let echo = try Echo(
                        try await transport.send(try kind.fixture("/echo"), method: .post, body: .data(body)))
                    #expect(echo.body == body)
                }
                group.addTask {
                    let target = DownloadTarget(destination: scratch.file("file-\(index).bin"))
                    let response = try await transport.send(
                        try kind.fixture("/resource?size=\(50_000 + index)&seed=\(index)")
                    ) {
                        $0.download = target
                    }
                    #expect(response.body == .file(target.destination, bytes: Int64(50_000 + index)))
                    #expect(
                        try await FixturePayload(seed: index).verify(fileAt: target.destination, size: 50_000 + index))
                }
            }
            try await group.waitForAll()
        }
    }
}
