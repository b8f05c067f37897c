import Foundation
import NIOConcurrencyHelpers
import OpenAPIRuntime

/// Writes an `Encodable` value as compact JSON straight into bytes, for answers large enough that Foundation's
/// `JSONEncoder` — which builds a tree of every value before it writes one byte — is most of their cost (a third of
/// a full sync's CPU). It writes what that encoder writes with no output formatting: keys in the order they were
/// encoded, absent optionals left out, dates through the API's transcoder, URLs as text, data as Base64, `/` escaped,
/// whole doubles without `.0`, and it refuses NaN and infinities.
///
/// Containers must be used in the order they were opened, as synthesised and generated `encode(to:)` methods do:
/// writing to a container after a later one was opened beside it, a super-encoder, or a value encoded twice into
/// one single-value container throws `OutOfOrder`, and the caller encodes with `JSONEncoder` instead. Coding paths
/// are not tracked (`codingPath` is always empty).
struct DirectJSONEncoder: Sendable {
    let dates: any DateTranscoder

    /// The value used its encoder in a way a writer that never goes back cannot follow.
    struct OutOfOrder: Error {}

    func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let output = JSONOutput(dates: dates)
        try output.value(value)
        if output.misused { throw OutOfOrder() }
        return output.bytes
    }

    /// A value that writes itself, without `Encodable`'s containers.
    func encode<T: DirectJSONWritable>(_ value: T) throws -> [UInt8] {
        let output = JSONOutput(dates: dates)
        try output.object(value)
        if output.misused { throw OutOfOrder() }
        return output.bytes
    }
}

/// A value that writes its own JSON object field by field, without the containers, boxes and casts `Encodable` goes
/// through for every field: for the types an answer holds by the dozen. It writes exactly what its `encode(to:)`
/// writes, keys in the same order; a test holds each conforming type to that.
protocol DirectJSONWritable: Encodable {
    func write(to object: inout JSONObjectWriter) throws
}

/// Writes one object's fields in the order asked, optionals left out when nil. Keys are written as given: they
/// must be names that need no escaping.
struct JSONObjectWriter {
    fileprivate let output: JSONOutput
    private var first = true

    fileprivate init(output: JSONOutput) {
        self.output = output
    }

    private mutating func key(_ key: StaticString) {
        output.bytes.append(first ? UInt8(ascii: "{") : UInt8(ascii: ","))
        first = false
        output.bytes.append(UInt8(ascii: "\""))
        output.bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        output.bytes.append(contentsOf: "\":".utf8)
    }

    /// Closes the object; an object without fields is `{}`.
    fileprivate mutating func close() {
        if first { output.bytes.append(UInt8(ascii: "{")) }
        output.bytes.append(UInt8(ascii: "}"))
    }

    mutating func field(_ name: StaticString, _ value: String) {
        key(name)
        output.string(value)
    }

    mutating func field(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        field(name, value)
    }

    mutating func field(_ name: StaticString, _ value: Int) {
        key(name)
        output.integer(value)
    }

    mutating func field(_ name: StaticString, _ value: Bool) {
        key(name)
        output.bool(value)
    }

    mutating func field(_ name: StaticString, _ value: Bool?) {
        guard let value else { return }
        field(name, value)
    }

    mutating func field(_ name: StaticString, _ value: Date) throws {
        key(name)
        try output.date(value)
    }

    mutating func field(_ name: StaticString, _ value: Date?) throws {
        guard let value else { return }
        try field(name, value)
    }

