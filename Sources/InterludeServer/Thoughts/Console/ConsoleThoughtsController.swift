import Foundation
import InterludeCore
import Vapor

/// A patient's thoughts on the therapist's console: found by words and days, paged, and an example thought added
/// to the patient's list.
struct ConsoleThoughtsController {
    static let pageSize = 20

    struct Query: Content {
        var q: String?
        var from: String?
        var to: String?
        var cursor: String?
    }

    struct AddForm: Content {
        var text: String
    }

    /// A form field's value, or nil when left empty.
    private static func given(_ value: String?) -> String? {
        guard let value, !value.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        return value
    }

    func register(on routes: any RoutesBuilder) {
        routes.get("patients", ":patientID", "thoughts", use: show)
        routes.post("patients", ":patientID", "thoughts", use: add)
    }

    func show(_ request: Request) async throws -> Response {
        try await render(request, query: try request.query.decode(Query.self))
    }

    func add(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let chart = try await ConsoleTherapistController.chart(request, therapist)
        let form = try request.content.decode(AddForm.self)
        do {
            let added = try await chart.addThought(try Thought.validate(text: form.text), id: nil)
            return try await render(
                request, query: Query(), outcome: added.created ? .added : .known,
                status: added.created ? .created : .ok)
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await render(request, query: Query(), draft: form.text, addErrors: errors, status: errors.status)
        }
    }

    private func render(
        _ request: Request, query: Query, outcome: ThoughtPages.Outcome? = nil, draft: String = "",
        addErrors: FormErrors = FormErrors(),
        status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let chart = try await ConsoleTherapistController.chart(request, therapist)
        var validator = FieldValidator()
        let page = PageRequest(cursor: Self.given(query.cursor), limit: Self.pageSize, checking: &validator)
        let filter = ThoughtService.Filter(
            words: Self.given(query.q), from: validator.date(Self.given(query.from), field: "from"),
            to: validator.date(Self.given(query.to), field: "to"))
        // A filter that cannot be read lists everything, with the problem beside the field.
        let filterErrors =
            validator.errors.isEmpty ? nil : FormErrors.from(ValidationFailure(validator.errors), request: request)
        let content = try await ThoughtPages(viewer: therapist, services: request.services).page(
            chart, filter: filterErrors == nil ? filter : .all,
            page: filterErrors == nil ? page : try PageRequest(cursor: nil, limit: Self.pageSize),
            query: .init(q: query.q ?? "", from: query.from ?? "", to: query.to ?? ""), outcome: outcome, draft: draft,
            addErrors: addErrors, filterErrors: filterErrors ?? FormErrors())
        return try await request.renderConsole(
            "console/thoughts", titleKey: "console.thoughts.title", content: content,
            status: filterErrors == nil ? status : .unprocessableEntity)
    }
}
