import Fluent
import Foundation
import InterludeCore

/// A staff member's view of one patient: only the data of the one study they follow the patient in, of a treatment
/// that ended only what was made and what happened before its end, and every read and change made through it written
/// to the audit log. A therapist sees their practice's data with the
/// patient's name; research staff see pseudonymised data of a participant who shares with research, from their
/// own study only. Handlers and console controllers read patient data through nothing else.
struct PatientChart: Sendable {
    let viewer: UserRecord
    let patient: UserRecord
    let profile: PatientProfileRecord
    /// The patient's enrolment in the study this chart is for.
    let enrollment: EnrollmentRecord
    let kind: StudyKind
    let database: any Database
    let services: AppServices

    var patientID: UUID { enrollment.$patient.id }
    var studyID: UUID { enrollment.$study.id }
    /// Data of these studies, and of no other, appears in the chart.
    var studies: Set<UUID> { [studyID] }
    /// The name, date of birth and gender belong to the therapist's view, never to research.
    var showsIdentity: Bool { kind == .practice }
    /// The name the therapist knows the patient by; nil for research.
    var shownName: String? { showsIdentity ? enrollment.displayName ?? patient.name : nil }
    /// The end of the treatment when it ended: nothing made, changed or happening later is shown, also when the
    /// patient went on with someone else.
    var until: Date? { enrollment.treatmentEnd }

    /// Whether something made at `created` and last changed at `changed` lies inside the treatment: a prompt
    /// assigned before the end is shown, however late it was to open; a diary entry changed after the end is not.
    func covers(created: Date, changed: Date? = nil) -> Bool {
        guard let until else { return true }
        return created <= until && (changed ?? created) <= until
    }
    private var now: Date { services.clock.now }
    private var audit: AuditLog { AuditLog(database: database, services: services) }

    /// The chart of one of the therapist's own patients, in the therapist's practice.
    static func open(_ patientID: UUID, for therapist: UserRecord, database: any Database, services: AppServices)
        async throws -> PatientChart
    {
        guard therapist.role == .therapist else { throw AppError.forbidden(.notAllowed) }
        let entry = try await Caseloads(database: database).patient(patientID, of: therapist.requireID())
        return PatientChart(
            viewer: therapist, patient: entry.patient, profile: entry.profile, enrollment: entry.enrollment,
            kind: .practice,
            database: database, services: services)
    }

    /// The chart of a participant of the study the grant is for: a practice's therapist sees their patients; a
    /// research study's owner and researchers see participants who share with research; a therapist on its staff
    /// sees their own patients. Not found for anyone else.
    static func open(_ patientID: UUID, in grant: StudyGrant, database: any Database, services: AppServices)
        async throws -> PatientChart
    {
        try grant.require(.readParticipantData)
        guard
            let enrollment = try await EnrollmentRecord.query(on: database)
                .filter(\.$study.$id == grant.studyID).filter(\.$patient.$id == patientID)
                .filter(\.$status == EnrollmentStatus.active).with(\.$patient).first(),
            let profile = try await PatientProfileRecord.query(on: database).filter(\.$user.$id == patientID).first()
        else { throw AppError.notFound }
        let visible: Bool
        switch (grant.kind, grant.standing) {
        case (.practice, _):
            visible = enrollment.$therapist.id == grant.viewer.id
        case (.research, .therapist):
            visible =
                try await Caseloads(database: database).practiceEnrollment(of: patientID)?.$therapist.id
                == grant.viewer.id
        case (.research, _):
            visible = StudyAccessPolicy.seesData(of: profile.shareWithResearch, as: grant.standing, in: grant.kind)
        }
        guard visible else { throw AppError.notFound }
        return PatientChart(
            viewer: grant.viewer, patient: enrollment.patient, profile: profile, enrollment: enrollment,
            kind: grant.kind,
            database: database, services: services)
    }

    /// Every chart the viewer may open of the patient: one per study the patient takes part in and the viewer may
    /// read their data in. Not found when there is none.
    static func charts(of patientID: UUID, for viewer: UserRecord, database: any Database, services: AppServices)
        async throws -> [PatientChart]
    {
        let access = StudyAccess(database: database, services: services)
        let studies = try await EnrollmentRecord.query(on: database)
            .filter(\.$patient.$id == patientID).filter(\.$status == EnrollmentStatus.active).all()
            .map { $0.$study.id }
        var charts: [PatientChart] = []
        for studyID in studies {
            do {
                let grant = try await access.require(.readParticipantData, in: studyID, by: viewer)
                charts.append(try await open(patientID, in: grant, database: database, services: services))
            } catch AppError.notFound, AppError.forbidden {
                continue
            }
        }
        guard !charts.isEmpty else { throw AppError.notFound }
        return charts
    }

