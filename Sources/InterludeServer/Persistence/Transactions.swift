import FluentKit

extension Database {
    /// Runs `body` in one transaction: all of it is kept, or none of it.
    ///
    /// On the embedded database the body runs on the writer's own thread, inside its next group commit, rather
    /// than in a task of its own that would wait behind requests for every statement; elsewhere it is Fluent's
    /// transaction.
    func atomically<T: Sendable>(_ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
        if let embedded = self as? EmbeddedDatabase { return try await embedded.atomically(body) }
        return try await transaction(body)
    }
}
