import Crypto
import Foundation
import Vapor

/// The version of the public directory's files (styles, scripts, icons) this server runs with: a digest of their
/// names and contents, taken at start. Pages name the styles and scripts under `/assets/<version>/`, so a browser
/// may keep them for a year without asking; a new release has a new version and so new addresses.
struct PublicAssets: Sendable {
    let version: String
    /// The files' paths below the directory, each starting with a slash (`/js/app.js`).
    let files: Set<String>

    /// Where pages find the files of this version: `/assets/<version>`, followed by a file's path.
    var prefix: String { "/assets/\(version)" }

    /// The versioned addresses' first segment.
    static let root = "/assets/"

    /// The version of the files below `directory`, taken once per process.
    static func shipped(directory: String) throws -> PublicAssets {
        try shippedAssets.value(of: directory, load: PublicAssets.init(directory:))
    }

    private static let shippedAssets = ShippedFiles<PublicAssets>()

    /// The version of the files below `directory`, in a stable order.
    init(directory: String) throws {
        let base = URL(fileURLWithPath: directory, isDirectory: true).standardizedFileURL
        var paths: [String] = []
        if let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: [.isRegularFileKey]) {
            for case let file as URL in walker
            where try file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true {
                paths.append(String(file.standardizedFileURL.path.dropFirst(base.path.count)))
            }
        }
        var digest = SHA256()
        for path in paths.sorted() {
            digest.update(data: Data(path.utf8 + [0]))
            digest.update(data: try Data(contentsOf: base.appendingPathComponent(path)))
        }
        version = digest.finalize().prefix(6).map { String(format: "%02x", $0) }.joined()
        files = Set(paths)
    }

    /// The script module of the patient app's page `template` (`app/home`: `/js/pages/home.js`), if it has one.
    func pageModule(of template: String) -> String? {
        guard template.hasPrefix("app/") else { return nil }
        let path = "/js/pages/\(template.dropFirst("app/".count)).js"
        return files.contains(path) ? path : nil
    }

    /// The file a versioned address names (`/css/interlude.css` for `/assets/<any>/css/interlude.css`) and whether
    /// it names this version; nil for an address outside `/assets/`.
    func file(of path: String) -> (path: String, current: Bool)? {
        guard path.hasPrefix(Self.root) else { return nil }
        let rest = path.dropFirst(Self.root.count)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        return (String(rest[slash...]), rest[..<slash] == version)
    }
}

extension Application {
    private struct PublicAssetsKey: StorageKey {
        typealias Value = PublicAssets
    }

    /// The public files' version, set in `configure`; without it pages name the files by their plain addresses.
    var publicAssets: PublicAssets? {
        get { storage[PublicAssetsKey.self] }
        set { storage[PublicAssetsKey.self] = newValue }
    }
}
