import Fluent
import Foundation
import InterludeCore
import OpenAPIRuntime
import Testing
import VaporTesting

@testable import InterludeServer

/// Everyone the access rules are about, with data of a practice and of a research study: a therapist's two
/// patients who both take part in a researcher's study, one sharing with research and one not, and outsiders of
/// every role. Built through the API and the services real use goes through.
struct AccessWorld: Sendable {
    /// Who sends a request.
    enum Actor: String, CaseIterable, Sendable {
        /// Ada, acting on her own data.
        case patientSelf = "self"
        /// Another therapist's patient, acting on Ada's data.
        case otherPatient = "other"
        /// Ada's (and Ben's) therapist.
        case ownTherapist = "own"
        case otherTherapist = "otherT"
        /// The research study's owner, looking at Ada, who shares with research.
        case studyResearcher = "res"
        /// The same researcher, looking at Ben, who does not share with research.
        case studyResearcherNotSharing = "resNS"
        case otherResearcher = "otherR"
        case admin = "admin"
        /// Ada's former therapist, Dr. Early: the treatment ended a minute after the world was made (the cells act five minutes after), so what Ada had
        /// made by then is theirs to read, and nothing later.
        case endedTherapist = "endedT"
        /// Ada's therapist of before, Dr. Former: the treatment ended a day before Ada paired with her therapist of
        /// now, so nothing of that pairing is theirs to read.
        case pairedElsewhere = "elsewhereT"

        /// The actor whose expectation holds for this one where a row names none of its own: a former therapist is
        /// any other therapist but for the former client's chart.
        var standsFor: Actor? {
            switch self {
            case .endedTherapist, .pairedElsewhere: .otherTherapist
            default: nil
            }
        }
    }

    /// Which object a request is about: one of the practice, or one of the research study.
    enum Scope: String, CaseIterable, Sendable {
        case practice
        case research
    }

    /// A patient with an answered questionnaire, an intervention and an alert in each scope.
    struct Subject: Sendable {
        let id: UUID
        let email: String
        let client: APIClient
        let practicePrompt: String
        let practiceResponse: String
        let researchPrompt: String
        let researchResponse: String
        let practiceIntervention: String
        let researchIntervention: String
        let practiceAlert: String
        let researchAlert: String
        let appointment: String

        func prompt(_ scope: Scope) -> String { scope == .practice ? practicePrompt : researchPrompt }
        func response(_ scope: Scope) -> String { scope == .practice ? practiceResponse : researchResponse }
        func intervention(_ scope: Scope) -> String { scope == .practice ? practiceIntervention : researchIntervention }
        func alert(_ scope: Scope) -> String { scope == .practice ? practiceAlert : researchAlert }
    }

    let app: TestContext
    let ada: Subject
    let ben: Subject
    let other: (client: APIClient, id: UUID)
    let ownTherapist: APIClient
    let otherTherapist: APIClient
    let researcher: APIClient
    let otherResearcher: APIClient
    let admin: APIClient
    let endedTherapist: APIClient
    let formerTherapist: APIClient
    let practice: UUID
    let otherPractice: UUID
    let study: UUID
    let otherStudy: UUID
    let practiceRule: String
    let researchRule: String
    let practiceTemplate: String
    let researchTemplate: String
    let practicePlan: String
    let researchPlan: String
    let researchEnrollment: String

    static let practiceTemplateText = "PRACTICE-TEMPLATE-MARKER keep going"
    static let researchTemplateText = "RESEARCH-TEMPLATE-MARKER thank you"
    /// Ada's and Ben's date of birth, which nobody else in the world shares.
    static let birthDate = "1984-11-09"
    static let researchInterventionText = "RESEARCH-INTERVENTION-MARKER"
    static let practiceInterventionText = "PRACTICE-INTERVENTION-MARKER"
    static let emails: [Actor: String] = [
        .ownTherapist: "berger@praxis.example", .otherTherapist: "huber@praxis.example",
        .studyResearcher: "lab@uni.example",
        .studyResearcherNotSharing: "lab@uni.example", .otherResearcher: "other-lab@uni.example",
        .admin: "root@interlude.example",
        .endedTherapist: "early@praxis.example", .pairedElsewhere: "former@praxis.example",
    ]

