import Fluent
import Foundation
import InterludeCore

/// `decision_points.csv`: every decision point of a participant with its proximal outcome, the values of the plan's
/// outcome score answered in the window after it. The seed is given once the study is closed.
struct DecisionPointExport {
    let database: any Database
    let services: AppServices
    let study: StudyRecord
    let plan: DecisionPointPlan?
    let seed: UInt64?
    /// Whether the study has, or had, decision points: the file is written then.
    let any: Bool

    init(database: any Database, services: AppServices, study: StudyRecord) async throws {
        self.database = database
        self.services = services
        self.study = study
        let studyID = try study.requireID()
        let record = try await DecisionPlanRecord.query(on: database).filter(\.$study.$id == studyID).first()
        plan = try record.map(DecisionPointService.decode)
        seed = study.status == .closed ? record.map { UInt64(bitPattern: $0.seed) } : nil
        let logged = try await DecisionPointRecord.query(on: database).filter(\.$study.$id == studyID).first()
        any = record != nil || logged != nil
    }

    func write(of participant: StudyExportScope.Participant, since: Date?, into file: PackageFile) async throws {
        let studyID = try study.requireID()
        var query = DecisionPointRecord.query(on: database).filter(\.$study.$id == studyID)
            .filter(\.$patient.$id == participant.id)
        if let since { query = query.filter(\.$createdAt > since) }
        let points = try await query.sort(\.$at).all()
        guard !points.isEmpty else { return }
        let outcome = plan?.outcome
        let answers = try await outcomeAnswers(of: participant.id, outcome: outcome, from: points)
        for point in points {
            let zone = TimeZone(identifier: point.timeZone) ?? .gmt
            let at = ExportTime(point.at, in: zone)
            let ends = ExportTime(point.outcomeEnds, in: zone)
            let option = point.option.flatMap { index in plan?.options.indices.contains(index) == true ? index : nil }
            let kind = option.map { index -> String in
                if case .prompt = plan!.options[index] { "prompt" } else { "message" }
            }
            let values =
                outcome.map { outcome in
                    Self.decision(of: point).outcomes(
                        answers, instrumentKey: outcome.instrumentKey, score: outcome.score)
                } ?? []
            try file.row([
                participant.pseudonym, point.point, at.utc, at.local, point.timeZone, point.available ? "1" : "0",
                point.probability.map(CSV.number), point.assigned.map { $0 ? "1" : "0" },
                point.option.map { String($0 + 1) }, kind,
                point.interventionID != nil || point.promptID != nil ? "1" : "0", ends.utc, ends.local,
                outcome?.instrumentKey, outcome?.score, outcome.map { _ in String(values.count) },
                values.isEmpty ? nil : CSV.number(values.reduce(0, +) / Double(values.count)),
                values.map(CSV.number).joined(separator: "|"), seed.map(String.init),
            ])
        }
    }

    /// The participant's answers of the outcome's instrument from the first point's time to the last window's end.
    private func outcomeAnswers(of patientID: UUID, outcome: DecisionOutcome?, from points: [DecisionPointRecord])
        async throws -> [RecentAnswer]
    {
        guard let outcome, let first = points.first?.at, let last = points.map(\.outcomeEnds).max() else { return [] }
        let records = try await ResponseRecord.query(on: database).filter(\.$patient.$id == patientID)
            .filter(\.$studyID == study.requireID()).filter(\.$instrumentKey == outcome.instrumentKey)
            .filter(\.$completedAt > first).filter(\.$completedAt <= last).all()
        return try await DecisionPointService.answers(records, database: database, services: services)[patientID] ?? []
    }

    /// The logged point as Core reads its outcome window.
    private static func decision(of point: DecisionPointRecord) -> DecisionPoint {
        DecisionPoint(
            participant: point.$patient.id, key: point.point, at: point.at, available: point.available,
            probability: point.probability, assigned: point.assigned, option: point.option,
            outcomeEnds: point.outcomeEnds)
    }
}
