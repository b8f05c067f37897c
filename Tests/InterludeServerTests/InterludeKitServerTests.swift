import Fluent
import Foundation
import HTTPTypes
import InterludeCore
import OpenAPIRuntime
import Testing
import VaporTesting

@testable import InterludeKit
@testable import InterludeServer

/// InterludeKit against the real server over HTTP: what a native app built on the SDK does.
@Suite("InterludeKit against a running server")
struct InterludeKitServerTests {
    /// A device: a client signed in as the patient, an offline store and a sync engine.
    struct Device {
        let client: InterludeClient
        let store: OfflineStore
        let engine: SyncEngine

        static func signedIn(_ url: URL, _ email: String = "patient@example.org", clock: TestClock) async throws
            -> Device
        {
            let client = sdkClient(url)
            try await client.signIn(email: email, password: TestContext.password)
            let store = try OfflineStore.inMemory()
            return Device(
                client: client, store: store, engine: SyncEngine(client: client, store: store, now: { clock.now }))
        }
    }

    static let phq = (1...9).map { "phq9_\($0)" }

    @Test("sign in, pull with cursor and ETag, answer offline, send twice: one response; a refused answer is reported")
    func answerOffline() async throws {
        try await withTestApp { app in
            let (_, patient, patientID, promptID) = try await QuestionnaireAPITests().setUp(app)
            try await withListeningServer(app) { url in
                let wrong = sdkClient(url)
                await #expect(throws: InterludeKit.Problem.self) {
                    try await wrong.signIn(email: "patient@example.org", password: "not the password")
                }
                let device = try await Device.signedIn(url, clock: app.clock)
                #expect(try await device.client.account().id == patientID)
                let first = try await device.engine.sync()
                #expect(first.changed)
                let prompt = try #require(try device.store.prompt(UUID(uuidString: promptID)!))
                #expect(try device.store.definition(key: "phq-9", version: prompt.instrumentVersion)?.items.count == 10)
                // Nothing changed: once the changes since the cursor were taken, the ETag makes each pull a 304.
                try await device.engine.sync()
                let (cursor, etag) = try device.store.cursor
                guard case .notModified = try await device.client.pull(since: cursor, etag: etag) else {
                    Issue.record("an unchanged state was sent again")
                    return
                }
                #expect(try await device.engine.sync().changed == false)

                // Opened online: the questionnaire and the crisis support for item 9, which the app checks offline.
                let detail = try await device.client.prompt(prompt.id)
                #expect(
                    detail.definition == (try device.store.definition(key: "phq-9", version: prompt.instrumentVersion)))
                let crisis = try #require(detail.crisis)
                #expect(!crisis.isCalledFor(by: ["phq9_9": .text("0")], in: detail.definition))
                #expect(crisis.isCalledFor(by: ["phq9_9": .text("1")], in: detail.definition))

                // Offline: every answer is kept at once, the submission waits.
                app.clock.advance(by: 600)
                let session = try QuestionnaireSession(prompt: prompt.id, store: device.store)
                for item in Self.phq { try session.answer(item, .text("1"), at: app.clock.now) }
                let response = try session.submit(at: app.clock.now)
                #expect(try device.store.prompt(prompt.id)?.status == .completed)
                let pending = try device.store.pending()
                #expect(pending.count == 1)
                // The first attempt reaches the server but its answer is lost; the engine sends the same change again.
                let lost = try await device.client.push(pending.map { ($0.id, $0.change) })
                #expect(lost == [.applied(replayed: false)])
                let again = try await device.engine.sync()
                #expect(again.applied == 1)
                #expect(try device.store.pending().isEmpty && device.store.draft(for: prompt.id) == nil)
                #expect(try await app.count("responses") == 1)
                let stored = try #require(try await ResponseRecord.find(response.id, on: app.database))
                #expect(stored.$prompt.id == prompt.id && stored.startedAt != nil)
                #expect(try device.store.prompt(prompt.id)?.status == .completed)

                // An answer the server refuses (the prompt is answered) is reported once, and nothing is stored.
                try device.store.enqueue(
                    .response(
                        ResponseSubmission(
                            promptID: prompt.id, instrumentKey: "phq-9", version: prompt.instrumentVersion,
                            answers: Dictionary(uniqueKeysWithValues: Self.phq.map { ($0, AnswerValue.text("3")) }),
                            startedAt: nil,
                            completedAt: app.clock.now)), label: "PHQ-9", at: app.clock.now)
                let refused = try await device.engine.sync()
                #expect(refused.refused == 1)
                #expect(try device.store.refusals().first?.change.label == "PHQ-9")
                #expect(try await app.count("responses") == 1)
                _ = patient
            }
        }
    }

    @Test(
        "two devices: an edit on an old version is a conflict with both versions; settled, it applies; a deletion reaches the other"
    )
    func conflictAndTombstone() async throws {
        try await withTestApp { app in
            let (patient, _) = try await app.patient()
            try await app.pair(patient, with: try await app.staff("therapist", "berger@praxis.example").client)
            try await withListeningServer(app) { url in
                let phone = try await Device.signedIn(url, clock: app.clock)
                let tablet = try await Device.signedIn(url, clock: app.clock)
                let id = UUID()
                let start = app.clock.now.addingTimeInterval(2 * 86_400).roundedToFiveMinutes
                let draft = AppointmentDraft(title: "Session", startsAt: start, endsAt: start.addingTimeInterval(3000))
                try phone.store.enqueue(.createAppointment(id: id, draft), at: app.clock.now)
                try await phone.engine.sync()
                try await tablet.engine.sync()
                let base = try #require(try tablet.store.appointment(id))
                #expect(base.title == "Session")

                var moved = draft
                moved.title = "Session (moved)"
                try phone.store.enqueue(.updateAppointment(id: id, baseVersion: base.version, moved), at: app.clock.now)
                try await phone.engine.sync()
                var renamed = draft
                renamed.title = "Session with Dr. Berger"
                try tablet.store.enqueue(
                    .updateAppointment(id: id, baseVersion: base.version, renamed), at: app.clock.now)
                let report = try await tablet.engine.sync()
                let conflict = try #require(report.conflicts.first)
                guard case .appointment(let server) = conflict.server else {
                    Issue.record("no server version in \(conflict)")
                    return
                }
                #expect(server.title == "Session (moved)" && server.version == base.version + 1)
                #expect(conflict.local == .updateAppointment(id: id, baseVersion: base.version, renamed))
                #expect(try tablet.store.conflicts() == [conflict])
                // The device shows the server's version until the person decides.
                #expect(try tablet.store.appointment(id)?.title == "Session (moved)")
                try await tablet.engine.resolve(conflict, keepServer: false)
                #expect(try await tablet.engine.sync().applied == 1)
                #expect(try tablet.store.conflicts().isEmpty)
                try await phone.engine.sync()
                #expect(try phone.store.appointment(id)?.title == "Session with Dr. Berger")

                // Deleted on the tablet, gone from the phone at its next pull.
                let current = try #require(try tablet.store.appointment(id))
                try tablet.store.enqueue(.deleteAppointment(id: id, baseVersion: current.version), at: app.clock.now)
                try await tablet.engine.sync()
                try await phone.engine.sync()
                #expect(try phone.store.appointment(id) == nil)
                #expect(try await AppointmentRecord.find(id, on: app.database) == nil)
            }
        }
    }

    @Test(
        "a session the therapist booked reaches the device as theirs, not the person's to change; an own one stays changeable"
    )
    func therapistsSession() async throws {
        try await withTestApp { app in
            let (therapist, patient, patientID, _) = try await QuestionnaireAPITests().setUp(app)
            let start = app.clock.now.addingTimeInterval(3 * 86_400).roundedToFiveMinutes
            let booked = try await therapist.send(
                .POST, "/patients/\(patientID)/appointments",
                json: [
                    "title": "Session", "startsAt": QuestionnaireAPITests.iso(start),
                    "endsAt": QuestionnaireAPITests.iso(start.addingTimeInterval(3000)),
                ])
            try #require(booked.status == .created, "\(booked.text)")
            let own = try await patient.send(
                .POST, "/me/appointments",
                json: [
                    "title": "Dentist", "startsAt": QuestionnaireAPITests.iso(start.addingTimeInterval(86_400)),
                    "endsAt": QuestionnaireAPITests.iso(start.addingTimeInterval(86_400 + 1800)),
                ])
            try #require(own.status == .created, "\(own.text)")
            try await withListeningServer(app) { url in
                let device = try await Device.signedIn(url, clock: app.clock)
                try await device.engine.sync()
                let sessions = try device.store.appointments()
                #expect(sessions.map(\.title) == ["Session", "Dentist"])
                #expect(sessions.map(\.bookedBy) == [.therapist, .patient])
                #expect(sessions.map(\.isChangeable) == [false, true])
            }
        }
    }

    @Test("an answer to a study the person left with erasure is dropped from the device, not reported")
    func erased() async throws {
        try await withTestApp { app in
            let (researcher, _) = try await app.staff("researcher", "lead@uni.example")
            let study = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            let plan = try await researcher.send(
                .POST, "/studies/\(study)/plans",
                json: ["instrumentKey": "phq-9", "durationMinutes": 10080, "pattern": ["kind": "once"]])
            try #require(plan.status == .created, "\(plan.text)")
            let (patient, _) = try await app.patient()
            try await withListeningServer(app) { url in
                let device = try await Device.signedIn(url, clock: app.clock)
                await #expect(throws: InterludeKit.Problem.self) {
                    try await device.client.join(study: UUID(uuidString: study)!, consentVersion: "1999-1")
                }
                try await device.client.join(study: UUID(uuidString: study)!, consentVersion: "2026-1")
                try await device.engine.sync()
                let prompt = try #require(try device.store.prompts().first)
                let session = try QuestionnaireSession(prompt: prompt.id, store: device.store)
                for item in Self.phq { try session.answer(item, .text("2"), at: app.clock.now) }
                try session.submit(at: app.clock.now)
                let left = try await patient.send(.DELETE, "/studies/\(study)/enrollment?erase=true")
                try #require(left.status == .ok || left.status == .noContent, "\(left.text)")
                let report = try await device.engine.sync()
                #expect(report.erased == 1 && report.refused == 0)
                #expect(
                    try device.store.prompts().isEmpty && device.store.pending().isEmpty
                        && device.store.refusals().isEmpty)
                #expect(try await app.count("responses") == 0)
            }
        }
    }

    @Test("notification paradata from the device: first times kept, opened counts as opened, impossible times refused")
    func paradata() async throws {
        try await withTestApp { app in
            let (_, _, _, promptID) = try await QuestionnaireAPITests().setUp(app)
            try await withListeningServer(app) { url in
                let device = try await Device.signedIn(url, clock: app.clock)
                let pending = PendingSystemNotifications()
                let scheduler = NotificationScheduler(
                    store: device.store, center: pending, now: { app.clock.now },
                    timeZone: { TimeZone(identifier: "Europe/Vienna")! })
                await scheduler.follow(device.engine)
                try await device.engine.sync()
                // The sync planned the prompt's reminder (it is open already) and noted it as planned.
                let prompt = UUID(uuidString: promptID)!
                #expect(await pending.identifiers == ["\(promptID).reminder"])
                #expect(
                    try device.store.notificationEvents(for: prompt).keys.sorted { $0.rawValue < $1.rawValue } == [
                        .planned
                    ])
                let planned = app.clock.now
                app.clock.advance(by: 60)
                try device.store.recordNotification(.delivered, prompt: prompt, at: app.clock.now)
                try device.store.recordNotification(.opened, prompt: prompt, at: app.clock.now.addingTimeInterval(30))
                #expect(try await device.engine.sync().applied == 3)
                let record = try #require(try await PromptRecord.find(prompt, on: app.database))
                #expect(record.devicePlannedAt == planned && record.deviceNotifiedAt == app.clock.now)
                #expect(record.openedAt == app.clock.now.addingTimeInterval(30))
                // A time an hour ahead of the server's clock, and someone else's prompt, are refused; nothing changes.
                let outcomes = try await device.client.push([
                    (UUID(), .notification(promptID: prompt, .delivered, at: app.clock.now.addingTimeInterval(3600))),
                    (UUID(), .notification(promptID: UUID(), .opened, at: app.clock.now)),
                ])
                guard case .rejected(let late) = outcomes[0], case .rejected(let unknown) = outcomes[1] else {
                    Issue.record("accepted: \(outcomes)")
                    return
                }
                #expect(late.fields.map(\.field) == ["notification.at"] && unknown.fields.map(\.field) == ["promptId"])
                #expect(try await PromptRecord.find(prompt, on: app.database)?.deviceNotifiedAt == app.clock.now)
            }
        }
    }
}

