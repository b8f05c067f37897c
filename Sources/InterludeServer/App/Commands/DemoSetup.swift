import Fluent
import Foundation
import InterludeCore
import Logging

/// Working demonstrations of the two schedules Interlude grew from: a demo therapist with a paired demo patient
/// in Vienna and the plans of the chosen template, created through the same services the API uses.
struct DemoSetup: Sendable {
    enum Template: String, CaseIterable, Sendable {
        /// Between therapy sessions: the Intersession-Daily three times a day, the ISF-K before each session.
        case intersession
        /// A research study: a one-time questionnaire first, then daily, weekly and monthly ones.
        case trackYourStress = "track-your-stress"
        /// A personal health record: events, therapies and audiograms with the tinnitus questionnaires.
        case tinnitusNavigator = "tinnitus-navigator"
        /// Mood reports with the samples a phone and watch take, each type enabled by the participant.
        case anima
        /// Acceptance and Commitment Therapy: thoughts rated around the defusion exercise, reinforcement messages.
        case iact
        /// Seed 000's clinic comparison: two clinics admitting patients to an app and a control arm in cycles.
        case intersessionTrial = "intersession-trial"
    }

    /// A demo account and its password, for the one line printed per account.
    struct Account: Sendable, Equatable {
        let role: Role
        let email: String
        let password: String

        var line: String { "\(role.rawValue): \(email) \(password)" }
    }

    static let timeZone = "Europe/Vienna"

    let database: any Database
    let services: AppServices
    let logger: Logger

    var now: Date { services.clock.now }

    func create(_ template: Template) async throws -> [Account] {
        let suffix = String(UUID().uuidString.prefix(6)).lowercased()
        switch template {
        case .intersession:
            let pair = try await demoPair(suffix)
            try await planIntersession(therapist: pair.therapist)
            try await scheduleSessions(of: pair.patient, with: pair.therapist, onDays: [3, 10])
            return pair.accounts
        case .trackYourStress:
            let pair = try await demoPair(suffix)
            let (researcher, researcherAccount) = try await demoResearcher(suffix)
            try await planTrackYourStress(researcher: researcher, patient: pair.patient)
            return pair.accounts + [researcherAccount]
        case .tinnitusNavigator:
            let pair = try await demoPair(suffix)
            let (researcher, researcherAccount) = try await demoResearcher(suffix)
            try await planTinnitusNavigator(researcher: researcher, patient: pair.patient)
            try await recordTinnitusHistory(of: pair.patient)
            return pair.accounts + [researcherAccount]
        case .anima:
            let pair = try await demoPair(suffix)
            let (researcher, researcherAccount) = try await demoResearcher(suffix)
            try await planAnima(researcher: researcher, patient: pair.patient)
            try await recordAnimaMonth(of: pair.patient)
            return pair.accounts + [researcherAccount]
        case .iact:
            let pair = try await demoPair(suffix)
            try await planIACT(therapist: pair.therapist)
            try await recordIACTWeeks(of: pair.patient, therapist: pair.therapist)
            return pair.accounts
        case .intersessionTrial:
            // The trial's people come with a month of history, written by a clock of its own.
            return try await createIntersessionTrial(suffix: suffix)
        }
    }

    /// A demo therapist and a demo patient paired with them, and their accounts.
    private func demoPair(_ suffix: String) async throws -> (
        therapist: UserRecord, patient: UserRecord, accounts: [Account]
    ) {
        let (therapist, therapistAccount) = try await staff(
            .therapist, email: "demo-therapist-\(suffix)@example.org", name: "Dr. Demo Therapist")
        let (patient, patientAccount) = try await pairedPatient(
            email: "demo-patient-\(suffix)@example.org", therapist: therapist)
        return (therapist, patient, [therapistAccount, patientAccount])
    }

    private func demoResearcher(_ suffix: String) async throws -> (UserRecord, Account) {
        try await staff(.researcher, email: "demo-researcher-\(suffix)@example.org", name: "Demo Study Leader")
    }

    func staff(_ role: Role, email: String, name: String) async throws -> (UserRecord, Account) {
        let password = StaffAccounts.generatePassword()
        let created = try await StaffAccounts(database: database, services: services).create(
            email: email, role: role.rawValue, name: name, password: password, forceChange: false, by: nil)
        return (created.user, Account(role: role, email: email, password: password))
    }

