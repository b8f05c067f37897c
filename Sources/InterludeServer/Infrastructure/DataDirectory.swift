import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The directory that holds the database, the keys and the outbox: readable by the server's own user only.
enum DataDirectory {
    /// Creates the directory (or narrows an existing one) as 0700, and makes every file the process creates from
    /// now on (database, journal, outbox messages, keys) readable and writable by its owner only.
    static func prepare(_ path: String) throws {
        umask(0o077)
        try FileManager.default.createDirectory(
            atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path)
    }
}
