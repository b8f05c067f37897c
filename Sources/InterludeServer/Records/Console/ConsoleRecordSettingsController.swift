import Foundation
import InterludeCore
import Vapor

/// Which health records a study or practice collects, the event types it adds, and the samples it asks phones for
/// with the reason for each: shown to its staff, changed by its owner (a practice's therapist) or an administrator.
struct ConsoleRecordSettingsController {
    struct SettingsForm: Content {
        var collects: [String]?
        var eventTypes: String?
        var sampleTypes: [String]?
        /// Per type, why in English and in German.
        var purposes: [String: String]?
        var purposesDe: [String: String]?
        var windowDays: String?
    }

    /// The event types as written, one a line, a German name after a vertical bar: `Hearing test | Hörtest`.
    struct EventTypeLines: Sendable {
        var types: [String] = []
        var germanNames: [String: String] = [:]

        init(_ text: String) {
            for line in text.split(whereSeparator: \.isNewline) {
                let parts = line.split(separator: "|", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard let type = parts.first, !type.isEmpty else { continue }
                types.append(type)
                if parts.count == 2, !parts[1].isEmpty { germanNames[type] = parts[1] }
            }
        }

        init(_ settings: RecordSettings) {
            types = settings.eventTypes
            germanNames = settings.eventTypeNames.compactMapValues { $0.values[.de] }
        }

        var text: String {
            types.map { type in germanNames[type].map { "\(type) | \($0)" } ?? type }.joined(separator: "\n")
        }
    }

    /// The samples part of the form as entered.
    struct SampleEntry: Sendable {
        var types: [String] = []
        var purposes: [String: String] = [:]
        var purposesDe: [String: String] = [:]
        var windowDays = ""

        init(
            types: [String] = [], purposes: [String: String] = [:], purposesDe: [String: String] = [:],
            windowDays: String = ""
        ) {
            self.types = types
            self.purposes = purposes
            self.purposesDe = purposesDe
            self.windowDays = windowDays
        }

        init(_ settings: SampleSettings) {
            self.init(
                types: settings.types.map(\.rawValue),
                purposes: Dictionary(
                    uniqueKeysWithValues: settings.requests.compactMap { request in
                        request.purpose.values[.en].map { (request.type.rawValue, $0) }
                    }),
                purposesDe: Dictionary(
                    uniqueKeysWithValues: settings.requests.compactMap { request in
                        request.purpose.values[.de].map { (request.type.rawValue, $0) }
                    }),
                windowDays: settings.windowDays.map(String.init) ?? "")
        }

        /// The chosen types in the order they are listed, each with its reason in English and German.
        var requests: [(type: String?, purpose: [Language: String?])] {
            SampleType.allCases.map(\.rawValue).filter(types.contains).map {
                ($0, [.en: purposes[$0], .de: purposesDe[$0]])
            }
        }
    }

    struct SampleChoice: Encodable, Sendable {
        let type: String
        let label: String
        let unit: String
        let checked: Bool
        let purpose: String
        let purposeDe: String
        let error: String?
    }

    struct KindChoice: Encodable, Sendable {
        let kind: String
        let label: String
        let checked: Bool
    }

    struct SettingsPage: Encodable, Sendable {
        let studyID: String
        let title: String
        let action: String
        let studyLink: String
        let kinds: [KindChoice]
        let eventTypes: String
        let samples: [SampleChoice]
        let windowDays: String
        let canEdit: Bool
        let saved: Bool
        let errors: FormErrors
    }

    func register(on routes: any RoutesBuilder) {
        routes.get("records", use: practiceSettings)
        routes.get("studies", ":studyID", "records", use: show)
        routes.post("studies", ":studyID", "records", use: submit)
    }

    /// A therapist's settings are their practice's.
    func practiceSettings(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let practice = try await PairingService(database: request.db, services: request.services).practice(
            of: therapist.requireID())
        return request.redirect(to: .recordSettings(study: try practice.requireID()))
    }

