import Foundation

/// The `.eml` files the outbox mailer wrote, when mail goes to the outbox: removed when they name an erased
/// person, and by age.
struct OutboxMail: Sendable {
    let directory: URL?

    init(services: AppServices) {
        if case .outbox(let path) = services.settings.mail {
            directory = URL(fileURLWithPath: path)
        } else {
            directory = nil
        }
    }

    private var files: [URL] {
        guard let directory else { return [] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".eml") }.map { directory.appendingPathComponent($0) }
    }

    /// Removes every message addressed to `email`; how many.
    @discardableResult
    func remove(addressedTo email: String) -> Int {
        let wanted = email.lowercased()
        var removed = 0
        for file in files {
            guard let data = try? Data(contentsOf: file), Self.recipient(of: data) == wanted else { continue }
            if (try? FileManager.default.removeItem(at: file)) != nil { removed += 1 }
        }
        return removed
    }

    /// Removes every message written before `cutoff`; how many.
    @discardableResult
    func remove(olderThan cutoff: Date) -> Int {
        var removed = 0
        for file in files {
            guard
                let written = try? file.resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate,
                written < cutoff
            else { continue }
            if (try? FileManager.default.removeItem(at: file)) != nil { removed += 1 }
        }
        return removed
    }

    /// The bare, lowercased address of a message's `To:` header.
    static func recipient(of message: Data) -> String? {
        let text = String(decoding: message.prefix(4096), as: UTF8.self)
        for line in text.components(separatedBy: "\r\n") {
            if line.isEmpty { return nil }
            if line.lowercased().hasPrefix("to:") {
                return MIMEMessage.address(of: String(line.dropFirst(3))).lowercased()
            }
        }
        return nil
    }
}
