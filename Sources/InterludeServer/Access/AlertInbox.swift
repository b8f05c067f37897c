import Fluent
import Foundation
import InterludeCore

/// A staff member's alerts: those raised for them or escalated to them, and those of the research studies in which
/// they receive alerts. Why an alert was raised is shown only to someone who may read the participant's data in
/// its study (a practice's therapist; research staff for a participant who shares with research; whoever it was
/// escalated to in a practice); everyone else sees that it exists and whom it is about.
struct AlertInbox: Sendable {
    let staff: UserRecord
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }
    private var service: AlertService { AlertService(database: database, services: services) }

    struct Shown: Sendable {
        var opened: AlertService.Opened
        /// Whether the reason is shown, rather than withheld.
        let detailed: Bool
        /// Whether the staff member follows the patient in their practice, so the patient's page is theirs to open.
        let ownPatient: Bool
        /// What happened in words, and where to look; only when the reason is shown.
        var told: AlertWording.Told? = nil
        /// The name the therapist knows their own patient by.
        var patientName: String? = nil
    }

    private func audience() async throws -> AlertService.Audience {
        let studies = try await StudyAccess(database: database, services: services)
            .studies(where: .receiveAlerts, for: staff, kind: .research)
        return AlertService.Audience(staffID: try staff.requireID(), studies: studies.compactMap(\.id))
    }

    /// Open ones first, newest first; reading them is audited.
    func alerts() async throws -> [Shown] {
        let list = try await service.alerts(for: audience())
        if !list.isEmpty {
            try await AuditLog(database: database, services: services)
                .record(actor: staff, action: .alertsRead, patients: Array(Set(list.map { $0.record.$patient.id })))
        }
        return try await shown(list)
    }

    func openCount() async throws -> Int {
        try await service.waiting(for: audience()).count
    }

    /// The high-priority alerts waiting for this staff member: raised for them or escalated to them.
    func urgentCount() async throws -> Int {
        let staffID = try staff.requireID()
        return try await service.waiting(for: audience())
            .filter { $0.priority == .high && ($0.$recipient.id == staffID || $0.$escalatedTo.id == staffID) }.count
    }

    /// Open alerts per patient: the high-priority ones and all of them.
    func openCounts() async throws -> [UUID: (high: Int, all: Int)] {
        Dictionary(grouping: try await service.waiting(for: audience()), by: { $0.$patient.id })
            .mapValues { (high: $0.filter { $0.priority == .high }.count, all: $0.count) }
    }

    /// Acknowledges one of the inbox's alerts with a note; not found for any other.
    func acknowledge(_ id: UUID, note: String?) async throws -> Shown {
        let audience = try await audience()
        guard let alert = try await AlertRecord.find(id, on: database), audience.includes(alert) else {
            throw AppError.notFound
        }
        let opened = try await service.acknowledge(alert, note: note, by: staff)
        try await AuditLog(database: database, services: services)
            .record(actor: staff, action: .alertAcknowledged, patients: [alert.$patient.id], target: "alert:\(id)")
        return try await shown([opened])[0]
    }

    private func shown(_ list: [AlertService.Opened]) async throws -> [Shown] {
        let studyIDs = Set(list.compactMap(\.record.studyID))
        let studies = try await StudyRecord.query(on: database).filter(\.$id ~~ Array(studyIDs)).all()
        let kinds = Dictionary(uniqueKeysWithValues: studies.compactMap { study in study.id.map { ($0, study.kind) } })
        let access = StudyAccess(database: database, services: services)
        var readable: [UUID: Bool] = [:]
        for studyID in studyIDs where kinds[studyID] == .research {
            let standing = try await access.standing(of: staff, in: studyID)
            readable[studyID] =
                standing.map { StudyAccessPolicy.allows($0, .readParticipantData, in: .research) } ?? false
        }
        let sharing = Set(
            try await PatientProfileRecord.query(on: database)
                .filter(\.$user.$id ~~ Array(Set(list.map { $0.record.$patient.id })))
                .filter(\.$shareWithResearch == true).all().map { $0.$user.id })
        let staffID = try staff.requireID()
        let withheld = services.localizer.text("alert.withheld", staff.language)
        let shown = list.map { opened in
            let record = opened.record
            let studyID = record.studyID
            let kind = studyID.flatMap { kinds[$0] }
            let detailed: Bool
            if kind == .research, let studyID {
                detailed = readable[studyID] == true && sharing.contains(record.$patient.id)
            } else {
                detailed = record.$recipient.id == staffID || record.$escalatedTo.id == staffID
            }
            var shown = opened
            if !detailed { shown.reason = withheld }
            let ownPatient = staff.role == .therapist && kind != .research && record.$recipient.id == staffID
            return Shown(opened: shown, detailed: detailed, ownPatient: ownPatient)
        }
        return try await Self.told(shown, viewer: staff, database: database, services: services)
    }
}

extension AlertInbox {
    /// Adds to alerts whose reason may be shown what happened in words, and to a therapist's own patients their name.
    static func told(_ alerts: [Shown], viewer: UserRecord, database: any Database, services: AppServices) async throws
        -> [Shown]
    {
        let wording = AlertWording(
            database: database, services: services, language: viewer.language, display: viewer.dateDisplay)
        let words = try await wording.tell(alerts.filter(\.detailed).map(\.opened.record))
        let own = Array(Set(alerts.filter(\.ownPatient).map { $0.opened.record.$patient.id }))
        var names: [UUID: String] = [:]
        if !own.isEmpty {
            for enrollment in try await EnrollmentRecord.query(on: database).filter(\.$patient.$id ~~ own)
                .filter(\.$therapist.$id == viewer.requireID()).with(\.$patient).all()
            {
                if let name = enrollment.displayName ?? enrollment.patient.name { names[enrollment.$patient.id] = name }
            }
        }
        return alerts.map { alert in
            var alert = alert
            if let id = alert.opened.record.id, alert.detailed { alert.told = words[id] }
            if alert.ownPatient { alert.patientName = names[alert.opened.record.$patient.id] }
            return alert
        }
    }
}