    /// The patient a request of `actor` is about.
    func subject(_ actor: Actor) -> Subject { actor == .studyResearcherNotSharing ? ben : ada }

    func client(_ actor: Actor) -> APIClient {
        switch actor {
        case .patientSelf: ada.client
        case .otherPatient: other.client
        case .ownTherapist: ownTherapist
        case .otherTherapist: otherTherapist
        case .studyResearcher, .studyResearcherNotSharing: researcher
        case .otherResearcher: otherResearcher
        case .admin: admin
        case .endedTherapist: endedTherapist
        case .pairedElsewhere: formerTherapist
        }
    }

    func studyID(_ scope: Scope) -> UUID { scope == .practice ? practice : study }
    func rule(_ scope: Scope) -> String { scope == .practice ? practiceRule : researchRule }
    func template(_ scope: Scope) -> String { scope == .practice ? practiceTemplate : researchTemplate }
    func plan(_ scope: Scope) -> String { scope == .practice ? practicePlan : researchPlan }

    /// The consent a study shows now: rows that add consent versions move it on.
    func consent(_ scope: Scope) async throws -> (version: String, text: String) {
        let study = try #require(try await StudyRecord.find(studyID(scope), on: app.database))
        return (study.consentVersion, study.consentText)
    }

    static func build(_ app: TestContext) async throws -> AccessWorld {
        let iso = QuestionnaireAPITests.iso
        let (ownTherapist, ownTherapistID) = try await app.staff(
            "therapist", emails[.ownTherapist]!, name: "Dr. Berger")
        let (otherTherapist, otherTherapistID) = try await app.staff("therapist", emails[.otherTherapist]!)
        let (researcher, researcherID) = try await app.staff("researcher", emails[.studyResearcher]!)
        let (otherResearcher, _) = try await app.staff("researcher", emails[.otherResearcher]!)
        let (admin, _) = try await app.staff("admin", emails[.admin]!)
        let practice = try #require(
            try await StudyRecord.query(on: app.database).filter(\.$owner.$id == ownTherapistID).first()?.id)
        let otherPractice = try #require(
            try await StudyRecord.query(on: app.database).filter(\.$owner.$id == otherTherapistID).first()?.id)
        let study = try #require(
            UUID(uuidString: try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))))
        let otherStudy = try #require(
            UUID(uuidString: try await StudyAPITests().createStudy(otherResearcher, StudyAPITests.study("open"))))
        let owner = try #require(try await UserRecord.find(researcherID, on: app.database))
        let therapistUser = try #require(try await UserRecord.find(ownTherapistID, on: app.database))
        let access = StudyAccess(database: app.database, services: app.app.interlude)
        let researchGrant = try await access.require(.editLibrary, in: study, by: owner)
        let practiceGrant = try await access.require(.editLibrary, in: practice, by: therapistUser)
        let library = InterventionLibrary(database: app.database, services: app.app.interlude)
        try await library.addTemplate(
            InterventionTemplateDraft(kind: .commendation, texts: .init(en: practiceTemplateText)), in: practiceGrant)
        try await library.addTemplate(
            InterventionTemplateDraft(kind: .commendation, texts: .init(en: researchTemplateText)), in: researchGrant)
        let templates = try await InterventionTemplateRecord.query(on: app.database).all()
        let practiceTemplate = try #require(templates.first { $0.text == practiceTemplateText }?.id?.uuidString)
        let researchTemplate = try #require(templates.first { $0.text == researchTemplateText }?.id?.uuidString)

        // Each study's own rule answers a PHQ-9 with an intervention; the built-in rule raises the alert.
        func addRule(_ client: APIClient, _ studyID: UUID, text: String) async throws -> String {
            let reply = try await client.send(
                .POST, "/studies/\(studyID)/rules",
                json: [
                    "name": "Reply to PHQ-9",
                    "trigger": [
                        "kind": "submitted", "instrumentKey": "phq-9", "condition": ["mode": "all", "clauses": []],
                    ],
                    "action": ["kind": "intervention", "interventionKind": "question", "text": .string(text)],
                ])
            try #require(reply.status == .created, "\(reply.text)")
            return try #require(reply.body["id"].string)
        }
        let practiceRule = try await addRule(ownTherapist, practice, text: practiceInterventionText)
        let researchRule = try await addRule(researcher, study, text: researchInterventionText)
        func addPlan(_ client: APIClient, _ studyID: UUID, instrument: String, pattern: String) async throws -> String {
            let reply = try await client.send(
                .POST, "/studies/\(studyID)/plans",
                json: [
                    "instrumentKey": .string(instrument), "durationMinutes": 10080,
                    "pattern": ["kind": .string(pattern)],
                ])
            try #require(reply.status == .created, "\(reply.text)")
            return try #require(reply.body["id"].string)
        }
        let researchPlan = try await addPlan(researcher, study, instrument: "phq-9", pattern: "once")

        func subject(_ email: String, name: String, sharing: Bool) async throws -> Subject {
            let (client, id) = try await app.patient(email, name: name, shareWithResearch: sharing)
            try await app.pair(client, with: ownTherapist, born: Self.birthDate)
            let joined = try await client.send(
                .POST, "/studies/\(study)/enrollment", json: ["consentVersion": "2026-1"])
            try #require(joined.status == .created, "\(joined.text)")
            let researchPrompt = try #require(
                try await PromptRecord.query(on: app.database).filter(\.$patient.$id == id).filter(
                    \.$study.$id == study
                )
                .first()?.id?.uuidString)
            let assigned = try await ownTherapist.send(
                .POST, "/patients/\(id)/prompts",
                json: [
                    "instrumentKey": "phq-9", "opensAt": iso(app.clock.now),
                    "closesAt": iso(app.clock.now.addingTimeInterval(7 * 86_400)),
                ])
            let practicePrompt = try #require(assigned.body["id"].string)
            func answer(_ promptID: String) async throws -> String {
                let reply = try await client.send(
                    .POST, "/me/responses",
                    json: [
                        "id": .string(UUID().uuidString), "promptId": .string(promptID), "instrumentKey": "phq-9",
                        "version": 1,
                        "answers": QuestionnaireAPITests.phqAnswers([1, 1, 1, 1, 1, 1, 1, 1, 1]),
                        "completedAt": iso(app.clock.now),
                    ])
                try #require(reply.status == .created, "\(reply.text)")
                return try #require(reply.body["id"].string)
            }
            let practiceResponse = try await answer(practicePrompt)
            let researchResponse = try await answer(researchPrompt)
            let interventions = try await InterventionRecord.query(on: app.database).filter(\.$patient.$id == id).all()
            let alerts = try await AlertRecord.query(on: app.database).filter(\.$patient.$id == id).all()
            let appointment = try await client.send(
                .POST, "/me/appointments",
                json: [
                    "title": "Session", "startsAt": iso(app.clock.now.addingTimeInterval(3 * 86_400)),
                    "endsAt": iso(app.clock.now.addingTimeInterval(3 * 86_400 + 3000)),
                ])
            try #require(appointment.status == .created, "\(appointment.text)")
            return Subject(
                id: id, email: email, client: client, practicePrompt: practicePrompt,
                practiceResponse: practiceResponse,
                researchPrompt: researchPrompt, researchResponse: researchResponse,
                practiceIntervention: try #require(
                    interventions.first { $0.$study.id == practice }?.id?.uuidString.lowercased()),
                researchIntervention: try #require(
                    interventions.first { $0.$study.id == study }?.id?.uuidString.lowercased()),
                practiceAlert: try #require(alerts.first { $0.studyID == practice }?.id?.uuidString.lowercased()),
                researchAlert: try #require(alerts.first { $0.studyID == study }?.id?.uuidString.lowercased()),
                appointment: try #require(appointment.body["id"].string))
        }
        let ada = try await subject("ada@example.org", name: "Ada Lovelace", sharing: true)
        let ben = try await subject("ben@example.org", name: "Ben Sharp", sharing: false)
        let practicePlan = try await addPlan(ownTherapist, practice, instrument: "mood-vas", pattern: "onDemand")
        let (otherClient, otherID) = try await app.patient("cleo@example.org", name: "Cleo Other")
        try await app.pair(otherClient, with: otherTherapist)
        let enrollment = try #require(
            try await EnrollmentRecord.query(on: app.database).filter(\.$patient.$id == ada.id).filter(
                \.$study.$id == study
            )
            .first()?.id?.uuidString)
        // Ada's treatments of before, in the therapists' own practices: Dr. Early's ended a minute after everything
        // above was made, Dr. Former's a day before. Whatever the cells make comes later still.
        let (endedTherapist, endedID) = try await app.staff("therapist", emails[.endedTherapist]!, name: "Dr. Early")
        let (formerTherapist, formerID) = try await app.staff(
            "therapist", emails[.pairedElsewhere]!, name: "Dr. Former")
        for (therapistID, end) in [
            (endedID, app.clock.now.addingTimeInterval(60)), (formerID, app.clock.now.addingTimeInterval(-86_400)),
        ] {
            let practice = try #require(
                try await StudyRecord.query(on: app.database).filter(\.$owner.$id == therapistID).first()?.id)
            let treatment = EnrollmentRecord(
                studyID: practice, patientID: ada.id, therapistID: therapistID, status: .ended,
                consentVersion: StaffAccounts.practiceConsent, now: end.addingTimeInterval(-30 * 86_400))
            treatment.startedAt = treatment.createdAt
            treatment.endedAt = end
            treatment.updatedAt = end
            try await treatment.create(on: app.database)
        }
        app.clock.advance(by: 300)
        return AccessWorld(
            app: app, ada: ada, ben: ben, other: (otherClient, otherID), ownTherapist: ownTherapist,
            otherTherapist: otherTherapist, researcher: researcher, otherResearcher: otherResearcher, admin: admin,
            endedTherapist: endedTherapist, formerTherapist: formerTherapist,
            practice: practice, otherPractice: otherPractice, study: study, otherStudy: otherStudy,
            practiceRule: practiceRule, researchRule: researchRule, practiceTemplate: practiceTemplate,
            researchTemplate: researchTemplate, practicePlan: practicePlan, researchPlan: researchPlan,
            researchEnrollment: enrollment)
    }

    /// What may never appear in an answer to `actor`, whatever they asked: another scope's data.
    func forbidden(for actor: Actor) -> [String] {
        func research(_ subject: Subject) -> [String] {
            [subject.researchResponse, subject.researchPrompt, subject.researchIntervention, subject.researchAlert]
        }
        func practice(_ subject: Subject) -> [String] {
            [subject.practiceResponse, subject.practicePrompt, subject.practiceIntervention, subject.practiceAlert]
        }
        let identities = [ada.email, ben.email, "Ada Lovelace", "Ben Sharp", Self.birthDate]
        let researchOnly = research(ada) + research(ben) + [Self.researchTemplateText, Self.researchInterventionText]
        let practiceOnly = practice(ada) + practice(ben) + [Self.practiceTemplateText, Self.practiceInterventionText]
        switch actor {
        case .patientSelf:
            return research(ben) + practice(ben) + [ben.email, "cleo@example.org"]
        case .otherPatient:
            return researchOnly + practiceOnly + identities
        case .ownTherapist:
            return researchOnly + [study.uuidString, study.uuidString.lowercased()]
        case .otherTherapist:
            return researchOnly + practiceOnly + identities
        case .studyResearcher, .studyResearcherNotSharing:
            return practiceOnly + identities + [ben.researchResponse, ben.researchPrompt, ben.researchIntervention]
        case .otherResearcher:
            return researchOnly + practiceOnly + identities
        case .admin:
            // An administrator manages the research study (its rules and templates) but reads nobody's data.
            return research(ada) + research(ben) + practiceOnly + identities
        case .endedTherapist:
            // Ada's name and what she kept before the end, yes; the studies' data, Ben, and what the cells make, no.
            return researchOnly + practiceOnly + [ben.email, "Ben Sharp"] + Self.madeByCells
        case .pairedElsewhere:
            return researchOnly + practiceOnly + [ben.email, "Ben Sharp", ada.appointment] + Self.madeByCells
        }
    }
}

