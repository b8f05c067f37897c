import Fluent
import Foundation
import InterludeCore

/// What a person's consent decisions allow, read from the decisions and the versions they answered: which of their
/// records belong to a study, what their therapist may not read, and who declined sharing with research.
struct ConsentPeriods: Sendable {
    let database: any Database

    /// When the participant's records of each kind belong to the study: while the enrolment was active and, in a
    /// research study, while a decision in force answered a version that names the kind. A practice has no versions:
    /// there the kinds it collects belong to it while the treatment lasts.
    func collection(of enrollment: EnrollmentRecord, in study: StudyRecord) async throws -> KindPeriods {
        let start = enrollment.startedAt ?? enrollment.createdAt
        let end = enrollment.endedAt
        let studyID = try study.requireID()
        let versions = try await ConsentVersionRecord.query(on: database).filter(\.$study.$id == studyID).all()
        guard study.kind == .research, !versions.isEmpty else {
            return KindPeriods([.init(start: start, end: end, kinds: study.recordSettings.collects)])
        }
        let kinds = Dictionary(
            versions.map { ($0.version, $0.collectedKinds) }, uniquingKeysWith: { first, _ in first })
        let decisions = try await ConsentRecord.query(on: database)
            .filter(\.$user.$id == enrollment.$patient.id).filter(\.$study.$id == studyID)
            .filter(\.$document == ConsentRecord.Document.studyConsent.rawValue).sort(\.$grantedAt).all()
        let periods = decisions.map { decision in
            KindPeriods.Period(
                start: decision.grantedAt, end: [decision.replacedAt, decision.revokedAt].compactMap { $0 }.min(),
                kinds: kinds[decision.version] ?? [])
        }
        return KindPeriods(periods).within(start: start, end: end)
    }

    /// When the person declined, in a study's consent, to let their therapist read their diary (moods, thoughts,
    /// events): while that decision was in force.
    func diaryWithheld(from patientID: UUID) async throws -> KindPeriods {
        let declined = try await ConsentRecord.query(on: database)
            .filter(\.$user.$id == patientID).filter(\.$document == ConsentRecord.Document.studyConsent.rawValue).all()
            .filter { $0.choices?.granted[.diaryWithTherapist] == false }
        return KindPeriods(
            declined.map { decision in
                .init(
                    start: decision.grantedAt, end: [decision.replacedAt, decision.revokedAt].compactMap { $0 }.min(),
                    kinds: RecordKind.diary)
            })
    }

    /// Those of `patientIDs` whose decision in force on the study's consent declines sharing with research.
    func declinedResearchSharing(among patientIDs: [UUID], in studyID: UUID) async throws -> Set<UUID> {
        guard !patientIDs.isEmpty else { return [] }
        let decisions = try await ConsentRecord.query(on: database)
            .filter(\.$user.$id ~~ patientIDs).filter(\.$study.$id == studyID)
            .filter(\.$document == ConsentRecord.Document.studyConsent.rawValue)
            .filter(\.$revokedAt == nil).filter(\.$replacedAt == nil).all()
        return Set(decisions.filter { $0.choices?.granted[.researchSharing] == false }.map { $0.$user.id })
    }
}
