import SapiCommand
import SapiFull

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

exit(await Sapi.main(Array(CommandLine.arguments.dropFirst()), features: FullFeatures()))