/// Fresh objects for the cells of the access matrix that change or remove what they act on, so that no cell
/// depends on the ones before it.
extension AccessWorld {
    static let otherEmail = "cleo@example.org"

    /// The address `actor` signs in with.
    func email(_ actor: Actor) -> String {
        switch actor {
        case .patientSelf: ada.email
        case .otherPatient: Self.otherEmail
        default: Self.emails[actor]!
        }
    }

    /// Who runs the study of `scope`: the therapist of the practice, the owner of the research study.
    func owner(_ scope: Scope) -> APIClient { scope == .practice ? ownTherapist : researcher }

    /// Words of the records the cells make for Ada, all after every former treatment ended.
    static let madeByCells = ["Slept badly", "Ringing after", "Nobody wants me here"]

    /// A new account of the same role as `actor`, signed in: for cells whose request ends or changes the account.
    func freshAccount(like actor: Actor) async throws -> APIClient {
        // The random part sits inside, so it never ends in a world person's name (`…ada@example.org`).
        let email = "fresh-\(UUID().uuidString.prefix(8).lowercased())-account@example.org"
        switch actor {
        case .patientSelf, .otherPatient: return try await app.patient(email, name: "Fresh").client
        case .ownTherapist, .otherTherapist, .endedTherapist, .pairedElsewhere:
            return try await app.staff("therapist", email).client
        case .studyResearcher, .studyResearcherNotSharing, .otherResearcher:
            return try await app.staff("researcher", email).client
        case .admin: return try await app.staff("admin", email).client
        }
    }