    func show(_ request: Request) async throws -> Response {
        let staff = try request.consoleUser(.therapist, .researcher, .admin)
        let grant = try await ConsoleRulesController.grant(.viewStudy, request, staff)
        let settings = try StudyService(database: request.db, services: request.services).recordSettings(in: grant)
        return try await render(
            request, grant, collects: settings.orderedKinds.map(\.rawValue), eventTypes: EventTypeLines(settings),
            samples: SampleEntry(settings.samples), saved: (try? request.query.get(String.self, at: "saved")) != nil)
    }

    func submit(_ request: Request) async throws -> Response {
        let staff = try request.consoleUser(.therapist, .researcher, .admin)
        let grant = try await ConsoleRulesController.grant(.configureRecords, request, staff)
        let form = try request.content.decode(SettingsForm.self)
        let lines = EventTypeLines(form.eventTypes ?? "")
        let samples = SampleEntry(
            types: form.sampleTypes ?? [], purposes: form.purposes ?? [:], purposesDe: form.purposesDe ?? [:],
            windowDays: (form.windowDays ?? "").trimmingCharacters(in: .whitespaces))
        do {
            var window: Int?
            if !samples.windowDays.isEmpty {
                guard let days = Int(samples.windowDays) else { throw AppError.field("windowDays", .invalidFormat) }
                window = days
            }
            let settings = try RecordSettings.validate(
                collects: form.collects ?? [], eventTypes: lines.types, eventTypeNames: lines.germanNames,
                sampleTypes: samples.requests, windowDays: window)
            _ = try await StudyService(database: request.db, services: request.services).setRecordSettings(
                settings, in: grant)
            return request.redirect(to: .recordSettings(study: grant.studyID), query: [("saved", "1")])
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await render(
                request, grant, collects: form.collects ?? [], eventTypes: lines, samples: samples, errors: errors)
        }
    }

    private func render(
        _ request: Request, _ grant: StudyGrant, collects: [String], eventTypes: EventTypeLines, samples: SampleEntry,
        saved: Bool = false,
        errors: FormErrors = FormErrors()
    ) async throws -> Response {
        let language = try request.consoleUser().language
        let localizer = request.services.localizer
        // A problem of the n-th chosen type belongs beside that type.
        let chosen = samples.requests.compactMap(\.type)
        var fields: [String: String] = [:]
        for (field, message) in errors.fields {
            if field.hasPrefix("eventType") {
                fields["eventTypes"] = message
            } else if field.hasPrefix("sampleTypes["), let index = Int(field.dropFirst(12).prefix { $0.isNumber }),
                index < chosen.count
            {
                fields["sample-\(chosen[index])"] = message
            } else {
                fields[field] = message
            }
        }
        let page = SettingsPage(
            studyID: grant.studyID.lowercasedText, title: grant.study.titles.text(language),
            action: ConsoleURL.recordSettings(study: grant.studyID).path,
            studyLink: ConsoleURL.study(grant.studyID).path,
            kinds: RecordKind.collectable.map {
                KindChoice(
                    kind: $0.rawValue, label: localizer.text("records.kind.\($0.rawValue)", language),
                    checked: collects.contains($0.rawValue))
            },
            eventTypes: eventTypes.text,
            samples: SampleType.allCases.map { type in
                SampleChoice(
                    type: type.rawValue, label: localizer.text("samples.type.\(type.rawValue)", language),
                    unit: type.unit,
                    checked: samples.types.contains(type.rawValue), purpose: samples.purposes[type.rawValue] ?? "",
                    purposeDe: samples.purposesDe[type.rawValue] ?? "",
                    error: fields["sample-\(type.rawValue)"])
            },
            windowDays: samples.windowDays, canEdit: grant.allows(.configureRecords), saved: saved,
            errors: FormErrors(fields: fields, form: errors.form))
        return try await request.renderConsole(
            "console/record-settings", titleKey: "console.recordSettings.title", content: page,
            status: errors.isEmpty ? .ok : errors.status)
    }
}
