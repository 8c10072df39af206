import Foundation

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(CMallocInfo)
    import CMallocInfo
#endif

/// What the soak run reads about its own process: open descriptors and resident memory (Linux `/proc`).
enum ProcessProbe {
    /// The process's open file descriptors (the listing's own descriptor is counted every time alike).
    static func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    /// The descriptors' targets, for a report when they do not return to the baseline.
    static func descriptorTargets() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }.map { name in
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)) ?? "?"
            return "\(name) -> \(target)"
        }
    }

    /// The C allocator's bytes (`mallinfo2`, every arena and the large mapped blocks): `inUse`, handed out
    /// and not had back, and `held`, taken from the system whether in use or kept free for reuse. Beside
    /// the resident size they tell a leak (`inUse` grows too) from memory kept for reuse (only `held`
    /// and the resident size grow). -1 each where glibc's statistics are not available.
    static func heap() -> (inUse: Int, held: Int) {
        #if canImport(CMallocInfo)
            let info = mallinfo2()
            return (Int(info.uordblks + info.hblkhd), Int(info.arena + info.hblkhd))
        #else
            return (-1, -1)
        #endif
    }

    /// Resident memory in bytes, from `/proc/self/statm` (its second field, in pages).
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return -1 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return -1 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
