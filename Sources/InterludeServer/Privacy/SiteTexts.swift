import Fluent
import Foundation
import InterludeCore

/// The privacy policy, the imprint and the pages about ACT's core processes the operator publishes; the admin
/// edits them in the console, and until then the shipped defaults apply.
struct SiteTexts: Sendable {
    enum Kind: String, Sendable, CaseIterable {
        case privacyPolicy
        case imprint
    }

    static let defaultPrivacyPolicyVersion = "1"
    static let maxLength = 100_000
    static let versionMaxLength = 40

    let database: any Database

    static let installationNameMaxLength = 80

    /// What the admin calls this installation (a clinic's or a lab's name), shown on the front door; nil until set.
    func installationName() async throws -> String? {
        try await SettingRecord.find("installation.name", on: database)?.value
    }

    /// Names the installation (empty: no name); audited.
    func setInstallationName(_ name: String, by grant: AdminGrant) async throws {
        var validator = FieldValidator()
        let clean = validator.text(
            name, field: "installationName", required: false, maxLength: Self.installationNameMaxLength)
        try validator.check()
        try await Self.store("installation.name", clean ?? "", now: grant.services.clock.now, on: database)
        try await grant.record(.siteTextChanged, target: "installationName", on: database)
    }

    func privacyPolicyVersion() async throws -> String {
        try await SettingRecord.find("privacyPolicy.version", on: database)?.value ?? Self.defaultPrivacyPolicyVersion
    }

    /// The operator's text, or the shipped default when none is set.
    func text(_ kind: Kind, _ language: Language, localizer: Localizer) async throws -> String {
        if let stored = try await SettingRecord.find(Self.key(kind, language), on: database) { return stored.value }
        return localizer.text("site.\(kind.rawValue).default", language)
    }

    /// Stores the privacy policy under the version the admin gives it, and the imprint; audited.
    func update(
        privacyPolicy: [Language: String], version: String, imprint: [Language: String], by grant: AdminGrant
    ) async throws {
        try await update(.privacyPolicy, texts: privacyPolicy, version: version, now: grant.services.clock.now)
        try await update(.imprint, texts: imprint, version: nil, now: grant.services.clock.now)
        try await grant.record(.siteTextChanged, target: "privacyPolicy:\(version)", on: database)
    }

    private func update(_ kind: Kind, texts: [Language: String], version: String?, now: Date) async throws {
        var validator = FieldValidator()
        var checked: [Language: String] = [:]
        for (language, text) in texts {
            checked[language] = validator.text(
                text, field: "text_\(language.rawValue)", maxLength: Self.maxLength, lines: .multiple)
        }
        let cleanVersion =
            kind == .privacyPolicy
            ? validator.text(version, field: "version", maxLength: Self.versionMaxLength) : nil
        try validator.check()
        let newTexts = checked
        try await database.atomically { database in
            for (language, text) in newTexts {
                try await Self.store(Self.key(kind, language), text, now: now, on: database)
            }
            if let cleanVersion {
                try await Self.store("privacyPolicy.version", cleanVersion, now: now, on: database)
            }
        }
    }

    /// The page about one of ACT's core processes: the operator's text, or the shipped default.
    func text(_ process: ACTProcess, _ language: Language, localizer: Localizer) async throws -> String {
        if let stored = try await SettingRecord.find(Self.key(process, language), on: database) { return stored.value }
        return localizer.text("site.act.\(process.rawValue).default", language)
    }

    /// Stores the pages about ACT's core processes, each in every language (`process_language` names a field); audited.
    func update(act texts: [ACTProcess: [Language: String]], by grant: AdminGrant) async throws {
        var validator = FieldValidator()
        var checked: [String: String] = [:]
        for (process, byLanguage) in texts {
            for (language, text) in byLanguage {
                checked[Self.key(process, language)] = validator.text(
                    text, field: "\(process.rawValue)_\(language.rawValue)", maxLength: Self.maxLength, lines: .multiple
                )
            }
        }
        try validator.check()
        let now = grant.services.clock.now
        let newTexts = checked
        try await database.atomically { database in
            for (key, text) in newTexts { try await Self.store(key, text, now: now, on: database) }
        }
        try await grant.record(.siteTextChanged, target: "act", on: database)
    }

    private static func key(_ process: ACTProcess, _ language: Language) -> String {
        "act.\(process.rawValue).text.\(language.rawValue)"
    }

    private static func key(_ kind: Kind, _ language: Language) -> String {
        "\(kind.rawValue).text.\(language.rawValue)"
    }

    private static func store(_ key: String, _ value: String, now: Date, on database: any Database) async throws {
        if let existing = try await SettingRecord.find(key, on: database) {
            existing.value = value
            existing.updatedAt = now
            try await existing.save(on: database)
        } else {
            try await SettingRecord(key: key, value: value, now: now).create(on: database)
        }
    }
}