    /// A treatment of Ada's with a therapist of her own that ended before the world was made: its id.
    func freshEndedTreatment() async throws -> String {
        let (_, therapistID) = try await app.staff(
            "therapist", "ended-\(UUID().uuidString.prefix(8).lowercased())-therapist@praxis.example")
        let practice = try #require(
            try await StudyRecord.query(on: app.database).filter(\.$owner.$id == therapistID).first()?.id)
        let end = app.clock.now.addingTimeInterval(-7 * 86_400)
        let treatment = EnrollmentRecord(
            studyID: practice, patientID: ada.id, therapistID: therapistID, status: .ended,
            consentVersion: StaffAccounts.practiceConsent, now: end.addingTimeInterval(-30 * 86_400))
        treatment.startedAt = treatment.createdAt
        treatment.endedAt = end
        try await treatment.create(on: app.database)
        return try treatment.requireID().uuidString
    }

    /// A note the own therapist pinned to the patient's chart.
    func freshNote(on patient: Subject) async throws -> String {
        let reply = try await ownTherapist.send(
            .POST, "/patients/\(patient.id)/notes", json: ["day": "2026-03-02", "text": "Holiday"])
        try #require(reply.status == .created, "\(reply.text)")
        return try #require(reply.body["id"].string)
    }

    /// A session Ada's therapist booked for her, and with `requested` her request to cancel it (version 2): its id.
    func freshSession(requested: Bool = false) async throws -> String {
        let start = app.clock.now.addingTimeInterval(8 * 86_400)
        let booked = try await ownTherapist.send(
            .POST, "/patients/\(ada.id)/appointments",
            json: [
                "title": "Session", "startsAt": QuestionnaireAPITests.iso(start),
                "endsAt": QuestionnaireAPITests.iso(start.addingTimeInterval(3000)),
            ])
        try #require(booked.status == .created, "\(booked.text)")
        let id = try #require(booked.body["id"].string)
        if requested {
            let asked = try await ada.client.send(.PUT, "/me/appointments/\(id)/request", json: ["kind": "cancel"])
            try #require(asked.status == .ok, "\(asked.text)")
        }
        return id
    }

    func freshPlan(_ scope: Scope) async throws -> String {
        let reply = try await owner(scope).send(
            .POST, "/studies/\(studyID(scope))/plans",
            json: ["instrumentKey": "mood-vas", "durationMinutes": 60, "pattern": ["kind": "onDemand"]])
        try #require(reply.status == .created, "\(reply.text)")
        return try #require(reply.body["id"].string)
    }

    func freshRule(_ scope: Scope) async throws -> String {
        let reply = try await owner(scope).send(.POST, "/studies/\(studyID(scope))/rules", json: Self.ruleBody)
        try #require(reply.status == .created, "\(reply.text)")
        return try #require(reply.body["id"].string)
    }

    /// The study of `scope` with micro-randomised decision points, set by its owner.
    func decisionPlan(_ scope: Scope) async throws {
        let reply = try await owner(scope).send(
            .PUT, "/studies/\(studyID(scope))/decision-plan", json: Self.decisionPlanBody)
        try #require(reply.status == .ok, "\(reply.text)")
    }

    static let decisionPlanBody: JSONValue = [
        "times": ["09:00", "18:00"], "probability": 0.5, "outcomeMinutes": 60,
        "options": [["kind": "message", "texts": ["en": "Take a breath."]]],
    ]

    static let ruleBody: JSONValue = [
        "name": "Mood check",
        "trigger": ["kind": "submitted", "instrumentKey": "mood-vas", "condition": ["mode": "all", "clauses": []]],
        "action": ["kind": "intervention", "interventionKind": "question", "text": "How was today?"],
    ]

    /// A request of a new patient to join the study of `scope`, waiting for a decision.
    /// A researcher on the research study's team (for the practice: a researcher on no team), for changing and
    /// removing.
    func freshTeamMember(_ scope: Scope) async throws -> UUID {
        let (_, id) = try await app.staff(
            "researcher", "team-\(UUID().uuidString.prefix(8).lowercased())-member@uni.example")
        if scope == .research {
            try await StudyStaffRecord(studyID: study, userID: id, role: .researcher).create(on: app.database)
        }
        return id
    }

    func pendingEnrollment(_ scope: Scope) async throws -> String {
        let patient = try await app.patient(
            "pending-\(UUID().uuidString.prefix(8).lowercased())-account@example.org", name: "Pending")
        let record = EnrollmentRecord(
            studyID: studyID(scope), patientID: patient.id, therapistID: nil, status: EnrollmentStatus.requested,
            consentVersion: "2026-1",
            now: app.clock.now)
        try await record.save(on: app.database)
        return try record.requireID().uuidString
    }

    /// A practice prompt of Ada's, open now and unanswered.
    func freshPrompt() async throws -> String {
        let reply = try await ownTherapist.send(
            .POST, "/patients/\(ada.id)/prompts",
            json: [
                "instrumentKey": "mood-vas", "opensAt": QuestionnaireAPITests.iso(app.clock.now),
                "closesAt": QuestionnaireAPITests.iso(app.clock.now.addingTimeInterval(86_400)),
            ])
        try #require(reply.status == .created, "\(reply.text)")
        return try #require(reply.body["id"].string)
    }

    /// A health event of Ada's, stored through the service the API uses.
    func freshEvent() async throws -> String {
        try await freshRecord(
            HealthEvent(
                title: "Loud concert", occurredAt: app.clock.now, type: "tinnitusAttack", description: "Ringing after"))
    }

    /// A therapy of Ada's, stored through the service the API uses.
    func freshTherapy() async throws -> String {
        try await freshRecord(
            Therapy(
                name: "Hearing aid", kind: .hearingAid, startDate: LocalDate("2026-01-10")!, endDate: nil, note: nil))
    }

    /// An audiogram of the patient's (Ada's unless named), stored through the service the API uses.
    func freshAudiogram(of patientID: UUID? = nil) async throws -> String {
        let audiogram = Audiogram(
            measuredAt: app.clock.now,
            points: [
                .init(ear: .right, frequencyHz: 1000, thresholdDbHL: 25),
                .init(ear: .left, frequencyHz: 1000, thresholdDbHL: 30),
            ])
        return try await freshRecord(audiogram, of: patientID ?? ada.id)
    }

    /// A mood report of Ada's, stored through the service the API uses.
    func freshMood() async throws -> String {
        try await freshRecord(Mood(valence: 0.4, recordedAt: app.clock.now, note: "Slept badly"))
    }

    /// A thought of Ada's with one occurrence, recorded through the service the API uses: the ids of both.
    func freshThought() async throws -> (thought: String, occurrence: String) {
        let service = ThoughtService(database: app.database, services: app.app.interlude)
        let patient = try #require(try await UserRecord.find(ada.id, on: app.database))
        let fields = ThoughtOccurrence.Fields(
            recordedAt: app.clock.now, ratingBefore: -0.7, ratingAfter: -0.2, location: nil, note: nil)
        let recorded = try await service.record(
            "Nobody wants me here \(UUID())", fields, id: UUID(), thoughtID: nil, by: patient)
        return (
            try recorded.thought.record.requireID().uuidString, try recorded.occurrence.record.requireID().uuidString
        )
    }

    /// Ada's practice, sending three messages a day that its participants may choose fewer of.
    func choosableMessagePlan() async throws -> UUID {
        try await MessagePlanRecord.query(on: app.database).filter(\.$study.$id == practice).delete()
        try await MessagePlanRecord(
            studyID: practice,
            definition: #"{"perDay":3,"windowStart":"09:00","windowEnd":"21:00","personChooses":true}"#,
            now: app.clock.now
        ).create(on: app.database)
        return practice
    }

    /// An import of Ada's, its first four bytes received of eight.
    func freshHealthImport() async throws -> String {
        let service = HealthImportService(database: app.database, services: app.app.interlude)
        let record = try await service.start(.csv, size: 8, body: HTTPBody("type"), by: ada.id)
        return try record.requireID().uuidString
    }

    private func freshRecord<Content: RecordContent>(_ content: Content, of patientID: UUID? = nil) async throws
        -> String
    {
        let user = try #require(try await UserRecord.find(patientID ?? ada.id, on: app.database))
        let id = UUID()
        _ = try await RecordService(database: app.database, services: app.app.interlude).create(
            content, id: id, by: user)
        return id.uuidString
    }

    /// A new patient who joined the research study, or was paired into the practice.
    func freshParticipant(_ scope: Scope) async throws -> APIClient {
        let client = try await freshAccount(like: .patientSelf)
        if scope == .practice {
            try await app.pair(client, with: ownTherapist)
        } else {
            let version = try await consent(scope).version
            let joined = try await client.send(
                .POST, "/studies/\(study)/enrollment", json: ["consentVersion": .string(version)])
            try #require(joined.status == .created, "\(joined.text)")
        }
        return client
    }
}

/// Exports and access tokens for the cells that read or revoke them.
extension AccessWorld {
    /// A finished export of the study of `scope`, its zip on disk.
    func readyExport(_ scope: Scope) async throws -> String {
        let export = ExportRecord(studyID: studyID(scope), requestedBy: ada.id, since: nil, now: app.clock.now)
        export.status = .ready
        export.progress = 100
        export.size = 4
        try await export.create(on: app.database)
        let written = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString).zip")
        try Data("PK\u{5}\u{6}".utf8).write(to: written)
        try await app.app.interlude.files(on: app.database).put(.export(try export.requireID()), from: written)
        return try export.requireID().uuidString
    }

    /// A token of `actor`'s own, to revoke.
    func freshToken(of actor: Actor) async throws -> String {
        let user = try #require(try await UserRecord.query(on: app.database).filter(\.$email == email(actor)).first())
        let token = try AccessTokenRecord(
            userID: try user.requireID(), name: "script", scope: .exportsRead, studyIDs: [study],
            tokenHash: UUID().uuidString,
            expiresAt: app.clock.now.addingTimeInterval(86_400), now: app.clock.now)
        try await token.create(on: app.database)
        return try token.requireID().uuidString
    }
}