    /// The chart a response belongs to, for the therapist who follows its patient; not found for anyone else.
    static func open(
        response responseID: UUID, for therapist: UserRecord, database: any Database, services: AppServices
    )
        async throws -> (PatientChart, ResponseService.Stored)
    {
        guard let record = try await ResponseRecord.find(responseID, on: database) else { throw AppError.notFound }
        let chart = try await open(record.$patient.id, for: therapist, database: database, services: services)
        return (chart, try await chart.response(responseID))
    }

    /// The chart a health record belongs to, for the therapist who follows its patient; not found for anyone else.
    static func open(record recordID: UUID, for therapist: UserRecord, database: any Database, services: AppServices)
        async throws -> PatientChart
    {
        guard let record = try await EntryRecord.find(recordID, on: database) else { throw AppError.notFound }
        return try await open(record.$patient.id, for: therapist, database: database, services: services)
    }

    // MARK: Reads

    /// The later of the last use of the app and the last answer of this chart, never after the treatment's end.
    func lastActivity() async throws -> Date? {
        let answer = try await ResponseRecord.query(on: database).filter(\.$patient.$id == patientID)
            .filter(\.$studyID ~~ Array(studies)).sort(\.$completedAt, .descending).first()?.completedAt
        return Caseloads.Entry.lastActivity(app: patient.lastActiveAt, answer: answer, end: until)
    }

    /// Who the patient is, as far as the viewer may know.
    func overview() async throws -> PatientChart {
        try await audit.record(actor: viewer, action: .patientRead, patients: [patientID])
        return self
    }

    func prompts(statuses: Set<PromptStatus> = Set(PromptStatus.allCases)) async throws -> [PromptService.Current] {
        let prompts = try await PromptService(database: database, services: services)
            .prompts(of: patientID, statuses: statuses, studies: studies)
            .filter { covers(created: $0.record.createdAt) }
        try await audit.record(actor: viewer, action: .promptsRead, patients: [patientID])
        return prompts
    }

    /// Prompts answered, missed and open so far.
    func compliance() async throws -> PromptService.Compliance {
        let compliance = try await PromptService(database: database, services: services)
            .compliance(of: [patientID], studies: studies, until: until.map { [patientID: $0] } ?? [:])
        try await audit.record(actor: viewer, action: .promptsRead, patients: [patientID])
        return compliance[patientID] ?? PromptService.Compliance()
    }

    /// Responses, newest first; of one instrument and since a moment when given.
    func responses(instrumentKey: String? = nil, since: Date? = nil) async throws -> [ResponseService.Stored] {
        let responses = try await ResponseService(database: database, services: services)
            .responses(of: patientID, instrumentKey: instrumentKey, studies: studies)
            .filter { since == nil || $0.record.completedAt > since! }
            .filter { covers(created: $0.record.completedAt) }
        try await audit.record(
            actor: viewer, action: instrumentKey == IntersessionDay.instrumentKey ? .timelineRead : .responsesRead,
            patients: [patientID])
        return responses
    }

    func response(_ responseID: UUID) async throws -> ResponseService.Stored {
        guard let stored = try await ResponseService(database: database, services: services).response(responseID),
            stored.record.$patient.id == patientID, stored.record.studyID.map(studies.contains) == true,
            covers(created: stored.record.completedAt)
        else { throw AppError.notFound }
        try await audit.record(
            actor: viewer, action: .responsesRead, patients: [patientID], target: "response:\(responseID)")
        return stored
    }

    func interventions() async throws -> [InterventionService.Opened] {
        let list = try await InterventionService(database: database, services: services)
            .received(by: patientID, studies: studies, until: until)
        try await audit.record(actor: viewer, action: .interventionsRead, patients: [patientID])
        return list
    }

    /// The patient's own appointments: kept with their therapist, never shown to research.
    func appointments(includePast: Bool) async throws -> [AppointmentService.Shown] {
        guard kind == .practice else { return [] }
        let list = try await AppointmentService(database: database, services: services)
            .appointments(of: patientID, includePast: includePast, until: until)
        try await audit.record(actor: viewer, action: .appointmentsRead, patients: [patientID])
        return list
    }

