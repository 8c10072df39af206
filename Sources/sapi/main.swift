import SapiCommand

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The lean build: `sapi-full` serves what needs all of Foundation (FoundationFeatures).
exit(await Sapi.main(Array(CommandLine.arguments.dropFirst()), features: nil))