    /// A verified patient in Vienna who redeemed a code of the therapist, as the app would.
    func pairedPatient(email: String, name: String = "Demo Patient", therapist: UserRecord) async throws -> (
        UserRecord, Account
    ) {
        let (patient, account) = try await registeredPatient(email: email, name: name)
        let pairing = PairingService(database: database, services: services)
        let code = try await pairing.createCodes(therapist: therapist, note: "Demo", count: 1)[0]
        let today = LocalDate(now, in: TimeZone(identifier: Self.timeZone)!)
        let request = try PairingRequest.validate(
            code: code.code, dateOfBirth: "1990-05-17", gender: Gender.female.rawValue, today: today)
        _ = try await pairing.redeem(patient: patient, request: request, client: .client("demo"))
        return (patient, account)
    }

    /// A verified person in Vienna who registered in the app and shares with research.
    func registeredPatient(email: String, name: String) async throws -> (UserRecord, Account) {
        let password = StaffAccounts.generatePassword()
        let policy = try await SiteTexts(database: database).privacyPolicyVersion()
        let registration = try Registration.validate(
            email: email, password: password, privacyPolicyVersion: policy, currentPrivacyPolicyVersion: policy,
            shareWithResearch: true, locale: Language.fallback.rawValue, timeZone: Self.timeZone, name: name)
        let patient = try await AccountService(database: database, services: services, logger: logger)
            .createPatient(registration, verification: nil)
        return (patient, Account(role: .patient, email: email, password: password))
    }

    /// Seed 000: the Daily once in each of three windows, open 30 minutes; the ISF-K from 24 hours before each
    /// session until it starts; the therapist's profile with an emergency number, two intervention templates and a
    /// rule for three missed Dailies.
    func planIntersession(therapist: UserRecord) async throws {
        let therapistID = try therapist.requireID()
        let practiceID = try await PairingService(database: database, services: services).practice(of: therapistID)
            .requireID()
        _ = try await TherapistProfiles(database: database).update(
            therapistID: therapistID, fullName: "Dr. Demo Therapist", gender: nil,
            officeAddress: "Praxis am Ring 1, 1010 Wien", phone: "+43 1 000 00 00", emergencyNumber: "+43 1 000 00 99")
        let practice = try await StudyAccess(database: database, services: services).require(
            .editLibrary, in: practiceID, by: therapist)
        let library = InterventionLibrary(database: database, services: services)
        try await library.addTemplate(
            InterventionTemplateDraft(
                kind: .commendation,
                texts: LocalizedText(
                    en: "You kept at it this week. Well done.", de: "Sie sind diese Woche drangeblieben. Gut gemacht.")),
            in: practice)
        try await library.addTemplate(
            InterventionTemplateDraft(
                kind: .task,
                texts: LocalizedText(
                    en: "Before our next session, note one moment you thought of therapy and how you felt.",
                    de:
                        "Notieren Sie bis zu unserer nächsten Sitzung einen Moment, in dem Sie an die Therapie gedacht haben, und wie Sie sich fühlten."
                )),
            in: practice)
        _ = try await RuleService(database: database, services: services).add(
            StudyRule(
                name: "Three Dailies missed", trigger: .missedInARow(count: 3, instrumentKey: "intersession-daily"),
                action: .alert(priority: .normal, message: "Three Dailies in a row went unanswered.")),
            in: practice)
        let schedules = ScheduleService(database: database, services: services)
        let daily = SchedulePlan.intersessionDaily(
            reminderMinutes: [15],
            notification: LocalizedText([.en: "How are you right now?", .de: "Wie geht es Ihnen gerade?"]))
        _ = try await schedules.create(daily, in: practice, patientID: nil, arm: nil)
        let beforeSession = SchedulePlan(
            instrumentKey: "isf-k", pattern: .appointment(opensBeforeMinutes: 24 * 60, closesAfterStartMinutes: 0),
            durationMinutes: 24 * 60, reminderMinutes: [12 * 60],
            notification: LocalizedText([
                .en: "Your next session is tomorrow: a few questions to prepare it.",
                .de: "Morgen ist Ihre nächste Sitzung: einige Fragen zur Vorbereitung.",
            ]))
        _ = try await schedules.create(beforeSession, in: practice, patientID: nil, arm: nil)
    }

