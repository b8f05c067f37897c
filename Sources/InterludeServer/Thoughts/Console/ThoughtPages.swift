import Foundation
import InterludeCore

/// The patient's thoughts as the therapist's console shows them: newest first, each with how often it came back
/// and every occurrence's ratings, place and note, a page at a time. Every read goes through the patient's chart.
struct ThoughtPages: Sendable {
    enum Outcome: String, Encodable, Sendable {
        case added
        /// The patient had these words on their list already.
        case known
    }

    struct Query: Encodable, Sendable {
        let q: String
        let from: String
        let to: String
    }

    struct Content: Encodable, Sendable {
        let id: String
        let patientLink: String
        let action: String
        let pseudonym: String
        let name: String?
        let query: Query
        let filtered: Bool
        let thoughts: [ThoughtRow]
        let nextLink: String?
        let outcome: Outcome?
        let draft: String
        let errors: FormErrors
        let filterErrors: FormErrors
    }

    struct ThoughtRow: Encodable, Sendable {
        let text: String
        let fromTherapist: Bool
        let added: String
        let summary: String
        let occurrences: [OccurrenceRow]
    }

    struct OccurrenceRow: Encodable, Sendable {
        let when: String
        let before: String
        let after: String
        let change: String
        let place: String?
        let note: String?
    }

    let viewer: UserRecord
    let services: AppServices

    private func text(_ key: String, _ arguments: [String: String] = [:]) -> String {
        services.localizer.text(key, viewer.language, arguments)
    }

    func page(
        _ chart: PatientChart, filter: ThoughtService.Filter, page: PageRequest, query: Query, outcome: Outcome?,
        draft: String,
        addErrors: FormErrors, filterErrors: FormErrors
    ) async throws -> Content {
        let display = DateDisplay(language: viewer.language, timeZone: chart.patient.zone)
        let listed = ListPage(of: try await chart.thoughts(filter), page, moment: \.addedAt, id: \.id)
        let path = ConsoleURL.thoughts(patient: chart.patientID).path
        return Content(
            id: chart.patientID.uuidString, patientLink: ConsoleURL.patient(chart.patientID).path, action: path,
            pseudonym: chart.profile.pseudonym, name: chart.showsIdentity ? chart.patient.name : nil, query: query,
            filtered: !query.q.isEmpty || !query.from.isEmpty || !query.to.isEmpty,
            thoughts: listed.items.map { row($0, display: display) },
            nextLink: listed.next.map {
                nextPageLink(path, cursor: $0, keeping: [("q", query.q), ("from", query.from), ("to", query.to)])
            },
            outcome: outcome, draft: draft, errors: addErrors, filterErrors: filterErrors)
    }

    private func row(_ listed: ThoughtService.Listed, display: DateDisplay) -> ThoughtRow {
        let thought = listed.thought.content
        return ThoughtRow(
            text: thought.text, fromTherapist: thought.origin == .therapist, added: display.dateTime(thought.addedAt),
            summary: listed.occurrences.isEmpty
                ? text("console.thoughts.notRecorded")
                : services.localizer.text("console.thoughts.times", count: listed.occurrences.count, viewer.language),
            occurrences: listed.occurrences.map { stored in
                let occurrence = stored.content
                return OccurrenceRow(
                    when: display.dateTime(occurrence.recordedAt), before: Self.tenths(occurrence.ratingBefore),
                    after: Self.tenths(occurrence.ratingAfter), change: Self.tenths(occurrence.change),
                    place: occurrence.location.map {
                        text(
                            "console.thoughts.place",
                            [
                                "latitude": $0.latitude.plainText(decimals: 4),
                                "longitude": $0.longitude.plainText(decimals: 4),
                            ])
                    },
                    note: occurrence.note)
            })
    }

    /// A rating from -1 to 1 on the scale people read, -10 to +10.
    static func tenths(_ rating: Double) -> String {
        let value = (rating * 10).rounded()
        return value > 0 ? "+\(Int(value))" : "\(Int(value))"
    }
}