extension InterludeKitServerTests {
    @Test("one sync at a time: a sync asked for while one runs joins it; the next one runs anew")
    func singleFlight() async throws {
        try await withTestApp { app in
            _ = try await QuestionnaireAPITests().setUp(app)
            try await withListeningServer(app) { url in
                let requests = RequestCount()
                let client = InterludeClient(
                    serverURL: url, middlewares: [OneShotConnections(address: "198.51.100.41"), requests])
                try await client.signIn(email: "patient@example.org", password: TestContext.password)
                let engine = SyncEngine(client: client, store: try OfflineStore.inMemory(), now: { app.clock.now })
                async let first = engine.sync()
                async let second = engine.sync()
                let (one, two) = try await (first, second)
                #expect(one.changed && two.changed)
                #expect(await requests.count("pullChanges") == 1)
                try await engine.sync()
                #expect(await requests.count("pullChanges") == 2)
            }
        }
    }
}

/// Counts the requests a client sends, by operation.
actor RequestCount: ClientMiddleware {
    private var counts: [String: Int] = [:]

    func count(_ operation: String) -> Int { counts[operation] ?? 0 }

    nonisolated func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        await record(operationID)
        return try await next(request, body, baseURL)
    }

    private func record(_ operation: String) {
        counts[operation, default: 0] += 1
    }
}

/// The system's pending notifications, as the operating system keeps them.
actor PendingSystemNotifications: LocalNotificationCenter {
    private(set) var identifiers: Set<String> = []

    func pendingIdentifiers() async -> Set<String> { identifiers }
    func add(_ notification: NotificationPlanner.Planned) async throws { identifiers.insert(notification.id) }
    func remove(_ identifiers: [String]) async { self.identifiers.subtract(identifiers) }
}

extension Date {
    /// On the five-minute grid appointments use.
    var roundedToFiveMinutes: Date {
        Date(timeIntervalSince1970: (timeIntervalSince1970 / 300).rounded(.up) * 300)
    }
}