    /// The patient's health record of one kind: kept for their therapist, never shown to research.
    func records<Content: RecordContent>(_ type: Content.Type) async throws -> [RecordService.Stored<Content>] {
        guard kind == .practice else { return [] }
        let withheld = try await ConsentPeriods(database: database).diaryWithheld(from: patientID)
        let list = try await RecordService(database: database, services: services).list(type, of: patientID)
            .filter { covers(created: $0.record.createdAt, changed: $0.record.updatedAt) }
            .filter { !withheld.covers(Content.recordKind, at: $0.record.createdAt) }
        try await audit.record(
            actor: viewer, action: .recordsRead, patients: [patientID], target: Content.recordKind.collection)
        return list
    }

    /// One record of the patient's health record, audited like the list.
    func record<Content: RecordContent>(_ recordID: UUID, _ type: Content.Type) async throws
        -> RecordService.Stored<Content>
    {
        guard kind == .practice,
            let stored = try await RecordService(database: database, services: services).record(
                recordID, type, of: patientID),
            covers(created: stored.record.createdAt, changed: stored.record.updatedAt),
            try await !ConsentPeriods(database: database).diaryWithheld(from: patientID)
                .covers(Content.recordKind, at: stored.record.createdAt)
        else { throw AppError.notFound }
        try await audit.record(
            actor: viewer, action: .recordsRead, patients: [patientID],
            target: "\(Content.recordKind.rawValue):\(recordID.lowercasedText)")
        return stored
    }

    /// The patient's thoughts, filtered as asked (the days in the patient's time zone): kept for their therapist,
    /// never shown to research.
    func thoughts(_ filter: ThoughtService.Filter) async throws -> [ThoughtService.Listed] {
        guard kind == .practice else { return [] }
        var filter = filter
        filter.zone = patient.zone
        let withheld = try await ConsentPeriods(database: database).diaryWithheld(from: patientID)
        let shown = { (record: EntryRecord) in
            covers(created: record.createdAt, changed: record.updatedAt)
                && !withheld.covers(record.kind, at: record.createdAt)
        }
        let list = try await ThoughtService(database: database, services: services).thoughts(
            of: patientID, filter: filter
        )
        .filter { shown($0.thought.record) }
        .map { ThoughtService.Listed(thought: $0.thought, occurrences: $0.occurrences.filter { shown($0.record) }) }
        try await audit.record(
            actor: viewer, action: .recordsRead, patients: [patientID], target: RecordKind.thought.collection)
        return list
    }

    /// How the patient can be reached now, and what was sent to them about this study's prompts and interventions
    /// and about appointments: their therapist's business, never research's.
    func notifications(limit: Int? = nil) async throws -> (reach: DeviceService.Reach, sent: [NotificationRecord]) {
        guard kind == .practice else { return (DeviceService.Reach(), []) }
        let reach = try await DeviceService(database: database, services: services).reach(of: patient)
        let recent = try await NotificationHistory(database: database, services: services).recent(of: patientID)
            .filter { covers(created: $0.createdAt) }
        let promptIDs = recent.compactMap(\.promptID)
        let inScope = Set(
            try await PromptRecord.query(on: database).filter(\.$id ~~ promptIDs).filter(\.$study.$id ~~ Array(studies))
                .all().compactMap(\.id))
        let interventions = Set(
            try await InterventionRecord.query(on: database).filter(\.$patient.$id == patientID)
                .filter(\.$study.$id ~~ Array(studies)).all().compactMap(\.id))
        let shown = recent.filter { record in
            if let promptID = record.promptID { return inScope.contains(promptID) }
            if let interventionID = InterventionService.interventionID(inDedupeKey: record.dedupeKey) {
                return interventions.contains(interventionID)
            }
            return record.appointmentID != nil
        }.prefix(limit ?? .max)
        try await audit.record(actor: viewer, action: .notificationsRead, patients: [patientID])
        return (reach, Array(shown))
    }

    /// The alerts about the patient in this study.
    func alerts() async throws -> [AlertService.Opened] {
        let list = try await AlertService(database: database, services: services).alerts(
            about: patientID, studies: studies
        )
        .filter { covers(created: $0.record.createdAt) }
        if !list.isEmpty { try await audit.record(actor: viewer, action: .alertsRead, patients: [patientID]) }
        return list
    }

