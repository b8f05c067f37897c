import NIOConcurrencyHelpers

/// Remembers what a decoding made of a text, so a text read again (an instrument's definition, on every prompt
/// list, sync and submission) is not decoded again. The text itself is the key, so a changed draft is simply another
/// entry; when full, the cache starts over.
final class DecodedCache<Value: Sendable>: Sendable {
    private let entries = NIOLockedValueBox<[Bytes: Value]>([:])
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    func value(for text: String, decode: (String) throws -> Value) rethrows -> Value {
        let key = Bytes(text: text)
        if let known = entries.withLockedValue({ $0[key] }) { return known }
        let value = try decode(text)
        entries.withLockedValue { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = value
        }
        return value
    }

    /// A text compared and hashed by its UTF-8 bytes: a definition with translations is not ASCII, and a `String`
    /// key would bring every look-up's kilobytes into Unicode normal form first.
    private struct Bytes: Hashable, Sendable {
        let text: String

        func hash(into hasher: inout Hasher) {
            var text = text
            // A native string is contiguous already; this makes any other one so, and its bytes readable at once.
            text.makeContiguousUTF8()
            _ = text.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }

        static func == (left: Bytes, right: Bytes) -> Bool {
            left.text.utf8.elementsEqual(right.text.utf8)
        }
    }
}