    mutating func field<T: DirectJSONWritable>(_ name: StaticString, _ values: [T]) throws {
        key(name)
        output.bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { output.bytes.append(UInt8(ascii: ",")) }
            try output.object(value)
        }
        output.bytes.append(UInt8(ascii: "]"))
    }

    /// A field written through `Encodable`, as the encoder writes any value.
    mutating func field<T: Encodable>(_ name: StaticString, encoding value: T) throws {
        key(name)
        try output.value(value)
    }

    mutating func field<T: Encodable>(_ name: StaticString, encoding value: T?) throws {
        guard let value else { return }
        try field(name, encoding: value)
    }

    /// Values whose JSON is kept in `memo` under `key(value)`: written once, copied after.
    mutating func field<Key, Value>(
        _ name: StaticString, _ values: [Value], memo: JSONMemo<Key, Value>, key: (Value) -> Key
    ) throws {
        self.key(name)
        output.bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { output.bytes.append(UInt8(ascii: ",")) }
            output.bytes.append(
                contentsOf: try memo.json(for: value, key: key(value)) { value in
                    let own = JSONOutput(dates: output.dates)
                    try own.value(value)
                    if own.misused { throw DirectJSONEncoder.OutOfOrder() }
                    return own.bytes
                })
        }
        output.bytes.append(UInt8(ascii: "]"))
    }
}

/// The JSON of values that recur unchanged, such as the published instrument definitions every full sync holds,
/// kept by a key. A value is copied from here only when it equals the one written (copies of one cached value share
/// their storage and compare at once); another value under the same key is written afresh and kept instead. The
/// JSON is as the first encoder to ask wrote it, so one memo serves encoders that write alike.
final class JSONMemo<Key: Hashable & Sendable, Value: Encodable & Equatable & Sendable>: Sendable {
    private let entries = NIOLockedValueBox<[Key: (value: Value, json: [UInt8])]>([:])
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    func json(for value: Value, key: Key, write: (Value) throws -> [UInt8]) throws -> [UInt8] {
        if let known = entries.withLockedValue({ $0[key] }), known.value == value { return known.json }
        let json = try write(value)
        entries.withLockedValue { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = (value, json)
        }
        return json
    }
}

/// The bytes written so far and the containers still open, innermost last.
private final class JSONOutput {
    struct Open {
        let id: Int
        let closing: UInt8
        var count: Int
    }

    var bytes: [UInt8] = []
    private var open: [Open] = []
    private var lastID = 0
    private var nesting = 0
    /// Set when a container was asked for in a way that cannot be written in order; the whole encoding fails.
    var misused = false
    let dates: any DateTranscoder
    /// Whether dates are the API's, written as digits straight into the bytes.
    private let utcDates: Bool

    init(dates: any DateTranscoder) {
        self.dates = dates
        utcDates = dates is APIDateTranscoder
        bytes.reserveCapacity(16_384)
    }

    var depth: Int { open.count }

    /// Opens an object or an array where a value is due; answers its depth and id.
    private func openContainer(_ opening: UInt8, _ closing: UInt8) -> (depth: Int, id: Int) {
        bytes.append(opening)
        lastID += 1
        open.append(Open(id: lastID, closing: closing, count: 0))
        return (open.count - 1, lastID)
    }

    /// A new object where a value is due; when it could not be `placed` there, one that refuses every write.
    func keyed<Key: CodingKey>(placed: Bool) -> KeyedContainer<Key> {
        guard placed else {
            misused = true
            return KeyedContainer(output: self, depth: -1, id: -1)
        }
        let (depth, id) = openContainer(UInt8(ascii: "{"), UInt8(ascii: "}"))
        return KeyedContainer(output: self, depth: depth, id: id)
    }

    /// A new array where a value is due; when it could not be `placed` there, one that refuses every write.
    func unkeyed(placed: Bool) -> UnkeyedContainer {
        guard placed else {
            misused = true
            return UnkeyedContainer(output: self, depth: -1, id: -1)
        }
        let (depth, id) = openContainer(UInt8(ascii: "["), UInt8(ascii: "]"))
        return UnkeyedContainer(output: self, depth: depth, id: id)
    }

    /// Closes every container deeper than `depth`.
    func close(downTo depth: Int) {
        while open.count > depth { bytes.append(open.removeLast().closing) }
    }

    /// Makes room for the next element of the container `id` at `depth`: closes the containers opened inside it
    /// and writes the comma. A container that was closed already cannot take another element.
    func element(depth: Int, id: Int) throws {
        close(downTo: depth + 1)
        guard depth < open.count, open[depth].id == id else {
            misused = true
            throw DirectJSONEncoder.OutOfOrder()
        }
        if open[depth].count > 0 { bytes.append(UInt8(ascii: ",")) }
        open[depth].count += 1
    }

