import NIOConcurrencyHelpers

/// Remembers what a decoding made of a text, so a text read again (an instrument's definition, on every prompt
/// list, sync and submission) is not decoded again. The text itself is the key, so a changed draft is simply another
/// entry; when full, the cache starts over.
final class DecodedCache<Value: Sendable>: Sendable {
    private let entries = NIOLockedValueBox<[String: Value]>([:])
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    func value(for text: String, decode: (String) throws -> Value) rethrows -> Value {
        if let known = entries.withLockedValue({ $0[text] }) { return known }
        let value = try decode(text)
        entries.withLockedValue { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[text] = value
        }
        return value
    }
}
