import Foundation

/// The properties `openapi.yaml` declares as `format: date-time`. In every JSON answer the tests receive through
/// `APIClient`, each of them must be an ISO 8601 instant with an offset: never a number, never a local time.
enum DateTimeContract {
    static let names: Set<String> = {
        let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/InterludeServer/openapi.yaml")
        guard let text = try? String(contentsOf: document, encoding: .utf8) else { return [] }
        var names: Set<String> = []
        var open: [(indent: Int, name: String)] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let indent = line.prefix { $0 == " " }.count
            let content = line.dropFirst(indent)
            let name = content.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            open.removeAll { $0.indent >= indent }
            if !name.isEmpty, content.dropFirst(name.count).hasPrefix(":") { open.append((indent, String(name))) }
            guard content.contains("format: date-time") else { continue }
            let owner = content.dropFirst(name.count).hasPrefix(": {") ? String(name) : open.dropLast().last?.name
            if let owner, !["schema", "items", "type", "format"].contains(owner) { names.insert(owner) }
        }
        return names
    }()

    private static func isInstant(_ text: String) -> Bool {
        text.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})/) != nil
    }

    /// Every date-time property of a JSON body that is not an ISO 8601 instant, as `path: value`.
    static func violations(in data: Data) -> [String] {
        guard let root = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else { return [] }
        var found: [String] = []
        func visit(_ value: Any, path: String, key: String?) {
            if let object = value as? [String: Any] {
                for (key, value) in object { visit(value, path: path + "." + key, key: key) }
            } else if let array = value as? [Any] {
                for (index, element) in array.enumerated() { visit(element, path: path + "[\(index)]", key: key) }
            } else if let key, names.contains(key), !(value is NSNull) {
                if let text = value as? String, isInstant(text) { return }
                found.append("\(path): \(value)")
            }
        }
        visit(root, path: "$", key: nil)
        return found
    }
}
