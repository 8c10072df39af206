// The Autobahn|Testsuite client runner (Tests/Autobahn/README.md): runs every case of a fuzzingserver against one
// transport through ServerAPIManager.webSocket, as an echo client, then asks the server to write its report.
//
//   scripts/autobahn.sh start; eval "$(scripts/autobahn.sh env)"
//   swift run serverapi-autobahn "$SAPI_AUTOBAHN_URL" --transport curl      # the agent: ServerAPIKit-curl-<libcurl>
//   scripts/autobahn.sh report
//
// Not a product: a tool for the suite, as serverapi-soak is for the soak run.
import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPIURLSession

struct Arguments {
    var url = ""
    var transport = "curl"
    var agent: String?
    var cases: ClosedRange<Int>?
    var quiet = false

    static func parse(_ arguments: [String]) -> Arguments? {
        var parsed = Arguments()
        var rest = arguments.makeIterator()
        while let argument = rest.next() {
            switch argument {
            case "--transport": parsed.transport = rest.next() ?? ""
            case "--agent": parsed.agent = rest.next()
            case "--quiet": parsed.quiet = true
            case "--cases":
                let bounds = (rest.next() ?? "").split(separator: "-").compactMap { Int($0) }
                guard let first = bounds.first, let last = bounds.last, first <= last else { return nil }
                parsed.cases = first...last
            default:
                guard parsed.url.isEmpty, !argument.hasPrefix("-") else { return nil }
                parsed.url = argument
            }
        }
        guard !parsed.url.isEmpty, ["curl", "urlsession"].contains(parsed.transport) else { return nil }
        return parsed
    }
}

guard let arguments = Arguments.parse(Array(CommandLine.arguments.dropFirst())) else {
    FileHandle.standardError.write(
        Data(
            ("usage: serverapi-autobahn ws://127.0.0.1:PORT [--transport curl|urlsession] [--agent NAME] "
                + "[--cases FIRST-LAST] [--quiet]\n").utf8))
    exit(64)
}

let transport: any RequestPerforming =
    arguments.transport == "curl" ? CurlTransport() : URLSessionTransport()
let agent =
    arguments.agent
    ?? (arguments.transport == "curl"
        ? "ServerAPIKit-curl-\(CurlTransport.libcurlVersion)" : "ServerAPIKit-urlsession")
let manager = ServerAPIManager(transport: transport)
// What the cases need (Tests/Autobahn/README.md, "Limits"): 16 MiB messages, and no idle timeout or keep-alive
// ping of ours, which the cases would see as frames they did not expect.
let configuration = WebSocket.Configuration(maxMessageSize: 16 << 20, closeTimeout: .seconds(10))
let encodedAgent = agent.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? agent

func call(_ pathAndQuery: String) throws -> ServerAPI {
    guard let url = URL(string: arguments.url + pathAndQuery) else {
        throw ServerAPIError(.invalidRequest, "bad URL \(arguments.url + pathAndQuery)")
    }
    // The slowest cases (9.*) wait long for an echo; the handshake itself is quick.
    return ServerAPI(url: url).timeout(.seconds(60))
}

/// The one text message an informational endpoint sends before it closes.
func text(_ pathAndQuery: String) async throws -> String {
    let socket = try await manager.webSocket(try call(pathAndQuery))
    var text = ""
    for try await message in socket.messages {
        if case .text(let value) = message { text = value }
    }
    return text
}

/// One case: echo every message until the connection ends. Errors end the case, not the run.
func run(case number: Int) async -> String {
    do {
        let socket = try await manager.webSocket(
            try call("/runCase?case=\(number)&agent=\(encodedAgent)"), configuration: configuration)
        do {
            for try await message in socket.messages {
                try await socket.send(message)
            }
            return socket.closeCode.map { "closed \($0)" } ?? "closed"
        } catch {
            return "\((error as? ServerAPIError)?.kind.rawValue ?? "error"): \(error)"
        }
    } catch {
        return "handshake failed: \(error)"
    }
}

let count = try await Int(text("/getCaseCount").trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
guard count > 0 else {
    FileHandle.standardError.write(Data("serverapi-autobahn: the server has no cases\n".utf8))
    exit(1)
}
let selected = arguments.cases.map { max(1, $0.lowerBound)...min(count, $0.upperBound) } ?? 1...count
print("serverapi-autobahn: \(selected.count) of \(count) cases as \(agent)")
let started = ContinuousClock.now
for number in selected {
    let caseStarted = ContinuousClock.now
    let outcome = await run(case: number)
    if !arguments.quiet {
        let id =
            (try? await text("/getCaseInfo?case=\(number)")).flatMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }?["id"] as? String
        let elapsed = ContinuousClock.now - caseStarted
        print("case \(number) (\(id ?? "?")): \(outcome) in \(elapsed.formatted(.units(allowed: [.milliseconds])))")
    }
}
_ = try await text("/updateReports?agent=\(encodedAgent)")
print("serverapi-autobahn: done in \(ContinuousClock.now - started); scripts/autobahn.sh report reads the results")
