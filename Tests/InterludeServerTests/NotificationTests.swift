import Crypto
import Fluent
import Foundation
import InterludeCore
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
                    "keys": ["p256dh": .string(key.publicKey.x963Representation.base64URLEncoded), "auth": .string(auth.base64URLEncoded)],
                ],
            ]
        }

        /// Decrypts an aes128gcm message as a browser does (RFC 8188 and 8291), written out here on its own.
        func decrypt(_ body: Data) throws -> Data {
            let salt = body.prefix(16)
            let idLength = Int(body[body.startIndex + 20])
            let serverKey = body.subdata(in: (body.startIndex + 21)..<(body.startIndex + 21 + idLength))
            let ciphertext = body.suffix(from: body.startIndex + 21 + idLength)
            let shared = try key.sharedSecretFromKeyAgreement(with: try P256.KeyAgreement.PublicKey(x963Representation: serverKey))
            var info = Data("WebPush: info".utf8)
            info.append(0)
            info.append(key.publicKey.x963Representation)
            info.append(serverKey)
            let ikm = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: auth, sharedInfo: info, outputByteCount: 32)
            let cek = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: ikm, salt: salt, info: Data("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
            let nonce = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: ikm, salt: salt, info: Data("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: nonce.withUnsafeBytes { Data($0) }), ciphertext: ciphertext.dropLast(16),
                tag: ciphertext.suffix(16))
            let padded = try AES.GCM.open(box, using: cek)
            #expect(padded.last == 2)
            return padded.dropLast()
        }
    }

    /// A paired patient with a questionnaire assigned to open in ten minutes.
    func setUp(_ app: TestContext) async throws -> (therapist: APIClient, patient: APIClient, patientID: UUID, promptID: UUID) {
        let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
        let (patient, patientID) = try await app.patient()
        try await app.pair(patient, with: therapist)
        let opens = app.clock.now.addingTimeInterval(600)
        let assigned = try await therapist.send(
            .POST, "/patients/\(patientID.uuidString)/prompts",
            json: ["instrumentKey": "who-5", "opensAt": QuestionnaireAPITests.iso(opens),
                "closesAt": QuestionnaireAPITests.iso(opens.addingTimeInterval(86_400))])
        try #require(assigned.status == .created, "\(assigned.text)")
        return (therapist, patient, patientID, try #require(UUID(uuidString: assigned.body["id"].string ?? "")))
    }

    func run(_ app: TestContext) async throws -> NotificationDispatcher.Report {
        _ = try await NotificationOutbox(database: app.database, localizer: app.app.interlude.localizer).collect(now: app.clock.now)
        return try await NotificationDispatcher(
            database: app.database, services: app.app.interlude, channels: app.app.notificationChannels
        ).dispatch(now: app.clock.now)
    }

    func notifications(_ app: TestContext) async throws -> [NotificationRecord] {
        try await NotificationRecord.query(on: app.database).sort(\.$dueAt).all()
    }

    @Test("a questionnaire that opens is pushed once, encrypted for the browser, signed with VAPID; a tap is recorded")
    func webPush() async throws {
        let endpoint = try await LocalPushEndpoint.start()
        try await withTestApp { app in
            let (therapist, patient, patientID, promptID) = try await setUp(app)
            let browser = Browser()
            let registered = try await patient.send(.POST, "/me/devices", json: browser.subscription("\(endpoint.baseURL)/push/one"))
            #expect(registered.status == .created, "\(registered.text)")

            // Queued ahead of its moment, sent when it comes, once.
            #expect(try await run(app) == NotificationDispatcher.Report())
            #expect(try await notifications(app).map(\.status) == [.queued])
            app.clock.advance(by: 601)
            #expect(try await run(app).sent == 1)
            #expect(try await run(app) == NotificationDispatcher.Report())
            #expect(endpoint.received.count == 1)

            let request = try #require(endpoint.received.first)
            #expect(request.headers.first(name: "Content-Encoding") == "aes128gcm")
            #expect(Int(request.headers.first(name: "TTL") ?? "") ?? 0 > 80_000)
            let topic = try #require(request.headers.first(name: "Topic"))
            #expect(topic.count <= 32 && topic.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
            let authorization = try #require(request.headers.first(name: "Authorization"))
            #expect(authorization.hasPrefix("vapid t="))
            let publicKey = try await app.api.send(.GET, "/push/public-key").body["publicKey"].string
            #expect(authorization.hasSuffix(", k=\(publicKey ?? "-")"))
            try verifyVAPID(authorization, audience: endpoint.baseURL, publicKey: try #require(publicKey), now: app.clock.now)

            let payload = try JSONSerialization.jsonObject(with: try browser.decrypt(request.body)) as? [String: String]
            #expect(payload?["title"] == "A questionnaire is waiting for you")
            #expect(payload?["path"] == "/app/questionnaires/\(promptID.uuidString.lowercased())")
            let click = try #require(payload?["click"])
            #expect(try await app.api.send(.POST, String(click.dropFirst("/api/v1".count)).replacingOccurrences(of: "key=", with: "key=x")).status == .notFound)
            #expect(try await app.api.send(.POST, String(click.dropFirst("/api/v1".count))).status == .noContent)

            let history = try await therapist.send(.GET, "/patients/\(patientID)/notifications")
            #expect(history.body["reachableByPush"].bool == true)
            #expect(history.body["notifications"][0]["status"].string == "clicked")
            #expect(history.body["notifications"][0]["channel"].string == "webpush")
            #expect(try await app.count("audit_events WHERE action = 'notifications.read'") == 1)
        }
        try await endpoint.stop()
    }

    /// Checks the ES256 signature and claims of a VAPID header with the server's public key.
    func verifyVAPID(_ header: String, audience: String, publicKey: String, now: Date) throws {
        let token = String(header.dropFirst("vapid t=".count).prefix { $0 != "," })
        let parts = token.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        let key = try P256.Signing.PublicKey(x963Representation: try #require(Data(base64URLEncoded: publicKey)))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Data(base64URLEncoded: parts[2])))
        #expect(key.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
        let claims = try JSONSerialization.jsonObject(with: try #require(Data(base64URLEncoded: parts[1]))) as? [String: Any]
        #expect(claims?["aud"] as? String == audience)
        #expect(claims?["sub"] as? String == "mailto:ops@interlude.test")
        let expires = claims?["exp"] as? Double ?? 0
        #expect(expires > now.timeIntervalSince1970 && expires <= now.timeIntervalSince1970 + 24 * 3600)
    }

    @Test("a temporary failure is retried after a pause; a gone subscription is disabled and email takes over")
    func retriesAndFallback() async throws {
        let endpoint = try await LocalPushEndpoint.start()
        try await withTestApp { app in
            let (_, patient, patientID, _) = try await setUp(app)
            _ = try await patient.send(.POST, "/me/devices", json: Browser().subscription("\(endpoint.baseURL)/push/one"))
            endpoint.answer(.serviceUnavailable, .gone)
            app.clock.advance(by: 601)
            #expect(try await run(app).retrying == 1)
            let waiting = try #require(try await notifications(app).first)
            #expect(waiting.attempts == 1 && waiting.status == .queued)
            #expect(waiting.nextAttemptAt == app.clock.now.addingTimeInterval(30))
            #expect(try await run(app) == NotificationDispatcher.Report())
            app.clock.advance(by: 31)
            let report = try await run(app)
            #expect(report.sent == 1)
            let sent = try #require(try await notifications(app).first)
            #expect(sent.channel == "email")
            #expect(sent.receipt?.contains("webpush 410") == true)
            #expect(app.mailer.sent.contains { $0.subject == "A questionnaire is waiting for you" })
            let devices = try await patient.send(.GET, "/me/devices")
            #expect(devices.body[0]["active"].bool == false)
            #expect(endpoint.received.count == 2)

            // The therapist's page says how the patient can be reached and what became of the notification.
            let console = ConsoleBrowser(app)
            _ = try await console.signIn("berger@praxis.example")
            let page = try await console.get("/console/patients/\(patientID)")
            #expect(page.html.contains("<dd id=\"reach\">by email only</dd>"))
            #expect(page.html.contains("webpush 410; email accepted"))
        }
        try await endpoint.stop()
    }

    @Test("the push host is checked again when a message is sent: an inside address is not called, a redirect not followed")
    func sendTimeChecks() async throws {
        let endpoint = try await LocalPushEndpoint.start()
        try await withTestApp(settings: { $0.push.allowLoopback = false }) { app in
            let (_, _, patientID, _) = try await setUp(app)
            let browser = Browser()
            // Stored before the rules were as they are now: the address is refused when the message goes out.
            try await DeviceRecord(
                userID: patientID, platform: .webpush, address: "\(endpoint.baseURL)/push/inside",
                p256dh: browser.key.publicKey.x963Representation.base64URLEncoded, auth: browser.auth.base64URLEncoded,
                now: app.clock.now
            ).create(on: app.database)
            app.clock.advance(by: 601)
            #expect(try await run(app).sent == 1)
            #expect(endpoint.received.isEmpty)
            let sent = try #require(try await notifications(app).first)
            #expect(sent.channel == "email")
            #expect(sent.receipt?.contains("inside the network") == true, "\(sent.receipt ?? "")")
            #expect(try await DeviceRecord.query(on: app.database).first()?.disabledAt != nil)
        }
        try await withTestApp { app in
            let (_, patient, _, _) = try await setUp(app)
            _ = try await patient.send(.POST, "/me/devices", json: Browser().subscription("\(endpoint.baseURL)/push/one"))
            endpoint.answer(.temporaryRedirect)
            app.clock.advance(by: 601)
            _ = try await run(app)
            #expect(endpoint.received.map(\.path) == ["/push/one"])
            #expect(try #require(try await notifications(app).first).receipt?.contains("webpush 307") == true)
        }
        try await endpoint.stop()
    }

    @Test("push hosts are resolved at send time and every address must be public")
    func resolution() async throws {
        let inside: NetworkAddress = .v4(0x0A00_0001)
        let outside: NetworkAddress = .v4(0x5DB8_D822)
        let answers: [String: [NetworkAddress]] = ["mixed.example.org": [outside, inside], "push.example.org": [outside]]
        let clients = PushClients(allowLoopback: false) { answers[$0] ?? [] }
        await #expect(throws: PushClients.Refusal.insideAddress) { try await clients.client(for: "mixed.example.org") }
        await #expect(throws: PushClients.Refusal.unresolvable) { try await clients.client(for: "nowhere.example.org") }
        await #expect(throws: PushClients.Refusal.insideAddress) { try await clients.client(for: "0x7f.1") }
        _ = try await clients.client(for: "push.example.org")
        // The system resolver, with the machine's own hosts file.
        let system = PushClients(allowLoopback: false)
        await #expect(throws: PushClients.Refusal.insideAddress) { try await system.client(for: "localhost") }
        #expect(await PushClients.systemResolve("localhost").contains(.v4(0x7F00_0001)))
        await clients.shutdown()
        await system.shutdown()
    }

    @Test("preferences withhold a category and quiet hours postpone; an answered questionnaire is not announced")
    func preferencesAndRelevance() async throws {
        try await withTestApp { app in
            let (_, patient, _, _) = try await setUp(app)
            let off = try await patient.send(
                .PUT, "/me/notification-preferences",
                json: ["questionnaires": false, "interventions": true, "appointments": true, "messages": true])
            #expect(off.status == .ok)
            app.clock.advance(by: 601)
            #expect(try await run(app).withheld == 1)
            #expect(try await notifications(app).first?.receipt == "preference")
            #expect(app.mailer.sent.allSatisfy { $0.subject != "A questionnaire is waiting for you" })

            let refused = try await patient.send(
                .PUT, "/me/notification-preferences",
                json: ["questionnaires": true, "interventions": true, "appointments": true, "messages": true,
                    "quietHours": ["start": "22:00", "end": "22:00"]])
            #expect(refused.status == .unprocessableEntity)
            #expect(refused.body.problemFields == ["quietHours.end"])
            #expect(try await patient.send(.GET, "/me/notification-preferences").body["questionnaires"].bool == false)

            // An appointment tomorrow during quiet hours: the hour-before notice waits for them to end.
            _ = try await patient.send(
                .PUT, "/me/notification-preferences",
                json: ["questionnaires": true, "interventions": true, "appointments": true, "messages": true,
                    "quietHours": ["start": "06:00", "end": "07:30"]])
            let vienna = TimeZone(identifier: "Europe/Vienna")!
            let tomorrow = LocalDate(app.clock.now, in: vienna).adding(days: 1)
            let starts = LocalDateTime(date: tomorrow, time: LocalTime("08:00")!).instant(in: vienna)
            let created = try await patient.send(
                .POST, "/me/appointments",
                json: ["title": "Session", "startsAt": QuestionnaireAPITests.iso(starts),
                    "endsAt": QuestionnaireAPITests.iso(starts.addingTimeInterval(3000))])
            #expect(created.status == .created)
            app.clock.advance(by: starts.timeIntervalSince(app.clock.now) - 3600)
            #expect(try await run(app).postponed == 1)
            let postponed = try #require(try await NotificationRecord.query(on: app.database).filter(\.$category == .appointments).first())
            #expect(postponed.nextAttemptAt == LocalDateTime(date: tomorrow, time: LocalTime("07:30")!).instant(in: vienna))
            app.clock.advance(by: 1800)
            #expect(try await run(app).sent == 1)

            // Answered before its moment: nothing is sent.
            let (_, otherID) = try await app.patient("second@example.org")
            let prompt = PromptRecord(
                patientID: otherID, studyID: nil, assignedBy: nil, instrumentKey: "who-5", instrumentVersion: 1,
                opensAt: app.clock.now.addingTimeInterval(300), closesAt: app.clock.now.addingTimeInterval(7200),
                source: PromptSource.manual, now: app.clock.now)
            try await prompt.create(on: app.database)
            _ = try await run(app)
            prompt.status = PromptStatus.completed
            try await prompt.save(on: app.database)
            app.clock.advance(by: 301)
            #expect(try await run(app).expired == 1)
        }
    }

    @Test("of two dispatchers at once, one sends; a notification held by a crashed one is sent once after its lease")
    func exactlyOnce() async throws {
        let endpoint = try await LocalPushEndpoint.start()
        try await withTestApp { app in
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
            var patients: [UUID] = []
            for index in 0..<6 {
                let (patient, patientID) = try await app.patient("p\(index)@example.org")
                try await app.pair(patient, with: therapist)
                _ = try await patient.send(.POST, "/me/devices", json: Browser().subscription("\(endpoint.baseURL)/push/\(index)"))
                let assigned = try await therapist.send(
                    .POST, "/patients/\(patientID.uuidString)/prompts",
                    json: ["instrumentKey": "who-5", "opensAt": QuestionnaireAPITests.iso(app.clock.now),
                        "closesAt": QuestionnaireAPITests.iso(app.clock.now.addingTimeInterval(86_400))])
                #expect(assigned.status == .created)
                patients.append(patientID)
            }
            _ = try await NotificationOutbox(database: app.database, localizer: app.app.interlude.localizer).collect(now: app.clock.now)
            // One notification is held by a dispatcher that died after claiming it.
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
            async let one = first.dispatch(now: now)
            async let two = other.dispatch(now: now)
            let reports = try await [one, two]
            try await second.asyncShutdown()
            #expect(reports[0].sent + reports[1].sent == 5)
            #expect(endpoint.received.count == 5)
            app.clock.advance(by: NotificationDispatcher.lease + 1)
            #expect(try await run(app).sent == 1)
            #expect(endpoint.received.count == 6)
            #expect(Set(endpoint.received.map(\.path)).count == 6)
            #expect(try await notifications(app).allSatisfy { $0.status == .sent })
        }
        try await endpoint.stop()
    }

    @Test("devices: only https endpoints on public hosts (loopback in tests), valid keys; one's own only")
    func devices() async throws {
        try await withTestApp { app in
            let (patient, _) = try await app.patient()
            let browser = Browser()
            let privateAddress = try await patient.send(.POST, "/me/devices", json: browser.subscription("http://10.0.0.7/push/x"))
            #expect(privateAddress.status == .unprocessableEntity)
            #expect(privateAddress.body.problemFields == ["subscription.endpoint"])
            let badKeys = try await patient.send(
                .POST, "/me/devices",
                json: ["platform": "webpush", "subscription": ["endpoint": "https://push.example.org/x", "keys": ["p256dh": "abc", "auth": "abc"]]])
            #expect(Set(badKeys.body.problemFields) == ["subscription.keys.p256dh", "subscription.keys.auth"])
            #expect(try await patient.send(.POST, "/me/devices", json: ["platform": "apns", "token": "xyz"]).status == .unprocessableEntity)
            #expect(try await app.count("devices") == 0)

            let accepted = try await patient.send(.POST, "/me/devices", json: browser.subscription("https://push.example.org/abc"))
            #expect(accepted.status == .created)
            let again = try await patient.send(.POST, "/me/devices", json: browser.subscription("https://push.example.org/abc"))
            #expect(again.body["id"].string == accepted.body["id"].string)
            let apns = try await patient.send(.POST, "/me/devices", json: ["platform": "apns", "token": .string(String(repeating: "ab", count: 32))])
            #expect(apns.status == .created)
            #expect(try await patient.send(.GET, "/me/devices").body.array.count == 2)

            let (stranger, _) = try await app.patient("stranger@example.org")
            let id = try #require(accepted.body["id"].string)
            #expect(try await stranger.send(.DELETE, "/me/devices/\(id)").status == .notFound)
            #expect(try await patient.send(.DELETE, "/me/devices/\(id)").status == .noContent)
            #expect(try await app.count("devices") == 1)
            #expect(try await app.api.send(.POST, "/me/devices", json: browser.subscription("https://push.example.org/abc")).status == .unauthorized)
        }
    }

    @Test("a therapist sees only their own patients' notifications")
    func therapistIsolation() async throws {
        try await withTestApp { app in
            let (_, _, patientID, _) = try await setUp(app)
            let (huber, _) = try await app.staff("therapist", "huber@praxis.example")
            #expect(try await huber.send(.GET, "/patients/\(patientID)/notifications").status == .notFound)
            let (patient, _) = try await app.patient("nosy@example.org")
            #expect(try await patient.send(.GET, "/patients/\(patientID)/notifications").status == .forbidden)
        }
    }
}
