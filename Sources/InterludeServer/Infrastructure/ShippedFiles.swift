import NIOConcurrencyHelpers

/// What a process reads from the files it ships with (the instrument library, the texts, the public files), read
/// once per directory: they do not change while it runs, and one process may configure many applications (a test run
/// configures hundreds).
final class ShippedFiles<Value: Sendable>: Sendable {
    private let read = NIOLockedValueBox<[String: Value]>([:])

    /// The value read from `directory`, reading it with `load` the first time.
    func value(of directory: String, load: (String) throws -> Value) throws -> Value {
        if let known = read.withLockedValue({ $0[directory] }) { return known }
        let value = try load(directory)
        read.withLockedValue { $0[directory] = value }
        return value
    }
}
