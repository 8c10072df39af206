#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `sapi-full`, the build of `sapi` with `FoundationFeatures`, installed next to `sapi`: the lean `sapi` hands a
/// command that needs them over to it, by replacing itself with it (same process, same terminal and signals).
enum FullBuild {
    /// The executable's name.
    static let name = "sapi-full"

    /// The folder of the running executable, ending in `/`; nil when it cannot be found.
    static func executableFolder() -> String? {
        #if os(Linux)
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
            guard count > 0 else { return nil }
            let path = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #elseif canImport(Darwin)
            var size: UInt32 = 0
            _ = _NSGetExecutablePath(nil, &size)
            var buffer = [CChar](repeating: 0, count: Int(size) + 1)
            guard _NSGetExecutablePath(&buffer, &size) == 0,
                let resolved = realpath(buffer, nil)
            else { return nil }
            defer { free(resolved) }
            let path = String(cString: resolved)
        #endif
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[...slash])
    }

    /// Runs `sapi-full` with `arguments` in place of this process.
    /// - Parameter folder: Where to look for it; the running executable's folder by default.
    /// - Returns: Only when it could not be run: the exit code, after saying why on standard error.
    static func exec(_ arguments: [String], reason: String, folder: String? = executableFolder()) -> Int32 {
        guard let folder else {
            StandardError.write("sapi: error: \(reason) needs \(name), and the folder of sapi cannot be found\n")
            return ExitCode.usage.rawValue
        }
        let path = folder + name
        guard access(path, X_OK) == 0 else {
            StandardError.write(
                "sapi: error: \(reason) needs \(path), which is missing: sapi leaves out the URLSession backend and "
                    + "HAR files, and runs \(name) for them\n"
                    + "  try: build \(name) beside sapi (swift build --product \(name); scripts/build-sapi.sh builds "
                    + "both to install), or leave out \(reason)\n")
            return ExitCode.usage.rawValue
        }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        execv(path, argv)
        let failure = String(cString: strerror(errno))
        StandardError.write("sapi: error: \(reason) needs \(path), which cannot be run: \(failure)\n")
        return ExitCode.usage.rawValue
    }
}

extension Options {
    /// What `FullBuild.exec`'s messages name as the reason: the first option that needs `sapi-full`.
    var foundationFeaturesReason: String {
        if backend == .urlsession { return "--backend urlsession" }
        return har != nil ? "--har" : "--replay"
    }
}
