import Foundation
import NIOHTTP1
import Testing

/// One request of an API row: the operation's path with the cell's objects filled in, its body, and the client
/// that sends it when not the actor's own (a fresh account for requests that end or change one).
struct APIRequest: Sendable {
    let method: HTTPMethod
    let path: String
    var json: JSONValue? = nil
    var client: APIClient? = nil
    /// A file upload's bytes, sent as they are.
    var bytes: Data? = nil
    var headers: HTTPHeaders = [:]

    init(_ method: HTTPMethod, _ path: String, json: JSONValue? = nil, as client: APIClient? = nil) {
        self.method = method
        self.path = path
        self.json = json
        self.client = client
    }

    init(_ method: HTTPMethod, _ path: String, bytes: Data, headers: HTTPHeaders) {
        self.method = method
        self.path = path
        self.bytes = bytes
        self.headers = headers
    }
}

/// One operation of `openapi.yaml` (an operation may have several rows, as `getResponse` has one per format).
struct APIRow: MatrixRow {
    let operation: String
    var name: String { operation }
    let scoped: Bool
    let expect: Expectation
    let request: @Sendable (AccessCell) async throws -> APIRequest

    init(
        _ operation: String, scoped: Bool = false, _ expect: String,
        _ request: @escaping @Sendable (AccessCell) async throws -> APIRequest
    ) {
        self.operation = operation
        self.scoped = scoped
        self.expect = Expectation(expect)
        self.request = request
    }
}

extension APIRow {
    private static func iso(_ date: Date) -> JSONValue { QuestionnaireAPITests.iso(date) }
    /// A name no other account has. The random part sits inside, so it can never end in a name the world's
    /// people have (`…ada@example.org` would read as Ada's address to the leak check).
    private static func unique(_ prefix: String) -> String {
        "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())-\(prefix)"
    }

    /// Anyone may, signed in or not.
    static let accounts: [APIRow] = [
        APIRow("checkEmailAvailable", "* 200") { _ in
            .init(.GET, "/accounts/email-available?email=someone.new%40example.org")
        },
        APIRow("register", "* 201") { _ in
            .init(
                .POST, "/accounts",
                json: [
                    "email": .string(unique("new") + "@example.org"), "password": .string(TestContext.password),
                    "privacyPolicyVersion": "1", "shareWithResearch": false, "locale": "en",
                    "timeZone": "Europe/Vienna",
                ])
        },
        APIRow("verifyEmail", "* 200") { cell in
            let email = try await registered(cell)
            return .init(
                .POST, "/accounts/verification",
                json: ["token": .string(cell.world.app.mailer.token(for: "/app/verify", to: email) ?? "")])
        },
        APIRow("resendVerificationEmail", "* 202") { cell in
            .init(.POST, "/accounts/verification-email", json: ["email": .string(try await registered(cell))])
        },
        APIRow("correctEmail", "* 202") { cell in
            .init(
                .POST, "/accounts/email-correction",
                json: [
                    "email": .string(try await registered(cell)), "password": .string(TestContext.password),
                    "newEmail": .string(unique("corrected") + "@example.org"),
                ])
        },
        APIRow("login", "* 201") { cell in
            .init(
                .POST, "/sessions",
                json: ["email": .string(cell.world.email(cell.actor)), "password": .string(TestContext.password)])
        },
        APIRow("logout", "* 204") { cell in
            .init(.DELETE, "/sessions/current", as: try await cell.world.app.signIn(cell.world.email(cell.actor)))
        },
        APIRow("requestPasswordReset", "* 202") { cell in
            .init(.POST, "/password-resets", json: ["email": .string(cell.world.email(cell.actor))])
        },
        APIRow("confirmPasswordReset", "* 204") { cell in
            let email = unique("reset") + "@example.org"
            _ = try await cell.world.app.patient(email)
            _ = try await cell.world.app.api.fromNewAddress.send(
                .POST, "/password-resets", json: ["email": .string(email)])
            let token = cell.world.app.mailer.token(for: "/app/reset-password", to: email) ?? ""
            return .init(
                .POST, "/password-resets/confirmation",
                json: ["token": .string(token), "newPassword": "another long password"])
        },
        APIRow("getPrivacyPolicy", "* 200") { _ in .init(.GET, "/privacy-policy") },
        APIRow("getPushPublicKey", "* 200") { _ in .init(.GET, "/push/public-key") },
        APIRow("recordNotificationClick", "* 404") { _ in .init(.POST, "/notifications/\(UUID())/click?key=guess") },
    ]