    /// The notes pinned to days of the patient's chart from `from` to `to`: their therapist's, never research's.
    func notes(from: LocalDate, to: LocalDate) async throws -> [PinnedNoteService.Shown] {
        guard kind == .practice else { return [] }
        let notes = try await PinnedNoteService(database: database, services: services)
            .notes(of: patientID, from: from, to: to, studies: studies, until: until)
        try await audit.record(actor: viewer, action: .notesRead, patients: [patientID])
        return notes
    }

    /// What the study's own rules found in these responses of the patient: each firing with its reason.
    func firings(on responseIDs: [UUID]) async throws -> [(record: RuleFiringRecord, reason: String)] {
        guard !responseIDs.isEmpty else { return [] }
        let firings = try await RuleFiringRecord.query(on: database).filter(\.$patient.$id == patientID)
            .filter(\.$studyID ~~ Array(studies)).filter(\.$ruleID != nil).filter(\.$responseID ~~ responseIDs)
            .sort(\.$createdAt).all().filter { covers(created: $0.createdAt) }
        try await audit.record(actor: viewer, action: .firingsRead, patients: [patientID])
        return try firings.map { ($0, try services.cipher.open($0.reason)) }
    }

    /// The plans of this study that reach the patient.
    func plans() async throws -> [ScheduleService.ParticipantPlan] {
        let plans = try await ScheduleService(database: database, services: services).plans(reaching: patientID)
            .filter { $0.plan.$study.id == studyID }
        try await audit.record(actor: viewer, action: .schedulePreviewed, patients: [patientID])
        return plans
    }

    /// What this study's plans give the patient for any period, in their local time.
    func schedule(from: LocalDate, days: Int) async throws -> (TimeZone, [ScheduleService.Planned]) {
        let planned = try await ScheduleService(database: database, services: services)
            .preview(patientID: patientID, from: from, days: days, studies: studies)
        try await audit.record(actor: viewer, action: .schedulePreviewed, patients: [patientID])
        return planned
    }

    /// What a plan not attached yet would give the patient.
    func preview(_ plan: SchedulePlan, zone: TimeZone, from: LocalDate, days: Int) async throws -> (
        TimeZone, [Occurrence]
    ) {
        let planned = try await ScheduleService(database: database, services: services)
            .previewDraft(plan, studyID: studyID, patientID: patientID, zone: zone, from: from, days: days)
        try await audit.record(actor: viewer, action: .schedulePreviewed, patients: [patientID])
        return planned
    }

    /// The study's intervention templates, for sending one to the patient.
    func templates() async throws -> [InterventionTemplateRecord] {
        try await InterventionLibrary(database: database, services: services).contents(of: studyID).templates
    }

    // MARK: Changes

    /// Acting for the patient needs the right to in the study and a treatment that has not ended.
    private func requireActing() async throws {
        guard enrollment.status == .active else { throw AppError.conflict(.treatmentEnded) }
        _ = try await StudyAccess(database: database, services: services).require(
            .actForParticipant, in: studyID, by: viewer)
    }

    func assignPrompt(instrumentKey: String, opensAt: Date, closesAt: Date) async throws -> PromptRecord {
        try await requireActing()
        let prompt = try await PromptService(database: database, services: services).assign(
            by: viewer, patientID: patientID, studyID: studyID, instrumentKey: instrumentKey, opensAt: opensAt,
            closesAt: closesAt)
        try await audit.record(
            actor: viewer, action: .promptAssigned, patients: [patientID], target: "instrument:\(prompt.instrumentKey)")
        return prompt
    }

    func addAppointment(title: String, startsAt: Date, endsAt: Date, comment: String?, id: UUID? = nil) async throws
        -> AppointmentService.Shown
    {
        try await requireActing()
        guard kind == .practice else { throw AppError.forbidden(.notAllowed) }
        let shown = try await AppointmentService(database: database, services: services).create(
            for: patient, by: viewer, title: title, startsAt: startsAt, endsAt: endsAt, comment: comment, id: id)
        try await audit.record(actor: viewer, action: .appointmentAdded, patients: [patientID])
        return shown
    }

    /// Cancels a session the therapist's side booked; the patient is told.
    func cancelAppointment(_ id: UUID) async throws {
        try await requireActing()
        guard kind == .practice else { throw AppError.forbidden(.notAllowed) }
        try await AppointmentService(database: database, services: services).cancel(id, of: patient)
        try await audit.record(actor: viewer, action: .appointmentCancelled, patients: [patientID])
    }