    /// Fifty-minute sessions at 10:00 on the days `offsets` from today, as the therapist enters them.
    func scheduleSessions(of patient: UserRecord, with therapist: UserRecord, onDays offsets: [Int]) async throws {
        let zone = patient.zone
        let today = LocalDate(now, in: zone)
        for offset in offsets {
            let start = LocalDateTime(date: today.adding(days: offset), time: LocalTime("10:00")!).instant(in: zone)
            _ = try await AppointmentService(database: database, services: services).create(
                for: patient, by: therapist, title: "Therapy session", startsAt: start,
                endsAt: start.addingTimeInterval(50 * 60), comment: nil, tell: false)
        }
    }

    /// Seed 001: a study whose one-time questionnaire comes first; the daily one three times inside per-weekday
    /// windows that participants may change; a weekly one on Sunday evening and a monthly one on the first.
    func planTrackYourStress(researcher: UserRecord, patient: UserRecord) async throws {
        let draft = try StudyDraft.validate(
            title: [.en: "Track Your Stress", .de: "Stress im Blick"],
            description: [
                .en: "How stressed are you, and when? A few questions a day.",
                .de: "Wie gestresst sind Sie, und wann? Ein paar Fragen am Tag.",
            ],
            consentText: [
                .en: "I take part voluntarily and may leave at any time. My answers are stored under a pseudonym.",
                .de:
                    "Ich nehme freiwillig teil und kann jederzeit aufhören. Meine Antworten werden unter einem Pseudonym gespeichert.",
            ],
            consentVersion: "1", joinMode: JoinMode.open.rawValue, joinPassword: nil,
            status: StudyStatus.running.rawValue)
        let studies = StudyService(database: database, services: services)
        let study = try await studies.create(by: researcher, draft: draft)
        let studyID = try study.requireID()
        let grant = try await StudyAccess(database: database, services: services).require(
            .editPlans, in: studyID, by: researcher)
        let schedules = ScheduleService(database: database, services: services)
        let weekdayWindow = [TimeWindow(start: LocalTime("08:00")!, end: LocalTime("20:00")!, count: 3)]
        let weekendWindow = [TimeWindow(start: LocalTime("10:00")!, end: LocalTime("21:00")!, count: 2)]
        var days: [Weekday: [TimeWindow]] = [:]
        for weekday in Weekday.allCases {
            days[weekday] = weekday == .saturday || weekday == .sunday ? weekendWindow : weekdayWindow
        }
        // Weekly and monthly questionnaires come once; participants may move only their time of day.
        let onlyTheTime = AdjustmentBounds(
            earliest: LocalTime("07:00")!, latest: LocalTime("22:00")!, minCount: 1, maxCount: 1)
        let plans = [
            SchedulePlan(instrumentKey: "tys-baseline", pattern: .once, durationMinutes: 7 * 24 * 60),
            SchedulePlan(
                instrumentKey: "tys-daily", pattern: .randomWindows(days: days), durationMinutes: 60,
                reminderMinutes: [30],
                adjustment: AdjustmentBounds(
                    earliest: LocalTime("07:00")!, latest: LocalTime("22:00")!, minCount: 1, maxCount: 6)),
            SchedulePlan(
                instrumentKey: "tys-weekly", pattern: .weekly(weekday: .sunday, time: LocalTime("18:00")!),
                durationMinutes: 24 * 60, reminderMinutes: [3 * 60], adjustment: onlyTheTime),
            SchedulePlan(
                instrumentKey: "tys-monthly", pattern: .monthly(day: 1, time: LocalTime("18:00")!),
                durationMinutes: 3 * 24 * 60, reminderMinutes: [24 * 60], adjustment: onlyTheTime),
        ]
        for plan in plans {
            _ = try await schedules.create(plan, in: grant, patientID: nil, arm: nil)
        }
        _ = try await studies.join(patient: patient, studyID: studyID, consentVersion: "1", password: nil)
    }
}