    /// A fresh account that has registered and not yet confirmed its address.
    private static func registered(_ cell: AccessCell) async throws -> String {
        let email = unique("unverified") + "@example.org"
        let reply = try await cell.world.app.api.fromNewAddress.send(
            .POST, "/accounts",
            json: [
                "email": .string(email), "password": .string(TestContext.password), "privacyPolicyVersion": "1",
                "shareWithResearch": false, "locale": "en", "timeZone": "Europe/Vienna",
            ])
        try #require(reply.status == .created, "\(reply.text)")
        return email
    }

    /// About the person who asks.
    static let me: [APIRow] = [
        APIRow("getMe", "* 200") { _ in .init(.GET, "/me") },
        APIRow("getMyToday", "* 403, self 200, other 200") { _ in .init(.GET, "/me/today") },
        APIRow("updateMe", "* 200") { _ in .init(.PATCH, "/me", json: ["timeZone": "Europe/Vienna"]) },
        APIRow("deleteMe", "* 403, self 204, other 204") { cell in
            .init(
                .DELETE, "/me", json: ["password": .string(TestContext.password)],
                as: try await cell.world.freshAccount(like: cell.actor))
        },
        APIRow("changePassword", "* 204") { cell in
            .init(
                .PUT, "/me/password",
                json: ["currentPassword": .string(TestContext.password), "newPassword": "a different long password"],
                as: try await cell.world.freshAccount(like: cell.actor))
        },
        APIRow("redeemPairingCode", "* 403, self 201, other 201") { cell in
            let code = try await cell.world.app.pairingCode(cell.world.ownTherapist)
            let client =
                [.patientSelf, .otherPatient].contains(cell.actor)
                ? try await cell.world.freshAccount(like: cell.actor) : nil
            return .init(
                .POST, "/me/pairing", json: ["code": .string(code), "dateOfBirth": "1991-02-03", "gender": "male"],
                as: client)
        },
        APIRow("acceptInvitation", "* 201") { cell in
            let email = unique("invited") + "@example.org"
            _ = try await cell.world.ownTherapist.send(.POST, "/patients/invitations", json: ["email": .string(email)])
            let token = cell.world.app.mailer.token(for: "/app/invitation", to: email) ?? ""
            return .init(
                .POST, "/invitations/acceptance",
                json: [
                    "token": .string(token), "password": "a long enough password", "privacyPolicyVersion": "1",
                    "shareWithResearch": false, "locale": "en", "timeZone": "Europe/Vienna",
                    "dateOfBirth": "1990-01-02",
                    "gender": "female",
                ])
        },
        APIRow("getMyTherapist", "* 403, self 200, other 200") { _ in .init(.GET, "/me/therapist") },
        APIRow("listMyTreatments", "* 403, self 200, other 200") { _ in .init(.GET, "/me/treatments") },
        APIRow("endFormerTherapistAccess", "* 403, self 204, other 404") { cell in
            .init(.DELETE, "/me/treatments/\(try await cell.world.freshEndedTreatment())/access")
        },
        APIRow("getOwnTherapistProfile", "* 403, own 200, otherT 200") { _ in .init(.GET, "/me/therapist-profile") },
        APIRow("updateOwnTherapistProfile", "* 403, own 200, otherT 200") { _ in
            .init(.PUT, "/me/therapist-profile", json: ["fullName": "Dr. Someone"])
        },
        APIRow("listPairingCodes", "* 403, own 200, otherT 200") { _ in .init(.GET, "/pairing-codes") },
        APIRow("createPairingCodes", "* 403, own 201, otherT 201") { _ in
            .init(.POST, "/pairing-codes", json: ["count": 1])
        },
        APIRow("createInvitation", "* 403, own 201, otherT 201") { _ in
            .init(
                .POST, "/patients/invitations",
                json: ["email": .string(unique("invite") + "@example.org"), "locale": "de"])
        },
        APIRow("listMyPrompts", "* 403, self 200, other 200") { _ in .init(.GET, "/me/prompts") },
        APIRow("getMyPrompt", scoped: true, "* 403, self 200, other 404") { cell in
            .init(.GET, "/me/prompts/\(cell.world.ada.prompt(cell.scope))")
        },
        APIRow("listMyResponses", "* 403, self 200, other 200") { _ in .init(.GET, "/me/responses") },
        APIRow("getMyResults", "* 403, self 200, other 200") { _ in .init(.GET, "/me/results") },
        APIRow("listMyNotes", "* 403, self 200, other 200") { _ in .init(.GET, "/me/notes?from=2026-01-01") },
        APIRow("getMyResultComparison", "* 403, self 200, other 200") { _ in .init(.GET, "/me/results/comparison") },
        APIRow("getMyAccessLog", "* 403, self 200, other 200") { _ in .init(.GET, "/me/access-log") },
        APIRow("getMyConsents", "* 403, self 200, other 200") { _ in .init(.GET, "/me/consents") },
        APIRow("listMyEvents", "* 403, self 200, other 200") { _ in .init(.GET, "/me/events?q=concert") },
        APIRow("createMyEvent", "* 403, self 201, other 201") { cell in
            .init(
                .POST, "/me/events",
                json: [
                    "id": .string(UUID().uuidString), "title": "Concert", "occurredAt": iso(cell.world.app.clock.now),
                    "type": "tinnitusAttack",
                ])
        },
        APIRow("updateMyEvent", "* 403, self 200, other 404") { cell in
            .init(
                .PATCH, "/me/events/\(try await cell.world.freshEvent())",
                json: [
                    "baseVersion": 1, "title": "Concert", "occurredAt": iso(cell.world.app.clock.now), "type": "other",
                ])
        },
        APIRow("deleteMyEvent", "* 403, self 204, other 404") { cell in
            .init(.DELETE, "/me/events/\(try await cell.world.freshEvent())?baseVersion=1")
        },
        APIRow("listMyTherapies", "* 403, self 200, other 200") { _ in .init(.GET, "/me/therapies") },
        APIRow("createMyTherapy", "* 403, self 201, other 201") { _ in
            .init(
                .POST, "/me/therapies",
                json: [
                    "id": .string(UUID().uuidString), "name": "Hearing aid", "type": "hearingAid",
                    "startDate": "2026-01-10",
                ])
        },
        APIRow("updateMyTherapy", "* 403, self 200, other 404") { cell in
            .init(
                .PATCH, "/me/therapies/\(try await cell.world.freshTherapy())",
                json: [
                    "baseVersion": 1, "name": "Hearing aid, left", "type": "hearingAid", "startDate": "2026-01-10",
                ])
        },
        APIRow("deleteMyTherapy", "* 403, self 204, other 404") { cell in
            .init(.DELETE, "/me/therapies/\(try await cell.world.freshTherapy())?baseVersion=1")
        },
        APIRow("listMyAudiograms", "* 403, self 200, other 200") { _ in .init(.GET, "/me/audiograms") },
        APIRow("createMyAudiogram", "* 403, self 201, other 201") { cell in
            .init(
                .POST, "/me/audiograms",
                json: [
                    "id": .string(UUID().uuidString), "measuredAt": iso(cell.world.app.clock.now),
                    "points": [["ear": "right", "frequencyHz": 1000, "thresholdDbHL": 20]],
                ])
        },
        APIRow("updateMyAudiogram", "* 403, self 200, other 404") { cell in
            .init(
                .PATCH, "/me/audiograms/\(try await cell.world.freshAudiogram())",
                json: [
                    "baseVersion": 1, "measuredAt": iso(cell.world.app.clock.now),
                    "points": [["ear": "left", "frequencyHz": 2000, "thresholdDbHL": 35]],
                ])
        },
        APIRow("deleteMyAudiogram", "* 403, self 204, other 404") { cell in
            .init(.DELETE, "/me/audiograms/\(try await cell.world.freshAudiogram())?baseVersion=1")
        },
        APIRow("listMyMoods", "* 403, self 200, other 200") { _ in .init(.GET, "/me/moods") },
        APIRow("createMyMood", "* 403, self 201, other 201") { cell in
            .init(
                .POST, "/me/moods",
                json: ["id": .string(UUID().uuidString), "valence": 0.7, "recordedAt": iso(cell.world.app.clock.now)])
        },
        APIRow("updateMyMood", "* 403, self 200, other 404") { cell in
            .init(
                .PATCH, "/me/moods/\(try await cell.world.freshMood())",
                json: [
                    "baseVersion": 1, "valence": 0.2, "recordedAt": iso(cell.world.app.clock.now), "note": "Tired",
                ])
        },
        APIRow("deleteMyMood", "* 403, self 204, other 404") { cell in
            .init(.DELETE, "/me/moods/\(try await cell.world.freshMood())?baseVersion=1")
        },
        APIRow("listMyMessagePlans", "* 403, self 200, other 200") { _ in .init(.GET, "/me/message-plans") },
        APIRow("chooseMyMessagePlan", "* 403, self 200, other 404") { cell in
            .init(
                .PUT, "/me/message-plans/\(try await cell.world.choosableMessagePlan())",
                json: [
                    "perDay": 1, "windowStart": "18:00", "windowEnd": "20:00",
                ])
        },
        APIRow("resetMyMessagePlan", "* 403, self 204, other 404") { cell in
            .init(.DELETE, "/me/message-plans/\(try await cell.world.choosableMessagePlan())")
        },
        APIRow("listMyThoughts", "* 403, self 200, other 200") { _ in .init(.GET, "/me/thoughts") },
        APIRow("createMyThoughtOccurrence", "* 403, self 201, other 201") { cell in
            .init(
                .POST, "/me/thoughts/occurrences",
                json: [
                    "id": .string(UUID().uuidString), "text": "I always get it wrong", "ratingBefore": -0.5,
                    "ratingAfter": 0.1,
                    "recordedAt": iso(cell.world.app.clock.now),
                ])
        },
        APIRow("updateMyThoughtOccurrence", "* 403, self 200, other 404") { cell in
            .init(
                .PATCH, "/me/thoughts/occurrences/\(try await cell.world.freshThought().occurrence)",
                json: [
                    "baseVersion": 1, "ratingBefore": -0.4, "ratingAfter": 0.3,
                    "recordedAt": iso(cell.world.app.clock.now),
                ])
        },
        APIRow("deleteMyThoughtOccurrence", "* 403, self 204, other 404") { cell in
            .init(.DELETE, "/me/thoughts/occurrences/\(try await cell.world.freshThought().occurrence)?baseVersion=1")
        },
        APIRow("deleteMyThought", "* 403, self 204, other 404") { cell in
            .init(.DELETE, "/me/thoughts/\(try await cell.world.freshThought().thought)?baseVersion=1")
        },
        APIRow("uploadMySamples", "* 403, self 200, other 200") { cell in
            .init(
                .POST, "/me/samples",
                json: [
                    "samples": [
                        SampleAPITests.sample(
                            "heartRate", 70, "count/min", start: cell.world.app.clock.now.addingTimeInterval(-600))
                    ]
                ])
        },
        APIRow("listMySamples", "* 403, self 200, other 200") { _ in .init(.GET, "/me/samples?type=heartRate") },
        APIRow("listMySampleTypes", "* 403, self 200, other 200") { _ in .init(.GET, "/me/sample-types") },
        APIRow("setMySampleType", "* 403, self 200, other 200") { _ in
            .init(.PUT, "/me/sample-types/heartRate", json: ["enabled": false])
        },
        APIRow("getMySampleDays", "* 403, self 200, other 200") { _ in
            .init(.GET, "/me/samples/daily?type=stepCount&days=7")
        },
        APIRow("getMySampleChart", "* 403, self 200, other 200") { _ in
            .init(.GET, "/me/samples/daily.svg?type=stepCount")
        },
        APIRow("startMyHealthImport", "* 403, self 201, other 201") { _ in
            .init(
                .POST, "/me/health-imports", bytes: Data("type,value,unit,start,end\n".utf8),
                headers: [
                    "Content-Type": "text/csv", "Upload-Length": "100",
                ])
        },
        APIRow("getMyHealthImport", "* 403, self 200, other 404") { cell in
            .init(.GET, "/me/health-imports/\(try await cell.world.freshHealthImport())")
        },
        APIRow("continueMyHealthImport", "* 403, self 200, other 404") { cell in
            .init(
                .PATCH, "/me/health-imports/\(try await cell.world.freshHealthImport())", bytes: Data("\n".utf8),
                headers: [
                    "Content-Type": "application/octet-stream", "Upload-Offset": "4",
                ])
        },
        APIRow("getMyAudiogramChart", "* 403, self 200, other 404") { cell in
            .init(.GET, "/me/audiograms/\(try await cell.world.freshAudiogram())/chart.svg?ears=right")
        },
        APIRow("requestMyExport", "* 403, self 202, other 202") { _ in .init(.POST, "/me/export") },
        APIRow("getMyExportStatus", "* 403, self 200, other 200") { _ in .init(.GET, "/me/export/status") },
        APIRow("downloadMyExport", "* 403, self 409, other 409") { _ in .init(.GET, "/me/export") },
        APIRow("decideConsent", "* 403, self 201, other 201") { _ in
            .init(.POST, "/me/consents", json: ["version": "1"])
        },
        APIRow("submitResponse", "* 403, self 201, other 422") { cell in
            .init(
                .POST, "/me/responses",
                json: [
                    "id": .string(UUID().uuidString), "promptId": .string(try await cell.world.freshPrompt()),
                    "instrumentKey": "mood-vas",
                    "version": 1, "answers": ["mood": 50], "completedAt": iso(cell.world.app.clock.now),
                ])
        },
        APIRow("listMyAppointments", "* 403, self 200, other 200") { _ in .init(.GET, "/me/appointments") },
        APIRow("createMyAppointment", "* 403, self 201, other 201") { cell in
            let start = cell.world.app.clock.now.addingTimeInterval(5 * 86_400)
            return .init(
                .POST, "/me/appointments",
                json: ["title": "Dentist", "startsAt": iso(start), "endsAt": iso(start.addingTimeInterval(1800))])
        },
        APIRow("updateMyAppointment", "* 403, self 200, other 404") { cell in
            let start = cell.world.app.clock.now.addingTimeInterval(3 * 86_400)
            return .init(
                .PATCH, "/me/appointments/\(cell.world.ada.appointment)",
                json: [
                    "baseVersion": 1, "title": "Session", "startsAt": iso(start),
                    "endsAt": iso(start.addingTimeInterval(3000)),
                ])
        },
        APIRow("deleteMyAppointment", "* 403, self 204, other 404") { cell in
            let start = cell.world.app.clock.now.addingTimeInterval(6 * 86_400)
            let made = try await cell.world.ada.client.send(
                .POST, "/me/appointments",
                json: ["title": "Gone", "startsAt": iso(start), "endsAt": iso(start.addingTimeInterval(1800))])
            return .init(.DELETE, "/me/appointments/\(made.body["id"].string ?? "")")
        },
        APIRow("requestMyAppointmentChange", "* 403, self 200, other 404") { cell in
            .init(.PUT, "/me/appointments/\(try await cell.world.freshSession())/request", json: ["kind": "cancel"])
        },
        APIRow("withdrawMyAppointmentRequest", "* 403, self 204, other 404") { cell in
            .init(.DELETE, "/me/appointments/\(try await cell.world.freshSession(requested: true))/request")
        },
        APIRow("getMyCalendarFeed", "* 403, self 200, other 200") { _ in .init(.GET, "/me/calendar-feed") },
        APIRow("revokeMyCalendarFeed", "* 403, self 204, other 204") { _ in .init(.DELETE, "/me/calendar-feed") },
        APIRow("listMyPlanAdjustments", "* 403, self 200, other 200") { _ in .init(.GET, "/me/plan-adjustments") },
        APIRow("setMyPlanAdjustment", "* 403, self 422, other 422") { cell in
            .init(
                .PUT, "/me/plan-adjustments",
                json: ["planId": .string(try await cell.world.freshPlan(.practice)), "count": 2])
        },
        APIRow("listMyOnDemandPlans", "* 403, self 200, other 200") { _ in .init(.GET, "/me/on-demand-prompts") },
        APIRow("startOnDemandPrompt", "* 403, self 201, other 422") { cell in
            .init(.POST, "/me/on-demand-prompts", json: ["planId": .string(try await cell.world.freshPlan(.practice))])
        },
        APIRow("listMyDevices", "* 200") { _ in .init(.GET, "/me/devices") },
        APIRow("registerMyDevice", "* 201") { _ in .init(.POST, "/me/devices", json: Self.device) },
        APIRow("deleteMyDevice", "* 404, self 204") { cell in
            let made = try await cell.world.ada.client.send(.POST, "/me/devices", json: Self.device)
            return .init(.DELETE, "/me/devices/\(made.body["id"].string ?? "")")
        },
        APIRow("getMyNotificationPreferences", "* 200") { _ in .init(.GET, "/me/notification-preferences") },
        APIRow("setMyNotificationPreferences", "* 200") { _ in
            .init(
                .PUT, "/me/notification-preferences",
                json: ["questionnaires": true, "interventions": true, "appointments": true, "messages": true])
        },
        APIRow("pullChanges", "* 403, self 200, other 200") { _ in .init(.GET, "/sync") },
        APIRow("pushChanges", "* 403, self 200, other 200") { cell in
            let start = cell.world.app.clock.now.addingTimeInterval(8 * 86_400)
            return .init(
                .POST, "/sync",
                json: [
                    "mutations": [
                        [
                            "id": .string(UUID().uuidString), "type": "appointment.create",
                            "appointmentId": .string(UUID().uuidString),
                            "appointment": [
                                "title": "Walk", "startsAt": iso(start), "endsAt": iso(start.addingTimeInterval(1800)),
                            ],
                        ]
                    ]
                ])
        },
        APIRow("listMyInterventions", "* 403, self 200, other 200") { _ in .init(.GET, "/me/interventions") },
        APIRow("markMyInterventionSeen", scoped: true, "* 403, self 200, other 404") { cell in
            .init(.POST, "/me/interventions/\(cell.world.ada.intervention(cell.scope))/seen")
        },
        APIRow("completeMyIntervention", scoped: true, "* 403, self 200, other 404") { cell in
            .init(.POST, "/me/interventions/\(cell.world.ada.intervention(cell.scope))/completion")
        },
        APIRow("putMyBackup", "* 403, self 200, other 200") { _ in .init(.PUT, "/me/backup", json: Self.backup) },
        APIRow("getMyBackup", "* 403, self 200, other 200") { _ in .init(.GET, "/me/backup") },
    ]

    /// A browser's push subscription; the key is the uncompressed point of a fixed P-256 public key.
    private static let device: JSONValue = [
        "platform": "webpush",
        "subscription": [
            "endpoint": "https://push.example.net/send/abc",
            "keys": [
                "p256dh": "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4",
                "auth": "BTBZMqHH6r4Tts7J_aSIgg",
            ],
        ],
    ]

    private static let backup: JSONValue = [
        "baseVersion": 0,
        "envelope": [
            "algorithm": "PBKDF2-SHA256+AES-256-GCM", "iterations": 600_000,
            "salt": .string(Data(count: 16).base64EncodedString()),
            "nonce": .string(Data(count: 12).base64EncodedString()),
            "ciphertext": .string(Data(count: 32).base64EncodedString()),
        ],
    ]
}