    /// Grants or declines the patient's request to move or cancel a session; the patient is told.
    func decideAppointmentRequest(_ id: UUID, grant: Bool, baseVersion: Int) async throws {
        try await requireActing()
        guard kind == .practice else { throw AppError.forbidden(.notAllowed) }
        try await AppointmentService(database: database, services: services)
            .decide(id, of: patient, grant: grant, baseVersion: baseVersion)
        try await audit.record(
            actor: viewer, action: .appointmentRequestDecided, patients: [patientID],
            target: grant ? "granted" : "declined")
    }

    /// Whether the patient is in one of the study's control arms, which receive no interventions.
    func inControlArm() async throws -> Bool {
        guard enrollment.arm != nil, let study = try await StudyRecord.find(studyID, on: database) else { return false }
        return !StudyArms.receivesInterventions(enrollment, in: study)
    }

    /// Sends the patient an intervention in this chart's study: in a research study by a therapist on its team,
    /// never to a participant of a control arm.
    func sendIntervention(_ draft: InterventionDraft, id: UUID?) async throws -> InterventionService.Opened {
        guard enrollment.status == .active else { throw AppError.conflict(.treatmentEnded) }
        let grant = try await StudyAccess(database: database, services: services).require(
            .sendInterventions, in: studyID, by: viewer)
        guard StudyArms.receivesInterventions(enrollment, in: grant.study) else {
            throw AppError.conflict(.controlArm)
        }
        let sent = try await InterventionService(database: database, services: services)
            .send(draft, to: patientID, in: studyID, by: viewer, id: id)
        try await audit.record(
            actor: viewer, action: .interventionSent, patients: [patientID], target: draft.kind.rawValue)
        return sent
    }

    /// Adds an example thought to the patient's list, or finds the one with these words (`created` false).
    func addThought(_ text: String, id: UUID?) async throws -> (stored: RecordService.Stored<Thought>, created: Bool) {
        try await requireActing()
        guard kind == .practice else { throw AppError.forbidden(.notAllowed) }
        let added = try await ThoughtService(database: database, services: services)
            .thought(Thought(text: text, origin: .therapist, addedAt: now), id: id ?? UUID(), for: patient)
        if added.created { try await audit.record(actor: viewer, action: .thoughtAdded, patients: [patientID]) }
        return added
    }

    /// Changes the name the client is shown under, the therapy's dates, and whether the treatment goes on, pauses
    /// or ends; plans anchored on the therapy's start follow at once.
    func updateTreatment(_ update: TreatmentUpdate) async throws -> Caseloads.Entry {
        try await requireActing()
        guard kind == .practice else { throw AppError.forbidden(.notAllowed) }
        let entry = try await TreatmentService(database: database, services: services)
            .apply(update, to: Caseloads.Entry(patient: patient, profile: profile, enrollment: enrollment))
        try await audit.record(
            actor: viewer, action: .treatmentChanged, patients: [patientID],
            target: update.status.map { "status:\($0.rawValue)" })
        return entry
    }

    /// The client's account, for emailing them a link to choose a new password; the sending is audited.
    func passwordResetRecipient() async throws -> UserRecord {
        try await requireActing()
        guard kind == .practice, patient.deactivatedAt == nil else { throw AppError.forbidden(.notAllowed) }
        try await audit.record(actor: viewer, action: .passwordResetSent, patients: [patientID])
        return patient
    }

    /// Pins a note to a day of the patient's chart, which the patient sees on their results too.
    func pinNote(_ note: PinnedNote) async throws -> PinnedNoteService.Shown {
        try await requireActing()
        guard kind == .practice else { throw AppError.forbidden(.notAllowed) }
        let pinned = try await PinnedNoteService(database: database, services: services)
            .pin(note, for: patientID, in: studyID, by: viewer)
        try await audit.record(actor: viewer, action: .notePinned, patients: [patientID])
        return pinned
    }

    func unpinNote(_ noteID: UUID) async throws {
        try await requireActing()
        guard kind == .practice else { throw AppError.forbidden(.notAllowed) }
        try await PinnedNoteService(database: database, services: services).unpin(noteID, of: patientID, in: studyID)
        try await audit.record(actor: viewer, action: .noteUnpinned, patients: [patientID])
    }

    /// Sends one of the study's templates.
    func sendTemplate(_ templateID: UUID) async throws -> InterventionService.Opened {
        guard let template = try await templates().first(where: { $0.id == templateID }) else {
            throw AppError.notFound
        }
        return try await sendIntervention(
            InterventionDraft(kind: template.kind, text: template.texts.text(patient.language)), id: nil)
    }
}
