import Foundation
import ServerAPITestSupport
import Testing

@Suite("FixtureProcess: a child's exit is seen")
struct FixtureProcessTests {
    @Test("the exit of a child whose own child keeps its descriptors open is seen, with its status")
    func exitSeenWhileGrandchildRuns() async throws {
        let input = Pipe()
        // The grandchild inherits every descriptor the child has (on Linux, the socket through which Foundation's
        // Process learns of the exit among them) and lives until this test closes its standard input. An
        // asynchronous list's standard input is /dev/null, hence the copy in descriptor 3.
        let child = try await FixtureProcess.launch(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "exec 3<&0; cat <&3 >/dev/null & exit 3"]
        ) {
            $0.standardInput = input
        }
        defer { try? input.fileHandleForWriting.close() }
        // A bound, not a measure: without its own reaper, FixtureProcess saw this exit only when the grandchild ended.
        let status = try await child.exitStatus(within: .seconds(30))
        #expect(status == 3)
    }
}
