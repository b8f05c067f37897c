import Fluent
import Foundation
import InterludeCore

/// The files of a person's copy: `index.html` to read (who runs this Interlude, what it holds about the person,
/// why, since when, with whom it is shared, the consents), every table's rows about the person as
/// `data/<table>.json` and `.csv`, and the answers as FHIR R4 QuestionnaireResponses.
struct SelfExportPackage: Sendable {
    let database: any Database
    let services: AppServices
    let user: UserRecord

    private var language: Language { user.language }

    private func text(_ key: String, _ arguments: [String: String] = [:]) -> String {
        services.localizer.text(key, language, arguments)
    }

    /// Writes the files into `directory`; answers their paths inside it.
    func write(into directory: URL) async throws -> [String] {
        let data = try await PersonalData.collect(of: user, on: database, services: services)
        var paths: [String] = []
        var held: [(table: String, count: Int)] = []
        for table in ErasureMap.personalTables {
            let rows = data.readableRows(of: table, cipher: services.cipher)
            guard !rows.isEmpty else { continue }
            held.append((table, rows.count))
            try save(
                try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys]),
                "data/\(table).json", in: directory)
            try save(Data(Self.csv(rows).utf8), "data/\(table).csv", in: directory)
            paths += ["data/\(table).json", "data/\(table).csv"]
        }
        try save(try await fhirAnswers(), "fhir/QuestionnaireResponse.ndjson", in: directory)
        let records = try await fhirRecords()
        for (path, lines) in records { try save(lines, path, in: directory) }
        try save(Data(try await summary(held: held).utf8), "index.html", in: directory)
        return ["index.html"] + paths + ["fhir/QuestionnaireResponse.ndjson"] + records.keys.sorted()
    }

    private func save(_ data: Data, _ path: String, in directory: URL) throws {
        let url = directory.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
    }

    /// Rows as CSV: a column per field (sorted), nested values as JSON.
    static func csv(_ rows: [[String: Any]]) -> String {
        let columns = Set(rows.flatMap(\.keys)).sorted()
        let lines = rows.map { row in
            CSV.row(
                columns.map { column -> String? in
                    switch row[column] {
                    case nil, is NSNull: return nil
                    case let text as String: return text
                    case let number as NSNumber: return number.stringValue
                    case let value?:
                        return
                            (try? JSONSerialization.data(
                                withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]))
                            .map { String(decoding: $0, as: UTF8.self) }
                    }
                })
        }
        return CSV.row(columns.map(Optional.some)) + lines.joined()
    }

    private func fhirAnswers() async throws -> Data {
        let responses = ResponseService(database: database, services: services)
        let catalog = InstrumentCatalog(database: database, services: services)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var lines = Data()
        for record in try await ResponseRecord.query(on: database).filter(\.$patient.$id == user.requireID()).sort(
            \.$completedAt
        ).all() {
            guard let definition = try await catalog.definition(record.instrumentKey, record.instrumentVersion) else {
                continue
            }
            let stored = try responses.open(record)
            lines += try encoder.encode(
                definition.fhirResponse(
                    id: try record.requireID().lowercasedText, answers: stored.answers,
                    questionnaireURL: services.settings.questionnaireURL(definition.key), authored: record.completedAt,
                    subject: nil,
                    primary: language))
            lines += Data("\n".utf8)
        }
        return lines
    }

    /// The health record as FHIR resources, a file per resource type.
    private func fhirRecords() async throws -> [String: Data] {
        let service = RecordService(database: database, services: services)
        let subject = try await service.fhirSubject(of: user.requireID())
        let today = LocalDate(services.clock.now, in: user.zone)
        var files: [String: Data] = [:]
        for kind in RecordKind.allCases {
            for resource in try await fhirResources(kind.content, service: service, subject: subject, today: today) {
                files["fhir/\(resource.resourceType).ndjson", default: Data()] +=
                    try ExportPackage.json.encode(resource) + Data("\n".utf8)
            }
        }
        return files
    }

    private func fhirResources<Content: RecordKindContent>(
        _ type: Content.Type, service: RecordService, subject: FHIR.Identifier, today: LocalDate
    ) async throws -> [any FHIRRecordResource] {
        try await service.list(type, of: user.requireID()).reversed().map { stored in
            stored.content.fhirResource(id: try stored.record.requireID(), subject: subject, today: today)
        }
    }

    private func date(_ value: Date?) -> String {
        guard let value else { return "" }
        var style = Date.FormatStyle(date: .long, time: .shortened).locale(Locale(identifier: language.rawValue))
        style.timeZone = user.zone
        return value.formatted(style)
    }

    private func summary(held: [(table: String, count: Int)]) async throws -> String {
        let userID = try user.requireID()
        let imprint = try await SiteTexts(database: database).text(.imprint, language, localizer: services.localizer)
        let enrollments = try await EnrollmentRecord.query(on: database).filter(\.$patient.$id == userID).with(\.$study)
            .all()
        let therapists = try await TherapistProfileRecord.query(on: database)
            .filter(\.$user.$id ~~ enrollments.compactMap { $0.$therapist.id }).all()
        let profile = try await PatientProfileRecord.query(on: database).filter(\.$user.$id == userID).first()
        var shared: [String] = []
        for enrollment in enrollments.sorted(by: { $0.createdAt < $1.createdAt }) {
            let arguments = [
                "since": date(enrollment.createdAt), "status": text("enrollmentStatus.\(enrollment.status.rawValue)"),
            ]
            if let therapist = therapists.first(where: { $0.$user.id == enrollment.$therapist.id }) {
                shared.append(
                    text("selfExport.shared.therapist", arguments.merging(["name": therapist.fullName]) { $1 }))
            } else if enrollment.study.joinMode != .pairingCode {
                shared.append(
                    text(
                        "selfExport.shared.study",
                        arguments.merging(["study": enrollment.study.titles.text(language)]) { $1 }))
            }
        }
        if profile?.shareWithResearch == true { shared.append(text("selfExport.shared.research")) }
        let consents = try await ConsentService(database: database, services: services).overview(
            of: user, language: language)
        let consentRows = consents.history.map { decision -> String in
            let document =
                decision.$study.id.flatMap { consents.studies[$0]?.title }
                ?? text(
                    decision.document == ConsentRecord.Document.privacyPolicy.rawValue
                        ? "app.privacy.title" : "app.consents.researchSharing")
            let modules = (decision.choices?.granted ?? [:]).sorted { $0.key < $1.key }
                .map {
                    "\(text("consent.module.\($0.key.rawValue)")): \(text($0.value ? "app.consents.granted" : "app.consents.declined"))"
                }
                .joined(separator: ", ")
            let ended =
                decision.revokedAt.map { "\(text("app.consents.revoked")) \(date($0))" }
                ?? decision.replacedAt.map { _ in text("app.consents.replaced") } ?? ""
            return
                "<tr><td>\(document.htmlEscaped)</td><td>\(decision.version.htmlEscaped)</td><td>\(date(decision.grantedAt).htmlEscaped)</td><td>\(modules.htmlEscaped)</td><td>\(ended.htmlEscaped)</td></tr>"
        }
        let heldRows = held.map { entry in
            "<tr><td>\(text("erasure.table.\(entry.table)").htmlEscaped)</td><td>\(entry.count)</td>"
                + "<td><a href=\"data/\(entry.table).json\">JSON</a> · <a href=\"data/\(entry.table).csv\">CSV</a></td></tr>"
        }
        return """
            <!doctype html>
            <html lang="\(language.rawValue)"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(text("selfExport.title").htmlEscaped)</title>
            <style>body{font-family:sans-serif;line-height:1.5;max-width:50rem;margin:2rem auto;padding:0 1rem;color:#1b2733}
            table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ccd;padding:.3rem;text-align:left;vertical-align:top}
            .imprint{white-space:pre-line}</style></head>
            <body>
            <h1>\(text("selfExport.title").htmlEscaped)</h1>
            <p>\(text("selfExport.intro", ["name": user.name ?? user.email, "date": date(services.clock.now)]).htmlEscaped)</p>
            <h2>\(text("selfExport.who").htmlEscaped)</h2>
            <p class="imprint">\(imprint.htmlEscaped)</p>
            <h2>\(text("selfExport.what").htmlEscaped)</h2>
            <p>\(text("selfExport.since", ["date": date(user.createdAt)]).htmlEscaped)</p>
            <table><thead><tr><th>\(text("selfExport.kind").htmlEscaped)</th><th>\(text("selfExport.count").htmlEscaped)</th><th>\(text("selfExport.files").htmlEscaped)</th></tr></thead>
            <tbody>\(heldRows.joined(separator: "\n"))</tbody></table>
            <p>\(text("selfExport.answersFHIR").htmlEscaped)</p>
            <h2>\(text("selfExport.why").htmlEscaped)</h2>
            <p>\(text("selfExport.purposes").htmlEscaped)</p>
            <h2>\(text("selfExport.sharedTitle").htmlEscaped)</h2>
            <ul>\((shared.isEmpty ? [text("selfExport.shared.nobody")] : shared).map { "<li>\($0.htmlEscaped)</li>" }.joined())</ul>
            <h2>\(text("app.consents.history").htmlEscaped)</h2>
            <table><thead><tr><th>\(text("selfExport.document").htmlEscaped)</th><th>\(text("app.consents.version").htmlEscaped)</th><th>\(text("selfExport.decided").htmlEscaped)</th><th>\(text("consent.modules").htmlEscaped)</th><th></th></tr></thead>
            <tbody>\(consentRows.joined(separator: "\n"))</tbody></table>
            <h2>\(text("selfExport.rightsTitle").htmlEscaped)</h2>
            <p>\(text("selfExport.rights").htmlEscaped)</p>
            </body></html>
            """
    }
}