    func key(_ key: some CodingKey, depth: Int, id: Int) throws {
        try element(depth: depth, id: id)
        string(key.stringValue)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Writes one value where a value is due.
    func value<T: Encodable>(_ value: T) throws {
        if T.self == String.self { return string(value as! String) }
        if T.self == Int.self { return integer(value as! Int) }
        if T.self == Bool.self { return bool(value as! Bool) }
        if T.self == Double.self { return try double(value as! Double) }
        if T.self == Date.self { return try date(value as! Date) }
        if T.self == URL.self { return string((value as! URL).absoluteString) }
        if T.self == Data.self { return string((value as! Data).base64EncodedString()) }
        if T.self == Decimal.self { return bytes.append(contentsOf: (value as! Decimal).description.utf8) }
        if T.self == Int64.self { return integer(value as! Int64) }
        if T.self == Int32.self { return integer(value as! Int32) }
        if T.self == UInt64.self { return integer(value as! UInt64) }
        if T.self == UInt32.self { return integer(value as! UInt32) }
        if T.self == UInt.self { return integer(value as! UInt) }
        if T.self == Int16.self { return integer(value as! Int16) }
        if T.self == Int8.self { return integer(value as! Int8) }
        if T.self == UInt16.self { return integer(value as! UInt16) }
        if T.self == UInt8.self { return integer(value as! UInt8) }
        if T.self == Float.self { return try double(value as! Float) }
        // A scalar this list misses would encode itself into a single-value container, which hands it back here.
        nesting += 1
        defer { nesting -= 1 }
        guard nesting < 512 else {
            misused = true
            throw DirectJSONEncoder.OutOfOrder()
        }
        let depth = open.count
        let encoder = ValueEncoder(output: self, depth: depth)
        try value.encode(to: encoder)
        if misused { throw DirectJSONEncoder.OutOfOrder() }
        switch encoder.state {
        case .empty, .single(written: false): bytes.append(contentsOf: "{}".utf8)
        case .keyed, .unkeyed, .single(written: true): close(downTo: depth)
        }
    }

    /// Writes an object that writes itself where a value is due.
    func object<T: DirectJSONWritable>(_ value: T) throws {
        var writer = JSONObjectWriter(output: self)
        try value.write(to: &writer)
        writer.close()
    }

    func date(_ value: Date) throws {
        if utcDates {
            bytes.append(UInt8(ascii: "\""))
            if APIDateTranscoder.appendUTC(value, to: &bytes) { return bytes.append(UInt8(ascii: "\"")) }
            bytes.removeLast()
        }
        string(try dates.encode(value))
    }

    func null() { bytes.append(contentsOf: "null".utf8) }

    func bool(_ value: Bool) { bytes.append(contentsOf: (value ? "true" : "false").utf8) }

    func integer(_ value: some BinaryInteger) { bytes.append(contentsOf: String(value).utf8) }

    func double<F: BinaryFloatingPoint & LosslessStringConvertible>(_ value: F) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: [], debugDescription: "\(value) is not a JSON number"))
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    func string(_ value: String) {
        var value = value
        bytes.append(UInt8(ascii: "\""))
        value.withUTF8 { utf8 in
            var start = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard
                    byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "/")
                else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                escape(byte)
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private func escape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(byte)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: "u00".utf8)
            bytes.append(hex[Int(byte >> 4)])
            bytes.append(hex[Int(byte & 0x0F)])
        }
    }
}

/// The encoder one value is given: it becomes an object, an array or a single value where the value is due.
private final class ValueEncoder: Encoder {
    enum State {
        case empty
        case keyed(depth: Int, id: Int)
        case unkeyed(depth: Int, id: Int)
        case single(written: Bool)
    }

