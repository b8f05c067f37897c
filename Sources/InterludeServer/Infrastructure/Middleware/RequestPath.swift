import Vapor

extension Request {
    /// The path, as `url.path` gives it, worked out once per request: each read of `url.path` rebuilds the text from
    /// the parsed URL, and several middlewares look at it on every request.
    var requestPath: String {
        if let known = storage[PathKey.self] { return known }
        let path = url.path
        storage[PathKey.self] = path
        return path
    }

    private struct PathKey: StorageKey {
        typealias Value = String
    }
}
