import Crypto
import Fluent
import Foundation
import InterludeCore
import NIOConcurrencyHelpers
import SQLKit
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Notifications: outbox, dispatcher and devices")
struct NotificationTests {
    /// A browser's side of a subscription: its key pair and auth secret.
    struct Browser {
        let key = P256.KeyAgreement.PrivateKey()
        let auth = Data((0..<16).map { _ in UInt8.random(in: 0...255) })

        func subscription(_ endpoint: String) -> JSONValue {
            [
                "platform": "webpush",
                "subscription": [
                    "endpoint": .string(endpoint),
                    "keys": [
                        "p256dh": .string(key.publicKey.x963Representation.base64URLEncoded),
                        "auth": .string(auth.base64URLEncoded),
                    ],
                ],
            ]
        }

        /// Decrypts an aes128gcm message as a browser does (RFC 8188 and 8291), written out here on its own.
        func decrypt(_ body: Data) throws -> Data {
            let salt = body.prefix(16)
            let idLength = Int(body[body.startIndex + 20])
            let serverKey = body.subdata(in: (body.startIndex + 21)..<(body.startIndex + 21 + idLength))
            let ciphertext = body.suffix(from: body.startIndex + 21 + idLength)
            let shared = try key.sharedSecretFromKeyAgreement(
                with: try P256.KeyAgreement.PublicKey(x963Representation: serverKey))
            var info = Data("WebPush: info".utf8)
            info.append(0)
            info.append(key.publicKey.x963Representation)
            info.append(serverKey)
            let ikm = shared.hkdfDerivedSymmetricKey(
                using: SHA256.self, salt: auth, sharedInfo: info, outputByteCount: 32)
            let cek = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: ikm, salt: salt, info: Data("Content-Encoding: aes128gcm".utf8) + [0],
                outputByteCount: 16)
            let nonce = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: ikm, salt: salt, info: Data("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12
            )
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: nonce.withUnsafeBytes { Data($0) }), ciphertext: ciphertext.dropLast(16),
                tag: ciphertext.suffix(16))
            let padded = try AES.GCM.open(box, using: cek)
            #expect(padded.last == 2)
            return padded.dropLast()
        }
    }

    /// A paired patient with a questionnaire assigned to open in ten minutes.
    func setUp(_ app: TestContext) async throws -> (
        therapist: APIClient, patient: APIClient, patientID: UUID, promptID: UUID
    ) {
        let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
        let (patient, patientID) = try await app.patient()
        try await app.pair(patient, with: therapist)
        let opens = app.clock.now.addingTimeInterval(600)
        let assigned = try await therapist.send(
            .POST, "/patients/\(patientID.uuidString)/prompts",
            json: [
                "instrumentKey": "who-5", "opensAt": QuestionnaireAPITests.iso(opens),
                "closesAt": QuestionnaireAPITests.iso(opens.addingTimeInterval(86_400)),
            ])
        try #require(assigned.status == .created, "\(assigned.text)")
        return (therapist, patient, patientID, try #require(UUID(uuidString: assigned.body["id"].string ?? "")))
    }

    func run(_ app: TestContext) async throws -> NotificationDispatcher.Report {
        _ = try await NotificationOutbox(database: app.database, localizer: app.app.interlude.localizer).collect(
            now: app.clock.now)
        return try await NotificationDispatcher(
            database: app.database, services: app.app.interlude, channels: app.app.notificationChannels
        ).dispatch(now: app.clock.now)
    }

    func notifications(_ app: TestContext) async throws -> [NotificationRecord] {
        try await NotificationRecord.query(on: app.database).sort(\.$dueAt).all()
    }

    /// Checks the ES256 signature and claims of a VAPID header with the server's public key.
    func verifyVAPID(_ header: String, audience: String, publicKey: String, now: Date) throws {
        let token = String(header.dropFirst("vapid t=".count).prefix { $0 != "," })
        let parts = token.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        let key = try P256.Signing.PublicKey(x963Representation: try #require(Data(base64URLEncoded: publicKey)))
        let signature = try P256.Signing.ECDSASignature(
            rawRepresentation: try #require(Data(base64URLEncoded: parts[2])))
        #expect(key.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
        let claims =
            try JSONSerialization.jsonObject(with: try #require(Data(base64URLEncoded: parts[1]))) as? [String: Any]
        #expect(claims?["aud"] as? String == audience)
        #expect(claims?["sub"] as? String == "mailto:ops@interlude.test")
        let expires = claims?["exp"] as? Double ?? 0
        #expect(expires > now.timeIntervalSince1970 && expires <= now.timeIntervalSince1970 + 24 * 3600)
    }

    typealias PatientNotifications = Components.Schemas.PatientNotifications

    /// Registers a browser's push subscription for the patient.
    func subscribe(
        _ patient: APIClient, _ browser: Browser = Browser(), at endpoint: LocalPushEndpoint, path: String = "/push/one"
    ) async throws {
        let registered = try await patient.send(
            .POST, "/me/devices", json: browser.subscription("\(endpoint.baseURL)\(path)"))
        try #require(registered.status == .created, "\(registered.text)")
    }

    /// Runs `test` with a local push service that is stopped afterwards.
    func withPushEndpoint(_ test: (LocalPushEndpoint) async throws -> Void) async throws {
        let endpoint = try await LocalPushEndpoint.start()
        do {
            try await test(endpoint)
        } catch {
            try await endpoint.stop()
            throw error
        }
        try await endpoint.stop()
    }

    // MARK: Web Push

    @Test("a questionnaire's notification waits in the outbox until the questionnaire opens, then is pushed once")
    func pushedOnceWhenDue() async throws {
        try await withPushEndpoint { endpoint in
            try await withTestApp { app in
                // setup
                let (_, patient, _, _) = try await setUp(app)
                try await subscribe(patient, at: endpoint)
                let early = try await run(app)
                let queued = try await notifications(app).map(\.status)
                app.clock.advance(by: 601)

                // act
                let due = try await run(app)
                let again = try await run(app)

                // verify
                #expect(early == NotificationDispatcher.Report())
                #expect(queued == [.queued])
                #expect(due.sent == 1)
                #expect(again == NotificationDispatcher.Report())
                #expect(endpoint.received.count == 1)
            }
        }
    }

    @Test("a push is encrypted for the browser alone, signed with the server's VAPID key, and names no content")
    func pushEncryptedAndSigned() async throws {
        try await withPushEndpoint { endpoint in
            try await withTestApp { app in
                // setup
                let (_, patient, _, promptID) = try await setUp(app)
                let browser = Browser()
                try await subscribe(patient, browser, at: endpoint)
                app.clock.advance(by: 601)

                // act
                _ = try await run(app)

                // verify
                let request = try #require(endpoint.received.first)
                #expect(request.headers.first(name: "Content-Encoding") == "aes128gcm")
                #expect(Int(request.headers.first(name: "TTL") ?? "") ?? 0 > 80_000)
                let topic = try #require(request.headers.first(name: "Topic"))
                #expect(topic.count <= 32 && topic.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
                let authorization = try #require(request.headers.first(name: "Authorization"))
                let publicKey = try await app.api.send(.GET, "/push/public-key").decoded(
                    Components.Schemas.PushPublicKey.self
                ).publicKey
                #expect(authorization.hasPrefix("vapid t=") && authorization.hasSuffix(", k=\(publicKey)"))
                try verifyVAPID(authorization, audience: endpoint.baseURL, publicKey: publicKey, now: app.clock.now)
                let payload =
                    try JSONSerialization.jsonObject(with: try browser.decrypt(request.body)) as? [String: String]
                #expect(payload?["title"] == "A questionnaire is waiting for you")
                #expect(payload?["path"] == "/app/questionnaires/\(promptID.uuidString.lowercased())")
            }
        }
    }

    @Test("a tap on a push is recorded with the push's own key, and refused with another")
    func tapRecorded() async throws {
        try await withPushEndpoint { endpoint in
            try await withTestApp { app in
                // setup
                let (therapist, patient, patientID, _) = try await setUp(app)
                let browser = Browser()
                try await subscribe(patient, browser, at: endpoint)
                app.clock.advance(by: 601)
                _ = try await run(app)
                let request = try #require(endpoint.received.first)
                let payload =
                    try JSONSerialization.jsonObject(with: try browser.decrypt(request.body)) as? [String: String]
                let click = String(try #require(payload?["click"]).dropFirst("/api/v1".count))

                // act
                let forged = try await app.api.send(.POST, click.replacingOccurrences(of: "key=", with: "key=x"))
                let tapped = try await app.api.send(.POST, click)

                // verify
                #expect(forged.status == .notFound)
                #expect(tapped.status == .noContent)
                let history = try await therapist.send(.GET, "/patients/\(patientID)/notifications").decoded(
                    PatientNotifications.self)
                #expect(history.notifications.map(\.status) == [.clicked])
            }
        }
    }

    @Test("the therapist sees how the patient is reached and what became of each notification, and the read is audited")
    func therapistSeesDelivery() async throws {
        try await withPushEndpoint { endpoint in
            try await withTestApp { app in
                // setup
                let (therapist, patient, patientID, _) = try await setUp(app)
                try await subscribe(patient, at: endpoint)
                app.clock.advance(by: 601)
                _ = try await run(app)

                // act
                let history = try await therapist.send(.GET, "/patients/\(patientID)/notifications").decoded(
                    PatientNotifications.self)

                // verify
                #expect(history.reachableByPush && history.devices == 1)
                #expect(history.notifications.map(\.status) == [.sent])
                #expect(history.notifications.map(\.channel) == ["webpush"])
                #expect(try await app.count("audit_events WHERE action = 'notifications.read'") == 1)
            }
        }
    }

    @Test(
        "a patient's notifications are refused to another therapist and to patients",
        arguments: [("another therapist", true, HTTPStatus.notFound), ("a patient", false, .forbidden)])
    func therapistIsolation(_ label: String, therapist: Bool, status: HTTPStatus) async throws {
        try await withTestApp { app in
            // setup
            let (_, _, patientID, _) = try await setUp(app)
            let caller =
                therapist
                ? try await app.staff("therapist", "huber@praxis.example").0
                : try await app.patient("nosy@example.org").client

            // act
            let reply = try await caller.send(.GET, "/patients/\(patientID)/notifications")

            // verify
            #expect(reply.status == status, "\(label)")
            #expect(!reply.text.contains("questionnaire"))
        }
    }

    // MARK: Failures and their fallback

    @Test("a temporary failure is retried after 30 seconds, not before")
    func retried() async throws {
        try await withPushEndpoint { endpoint in
            try await withTestApp { app in
                // setup
                let (_, patient, _, _) = try await setUp(app)
                try await subscribe(patient, at: endpoint)
                endpoint.answer(.serviceUnavailable)
                app.clock.advance(by: 601)

                // act
                let report = try await run(app)
                let tooSoon = try await run(app)

                // verify
                #expect(report.retrying == 1)
                let waiting = try #require(try await notifications(app).first)
                #expect(waiting.attempts == 1 && waiting.status == .queued)
                #expect(waiting.nextAttemptAt == app.clock.now.addingTimeInterval(30))
                #expect(tooSoon == NotificationDispatcher.Report())
                #expect(endpoint.received.count == 1)
            }
        }
    }

    @Test("a subscription the push service says is gone is disabled, and email takes over")
    func goneFallsBackToEmail() async throws {
        try await withPushEndpoint { endpoint in
            try await withTestApp { app in
                // setup
                let (_, patient, _, _) = try await setUp(app)
                try await subscribe(patient, at: endpoint)
                endpoint.answer(.gone)
                app.clock.advance(by: 601)

                // act
                let report = try await run(app)

                // verify
                #expect(report.sent == 1)
                let sent = try #require(try await notifications(app).first)
                #expect(sent.channel == "email")
                #expect(sent.receipt?.contains("webpush 410") == true)
                #expect(
                    NotificationAttempt.log(sent.attemptLog).map { "\($0.channel) \($0.outcome)" }
                        == ["webpush gone", "email delivered"], "each channel's answer is kept")
                #expect(sent.miss == nil)
                #expect(app.mailer.sent.contains { $0.subject == "A questionnaire is waiting for you" })
                let devices = try await patient.send(.GET, "/me/devices").decoded([Components.Schemas.Device].self)
                #expect(devices.map(\.active) == [false])
            }
        }
    }

    @Test(
        "each push service answer is kept with the notification: 201 delivered, 404 and 410 a subscription gone",
        arguments: [HTTPResponseStatus.created, .notFound, .gone])
    func answerKept(_ status: HTTPResponseStatus) async throws {
        try await withPushEndpoint { endpoint in
            try await withTestApp { app in
                // setup: without a confirmed address the push is the only way
                let (_, patient, patientID, _) = try await setUp(app)
                try await UserRecord.query(on: app.database).filter(\.$id == patientID)
                    .set(\.$emailVerifiedAt, to: nil).update()
                try await subscribe(patient, at: endpoint)
                endpoint.answer(status)
                app.clock.advance(by: 601)

                // act
                let report = try await run(app)

                // verify
                let notification = try #require(try await notifications(app).first)
                let log = NotificationAttempt.log(notification.attemptLog)
                #expect(log.map(\.channel) == [.webpush] && log.first?.detail == "webpush \(status.code)")
                #expect(abs((log.first?.at ?? .distantPast).timeIntervalSince(app.clock.now)) < 1)
                let devices = try await patient.send(.GET, "/me/devices").decoded([Components.Schemas.Device].self)
                if status == .created {
                    #expect(report.sent == 1 && notification.status == .sent && notification.miss == nil)
                    #expect(log.map(\.outcome) == [.delivered] && devices.map(\.active) == [true])
                } else {
                    #expect(report.failed == 1 && notification.status == .failed)
                    #expect(notification.miss == .subscriptionGone && log.map(\.outcome) == [.gone])
                    #expect(devices.map(\.active) == [false], "the app can tell the person")
                }
            }
        }
    }

    @Test("the therapist's console page says the patient is reached by email only, and why")
    func consoleShowsFallback() async throws {
        try await withPushEndpoint { endpoint in
            try await withTestApp { app in
                // setup
                let (_, patient, patientID, _) = try await setUp(app)
                try await subscribe(patient, at: endpoint)
                endpoint.answer(.gone)
                app.clock.advance(by: 601)
                _ = try await run(app)
                let console = ConsoleBrowser(app)
                _ = try await console.signIn("berger@praxis.example")

                // act
                let page = try await console.get("/console/patients/\(patientID)")

                // verify
                #expect(page.html.contains("<dd id=\"reach\">by email only</dd>"))
                #expect(page.html.contains("webpush 410; email accepted"))
            }
        }
    }

    @Test(
        "an address stored before it was refused is checked again when a message goes out: an inside address is not called"
    )
    func insideAddressAtSendTime() async throws {
        try await withPushEndpoint { endpoint in
            try await withTestApp(settings: { $0.push.allowLoopback = false }) { app in
                // setup: a subscription to a loopback address, stored directly
                let (_, _, patientID, _) = try await setUp(app)
                let browser = Browser()
                try await DeviceRecord(
                    userID: patientID, platform: .webpush, address: "\(endpoint.baseURL)/push/inside",
                    p256dh: browser.key.publicKey.x963Representation.base64URLEncoded,
                    auth: browser.auth.base64URLEncoded,
                    now: app.clock.now
                ).create(on: app.database)
                app.clock.advance(by: 601)

                // act
                let report = try await run(app)

                // verify
                #expect(report.sent == 1)
                #expect(endpoint.received.isEmpty)
                let sent = try #require(try await notifications(app).first)
                #expect(sent.channel == "email")
                #expect(sent.receipt?.contains("inside the network") == true, "\(sent.receipt ?? "")")
                #expect(try await DeviceRecord.query(on: app.database).first()?.disabledAt != nil)
            }
        }
    }

    @Test("a push service's redirect is not followed")
    func redirectNotFollowed() async throws {
        try await withPushEndpoint { endpoint in
            try await withTestApp { app in
                // setup
                let (_, patient, _, _) = try await setUp(app)
                try await subscribe(patient, at: endpoint)
                endpoint.answer(.temporaryRedirect)
                app.clock.advance(by: 601)

                // act
                _ = try await run(app)

                // verify
                #expect(endpoint.received.map(\.path) == ["/push/one"])
                #expect(try #require(try await notifications(app).first).receipt?.contains("webpush 307") == true)
            }
        }
    }

    static let resolverAnswers: [String: [NetworkAddress]] = [
        "mixed.example.org": [.v4(0x5DB8_D822), .v4(0x0A00_0001)], "push.example.org": [.v4(0x5DB8_D822)],
    ]

    @Test(
        "push hosts are resolved at send time, and every address they resolve to must be public",
        arguments: [
            (
                "one public and one inside address", "mixed.example.org",
                PushClients.Refusal.insideAddress as PushClients.Refusal?
            ),
            ("no address at all", "nowhere.example.org", .unresolvable),
            ("loopback written in hex", "0x7f.1", .insideAddress),
            ("public addresses only", "push.example.org", nil),
        ])
    func resolution(_ label: String, host: String, refusal: PushClients.Refusal?) async throws {
        // setup
        let clients = PushClients(allowLoopback: false) { Self.resolverAnswers[$0] ?? [] }

        // act / verify
        if let refusal {
            await #expect(throws: refusal, "\(label)") { try await clients.client(for: host) }
        } else {
            _ = try await clients.client(for: host)
        }
        await clients.shutdown()
    }

    @Test("with the system resolver and the machine's hosts file, localhost is an inside address")
    func systemResolver() async throws {
        // setup
        let system = PushClients(allowLoopback: false)

        // act / verify
        await #expect(throws: PushClients.Refusal.insideAddress) { try await system.client(for: "localhost") }
        #expect(await PushClients.systemResolve("localhost").contains(.v4(0x7F00_0001)))
        await system.shutdown()
    }

    // MARK: Preferences and relevance

    static func preferences(questionnaires: Bool = true, quietHours: JSONValue = nil) -> JSONValue {
        [
            "questionnaires": .bool(questionnaires), "interventions": true, "appointments": true, "messages": true,
            "quietHours": quietHours,
        ]
    }

    @Test("a category the patient turned off is withheld, and nothing is sent")
    func categoryWithheld() async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, _, _) = try await setUp(app)
            let off = try await patient.send(
                .PUT, "/me/notification-preferences", json: Self.preferences(questionnaires: false))
            app.clock.advance(by: 601)

            // act
            let report = try await run(app)

            // verify
            #expect(off.status == .ok)
            #expect(report.withheld == 1)
            #expect(try await notifications(app).first?.receipt == "preference")
            #expect(app.mailer.sent.allSatisfy { $0.subject != "A questionnaire is waiting for you" })
        }
    }

    @Test(
        "at most twelve notifications an hour reach a person: the rest wait for the hour to free up, or are withheld when that is too late"
    )
    func hourlyCeiling() async throws {
        try await withTestApp { app in
            // setup: fifteen messages due now, the last two worth sending for half an hour only
            let (_, _, patientID, _) = try await setUp(app)
            let now = app.clock.now
            let items = (0..<15).map { index in
                NotificationOutbox.Item(
                    userID: patientID, category: .messages, dedupeKey: "message:ceiling:\(index)", title: "Note",
                    body: "A note",
                    path: "/app", dueAt: now.addingTimeInterval(Double(index)),
                    expiresAt: now.addingTimeInterval(index >= 13 ? 1800 : 7200))
            }
            try await NotificationOutbox(database: app.database, localizer: app.app.interlude.localizer).enqueue(
                items, now: now)
            app.clock.advance(by: 20)

            // act
            let first = try await run(app)
            app.clock.advance(by: 3600)
            let hourLater = try await run(app)

            // verify
            #expect(
                first.sent == NotificationCeiling.perHour && first.postponed == 1 && first.withheld == 2, "\(first)")
            let messages = try await NotificationRecord.query(on: app.database).filter(\.$category == .messages).all()
            #expect(
                messages.filter { $0.receipt == "hourlyCeiling" }.map(\.dedupeKey).sorted() == [
                    "message:ceiling:13", "message:ceiling:14",
                ])
            let waiting = try #require(messages.first { $0.dedupeKey == "message:ceiling:12" })
            #expect(
                waiting.nextAttemptAt == now.addingTimeInterval(20 + 3600), "when the first of the hour is an hour old")
            // The message that waited, and the questionnaire that opened meanwhile.
            #expect(hourLater.sent == 2)
            #expect(try await NotificationRecord.find(waiting.requireID(), on: app.database)?.status == .sent)
        }
    }

    @Test("quiet hours that start and end at the same minute are refused, and the preferences stay as they were")
    func quietHoursRefused() async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, _, _) = try await setUp(app)
            _ = try await patient.send(
                .PUT, "/me/notification-preferences", json: Self.preferences(questionnaires: false))

            // act
            let refused = try await patient.send(
                .PUT, "/me/notification-preferences",
                json: Self.preferences(quietHours: ["start": "22:00", "end": "22:00"]))

            // verify
            #expect(refused.status == .unprocessableEntity)
            #expect(refused.body.problemFields == ["quietHours.end"])
            let stored = try await patient.send(.GET, "/me/notification-preferences").decoded(
                Components.Schemas.NotificationPreferences.self)
            #expect(stored.questionnaires == false && stored.quietHours == nil)
        }
    }

    @Test("an appointment's notice due in quiet hours waits for them to end")
    func quietHoursPostpone() async throws {
        try await withTestApp { app in
            // setup: quiet from 06:00 to 07:30, an appointment tomorrow at 08:00
            let (_, patient, patientID, _) = try await setUp(app)
            _ = try await patient.send(
                .PUT, "/me/notification-preferences",
                json: Self.preferences(quietHours: ["start": "06:00", "end": "07:30"]))
            let vienna = TimeZone(identifier: "Europe/Vienna")!
            let tomorrow = LocalDate(app.clock.now, in: vienna).adding(days: 1)
            let starts = LocalDateTime(date: tomorrow, time: LocalTime("08:00")!).instant(in: vienna)
            _ = try await patient.send(
                .POST, "/me/appointments", json: ScheduleAPITests.appointment("Session", at: starts))
            app.clock.advance(by: starts.timeIntervalSince(app.clock.now) - 3600)

            // act
            let report = try await run(app)
            app.clock.advance(by: 1800)
            let after = try await run(app)

            // verify
            #expect(report.postponed == 1)
            let postponed = try #require(
                try await NotificationRecord.query(on: app.database).filter(\.$category == .appointments)
                    .filter(\.$user.$id == patientID).first())
            #expect(
                postponed.nextAttemptAt == LocalDateTime(date: tomorrow, time: LocalTime("07:30")!).instant(in: vienna))
            #expect(after.sent == 1)
        }
    }

    @Test("a questionnaire answered before its notice goes out is not announced")
    func answeredNotAnnounced() async throws {
        try await withTestApp { app in
            // setup: a notice queued, then the questionnaire completed
            let (_, _, _, promptID) = try await setUp(app)
            _ = try await run(app)
            let prompt = try #require(try await PromptRecord.find(promptID, on: app.database))
            prompt.status = PromptStatus.completed
            try await prompt.save(on: app.database)
            app.clock.advance(by: 601)

            // act
            let report = try await run(app)

            // verify
            #expect(report.expired == 1 && report.sent == 0)
            #expect(app.mailer.sent.allSatisfy { $0.subject != "A questionnaire is waiting for you" })
        }
    }

    // MARK: Several dispatchers

    @Test("on SQLite a claim finds its notifications by their keys, not by walking every queued one")
    func claimPlan() async throws {
        // PostgreSQL keeps statistics of its own and plans by them.
        guard TestDatabase.postgresURL == nil else { return }
        try await withTestApp { app in
            // setup
            let claim = Statements.claiming(
                (0..<16).map { _ in UUID() }, until: app.clock.now.addingTimeInterval(60), now: app.clock.now,
                on: app.database)

            // act
            let plan = NIOLockedValueBox<[String]>([])
            try await app.sql.execute(sql: QueryPlan(statement: claim.query)) { row in
                if let detail = try? row.decode(column: "detail", as: String.self) {
                    plan.withLockedValue { $0.append(detail) }
                }
            }

            // verify
            let steps = plan.withLockedValue { $0 }
            #expect(steps.contains { $0.contains("sqlite_autoindex_notifications_1") }, "\(steps)")
            #expect(!steps.contains { $0.contains("notifications_due") }, "\(steps)")
        }
    }

    /// SQLite's account of how it would run a statement.
    struct QueryPlan: SQLExpression {
        let statement: any SQLExpression

        func serialize(to serializer: inout SQLSerializer) {
            serializer.write("EXPLAIN QUERY PLAN ")
            statement.serialize(to: &serializer)
        }
    }

    @Test(
        "of two dispatchers at once, one sends each notification; one held by a crashed dispatcher is sent once after its lease"
    )
    func exactlyOnce() async throws {
        try await withPushEndpoint { endpoint in
            try await withTestApp { app in
                // setup: six patients with a questionnaire open now, one notification held by a dispatcher that died
                let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
                for index in 0..<6 {
                    let (patient, patientID) = try await app.patient("p\(index)@example.org")
                    try await app.pair(patient, with: therapist)
                    try await subscribe(patient, at: endpoint, path: "/push/\(index)")
                    let assigned = try await therapist.send(
                        .POST, "/patients/\(patientID.uuidString)/prompts",
                        json: [
                            "instrumentKey": "who-5", "opensAt": QuestionnaireAPITests.iso(app.clock.now),
                            "closesAt": QuestionnaireAPITests.iso(app.clock.now.addingTimeInterval(86_400)),
                        ])
                    try #require(assigned.status == .created)
                }
                _ = try await NotificationOutbox(database: app.database, localizer: app.app.interlude.localizer)
                    .collect(now: app.clock.now)
                let held = try #require(try await notifications(app).first)
                held.claimedUntil = app.clock.now.addingTimeInterval(NotificationDispatcher.lease)
                try await held.save(on: app.database)
                let second = try await app.twin()
                let first = NotificationDispatcher(
                    database: app.database, services: app.app.interlude, channels: app.app.notificationChannels)
                // On PostgreSQL the second is another process's connection; SQLite in memory is one process.
                let other = NotificationDispatcher(
                    database: TestDatabase.postgresURL != nil ? second.db : app.database, services: second.interlude,
                    channels: second.notificationChannels)
                let now = app.clock.now

                // act
                async let one = first.dispatch(now: now)
                async let two = other.dispatch(now: now)
                let reports = try await [one, two]
                try await second.asyncShutdown()
                app.clock.advance(by: NotificationDispatcher.lease + 1)
                let afterLease = try await run(app)

                // verify
                #expect(reports[0].sent + reports[1].sent == 5)
                #expect(afterLease.sent == 1)
                #expect(endpoint.received.count == 6)
                #expect(Set(endpoint.received.map(\.path)).count == 6)
                #expect(try await notifications(app).allSatisfy { $0.status == .sent })
            }
        }
    }

    // MARK: Devices

    static let refusedDevices: [(String, JSONValue, [String])] = [
        (
            "an endpoint on a private address", Browser().subscription("http://10.0.0.7/push/x"),
            ["subscription.endpoint"]
        ),
        (
            "keys that are not keys",
            [
                "platform": "webpush",
                "subscription": ["endpoint": "https://push.example.org/x", "keys": ["p256dh": "abc", "auth": "abc"]],
            ],
            ["subscription.keys.auth", "subscription.keys.p256dh"]
        ),
        ("an APNs token that is not one", ["platform": "apns", "token": "xyz"], ["token"]),
    ]

    @Test(
        "a device is checked at the door: https endpoints on public hosts, real keys, real tokens",
        arguments: refusedDevices)
    func refusedDevice(_ label: String, device: JSONValue, fields: [String]) async throws {
        try await withTestApp { app in
            // setup
            let (patient, _) = try await app.patient()

            // act
            let reply = try await patient.send(.POST, "/me/devices", json: device)

            // verify
            #expect(reply.status == .unprocessableEntity, "\(label)")
            #expect(reply.body.problemFields.sorted() == fields, "\(label): \(reply.text)")
            #expect(try await app.count("devices") == 0)
        }
    }

    @Test("a subscription registered twice is one device; an APNs token is another")
    func registerDevices() async throws {
        try await withTestApp { app in
            // setup
            let (patient, _) = try await app.patient()
            let browser = Browser()

            // act
            let first = try await patient.send(
                .POST, "/me/devices", json: browser.subscription("https://push.example.org/abc"))
            let again = try await patient.send(
                .POST, "/me/devices", json: browser.subscription("https://push.example.org/abc"))
            let apns = try await patient.send(
                .POST, "/me/devices", json: ["platform": "apns", "token": .string(String(repeating: "ab", count: 32))])

            // verify
            #expect(first.status == .created && apns.status == .created)
            #expect(
                try again.decoded(Components.Schemas.Device.self).id
                    == (try first.decoded(Components.Schemas.Device.self).id))
            #expect(try await patient.send(.GET, "/me/devices").decoded([Components.Schemas.Device].self).count == 2)
        }
    }

    @Test("a device moves to another account only with proof: the browser's own keys; an APNs token still in use stays")
    func devicesMoveWithProof() async throws {
        try await withTestApp { app in
            // setup: Ada's browser and phone
            let (ada, adaID) = try await app.patient("ada@example.org")
            let (ben, benID) = try await app.patient("ben@example.org")
            let adasBrowser = Browser()
            let token: JSONValue = ["platform": "apns", "token": .string(String(repeating: "cd", count: 32))]
            try #require(
                try await ada.send(.POST, "/me/devices", json: adasBrowser.subscription("https://push.example.org/ada"))
                    .status == .created)
            try #require(try await ada.send(.POST, "/me/devices", json: token).status == .created)

            // act: Ben knows the address but not the keys; then Ben signs in on Ada's browser, which sends its own keys
            let guessed = try await ben.send(
                .POST, "/me/devices", json: Browser().subscription("https://push.example.org/ada"))
            let phone = try await ben.send(.POST, "/me/devices", json: token)
            let sameBrowser = try await ben.send(
                .POST, "/me/devices", json: adasBrowser.subscription("https://push.example.org/ada"))

            // verify
            #expect(
                guessed.status == .conflict && guessed.body["type"].string == "/problems/device-taken",
                "\(guessed.text)")
            #expect(phone.status == .conflict)
            #expect(sameBrowser.status == .created || sameBrowser.status == .ok, "\(sameBrowser.text)")
            let owners = try await DeviceRecord.query(on: app.database).all().map { ($0.platform, $0.$user.id) }
            #expect(owners.contains { $0 == (.webpush, benID) } && owners.contains { $0 == (.apns, adaID) })
        }
    }

    @Test("a device is removed by its owner only, and none is registered without a session")
    func deviceOwnership() async throws {
        try await withTestApp { app in
            // setup
            let (patient, _) = try await app.patient()
            let id = try await patient.send(
                .POST, "/me/devices", json: Browser().subscription("https://push.example.org/abc")
            )
            .decoded(Components.Schemas.Device.self).id
            let (stranger, _) = try await app.patient("stranger@example.org")

            // act
            let byStranger = try await stranger.send(.DELETE, "/me/devices/\(id)")
            let anonymous = try await app.api.send(
                .POST, "/me/devices", json: Browser().subscription("https://push.example.org/def"))
            let byOwner = try await patient.send(.DELETE, "/me/devices/\(id)")

            // verify
            #expect(byStranger.status == .notFound)
            #expect(anonymous.status == .unauthorized)
            #expect(byOwner.status == .noContent)
            #expect(try await app.count("devices") == 0)
        }
    }
}
