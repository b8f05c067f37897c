import Fluent
import Foundation
import InterludeCore

/// The one way a participant's view touches other people's answers: the scores of everyone taking part in a study
/// that shows comparison, reduced to each person's mean and handed out only as a `CohortComparison`, which holds
/// nothing of anyone but the median and middle half of at least `CohortComparison.minimumContributors` people.
struct CohortScores: Sendable {
    let database: any Database
    let services: AppServices

    /// One score of one instrument in one study, compared for `patientID`.
    struct Line: Sendable {
        let study: StudyRecord
        let instrumentKey: String
        let scoreID: String
        /// The person's own mean and count, always theirs to see.
        let personMean: Double
        let personCount: Int
        /// Absent when withheld.
        let cohort: CohortComparison?
        let withheld: Withheld?
    }

    enum Withheld: String, Sendable {
        /// Fewer than `CohortComparison.minimumContributors` people have a value.
        case tooFew
        /// The study shows it only once it has ended.
        case untilEnd
    }

    /// Every score the person has in the studies they take part in that show comparison.
    func comparisons(for patientID: UUID) async throws -> [Line] {
        let enrolled = try await EnrollmentRecord.query(on: database)
            .filter(\.$patient.$id == patientID).filter(\.$status == EnrollmentStatus.active).all().map { $0.$study.id }
        let studies = try await StudyRecord.query(on: database)
            .filter(\.$id ~~ enrolled).filter(\.$comparison != ComparisonVisibility.off).sort(\.$title).all()
        var lines: [Line] = []
        for study in studies {
            lines += try await comparisons(for: patientID, in: study)
        }
        return lines
    }

    private func comparisons(for patientID: UUID, in study: StudyRecord) async throws -> [Line] {
        let studyID = try study.requireID()
        let participants = Set(
            try await EnrollmentRecord.query(on: database)
                .filter(\.$study.$id == studyID).filter(\.$status == EnrollmentStatus.active).all().map {
                    $0.$patient.id
                })
        let responses = ResponseService(database: database, services: services)
        // By instrument and score, each participant's values.
        var values: [String: [String: [UUID: [Double]]]] = [:]
        for record in try await ResponseRecord.query(on: database).filter(\.$studyID == studyID).all()
        where participants.contains(record.$patient.id) {
            for score in try responses.open(record).scores {
                guard let value = score.value else { continue }
                values[record.instrumentKey, default: [:]][score.id, default: [:]][record.$patient.id, default: []]
                    .append(value)
            }
        }
        let untilEnd = study.comparison == .afterEnd && study.status != .closed
        var lines: [Line] = []
        for (instrumentKey, scores) in values.sorted(by: { $0.key < $1.key }) {
            for (scoreID, byPerson) in scores.sorted(by: { $0.key < $1.key }) {
                guard let own = byPerson[patientID], !own.isEmpty else { continue }
                let comparison = untilEnd ? nil : CohortComparison.compare(patientID, values: byPerson)
                lines.append(
                    Line(
                        study: study, instrumentKey: instrumentKey, scoreID: scoreID,
                        personMean: own.reduce(0, +) / Double(own.count), personCount: own.count, cohort: comparison,
                        withheld: untilEnd ? .untilEnd : comparison == nil ? .tooFew : nil))
            }
        }
        return lines
    }
}
