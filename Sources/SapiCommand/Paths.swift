#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What `NSString` did for paths, which FoundationEssentials leaves out.
enum Paths {
    /// The user's home folder: `HOME`, else the user database's, as `NSHomeDirectory()`.
    static var home: String { FileManager.default.homeDirectoryForCurrentUser.path }

    /// `path` with a leading `~` (the user's home) or `~user` (that user's) expanded, as `expandingTildeInPath`;
    /// unchanged when there is none, or the user is unknown.
    static func expandingTilde(_ path: String) -> String {
        guard path.hasPrefix("~") else { return path }
        let slash = path.firstIndex(of: "/") ?? path.endIndex
        let user = path[path.index(after: path.startIndex)..<slash]
        let rest = path[slash...]
        if user.isEmpty { return home + rest }
        guard let entry = getpwnam(String(user)), let directory = entry.pointee.pw_dir else { return path }
        return String(cString: directory) + rest
    }
}
