import SapiCommand

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the command and exits where it ended: back on the main actor, the exit would wait for a thread to be
/// started to drain the main queue.
nonisolated func run() async -> Never {
    // The lean build: `sapi-full` serves what needs all of Foundation (FoundationFeatures).
    exit(await Sapi.main(Array(CommandLine.arguments.dropFirst()), features: nil))
}

await run()