    let output: JSONOutput
    let depth: Int
    var state = State.empty
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(output: JSONOutput, depth: Int) {
        self.output = output
        self.depth = depth
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        switch state {
        case .keyed(let depth, let id):
            // A second part of the same object (the parts of an `allOf`).
            return KeyedEncodingContainer(KeyedContainer(output: output, depth: depth, id: id))
        case .empty where output.depth == depth:
            let container: KeyedContainer<Key> = output.keyed(placed: true)
            state = .keyed(depth: container.depth, id: container.id)
            return KeyedEncodingContainer(container)
        default:
            return KeyedEncodingContainer(output.keyed(placed: false) as KeyedContainer<Key>)
        }
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        switch state {
        case .unkeyed(let depth, let id):
            return UnkeyedContainer(output: output, depth: depth, id: id)
        case .empty where output.depth == depth:
            let container = output.unkeyed(placed: true)
            state = .unkeyed(depth: container.depth, id: container.id)
            return container
        default:
            return output.unkeyed(placed: false)
        }
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        switch state {
        case .empty where output.depth == depth:
            state = .single(written: false)
        case .single:
            break
        default:
            output.misused = true
        }
        return SingleContainer(encoder: self)
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let output: JSONOutput
    let depth: Int
    let id: Int
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws {
        try output.key(key, depth: depth, id: id)
        output.null()
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        try output.key(key, depth: depth, id: id)
        output.bool(value)
    }

    mutating func encode(_ value: String, forKey key: Key) throws {
        try output.key(key, depth: depth, id: id)
        output.string(value)
    }

    mutating func encode(_ value: Double, forKey key: Key) throws {
        try output.key(key, depth: depth, id: id)
        try output.double(value)
    }

    mutating func encode(_ value: Int, forKey key: Key) throws {
        try output.key(key, depth: depth, id: id)
        output.integer(value)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try output.key(key, depth: depth, id: id)
        try output.value(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        KeyedEncodingContainer(
            output.keyed(placed: (try? output.key(key, depth: depth, id: id)) != nil) as KeyedContainer<NestedKey>)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        output.unkeyed(placed: (try? output.key(key, depth: depth, id: id)) != nil)
    }

    mutating func superEncoder() -> any Encoder {
        output.misused = true
        return ValueEncoder(output: output, depth: -1)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        superEncoder()
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let output: JSONOutput
    let depth: Int
    let id: Int
    private(set) var count = 0
    var codingPath: [any CodingKey] { [] }

    init(output: JSONOutput, depth: Int, id: Int) {
        self.output = output
        self.depth = depth
        self.id = id
    }

    private mutating func element() throws {
        try output.element(depth: depth, id: id)
        count += 1
    }

    mutating func encodeNil() throws {
        try element()
        output.null()
    }

    mutating func encode(_ value: Bool) throws {
        try element()
        output.bool(value)
    }

    mutating func encode(_ value: String) throws {
        try element()
        output.string(value)
    }

    mutating func encode(_ value: Double) throws {
        try element()
        try output.double(value)
    }

    mutating func encode(_ value: Int) throws {
        try element()
        output.integer(value)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try element()
        try output.value(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        KeyedEncodingContainer(output.keyed(placed: (try? element()) != nil) as KeyedContainer<NestedKey>)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        output.unkeyed(placed: (try? element()) != nil)
    }

    mutating func superEncoder() -> any Encoder {
        output.misused = true
        return ValueEncoder(output: output, depth: -1)
    }
}

private struct SingleContainer: SingleValueEncodingContainer {
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { [] }

    /// A single value is written once, where its value is due.
    private func claim() throws {
        guard case .single(written: false) = encoder.state, encoder.output.depth == encoder.depth else {
            encoder.output.misused = true
            throw DirectJSONEncoder.OutOfOrder()
        }
        encoder.state = .single(written: true)
    }

    mutating func encodeNil() throws {
        try claim()
        encoder.output.null()
    }

    mutating func encode(_ value: Bool) throws {
        try claim()
        encoder.output.bool(value)
    }

    mutating func encode(_ value: String) throws {
        try claim()
        encoder.output.string(value)
    }

    mutating func encode(_ value: Double) throws {
        try claim()
        try encoder.output.double(value)
    }

    mutating func encode(_ value: Int) throws {
        try claim()
        encoder.output.integer(value)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try claim()
        try encoder.output.value(value)
    }
}
