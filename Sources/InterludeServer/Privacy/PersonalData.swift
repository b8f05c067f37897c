import Fluent
import Foundation
import InterludeCore

/// Everything Interlude holds about one person, table by table: found by the same rules that erase it, so the
/// person's copy holds exactly what deleting the account would take. Rows are made readable on the way out:
/// sealed values opened, credentials withheld.
struct PersonalData: Sendable {
    /// Each table's rows as JSON, by id.
    let tables: [String: [UUID: Data]]

    static func collect(of user: UserRecord, on database: any Database, services: AppServices) async throws
        -> PersonalData
    {
        var run = try ErasureRun(user: user, scope: .account, study: nil, mode: .collect)
        for table in ErasureMap.personalTables {
            try await run.erase(table: table, services: services, on: database)
        }
        return PersonalData(tables: run.rows)
    }

    /// Fields that hold a credential (a hash of a password or token, a key): present in the copy, never their value.
    static func isCredential(_ field: String) -> Bool {
        let name = field.lowercased()
        return ["hash", "secret", "p256dh", "auth"].contains { name.contains($0) } && !name.hasPrefix("author")
    }

    static let withheld = "[withheld]"

    /// A table's rows as JSON objects, oldest id order kept stable, readable.
    func readableRows(of table: String, cipher: FieldCipher) -> [[String: Any]] {
        (tables[table] ?? [:]).sorted { $0.key.uuidString < $1.key.uuidString }.compactMap { _, data in
            guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
            return Self.readable(object, cipher: cipher)
        }
    }

    private static func readable(_ object: [String: Any], cipher: FieldCipher) -> [String: Any] {
        var row: [String: Any] = [:]
        for (key, value) in object {
            if isCredential(key), !(value is NSNull) {
                row[key] = withheld
            } else if let text = value as? String, text.hasPrefix(FieldCipher.prefix),
                let opened = try? cipher.open(text)
            {
                row[key] =
                    (try? JSONSerialization.jsonObject(with: Data(opened.utf8), options: [.fragmentsAllowed])) ?? opened
            } else if let nested = value as? [String: Any] {
                // A parent reference, `{"id": …}`, reads as the id.
                row[key] = nested.count == 1 ? nested["id"] ?? nested : nested
            } else {
                row[key] = value
            }
        }
        return row
    }
}
