import Foundation
import HTTPTypes
import OpenAPIRuntime

/// The API's fast paths, switched together by `API_FAST_PATHS`: two operations answered by routes of this server's
/// own in place of the generated ones (`PullChangesRoute`, `SubmitResponseRoute`), which read a submission from its
/// bytes (`SubmissionScanner`) and write answers straight into bytes (`DirectJSONEncoder`), as does the storing of a
/// submission's answers and scores. Switched off, every operation is the generated code's and every JSON is
/// Foundation's: that path is the reference the contract tests hold both to. docs/performance.md has the numbers.
enum FastPaths {
    /// The operations that answer in place of the generated ones, for `APITransport`.
    static func operations(configuration: Configuration) throws -> [(
        HTTPRequest.Method, String, APITransport.Operation
    )] {
        let own = try OwnOperationServer(configuration: configuration)
        let pull = PullChangesRoute(server: own)
        let submit = SubmitResponseRoute(server: own)
        return [(.get, try pull.path, pull.answer), (.post, try submit.path, submit.answer)]
    }

    /// Compact JSON for storing: by `DirectJSONEncoder`, keys in the order they are encoded, when the fast paths are on
    /// (a value it cannot follow falls back); otherwise by Foundation's encoder, keys sorted.
    static func storedJSON(_ value: some Encodable, fast: Bool) throws -> String {
        if fast {
            do {
                return String(decoding: try DirectJSONEncoder(dates: APIDateTranscoder()).encode(value), as: UTF8.self)
            } catch is DirectJSONEncoder.OutOfOrder {}
        }
        // Foundation's encoder writes an object's keys in no fixed order unless asked to sort them.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
