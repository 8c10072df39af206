import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's user + system CPU time so far, all threads, in seconds (`getrusage`).
package func cpuSeconds() -> Double {
    var usage = rusage()
    #if canImport(Glibc)
        _ = getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
        _ = getrusage(RUSAGE_SELF, &usage)
    #endif
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// A field of /proc/self/status in kilobytes (`VmHWM`, `VmRSS`); 0 where /proc is missing.
package func procStatusKilobytes(_ field: String) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
    return 0
}

/// The process's peak resident memory (`VmHWM`), in kilobytes; 0 where /proc is missing.
package func peakRSSKilobytes() -> Int { procStatusKilobytes("VmHWM") }
