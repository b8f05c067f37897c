import Foundation
import InterludeCore
import Vapor

/// The session report on the therapist's console, a page that prints, and the notes pinned to days from it.
struct ConsoleReportController {
    struct Query: Content {
        var from: String?
        var to: String?
    }

    /// A note to pin, with the period the therapist was looking at, to come back to.
    struct NoteForm: Content {
        var day: String?
        var text: String?
        var from: String?
        var to: String?
    }

    func register(on routes: any RoutesBuilder) {
        routes.get("patients", ":patientID", "report", use: show)
        routes.post("patients", ":patientID", "notes", use: pin)
        routes.post("patients", ":patientID", "notes", ":noteID", "delete", use: unpin)
    }

    func show(_ request: Request) async throws -> Response {
        let query = try request.query.decode(Query.self)
        return try await render(request, query: query, outcome: request.query["done"].flatMap(ReportPages.Outcome.init))
    }

    func pin(_ request: Request) async throws -> Response {
        let chart = try await ConsoleTherapistController.chart(request, try request.consoleUser(.therapist))
        let form = try request.content.decode(NoteForm.self)
        do {
            _ = try await chart.pinNote(try PinnedNote.checked(day: form.day, text: form.text))
            return request.redirect(
                to: Self.address(of: chart, query: Query(from: form.from, to: form.to), done: .pinned))
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await render(
                request, query: Query(from: form.from, to: form.to), draft: form, noteErrors: errors,
                status: errors.status)
        }
    }

    func unpin(_ request: Request) async throws -> Response {
        let chart = try await ConsoleTherapistController.chart(request, try request.consoleUser(.therapist))
        guard let noteID = request.parameters.get("noteID", as: UUID.self) else { throw AppError.notFound }
        try await chart.unpinNote(noteID)
        let form = try request.content.decode(NoteForm.self)
        return request.redirect(
            to: Self.address(of: chart, query: Query(from: form.from, to: form.to), done: .unpinned))
    }

    /// The report of the period in `query`, telling what was just done.
    private static func address(of chart: PatientChart, query: Query, done: ReportPages.Outcome) -> String {
        var components = URLComponents()
        components.path = ConsoleURL.report(patient: chart.patientID).path
        components.queryItems =
            [("from", query.from), ("to", query.to)].compactMap { name, value in
                value.flatMap { $0.isEmpty ? nil : URLQueryItem(name: name, value: $0) }
            } + [URLQueryItem(name: "done", value: done.rawValue)]
        return components.string ?? components.path
    }

    private func render(
        _ request: Request, query: Query, outcome: ReportPages.Outcome? = nil, draft: NoteForm = NoteForm(),
        noteErrors: FormErrors = FormErrors(), status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let chart = try await ConsoleTherapistController.chart(request, therapist)
        let given = { (value: String?) in value?.isEmpty == false ? value : nil }
        let period: DayPeriod
        var periodErrors = FormErrors()
        do {
            period = try DayPeriod.read(
                from: given(query.from), to: given(query.to), in: chart.patient.zone, now: request.services.clock.now,
                defaultDays: SessionReportService.defaultDays)
        } catch {
            // A period that cannot be read shows the last four weeks, with the problem beside the field.
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            periodErrors = errors
            period = try DayPeriod.read(
                from: nil, to: nil, in: chart.patient.zone, now: request.services.clock.now,
                defaultDays: SessionReportService.defaultDays)
        }
        let report = try await SessionReportService(database: request.db, services: request.services)
            .report(chart, period: period, language: therapist.language)
        let content = try await ReportPages(viewer: therapist, database: request.db, services: request.services).page(
            report, outcome: outcome, draft: .init(day: draft.day ?? "", text: draft.text ?? ""),
            noteErrors: noteErrors,
            periodErrors: periodErrors)
        return try await request.renderConsole(
            "console/report", titleKey: "console.report.title", content: content,
            status: periodErrors.fields.isEmpty ? status : .unprocessableEntity)
    }
}
