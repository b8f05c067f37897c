import Foundation
import Logging
import NIOConcurrencyHelpers

@testable import InterludeServer

/// Where the server's log goes while tests run: the file named by `TEST_LOG_FILE` (the test script then searches
/// it for the secrets below), otherwise standard output. Set up once per process, before the first application.
enum TestLog {
    static func start() { _ = bootstrapped }

    private static let bootstrapped: Void = {
        let file = ProcessInfo.processInfo.environment["TEST_LOG_FILE"].flatMap(AppendingFile.init)
        LoggingSystem.bootstrap { label in
            SafeLogHandler(
                wrapping: file.map { LineHandler(label: label, file: $0) }
                    ?? StreamLogHandler.standardOutput(label: label))
        }
    }()

    private struct LineHandler: LogHandler {
        let label: String
        let file: AppendingFile
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let fields = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(
                separator: " ")
            file.append("\(event.level) [\(label)] \(event.message) \(fields)\n")
        }
    }
}

/// Every email address, password, token and calendar secret the tests hand out or receive, one per line in the
/// file named by `TEST_SECRETS_FILE`: none of them may appear in the log.
enum TestSecrets {
    private static let file = ProcessInfo.processInfo.environment["TEST_SECRETS_FILE"].flatMap(AppendingFile.init)
    private static let secretKeys: Set<String> = [
        "email", "newEmail", "token", "password", "newPassword", "currentPassword",
    ]

    static func record(_ values: [String]) {
        guard let file else { return }
        let lines = values.filter { $0.count >= 8 }.map { $0 + "\n" }
        if !lines.isEmpty { file.append(lines.joined()) }
    }

    /// The secrets among the fields of a JSON body: values of secret-named keys, and the secret of a calendar
    /// address.
    static func record(json data: Data) {
        guard file != nil, let value = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        else { return }
        var found: [String] = []
        func visit(_ value: Any, key: String?) {
            if let object = value as? [String: Any] {
                for (key, value) in object { visit(value, key: key) }
            } else if let array = value as? [Any] {
                for element in array { visit(element, key: key) }
            } else if let text = value as? String, let key {
                if secretKeys.contains(key) { found.append(text) }
                if let range = text.range(of: "/calendar/") {
                    found.append(String(text[range.upperBound...].prefix { $0 != "." && $0 != "?" }))
                }
            }
        }
        visit(value, key: nil)
        record(found)
    }
}

/// A file several threads append whole lines to.
final class AppendingFile: Sendable {
    private let handle: NIOLockedValueBox<FileHandle>

    init?(path: String) {
        guard !path.isEmpty else { return nil }
        if !FileManager.default.fileExists(atPath: path) { FileManager.default.createFile(atPath: path, contents: nil) }
        guard let handle = FileHandle(forWritingAtPath: path) else { return nil }
        handle.seekToEndOfFile()
        self.handle = NIOLockedValueBox(handle)
    }

    func append(_ text: String) {
        handle.withLockedValue { $0.write(Data(text.utf8)) }
    }
}
