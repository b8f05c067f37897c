import Fluent
import Foundation
import InterludeCore

/// Attaching plans to studies and patients, previewing them, and participants' own adjustments.
package struct ScheduleService: Sendable {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    private var planner: Planner { Planner(database: database, services: services) }

    func plans(in grant: StudyGrant) async throws -> [PlanRecord] {
        try grant.require(.viewPlans)
        return try await PlanRecord.query(on: database).filter(\.$study.$id == grant.studyID).sort(\.$createdAt).all()
    }

    /// A plan of any study; who may see or change it is the study's business.
    func plan(_ planID: UUID) async throws -> PlanRecord {
        guard let record = try await PlanRecord.find(planID, on: database) else { throw AppError.notFound }
        return record
    }

    /// Checks a plan for a study: the instrument is published, a named patient takes part, a named arm exists.
    private func check(_ plan: SchedulePlan, study: StudyRecord, patientID: UUID?, arm: String?) async throws {
        var validator = FieldValidator()
        for problem in plan.problems() { validator.add(problem.field, problem.code, limit: problem.limit) }
        if try await InstrumentCatalog(database: database, services: services)
            .pinnedVersion(plan.instrumentKey, for: study.requireID()) == nil
        {
            validator.add("instrumentKey", .unknown)
        }
        if let patientID {
            let enrolled = try await EnrollmentRecord.query(on: database)
                .filter(\.$study.$id == study.requireID()).filter(\.$patient.$id == patientID)
                .filter(\.$status == EnrollmentStatus.active).first()
            if enrolled == nil { validator.add("patientId", .unknown) }
        }
        if let arm, !StudyArms.names(of: study).contains(arm) { validator.add("arm", .unknown) }
        try validator.check()
    }

    func create(_ plan: SchedulePlan, in grant: StudyGrant, patientID: UUID?, arm: String?) async throws -> PlanRecord {
        try grant.require(.editPlans)
        try await check(plan, study: grant.study, patientID: patientID, arm: arm)
        let record = PlanRecord(
            studyID: grant.studyID, patientID: patientID, arm: arm, createdBy: try grant.viewer.requireID(),
            instrumentKey: plan.instrumentKey, definition: try Self.encode(plan), now: now)
        try await record.create(on: database)
        try await audit(record, in: grant)
        _ = try await planner.run(now: now, patients: try await participants(of: record))
        return record
    }

    /// Plans for one patient are part of that patient's record; every change to any plan is logged.
    private func audit(_ record: PlanRecord, in grant: StudyGrant, removed: Bool = false) async throws {
        try await grant.record(
            .planChanged, patients: record.$patient.id.map { [$0] } ?? [],
            target: "plan:\(try record.requireID())\(removed ? ":removed" : "")")
    }

    func update(_ record: PlanRecord, with plan: SchedulePlan, in grant: StudyGrant, patientID: UUID?, arm: String?)
        async throws -> PlanRecord
    {
        try grant.require(.editPlans)
        guard record.$study.id == grant.studyID else { throw AppError.notFound }
        try await check(plan, study: grant.study, patientID: patientID, arm: arm)
        let before = try await participants(of: record)
        record.definition = try Self.encode(plan)
        record.instrumentKey = plan.instrumentKey
        record.$patient.id = patientID
        record.arm = arm
        record.updatedAt = now
        try await record.save(on: database)
        try await audit(record, in: grant)
        _ = try await planner.run(now: now, patients: before.union(try await participants(of: record)))
        return record
    }

    /// Removes a plan with its future, unopened prompts; what was answered or is open stays.
    func delete(_ record: PlanRecord, in grant: StudyGrant) async throws {
        try grant.require(.editPlans)
        guard record.$study.id == grant.studyID else { throw AppError.notFound }
        let planID = try record.requireID()
        let now = self.now
        try await database.atomically { database in
            let ahead = try await PromptRecord.query(on: database)
                .filter(\.$planID == planID)
                .filter(\.$opensAt > now)
                .filter(\.$openedAt == nil)
                .filter(\.$status == PromptStatus.scheduled)
                .all()
            try await PromptRecord.query(on: database).filter(\.$id ~~ ahead.compactMap(\.id)).delete()
            for (patientID, prompts) in Dictionary(grouping: ahead, by: { $0.$patient.id }) {
                try await SyncStamps.bury(.prompt, ids: prompts.compactMap(\.id), of: patientID, now: now, on: database)
            }
            try await PlanAdjustmentRecord.query(on: database).filter(\.$plan.$id == planID).delete()
            try await record.delete(on: database)
        }
        try await audit(record, in: grant, removed: true)
    }

    /// Deactivates a plan's questionnaire: the prompts of it that are open stay visible to their participants,
    /// marked inactive, and cannot be filled; those ahead are taken back and nothing new is planned. Reactivating
    /// opens what is still within its window again and plans ahead as before.
    func setActive(_ active: Bool, _ record: PlanRecord, in grant: StudyGrant) async throws -> PlanRecord {
        try grant.require(.editPlans)
        guard record.$study.id == grant.studyID else { throw AppError.notFound }
        guard (record.deactivatedAt == nil) != active else { return record }
        let planID = try record.requireID()
        let now = self.now
        try await database.atomically { database in
            record.deactivatedAt = active ? nil : now
            record.updatedAt = now
            try await record.save(on: database)
            let waiting = PromptRecord.query(on: database).filter(\.$planID == planID)
            if active {
                try await waiting.filter(\.$status == PromptStatus.inactive)
                    .set(\.$status, to: PromptStatus.scheduled).set(\.$changedAt, to: now).update()
            } else {
                try await waiting.filter(\.$status ~~ [PromptStatus.scheduled, PromptStatus.open])
                    .filter(\.$opensAt <= now).filter(\.$closesAt > now)
                    .set(\.$status, to: PromptStatus.inactive).set(\.$changedAt, to: now).update()
            }
        }
        try await audit(record, in: grant)
        _ = try await planner.run(now: now, patients: try await participants(of: record))
        return record
    }

    /// The patients a plan applies to now.
    private func participants(of plan: PlanRecord) async throws -> Set<UUID> {
        let enrollments = try await EnrollmentRecord.query(on: database)
            .filter(\.$study.$id == plan.$study.id)
            .filter(\.$status == EnrollmentStatus.active)
            .all()
        return Set(enrollments.filter { Planner.applies(plan, to: $0) }.map { $0.$patient.id })
    }

    /// One planned opening, for previews.
    struct Planned: Sendable {
        let plan: PlanRecord
        let occurrence: Occurrence
    }

    /// What is known about a participant that plans depend on.
    private struct Inputs {
        let zone: TimeZone
        let therapyStart: LocalDate?
        let therapyEnd: LocalDate?
        let appointments: [AppointmentSlot]
    }

    private func inputs(of patientID: UUID) async throws -> Inputs {
        guard let patient = try await UserRecord.find(patientID, on: database) else { throw AppError.notFound }
        let profile = try await PatientProfileRecord.query(on: database).filter(\.$user.$id == patientID).first()
        let appointments = try await AppointmentRecord.query(on: database).filter(\.$patient.$id == patientID).all()
            .map { AppointmentSlot(id: $0.id!, startsAt: $0.startsAt, endsAt: $0.endsAt) }
        return Inputs(
            zone: patient.zone, therapyStart: profile?.therapyStart.flatMap(LocalDate.init),
            therapyEnd: profile?.therapyEnd.flatMap(LocalDate.init), appointments: appointments)
    }

    /// What the plans that apply to a patient produce for any period, computed without storing anything.
    /// `studies` limits it to the studies the viewer may see.
    func preview(patientID: UUID, from: LocalDate, days: Int, studies: Set<UUID>) async throws -> (TimeZone, [Planned])
    {
        let inputs = try await inputs(of: patientID)
        let enrollments = try await EnrollmentRecord.query(on: database)
            .filter(\.$patient.$id == patientID)
            .filter(\.$status == EnrollmentStatus.active)
            .filter(\.$study.$id ~~ Array(studies))
            .all()
        let plans = try await PlanRecord.query(on: database).filter(\.$study.$id ~~ enrollments.map { $0.$study.id })
            .filter(\.$deactivatedAt == nil).all()
        let adjustments = try await PlanAdjustmentRecord.query(on: database).filter(\.$patient.$id == patientID).all()
        var result: [Planned] = []
        for enrollment in enrollments {
            for record in plans where Planner.applies(record, to: enrollment) {
                let plan = try JSONDecoder().decode(SchedulePlan.self, from: Data(record.definition.utf8))
                let adjustment = adjustments.first { $0.$plan.id == record.id }
                    .flatMap { try? JSONDecoder().decode(PlanAdjustment.self, from: Data($0.adjustment.utf8)) }
                let context = ScheduleContext(
                    participantID: patientID, planID: record.id!, timeZone: inputs.zone,
                    enrolledAt: enrollment.createdAt,
                    planCreatedAt: record.createdAt, therapyStart: inputs.therapyStart, therapyEnd: inputs.therapyEnd,
                    appointments: inputs.appointments, adjustment: adjustment)
                result += plan.occurrences(from: from, through: from.adding(days: days - 1), context: context)
                    .map { Planned(plan: record, occurrence: $0) }
            }
        }
        return (inputs.zone, result.sorted { $0.occurrence.opensAt < $1.occurrence.opensAt })
    }

    /// What a plan not attached yet would give one participant of the study, or, without one, someone who
    /// joins now in `zone`.
    func previewDraft(
        _ plan: SchedulePlan, studyID: UUID, patientID: UUID?, zone: TimeZone, from: LocalDate, days: Int
    ) async throws -> (TimeZone, [Occurrence]) {
        var context = ScheduleContext(
            participantID: UUID(), planID: UUID(), timeZone: zone, enrolledAt: now, planCreatedAt: now)
        if let patientID {
            guard
                let enrollment = try await EnrollmentRecord.query(on: database)
                    .filter(\.$patient.$id == patientID).filter(\.$study.$id == studyID)
                    .filter(\.$status == EnrollmentStatus.active).first()
            else { throw AppError.field("previewPatient", .unknown) }
            let inputs = try await inputs(of: patientID)
            context = ScheduleContext(
                participantID: patientID, planID: context.planID, timeZone: inputs.zone,
                enrolledAt: enrollment.createdAt,
                planCreatedAt: now, therapyStart: inputs.therapyStart, therapyEnd: inputs.therapyEnd,
                appointments: inputs.appointments)
        }
        return (context.timeZone, plan.occurrences(from: from, through: from.adding(days: days - 1), context: context))
    }

    // MARK: Participants' adjustments

    /// A plan that reaches a participant, with the participant's own times where set.
    struct ParticipantPlan: Sendable {
        let plan: PlanRecord
        let definition: SchedulePlan
        let adjustment: PlanAdjustment?
        /// Whether the plan is a practice's or a research study's: what the app calls whoever set the times.
        let kind: StudyKind
    }

    /// Every plan that reaches the patient through an active enrolment.
    func plans(reaching patientID: UUID) async throws -> [ParticipantPlan] {
        let enrollments = try await EnrollmentRecord.query(on: database)
            .filter(\.$patient.$id == patientID).filter(\.$status == EnrollmentStatus.active).all()
        let running = try await StudyRecord.query(on: database)
            .filter(\.$id ~~ enrollments.map { $0.$study.id }).filter(\.$status == StudyStatus.running).all()
        let kinds = Dictionary(
            uniqueKeysWithValues: running.compactMap { study in
                study.id.map { ($0, StudyKind(joinMode: study.joinMode)) }
            })
        let plans = try await PlanRecord.query(on: database).filter(\.$study.$id ~~ Array(kinds.keys)).filter(
            \.$deactivatedAt == nil
        )
        .sort(\.$createdAt).all()
        let adjustments = try await PlanAdjustmentRecord.query(on: database).filter(\.$patient.$id == patientID).all()
        return try plans.compactMap { record in
            guard enrollments.contains(where: { Planner.applies(record, to: $0) }) else { return nil }
            let plan = try JSONDecoder().decode(SchedulePlan.self, from: Data(record.definition.utf8))
            let own = adjustments.first { $0.$plan.id == record.id }
                .flatMap { try? JSONDecoder().decode(PlanAdjustment.self, from: Data($0.adjustment.utf8)) }
            return ParticipantPlan(
                plan: record, definition: plan, adjustment: own, kind: kinds[record.$study.id] ?? .research)
        }
    }

    /// The patient's plans that allow adjustments.
    func adjustablePlans(for patientID: UUID) async throws -> [ParticipantPlan] {
        try await plans(reaching: patientID).filter { $0.definition.adjustment != nil }
    }

    /// The patient's plans they may start whenever they want.
    func onDemandPlans(for patientID: UUID) async throws -> [ParticipantPlan] {
        try await plans(reaching: patientID).filter { $0.definition.pattern == .onDemand }
    }

    /// Sets (or, with nil, removes) a patient's own times for a plan, refused outside the plan's bounds.
    func adjust(planID: UUID, patientID: UUID, to adjustment: PlanAdjustment?) async throws -> ParticipantPlan {
        guard let target = try await adjustablePlans(for: patientID).first(where: { $0.plan.id == planID }) else {
            throw AppError.field("planId", .notAllowed)
        }
        if let adjustment { try target.definition.check(adjustment) }
        let existing = try await PlanAdjustmentRecord.query(on: database)
            .filter(\.$plan.$id == planID).filter(\.$patient.$id == patientID).first()
        if let adjustment {
            let encoded = String(decoding: try JSONEncoder().encode(adjustment), as: UTF8.self)
            if let existing {
                existing.adjustment = encoded
                existing.updatedAt = now
                try await existing.save(on: database)
            } else {
                try await PlanAdjustmentRecord(planID: planID, patientID: patientID, adjustment: encoded, now: now)
                    .create(on: database)
            }
        } else {
            try await existing?.delete(on: database)
        }
        _ = try await planner.run(now: now, patients: [patientID])
        return ParticipantPlan(
            plan: target.plan, definition: target.definition, adjustment: adjustment, kind: target.kind)
    }

    /// Opens a prompt now for a plan the participant may answer whenever they want.
    func startOnDemand(planID: UUID, patientID: UUID) async throws -> PromptRecord {
        guard let target = try await onDemandPlans(for: patientID).first(where: { $0.plan.id == planID }) else {
            throw AppError.field(
                "planId", try await PlanRecord.find(planID, on: database) == nil ? .unknown : .notAllowed)
        }
        let prompt = try await PromptService(database: database, services: services).create(
            patientID: patientID, studyID: target.plan.$study.id, assignedBy: nil,
            instrumentKey: target.definition.instrumentKey, opensAt: now,
            closesAt: now.addingTimeInterval(TimeInterval(target.definition.durationMinutes * 60)), source: .onDemand)
        prompt.planID = planID
        try await prompt.save(on: database)
        return prompt
    }

    package static func encode(_ plan: SchedulePlan) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(plan), as: UTF8.self)
    }
}
