import Fluent
import Foundation
import InterludeCore

/// The page of a study's consent versions, newest first, with the form for the next one.
struct ConsentPages: Sendable {
    struct Form: Sendable {
        var version: String
        var textEn: String
        var textDe: String
        var modules: Set<ConsentModule>
        var reconsentRequired: Bool
        var arm: String = ""
    }

    struct VersionRow: Encodable, Sendable {
        var sequence: Int
        var version: String
        var created: String
        var modules: String
        var reconsentRequired: Bool
        /// The arm the version is for; nil: everybody.
        var arm: String?
        var texts: [LanguageText]
    }

    struct ArmOption: Encodable, Sendable {
        var name: String
        var selected: Bool
    }

    struct LanguageText: Encodable, Sendable {
        var language: String
        var text: String
    }

    struct ModuleOption: Encodable, Sendable {
        var name: String
        var label: String
        var hint: String
        var checked: Bool
    }

    struct Content: Encodable, Sendable {
        var studyTitle: String
        var studyLink: String
        var versions: [VersionRow]
        var canEdit: Bool
        var action: String
        var version: String
        var textEn: String
        var textDe: String
        var modules: [ModuleOption]
        var reconsentRequired: Bool
        /// The study's arms, to write a version for one of them; empty when the study has none.
        var arms: [ArmOption]
        var errors: FormErrors
    }

    let viewer: UserRecord
    let database: any Database
    let services: AppServices

    private var language: Language { viewer.language }

    func versions(_ grant: StudyGrant, form: Form?, errors: FormErrors) async throws -> Content {
        let versions = try await ConsentService(database: database, services: services).versions(in: grant)
        let localizer = services.localizer
        let display = viewer.dateDisplay
        let rows = versions.reversed().map { version in
            VersionRow(
                sequence: version.sequence, version: version.version, created: display.dateTime(version.createdAt),
                modules: version.offeredModules.map { localizer.text("consent.module.\($0.rawValue)", language) }
                    .joined(separator: ", "),
                reconsentRequired: version.reconsentRequired, arm: version.arm,
                texts: version.localizedTexts.values.sorted { $0.key.rawValue < $1.key.rawValue }
                    .map {
                        LanguageText(language: localizer.text("language.\($0.key.rawValue)", language), text: $0.value)
                    })
        }
        // The next version starts from the current one for everybody: its texts and modules, a new name.
        let current = versions.last { $0.arm == nil }
        let shown =
            form
            ?? Form(
                version: "", textEn: current?.localizedTexts.values[.en] ?? "",
                textDe: current?.localizedTexts.values[.de] ?? "",
                modules: Set(current?.offeredModules ?? []), reconsentRequired: false)
        return Content(
            studyTitle: grant.study.titles.text(language), studyLink: ConsoleURL.study(grant.studyID).path,
            versions: rows,
            canEdit: grant.allows(.editStudy), action: ConsoleURL.consent(study: grant.studyID).path,
            version: shown.version,
            textEn: shown.textEn, textDe: shown.textDe,
            modules: ConsentModule.offerable.map {
                ModuleOption(
                    name: "module_\($0.rawValue)", label: localizer.text("consent.module.\($0.rawValue)", language),
                    hint: localizer.text("consent.module.\($0.rawValue).hint", language),
                    checked: shown.modules.contains($0))
            },
            reconsentRequired: shown.reconsentRequired,
            arms: StudyArms.names(of: grant.study).map { ArmOption(name: $0, selected: $0 == shown.arm) },
            errors: errors)
    }
}
