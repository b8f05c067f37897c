import Logging

/// Writes every log line through another handler with control characters escaped in the message and in every
/// metadata value, so nothing a client sends (a header such as `X-Request-Id`, a key of a JSON body that ends up
/// in an error) can start a forged log line or steer a terminal. The values a database query carries (what the
/// database layers log at `debug`: emails, token hashes, answers) are withheld; the statement itself stays.
public struct SafeLogHandler: LogHandler {
    /// Metadata under which Fluent and SQLKit log the values of a query.
    static let queryValueKeys: Set<String> = ["binds", "input", "filters", "joins"]

    private var wrapped: any LogHandler
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?

    public init(wrapping handler: any LogHandler) {
        var handler = handler
        metadata = handler.metadata
        metadataProvider = handler.metadataProvider
        handler.metadata = [:]
        if handler.metadataProvider != nil { handler.metadataProvider = nil }
        wrapped = handler
    }

    public var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let given = event.metadata { merged.merge(given) { _, new in new } }
        var escaped = event
        escaped.message = "\(LogText.escaped(event.message.description))"
        for key in Self.queryValueKeys where merged[key] != nil { merged[key] = "(withheld)" }
        escaped.metadata = merged.isEmpty ? nil : merged.mapValues(Self.escaped)
        wrapped.log(event: escaped)
    }

    private static func escaped(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): return .string(LogText.escaped(text))
        case .stringConvertible(let convertible): return .string(LogText.escaped(convertible.description))
        case .array(let values): return .array(values.map(escaped))
        case .dictionary(let values):
            return .dictionary(
                Dictionary(uniqueKeysWithValues: values.map { (LogText.escaped($0.key), escaped($0.value)) }))
        }
    }
}

/// Text as it may appear in a log line.
public enum LogText {
    /// The text with every control character (and the Unicode line and paragraph separators) written as `\u{…}`.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}"
    }
}
