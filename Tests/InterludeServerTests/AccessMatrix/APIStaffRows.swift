import Foundation
import NIOHTTP1
import Testing

/// The operations of staff: studies, instruments, a patient's chart, plans, rules, interventions and alerts.
/// Outsiders to a study or a patient learn nothing (404); members lacking the permission, and patients, are
/// refused (403).
extension APIRow {
    private static func iso(_ date: Date) -> JSONValue { QuestionnaireAPITests.iso(date) }

    static let studies: [APIRow] = [
        APIRow("listStudies", "* 200") { _ in .init(.GET, "/studies") },
        APIRow("createStudy", "* 403, res 201, resNS 201, otherR 201, admin 201") { _ in
            .init(.POST, "/studies", json: StudyAPITests.study("open"))
        },
        APIRow(
            "getStudy", scoped: true,
            "* 404, self 200, other@research 200, own@practice 200, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            .init(.GET, "/studies/\(cell.studyID)")
        },
        APIRow(
            "updateStudy", scoped: true,
            "* 404, self 403, other 403, own 403, otherT 403, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            let consent = try await cell.world.consent(cell.scope)
            return .init(
                .PUT, "/studies/\(cell.studyID)",
                json: StudyAPITests.study("open").merging([
                    "consentVersion": .string(consent.version), "consentText": .string(consent.text),
                ]))
        },
        APIRow(
            "setStudyArms", scoped: true,
            "* 404, self 403, other 403, own@practice 200, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            .init(.PUT, "/studies/\(cell.studyID)/arms", json: ["arms": ["a", "b"], "allocation": "alternating"])
        },
        APIRow(
            "joinStudy", scoped: true,
            "* 403, self@practice 404, other@practice 404, self@research 201, other@research 201"
        ) { cell in
            let patient =
                [.patientSelf, .otherPatient].contains(cell.actor)
                ? try await cell.world.freshAccount(like: cell.actor) : nil
            let version = try await cell.world.consent(cell.scope).version
            return .init(
                .POST, "/studies/\(cell.studyID)/enrollment", json: ["consentVersion": .string(version)], as: patient)
        },
        APIRow(
            "listConsentVersions", scoped: true,
            "* 404, self 403, other 403, own@practice 200, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            .init(.GET, "/studies/\(cell.studyID)/consent-versions")
        },
        APIRow(
            "createConsentVersion", scoped: true,
            "* 404, self 403, other 403, own 403, otherT 403, res@research 201, resNS@research 201, admin@research 201"
        ) { cell in
            .init(
                .POST, "/studies/\(cell.studyID)/consent-versions",
                json: [
                    "version": .string("v-\(UUID().uuidString.prefix(8))"), "texts": ["en": "I agree to take part."],
                    "modules": ["context"],
                ])
        },
        APIRow("leaveStudy", scoped: true, "* 403, self 204, other 204") { cell in
            let patient =
                [.patientSelf, .otherPatient].contains(cell.actor)
                ? try await cell.world.freshParticipant(cell.scope) : nil
            return .init(.DELETE, "/studies/\(cell.studyID)/enrollment", as: patient)
        },
        APIRow(
            "listEnrollments", scoped: true,
            "* 404, self 403, other 403, own@practice 200, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            .init(.GET, "/studies/\(cell.studyID)/enrollments")
        },
        APIRow(
            "decideEnrollment", scoped: true,
            "* 404, self 403, other 403, own@practice 403, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            let enrollment = try await cell.world.pendingEnrollment(cell.scope)
            return .init(.POST, "/studies/\(cell.studyID)/enrollments/\(enrollment)/decision", json: ["approve": false])
        },
        APIRow(
            "listStudyStaff", scoped: true,
            "* 404, self 403, other 403, own@practice 403, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            .init(.GET, "/studies/\(cell.studyID)/staff")
        },
        APIRow(
            "addStudyStaff", scoped: true,
            "* 404, self 403, other 403, own@practice 403, res@research 201, resNS@research 201, admin@research 201"
        ) { cell in
            let email = "team-\(UUID().uuidString.prefix(8).lowercased())-new@uni.example"
            _ = try await cell.world.app.staff("researcher", email)
            return .init(
                .POST, "/studies/\(cell.studyID)/staff", json: ["email": .string(email), "role": "researcher"])
        },
        APIRow(
            "changeStudyStaff", scoped: true,
            "* 404, self 403, other 403, own@practice 403, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            .init(
                .PATCH, "/studies/\(cell.studyID)/staff/\(try await cell.world.freshTeamMember(cell.scope))",
                json: ["role": "dataManager"])
        },
        APIRow(
            "removeStudyStaff", scoped: true,
            "* 404, self 403, other 403, own@practice 403, res@research 204, resNS@research 204, admin@research 204"
        ) { cell in
            .init(.DELETE, "/studies/\(cell.studyID)/staff/\(try await cell.world.freshTeamMember(cell.scope))")
        },
    ]

    /// Exports are for members who may export a research study: its owner and researchers (and data managers);
    /// an administrator manages the study but reads no participant's data.
    static let exports: [APIRow] = [
        APIRow(
            "listStudyExports", scoped: true,
            "* 404, self 403, other 403, own@practice 403, res@research 200, resNS@research 200, admin@research 403"
        ) { cell in
            .init(.GET, "/studies/\(cell.studyID)/exports")
        },
        APIRow(
            "startStudyExport", scoped: true,
            "* 404, self 403, other 403, own@practice 403, res@research 202, resNS@research 202, admin@research 403"
        ) { cell in
            .init(.POST, "/studies/\(cell.studyID)/exports")
        },
        APIRow(
            "getExport", scoped: true,
            "* 404, self 403, other 403, own@practice 403, res@research 200, resNS@research 200, admin@research 403"
        ) { cell in
            .init(.GET, "/exports/\(try await cell.world.readyExport(cell.scope))")
        },
        APIRow(
            "downloadExport", scoped: true,
            "* 404, self 403, other 403, own@practice 403, res@research 200, resNS@research 200, admin@research 403"
        ) { cell in
            .init(.GET, "/exports/\(try await cell.world.readyExport(cell.scope))/file")
        },
        // While the study runs, those who may read the list are told it is concealed (409).
        APIRow(
            "listAllocations", scoped: true,
            "* 404, self 403, other 403, own@practice 403, res@research 409, resNS@research 409, admin@research 403"
        ) { cell in
            .init(.GET, "/studies/\(cell.studyID)/allocations")
        },
        // The world's participants have no arm: those who may correct reach the check of the enrolment (422).
        APIRow(
            "correctAllocation", scoped: true,
            "* 404, self 403, other 403, own@practice 403, res@research 422, resNS@research 422, admin@research 422"
        ) { cell in
            .init(
                .POST, "/studies/\(cell.studyID)/allocations",
                json: ["enrollmentId": .string(cell.world.researchEnrollment), "arm": "control", "reason": "Mistake."])
        },
        APIRow("listAccessTokens", "* 200, self 403, other 403") { _ in .init(.GET, "/me/tokens") },
        APIRow("createAccessToken", scoped: true, "* 422, self 403, other 403, res@research 201, resNS@research 201") {
            cell in
            .init(
                .POST, "/me/tokens",
                json: ["name": "analysis", "studyIds": [.string(cell.studyID.uuidString)], "expiresInDays": 30])
        },
        APIRow("revokeAccessToken", "* 204, self 403, other 403") { cell in
            .init(.DELETE, "/me/tokens/\(try await cell.world.freshToken(of: cell.actor))")
        },
    ]

    static let administration: [APIRow] = [
        APIRow("listUsers", "* 403, admin 200") { _ in .init(.GET, "/users") },
        APIRow("createUser", "* 403, admin 201") { _ in
            .init(
                .POST, "/users",
                json: ["email": .string("staff-\(UUID().uuidString.prefix(8))@praxis.example"), "role": "therapist"])
        },
        APIRow("updateUser", "* 403, admin 200") { cell in
            let (_, id) = try await cell.world.app.staff(
                "therapist", "leaving-\(UUID().uuidString.prefix(8))@praxis.example")
            return .init(.PATCH, "/users/\(id)", json: ["active": false])
        },
        APIRow("resetUserPassword", "* 403, admin 200") { cell in
            let (_, id) = try await cell.world.app.staff(
                "researcher", "forgot-\(UUID().uuidString.prefix(8))@praxis.example")
            return .init(.POST, "/users/\(id)/password-reset")
        },
        APIRow("deleteUser", "* 403, admin 204") { cell in
            let (_, id) = try await cell.world.app.staff(
                "therapist", "gone-\(UUID().uuidString.prefix(8))@praxis.example")
            return .init(.DELETE, "/users/\(id)")
        },
    ]

    static let instruments: [APIRow] = [
        APIRow("listInstruments", "* 200, self 403, other 403") { _ in .init(.GET, "/instruments") },
        APIRow(
            "importInstrument", scoped: true,
            "* 404, self 403, other 403, own@practice 201, res@research 201, resNS@research 201, admin@research 201"
        ) { cell in
            .init(.POST, "/instruments?studyId=\(cell.studyID)", json: instrument())
        },
        APIRow("getInstrumentVersion", "* 200, self 403, other 403") { _ in .init(.GET, "/instruments/phq-9/versions/1")
        },
        APIRow(
            "publishInstrumentVersion", scoped: true,
            "* 404, self 403, other 403, own@practice 200, res@research 200, resNS@research 200, admin 200"
        ) { cell in
            .init(.POST, "/instruments/\(try await ownedDraft(cell))/versions/1/publication")
        },
        APIRow(
            "shareInstrument", scoped: true,
            "* 404, self 403, other 403, own@practice 200, res@research 200, resNS@research 200, admin 200"
        ) { cell in
            .init(.POST, "/instruments/\(try await ownedDraft(cell))/sharing")
        },
        APIRow(
            "listInstrumentPins", scoped: true,
            "* 404, self 403, other 403, own@practice 200, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            .init(.GET, "/studies/\(cell.studyID)/instrument-pins")
        },
        APIRow(
            "moveInstrumentPin", scoped: true,
            "* 404, self 403, other 403, own@practice 200, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            .init(.PUT, "/studies/\(cell.studyID)/instrument-pins/phq-9", json: ["version": 1])
        },
    ]

    /// The key of a draft instrument the owner of the cell's study imported for it.
    static func ownedDraft(_ cell: AccessCell) async throws -> String {
        let draft = instrument()
        let imported = try await cell.world.owner(cell.scope).send(
            .POST, "/instruments?studyId=\(cell.studyID)", json: draft)
        try #require(imported.status == .created, "\(imported.text)")
        return try #require(imported.body["key"].string)
    }

    private static func instrument() -> JSONValue {
        [
            "key": .string("sleep-\(UUID().uuidString.prefix(8).lowercased())"), "title": "Sleep", "language": "en",
            "sections": [
                [
                    "id": "s",
                    "items": [
                        ["id": "hours", "type": "number", "text": "Hours slept", "min": 0, "max": 24, "required": true]
                    ],
                ]
            ],
        ]
    }

    /// A patient's chart: their own therapist for the practice, the study's researchers for the research study
    /// (only of a participant who shares with research).
    static let chart: [APIRow] = [
        APIRow("listPatients", "* 403, own 200, otherT 200") { _ in .init(.GET, "/patients") },
        APIRow("getPatient", "* 403, otherT 404, own 200, endedT 200, elsewhereT 200") { cell in
            .init(.GET, "/patients/\(cell.subject.id)")
        },
        APIRow("listPatientPrompts", "* 403, otherT 404, own 200, endedT 200, elsewhereT 200") { cell in
            .init(.GET, "/patients/\(cell.subject.id)/prompts")
        },
        APIRow("assignPrompt", "* 403, otherT 404, own 201, endedT 409, elsewhereT 409") { cell in
            .init(
                .POST, "/patients/\(cell.subject.id)/prompts",
                json: [
                    "instrumentKey": "mood-vas", "opensAt": iso(cell.world.app.clock.now),
                    "closesAt": iso(cell.world.app.clock.now.addingTimeInterval(3600)),
                ])
        },
        APIRow("listPatientResponses", "* 403, otherT 404, own 200, endedT 200, elsewhereT 200") { cell in
            .init(.GET, "/patients/\(cell.subject.id)/responses")
        },
        APIRow("getResponse", scoped: true, "* 404, self 200, own@practice 200") { cell in
            .init(.GET, "/responses/\(cell.subject.response(cell.scope))")
        },
        APIRow("getResponse", scoped: true, "* 404, self 200, own@practice 200") { cell in
            .init(.GET, "/responses/\(cell.subject.response(cell.scope))?format=fhir")
        },
        APIRow("previewSchedule", "* 404, self 403, other 403, own 200, res 200") { cell in
            .init(.GET, "/patients/\(cell.subject.id)/schedule-preview?from=2026-03-03&days=7")
        },
        APIRow("listPatientAppointments", "* 403, otherT 404, own 200, endedT 200, elsewhereT 200") { cell in
            .init(.GET, "/patients/\(cell.subject.id)/appointments")
        },
        APIRow("listPatientEvents", "* 403, otherT 404, own 200, endedT 200, elsewhereT 200") { cell in
            .init(.GET, "/patients/\(cell.subject.id)/events")
        },
        APIRow("listPatientTherapies", "* 403, otherT 404, own 200, endedT 200, elsewhereT 200") { cell in
            .init(.GET, "/patients/\(cell.subject.id)/therapies")
        },
        APIRow("listPatientAudiograms", "* 403, otherT 404, own 200, endedT 200, elsewhereT 200") { cell in
            .init(.GET, "/patients/\(cell.subject.id)/audiograms")
        },
        APIRow("listPatientMoods", "* 403, otherT 404, own 200, endedT 200, elsewhereT 200") { cell in
            .init(.GET, "/patients/\(cell.subject.id)/moods")
        },
        APIRow("updatePatient", "* 403, otherT 404, own 200, endedT 409, elsewhereT 409") { cell in
            .init(.PATCH, "/patients/\(cell.subject.id)", json: ["therapyStart": "2026-03-10", "displayName": "A."])
        },
        APIRow("sendPatientPasswordReset", "* 403, otherT 404, own 202, endedT 409, elsewhereT 409") { cell in
            .init(.POST, "/patients/\(cell.subject.id)/password-reset")
        },
        APIRow("listPatientThoughts", "* 403, otherT 404, own 200, endedT 200, elsewhereT 200") { cell in
            .init(.GET, "/patients/\(cell.subject.id)/thoughts?q=nobody&from=2026-01-01")
        },
        APIRow("createPatientThought", "* 403, otherT 404, own 201, endedT 409, elsewhereT 409") { cell in
            .init(.POST, "/patients/\(cell.subject.id)/thoughts", json: ["text": .string("Example thought \(UUID())")])
        },
        APIRow("getAudiogram", "* 404, self 200, own 200") { cell in
            .init(.GET, "/audiograms/\(try await cell.world.freshAudiogram(of: cell.subject.id))")
        },
        APIRow("getAudiogram", "* 404, self 200, own 200") { cell in
            .init(.GET, "/audiograms/\(try await cell.world.freshAudiogram(of: cell.subject.id))?format=fhir")
        },
        APIRow("createPatientAppointment", "* 403, otherT 404, own 201, endedT 409, elsewhereT 409") { cell in
            let start = cell.world.app.clock.now.addingTimeInterval(4 * 86_400)
            return .init(
                .POST, "/patients/\(cell.subject.id)/appointments",
                json: ["title": "Session", "startsAt": iso(start), "endsAt": iso(start.addingTimeInterval(3000))])
        },
        APIRow("cancelPatientAppointment", "* 403, otherT 404, own 204, endedT 409, elsewhereT 409") { cell in
            .init(.DELETE, "/patients/\(cell.subject.id)/appointments/\(try await cell.world.freshSession())")
        },
        APIRow("decidePatientAppointmentRequest", "* 403, otherT 404, own 204, endedT 409, elsewhereT 409") { cell in
            .init(
                .POST,
                "/patients/\(cell.subject.id)/appointments/\(try await cell.world.freshSession(requested: true))/decision",
                json: ["grant": false, "baseVersion": 2])
        },
        APIRow("listPatientNotifications", "* 403, otherT 404, own 200, endedT 200, elsewhereT 200") { cell in
            .init(.GET, "/patients/\(cell.subject.id)/notifications")
        },
        APIRow("listPatientInterventions", "* 403, otherT 404, own 200, endedT 200, elsewhereT 200") { cell in
            .init(.GET, "/patients/\(cell.subject.id)/interventions")
        },
        APIRow("getPatientReport", "* 403, otherT 404, own 200, endedT 200, elsewhereT 200") { cell in
            .init(.GET, "/patients/\(cell.subject.id)/report?from=2026-01-01&to=2026-12-31")
        },
        APIRow("pinPatientNote", "* 403, otherT 404, own 201, endedT 409, elsewhereT 409") { cell in
            .init(.POST, "/patients/\(cell.subject.id)/notes", json: ["day": "2026-03-02", "text": "Holiday"])
        },
        APIRow("unpinPatientNote", "* 403, otherT 404, own 204, endedT 409, elsewhereT 409") { cell in
            .init(.DELETE, "/patients/\(cell.subject.id)/notes/\(try await cell.world.freshNote(on: cell.subject))")
        },
        APIRow("sendIntervention", "* 403, otherT 404, own 201, endedT 409, elsewhereT 409") { cell in
            .init(
                .POST, "/patients/\(cell.subject.id)/interventions",
                json: ["kind": "commendation", "text": "Well done."])
        },
        // In a named study: a research study's therapists send to their own patients, its researchers never.
        APIRow(
            "sendIntervention", scoped: true,
            "* 404, self 403, other 403, own@practice 201, res@research 403, admin@research 403"
        ) { cell in
            .init(
                .POST, "/patients/\(cell.subject.id)/interventions",
                json: ["kind": "commendation", "text": "Well done.", "studyId": .string(cell.studyID.uuidString)])
        },
    ]

    /// What a study plans and how it reacts: plans, rules, dry runs and alerts.
    static let studyWork: [APIRow] = [
        APIRow(
            "getRecordSettings", scoped: true,
            "* 404, self 403, other 403, own@practice 200, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            .init(.GET, "/studies/\(cell.studyID)/record-settings")
        },
        APIRow(
            "updateRecordSettings", scoped: true,
            "* 404, self 403, other 403, own@practice 200, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            .init(
                .PUT, "/studies/\(cell.studyID)/record-settings",
                json: ["collects": ["event", "audiogram"], "eventTypes": ["Sleepless night"]])
        },
        APIRow(
            "listPlans", scoped: true,
            "* 404, self 403, other 403, own@practice 200, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            .init(.GET, "/studies/\(cell.studyID)/plans")
        },
        APIRow(
            "createPlan", scoped: true,
            "* 404, self 403, other 403, own@practice 201, res@research 201, resNS@research 201, admin@research 201"
        ) { cell in
            .init(
                .POST, "/studies/\(cell.studyID)/plans",
                json: ["instrumentKey": "mood-vas", "durationMinutes": 60, "pattern": ["kind": "once"]])
        },
        APIRow(
            "updatePlan", scoped: true,
            "* 404, self 403, other 403, own@practice 200, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            .init(
                .PATCH, "/plans/\(try await cell.world.freshPlan(cell.scope))",
                json: ["instrumentKey": "mood-vas", "durationMinutes": 30, "pattern": ["kind": "once"]])
        },
        APIRow(
            "deletePlan", scoped: true,
            "* 404, self 403, other 403, own@practice 204, res@research 204, resNS@research 204, admin@research 204"
        ) { cell in
            .init(.DELETE, "/plans/\(try await cell.world.freshPlan(cell.scope))")
        },
        APIRow(
            "deactivatePlan", scoped: true,
            "* 404, self 403, other 403, own@practice 200, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            .init(.POST, "/plans/\(try await cell.world.freshPlan(cell.scope))/deactivation")
        },
        APIRow(
            "reactivatePlan", scoped: true,
            "* 404, self 403, other 403, own@practice 200, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            .init(.DELETE, "/plans/\(try await cell.world.freshPlan(cell.scope))/deactivation")
        },
        APIRow(
            "getDecisionPlan", scoped: true,
            "* 404, self 403, other 403, own@practice 200, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            try await cell.world.decisionPlan(cell.scope)
            return .init(.GET, "/studies/\(cell.studyID)/decision-plan")
        },
        APIRow(
            "setDecisionPlan", scoped: true,
            "* 404, self 403, other 403, own@practice 200, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            .init(.PUT, "/studies/\(cell.studyID)/decision-plan", json: AccessWorld.decisionPlanBody)
        },
        APIRow(
            "removeDecisionPlan", scoped: true,
            "* 404, self 403, other 403, own@practice 204, res@research 204, resNS@research 204, admin@research 204"
        ) { cell in
            try await cell.world.decisionPlan(cell.scope)
            return .init(.DELETE, "/studies/\(cell.studyID)/decision-plan")
        },
        APIRow(
            "listStudyRules", scoped: true,
            "* 404, self 403, other 403, own@practice 200, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            .init(.GET, "/studies/\(cell.studyID)/rules")
        },
        APIRow(
            "addStudyRule", scoped: true,
            "* 404, self 403, other 403, own@practice 201, res@research 201, resNS@research 201, admin@research 201"
        ) { cell in
            .init(.POST, "/studies/\(cell.studyID)/rules", json: AccessWorld.ruleBody)
        },
        APIRow(
            "deleteStudyRule", scoped: true,
            "* 404, self 403, other 403, own@practice 204, res@research 204, resNS@research 204, admin@research 204"
        ) { cell in
            .init(.DELETE, "/studies/\(cell.studyID)/rules/\(try await cell.world.freshRule(cell.scope))")
        },
        APIRow(
            "dryRunStudyRule", scoped: true,
            "* 404, self 403, other 403, own@practice 200, res@research 200, resNS@research 422, admin@research 403"
        ) { cell in
            .init(
                .POST, "/studies/\(cell.studyID)/rules/dry-run",
                json: ["patientId": .string(cell.subject.id.uuidString), "rule": AccessWorld.ruleBody])
        },
        APIRow("listAlerts", "* 200, self 403, other 403") { _ in .init(.GET, "/alerts") },
        APIRow(
            "acknowledgeAlert", scoped: true,
            "* 404, self 403, other 403, own@practice 200, res@research 200, resNS@research 200"
        ) { cell in
            .init(
                .POST, "/alerts/\(cell.subject.alert(cell.scope))/acknowledgement", json: ["note": "Called, all well."])
        },
    ]

    /// Rows in groups that may run side by side, each in its own world; a row may rely on one before it in its group.
    static let parts: [[APIRow]] = [accounts + me, studies + exports + administration + instruments, chart + studyWork]

    static let all: [APIRow] = parts.flatMap { $0 }
}
