import Crypto
import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting
import ZIPFoundation

@testable import InterludeServer

/// A research study with arms, on 2 March 2026 (t0, 08:00 UTC), and four participants, all in Vienna at first:
/// Ada answered her first prompt (after a notification and a reminder), let the second expire and has one ahead;
/// Ben moved to New York on 3 March and answered a prompt late on 8 March there, the day the US clocks went
/// forward; Cleo answered and then withdrew; Dan answered but never agreed to share with research.
struct ExportWorld {
    let researcher: APIClient
    let studyID: String
    let ada: String
    let ben: String
    let cleo: String
    let dan: String
    let adaFirst: UUID
    let adaExpired: UUID
    let adaAhead: UUID
    let benLate: UUID

    static func build(_ app: TestContext) async throws -> ExportWorld {
        let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
        let studyID = try await StudyAPITests().createStudy(
            researcher, StudyAPITests.study("open").merging(["arms": ["app", "control"], "allocation": "alternating"]))
        let study = try #require(UUID(uuidString: studyID))
        var clients: [APIClient] = []
        var ids: [UUID] = []
        for (email, shares) in [
            ("ada@example.org", true), ("ben@example.org", true), ("cleo@example.org", true),
            ("dan@example.org", false),
        ] {
            let (client, id) = try await app.patient(email, shareWithResearch: shares)
            let joined = try await StudyAPITests.join(client, studyID)
            try #require(joined.status == .created, "\(joined.text)")
            clients.append(client)
            ids.append(id)
        }
        let t0 = app.clock.now
        func prompt(_ patient: UUID, opens: Date, hours: Double = 2) async throws -> UUID {
            let record = PromptRecord(
                patientID: patient, studyID: study, assignedBy: nil, instrumentKey: "mood-vas", instrumentVersion: 1,
                opensAt: opens,
                closesAt: opens.addingTimeInterval(hours * 3600), source: .schedule, now: app.clock.now)
            try await record.create(on: app.database)
            return try record.requireID()
        }
        func answer(_ client: APIClient, _ promptID: UUID, mood: Int, note: String?) async throws {
            let completed = app.clock.now
            let reply = try await client.send(
                .POST, "/me/responses",
                json: [
                    "id": .string(UUID().uuidString), "promptId": .string(promptID.uuidString),
                    "instrumentKey": "mood-vas", "version": 1,
                    "answers": ["mood": .int(mood), "note": JSONValue(note)],
                    "startedAt": QuestionnaireAPITests.iso(completed.addingTimeInterval(-60)),
                    "completedAt": QuestionnaireAPITests.iso(completed),
                ])
            try #require(reply.status == .created, "\(reply.text)")
        }
        let moved = try await clients[1].send(.PATCH, "/me", json: ["timeZone": "America/New_York"])
        try #require(moved.status == .ok || moved.status == .noContent, "\(moved.text)")

        let adaFirst = try await prompt(ids[0], opens: t0.addingTimeInterval(3600))
        let adaExpired = try await prompt(ids[0], opens: t0.addingTimeInterval(86_400))
        let adaAhead = try await prompt(ids[0], opens: t0.addingTimeInterval(30 * 86_400))
        let cleoFirst = try await prompt(ids[2], opens: t0.addingTimeInterval(3600))
        let danFirst = try await prompt(ids[3], opens: t0.addingTimeInterval(3600))
        // 03:30 UTC on 9 March: 23:30 on 8 March in New York, on summer time since 07:00 UTC that day.
        let benLate = try await prompt(ids[1], opens: Date(timeIntervalSince1970: 1_773_027_000))
        for (key, minutes) in [("open", 0), ("reminder:30", 30)] {
            let notification = NotificationRecord(
                userID: ids[0], category: .questionnaires, dedupeKey: "prompt:\(adaFirst):\(key):x", title: "t",
                body: "b", path: "/app",
                dueAt: t0.addingTimeInterval(3600 + Double(minutes) * 60), expiresAt: t0.addingTimeInterval(3 * 3600),
                now: t0)
            notification.promptID = adaFirst
            notification.status = .sent
            notification.sentAt = notification.dueAt
            notification.channel = "webpush"
            try await notification.create(on: app.database)
        }
        let withheld = NotificationRecord(
            userID: ids[0], category: .questionnaires, dedupeKey: "prompt:\(adaExpired):open:x", title: "t", body: "b",
            path: "/app", dueAt: t0.addingTimeInterval(86_400), expiresAt: t0.addingTimeInterval(86_400 + 3600), now: t0
        )
        withheld.promptID = adaExpired
        withheld.status = .withheld
        withheld.miss = .quietHours
        try await withheld.create(on: app.database)

        app.clock.advance(by: 3600 + 40 * 60)
        try await answer(clients[0], adaFirst, mood: 62, note: "tired, \"but\" fine")
        try await answer(clients[2], cleoFirst, mood: 40, note: nil)
        try await answer(clients[3], danFirst, mood: 80, note: nil)
        let left = try await clients[2].send(.DELETE, "/studies/\(studyID)/enrollment")
        try #require(left.status == .noContent, "\(left.text)")
        app.clock.advance(by: Date(timeIntervalSince1970: 1_773_027_900).timeIntervalSince(app.clock.now))
        try await answer(clients[1], benLate, mood: 55, note: nil)
        app.clock.advance(by: 86_400)

        func pseudonym(_ client: APIClient) async throws -> String {
            try await client.send(.GET, "/me").decoded(Components.Schemas.User.self).patient?.pseudonym ?? ""
        }
        return ExportWorld(
            researcher: researcher, studyID: studyID, ada: try await pseudonym(clients[0]),
            ben: try await pseudonym(clients[1]),
            cleo: try await pseudonym(clients[2]), dan: try await pseudonym(clients[3]), adaFirst: adaFirst,
            adaExpired: adaExpired,
            adaAhead: adaAhead, benLate: benLate)
    }

    /// Asks for an export, lets the job write it, downloads it and answers its files by path.
    func export(_ app: TestContext, since: String? = nil) async throws -> (id: String, files: [String: Data]) {
        try await Self.export(app, researcher: researcher, studyID: studyID, since: since)
    }

    /// An export of the study asked for, written and downloaded: its id and its files.
    static func export(
        _ app: TestContext, researcher: APIClient, studyID: String, since: String? = nil
    ) async throws -> (id: String, files: [String: Data]) {
        let query =
            since.map { "?since=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") } ?? ""
        let started = try await researcher.send(.POST, "/studies/\(studyID)/exports\(query)")
        try #require(started.status == .accepted, "\(started.text)")
        let id = try started.decoded(Components.Schemas.StudyExport.self).id
        _ = try await ExportService(database: app.database, services: app.app.interlude).runPending()
        let file = try await researcher.send(.GET, "/exports/\(id)/file")
        let status = try await researcher.send(.GET, "/exports/\(id)").text
        try #require(file.status == .ok, "\(file.text) \(status)")
        return (id, try Self.unpack(file.data))
    }

    static func unpack(_ data: Data) throws -> [String: Data] {
        let archive = try Archive(data: data, accessMode: .read)
        var files: [String: Data] = [:]
        for entry in archive {
            var content = Data()
            _ = try archive.extract(entry) { content.append($0) }
            files[entry.path] = content
        }
        return files
    }
}

/// A CSV file read as rows of named fields.
struct CSVTable {
    let header: [String]
    let rows: [[String: String]]

    init(_ data: Data?) throws {
        let parsed = CSV.parse(String(decoding: try #require(data), as: UTF8.self))
        header = parsed.first ?? []
        rows = parsed.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(parsed[0], $0).map { ($0, $1) }) }
    }

    func rows(where column: String, is value: String) -> [[String: String]] {
        rows.filter { $0[column] == value }
    }
}

@Suite("Exports: the package a researcher downloads")
struct ExportPackageTests {
    @Test(
        "participants.csv holds those enrolled who share with research, with arm and time zones; not those who withdrew or never shared"
    )
    func participants() async throws {
        try await withTestApp { app in
            // setup
            let world = try await ExportWorld.build(app)

            // act
            let (_, files) = try await world.export(app)

            // verify
            let participants = try CSVTable(files["participants.csv"])
            #expect(Set(participants.rows.compactMap { $0["pseudonym"] }) == [world.ada, world.ben])
            let ben = try #require(participants.rows(where: "pseudonym", is: world.ben).first)
            #expect(ben["time_zone"] == "America/New_York")
            #expect(ben["time_zones"] == "Europe/Vienna|America/New_York")
            #expect(["app", "control"].contains(ben["arm"]))
            let ada = try #require(participants.rows(where: "pseudonym", is: world.ada).first)
            #expect(
                ada["enrolled_utc"] == "2026-03-02T08:00:00.000Z"
                    && ada["enrolled_local"] == "2026-03-02T09:00:00.000+01:00")
            #expect(ada["planned"] == "2" && ada["answered"] == "1" && ada["expired"] == "1" && ada["rate"] == "0.5")
            let zones = try CSVTable(files["time_zones.csv"])
            #expect(
                zones.rows(where: "pseudonym", is: world.ben).map { $0["time_zone"] } == [
                    "Europe/Vienna", "America/New_York",
                ])
            let allocations = try CSVTable(files["allocations.csv"])
            #expect(allocations.rows.count == 2)
            #expect(allocations.rows.compactMap { $0["sequence"] }.sorted() == ["1", "2"])
            #expect(allocations.rows.allSatisfy { $0["method"] == "inTurn" && $0["kind"] == "drawn" })
            #expect(allocations.rows.allSatisfy { $0["recorded_by"] == "design" && $0["seed"] == "" })
            #expect(Set(allocations.rows.map { $0["arm"] }) == ["app", "control"])
            for name in files.keys { #expect(!name.isEmpty) }
            let everything = files.values.map { String(decoding: $0, as: UTF8.self) }.joined()
            for absent in [world.cleo, world.dan, "ada@example.org", "ben@example.org"] {
                #expect(!everything.contains(absent))
            }
        }
    }

    @Test("allocations.csv gives the seed of the study's random choices once the study is closed, never before")
    func allocationSeed() async throws {
        try await withTestApp { app in
            // setup
            let world = try await ExportWorld.build(app)
            let (_, running) = try await world.export(app)
            let study = try #require(try await StudyRecord.find(UUID(uuidString: world.studyID), on: app.database))
            let seed = try #require(StudyArms.design(of: study)?.seed)
            study.status = .closed
            try await study.save(on: app.database)
            // act
            let (_, closed) = try await world.export(app)
            // verify
            #expect(try CSVTable(running["allocations.csv"]).rows.allSatisfy { $0["seed"] == "" })
            let rows = try CSVTable(closed["allocations.csv"]).rows
            #expect(!rows.isEmpty && rows.allSatisfy { $0["seed"] == String(seed) })
        }
    }

    @Test(
        "prompts.csv has a row per planned occurrence, the expired and the future ones too, with study day, beep and delivery"
    )
    func prompts() async throws {
        try await withTestApp { app in
            // setup
            let world = try await ExportWorld.build(app)

            // act
            let (_, files) = try await world.export(app)

            // verify
            let prompts = try CSVTable(files["prompts.csv"])
            #expect(prompts.rows.count == 4)
            let first = try #require(prompts.rows(where: "prompt_id", is: world.adaFirst.uuidString.lowercased()).first)
            #expect(
                first["status"] == "completed" && first["source"] == "plan" && first["instrument_key"] == "mood-vas")
            #expect(first["day_n"] == "1" && first["beep_n"] == "1" && first["obs_n"] == "1")
            #expect(
                first["notified_utc"] == "2026-03-02T09:00:00.000Z" && first["reminders_sent"] == "1"
                    && first["channel"] == "webpush")
            #expect(
                first["submitted_utc"] == "2026-03-02T09:40:00.000Z"
                    && first["submitted_local"] == "2026-03-02T10:40:00.000+01:00")
            let expired = try #require(
                prompts.rows(where: "prompt_id", is: world.adaExpired.uuidString.lowercased()).first)
            #expect(expired["status"] == "expired" && expired["day_n"] == "2" && expired["obs_n"] == "2")
            #expect(expired["expired_utc"] == "2026-03-03T10:00:00.000Z" && expired["submitted_utc"] == "")
            #expect(
                expired["outcome"] == "expired_undelivered" && expired["outcome_reason"] == "quiet_hours",
                "its only notification fell into quiet hours")
            #expect(first["outcome"] == "completed" && first["outcome_reason"] == "")
            #expect(
                first["quality_flags"] == "" && first["fast_share"] == "" && first["longstring"] == "1",
                "no item times from this phone; the rest worked out")
            #expect(expired["longstring"] == "" && expired["quality_flags"] == "")
            let ahead = try #require(prompts.rows(where: "prompt_id", is: world.adaAhead.uuidString.lowercased()).first)
            #expect(ahead["status"] == "scheduled" && ahead["day_n"] == "31" && ahead["outcome"] == "pending")
            let late = try #require(prompts.rows(where: "prompt_id", is: world.benLate.uuidString.lowercased()).first)
            #expect(late["time_zone"] == "America/New_York")
            #expect(
                late["scheduled_utc"] == "2026-03-09T03:30:00.000Z"
                    && late["scheduled_local"] == "2026-03-08T23:30:00.000-04:00")
            #expect(late["day_n"] == "7")
        }
    }

    @Test("answers come long, wide per instrument version, as scores, in esm.csv and as FHIR; compliance per study day")
    func answers() async throws {
        try await withTestApp { app in
            // setup
            let world = try await ExportWorld.build(app)

            // act
            let (_, files) = try await world.export(app)

            // verify
            let long = try CSVTable(files["responses_long.csv"])
            let mood = try #require(long.rows.first { $0["pseudonym"] == world.ada && $0["item_id"] == "mood" })
            #expect(
                mood["raw"] == "62" && mood["numeric"] == "62" && mood["shown"] == "1"
                    && mood["prompt_id"] == world.adaFirst.uuidString.lowercased())
            let note = try #require(long.rows.first { $0["pseudonym"] == world.ada && $0["item_id"] == "note" })
            #expect(note["raw"] == "tired, \"but\" fine")
            let wide = try CSVTable(files["mood-vas_v1.csv"])
            #expect(
                Array(wide.header.prefix(9)) == [
                    "record_id", "prompt_id", "response_id", "day_n", "beep_n", "obs_n", "submitted_utc",
                    "submitted_local", "time_zone",
                ])
            #expect(wide.header.contains("mood") && wide.header.contains("note"))
            #expect(wide.rows.compactMap { $0["record_id"] }.sorted() == [world.ada, world.ben].sorted())
            let esm = try CSVTable(files["esm.csv"])
            #expect(
                Array(esm.header.prefix(9)) == [
                    "id", "obsno", "daycum", "beepno", "valid", "scheduled", "sent", "start", "end",
                ])
            #expect(esm.rows(where: "id", is: world.ada).map { $0["valid"] } == ["1", "0", "0"])
            #expect(esm.rows(where: "id", is: world.ada).first?["mood"] == "62")
            let compliance = try CSVTable(files["compliance.csv"])
            #expect(
                compliance.rows(where: "pseudonym", is: world.ada).map {
                    [$0["day_n"], $0["answered"], $0["expired"], $0["rate"]]
                } == [
                    ["1", "1", "0", "1"], ["2", "0", "1", "0"],
                ])
            let scores = try CSVTable(files["scores.csv"])
            let adaScore = try #require(scores.rows(where: "pseudonym", is: world.ada).first)
            #expect(
                adaScore["score"] == "mood" && adaScore["value"] == "62"
                    && adaScore["prompt_id"] == world.adaFirst.uuidString.lowercased())
            #expect(wide.header.contains("score_mood"))
            let consents = try CSVTable(files["consents.csv"])
            #expect(
                Set(consents.rows(where: "pseudonym", is: world.ada).compactMap { $0["document"] }) == [
                    "studyConsent", "researchSharing",
                ])
            let joined = try #require(
                consents.rows(where: "pseudonym", is: world.ada).first { $0["document"] == "studyConsent" })
            #expect(
                joined["modules"] == "participation=yes" && joined["method"] == "joining"
                    && joined["replaced_utc"] == "")
            let fhirConsents = String(decoding: try #require(files["fhir/Consent.ndjson"]), as: UTF8.self).split(
                separator: "\n")
            #expect(fhirConsents.count == 2, "one study consent for each participant")
            #expect(
                fhirConsents.allSatisfy {
                    $0.contains("\"resourceType\":\"Consent\"") && $0.contains("\"code\":\"research\"")
                })
            #expect(fhirConsents.contains { $0.contains(world.ada) })
            let fhir = String(decoding: try #require(files["fhir/QuestionnaireResponse.ndjson"]), as: UTF8.self)
            #expect(fhir.split(separator: "\n").count == 2)
            #expect(fhir.contains("\"resourceType\":\"QuestionnaireResponse\"") && fhir.contains(world.ben))
            let questionnaires = String(decoding: try #require(files["fhir/Questionnaire.ndjson"]), as: UTF8.self)
            #expect(questionnaires.split(separator: "\n").count == 1)
        }
    }

    @Test("README.txt, a REDCap dictionary that reads back, codebook.json and checksums of every file")
    func documentation() async throws {
        try await withTestApp { app in
            // setup
            let world = try await ExportWorld.build(app)

            // act
            let (_, files) = try await world.export(app)

            // verify
            let readme = String(decoding: try #require(files["README.txt"]), as: UTF8.self)
            #expect(
                readme.contains("Stress study (open)") && readme.contains("mood-vas version 1")
                    && readme.contains("Participants: 2"))
            let dictionary = String(decoding: try #require(files["codebook.csv"]), as: UTF8.self)
            let imported = try REDCapImport.instruments(fromCSV: dictionary)
            #expect(imported.instruments.map(\.key) == ["mood-vas"])
            #expect(imported.instruments.first?.items.map(\.id) == ["mood", "note"])
            let codebook =
                try JSONSerialization.jsonObject(with: try #require(files["codebook.json"])) as? [String: Any]
            #expect((codebook?["forms"] as? [[String: Any]])?.first?["form"] as? String == "mood_vas_v1")
            let sums = String(decoding: try #require(files["checksums.txt"]), as: UTF8.self).split(separator: "\n")
            #expect(sums.count == files.count - 1)
            for line in sums {
                let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
                let path = parts[1].trimmingCharacters(in: .whitespaces)
                let content = try #require(files[path], "\(path) is listed but not in the zip")
                #expect(SHA256.hash(data: content).map { String(format: "%02x", $0) }.joined() == parts[0], "\(path)")
            }
        }
    }

    @Test(
        "context.csv holds the position and noise level kept with answers, only of those who allowed it; a study asking for none has no such file"
    )
    func context() async throws {
        try await withTestApp { app in
            // setup: Ada allows context, Ben does not; both answer the daily questionnaire, which asks for it
            let consents = ConsentVersionTests()
            let study = try await consents.study(app)
            try #require(try await consents.addVersion(study, "2026-2", modules: ["context"]).status == .created)
            let (ada, adaID) = try await app.patient("ida@example.org")
            let (ben, benID) = try await app.patient("jon@example.org")
            try #require(
                try await StudyAPITests.join(ada, study.id, ["consentVersion": "2026-2", "modules": ["context": true]])
                    .status == .created)
            try #require(
                try await StudyAPITests.join(
                    ben, study.id, ["consentVersion": "2026-2", "modules": ["context": false]]
                ).status == .created)
            let context = ConsentVersionTests.context(app)
            let capturedAt = app.clock.now
            try #require(
                try await consents.answer(ada, adaID, in: study, answering: .daily, context: context, app).status
                    == .created)
            // Ben's answer was captured with context on a device before he declined it, and sent since.
            let bensPrompt = try await consents.openPrompt(benID, in: study, .daily, app)
            let bens = try await SyncTests().push(
                ben,
                [
                    [
                        "id": .string(UUID().uuidString), "type": "response",
                        "response": ConsentVersionTests.response(
                            prompt: bensPrompt, answering: .daily, context: context, app),
                    ]
                ])
            try #require(bens.results.map(\.status) == [.applied])
            let world = ExportWorld(
                researcher: study.researcher, studyID: study.id, ada: "", ben: "", cleo: "", dan: "", adaFirst: UUID(),
                adaExpired: UUID(), adaAhead: UUID(), benLate: UUID())
            let moodOnly = try await ExportWorld.build(app)

            // act
            let files = try await world.export(app).files
            let withoutContext = try await moodOnly.export(app).files

            // verify
            let table = try CSVTable(files["context.csv"])
            let adaPseudonym = try await ada.send(.GET, "/me").body["patient"]["pseudonym"].string
            #expect(table.rows.count == 1)
            let row = try #require(table.rows.first)
            #expect(row["pseudonym"] == adaPseudonym)
            #expect(row["instrument_key"] == "tys-daily" && row["instrument_version"] == "2")
            #expect(row["latitude"] == "48.2" && row["longitude"] == "16.37" && row["accuracy_m"] == "25")
            #expect(row["dbfs"] == "-42.5" && row["noise_duration_s"] == "3")
            #expect(row["location_utc"] == ExportTime(capturedAt, in: .gmt).utc)
            #expect(row["noise_local"]?.isEmpty == false && row["time_zone"]?.isEmpty == false)
            #expect(String(decoding: try #require(files["README.txt"]), as: UTF8.self).contains("context.csv"))
            #expect(withoutContext["context.csv"] == nil)
        }
    }

    @Test("birth year and gender are exported only when the study asks for them, the date of birth never")
    func demographics() async throws {
        try await withTestApp { app in
            // setup: Ada's therapist recorded her date of birth and gender at pairing
            let world = try await ExportWorld.build(app)
            let ada = try #require(
                try await PatientProfileRecord.query(on: app.database).filter(\.$pseudonym == world.ada).first())
            ada.dateOfBirth = "1990-05-17"
            ada.gender = "female"
            try await ada.save(on: app.database)
            let (_, unasked) = try await world.export(app)

            // act
            let changed = try await world.researcher.send(
                .PUT, "/studies/\(world.studyID)",
                json: StudyAPITests.study("open").merging([
                    "arms": ["app", "control"], "allocation": "alternating", "asksDemographics": true,
                ]))
            let (_, asked) = try await world.export(app)

            // verify
            #expect(changed.status == .ok && changed.body["asksDemographics"].bool == true)
            #expect(try !CSVTable(unasked["participants.csv"]).header.contains("birth_year"))
            let row = try #require(
                try CSVTable(asked["participants.csv"]).rows(where: "pseudonym", is: world.ada).first)
            #expect(row["birth_year"] == "1990" && row["gender"] == "female")
            for files in [unasked, asked] {
                #expect(!files.values.contains { String(decoding: $0, as: UTF8.self).contains("1990-05-17") })
            }
        }
    }

    @Test("a participant who stops sharing is in no later export, and stays in the log of the one before")
    func stopsSharing() async throws {
        try await withTestApp { app in
            // setup
            let world = try await ExportWorld.build(app)
            let (first, _) = try await world.export(app)
            let ben = try await app.signIn("ben@example.org")

            // act
            let stopped = try await ben.send(.PATCH, "/me", json: ["shareWithResearch": false])
            let (second, files) = try await world.export(app)

            // verify
            #expect(stopped.status == .ok)
            #expect(try CSVTable(files["participants.csv"]).rows.compactMap { $0["pseudonym"] } == [world.ada])
            let logged = { (id: String) in
                try await ExportParticipantRecord.query(on: app.database).filter(\.$export.$id == UUID(uuidString: id)!)
                    .all().map(\.pseudonym).sorted()
            }
            #expect(try await logged(first) == [world.ada, world.ben].sorted())
            #expect(try await logged(second) == [world.ada])
        }
    }

    @Test(
        "records the study collects are in a file per kind under pseudonyms and as FHIR; kinds it does not collect are not"
    )
    func records() async throws {
        try await withTestApp { app in
            // setup: the study starts collecting events and audiograms and asks its participants again; then Ada
            // keeps an event, a therapy and an audiogram, and Dan, who does not share, an event
            let world = try await ExportWorld.build(app)
            let ada = try await app.signIn("ada@example.org")
            let dan = try await app.signIn("dan@example.org")
            let (_, before) = try await world.export(app)
            let set = try await world.researcher.send(
                .PUT, "/studies/\(world.studyID)/record-settings",
                json: ["collects": ["event", "audiogram"], "eventTypes": []])
            for patient in [ada, dan] {
                let agreed = try await patient.send(
                    .POST, "/me/consents", json: ["studyId": .string(world.studyID), "version": "2026-1-r2"])
                try #require(agreed.status == .created, "\(agreed.text)")
            }
            let event: JSONValue = [
                "id": .string(UUID().uuidString), "title": "Loud concert",
                "occurredAt": QuestionnaireAPITests.iso(app.clock.now),
                "type": "tinnitusAttack",
            ]
            try #require(try await ada.send(.POST, "/me/events", json: event).status == .created)
            try #require(
                try await dan.send(.POST, "/me/events", json: event.merging(["id": .string(UUID().uuidString)])).status
                    == .created)
            try #require(
                try await ada.send(
                    .POST, "/me/therapies",
                    json: [
                        "id": .string(UUID().uuidString), "name": "Hearing aid", "type": "hearingAid",
                        "startDate": "2026-01-10",
                    ]
                ).status == .created)
            let audiogram = UUID()
            try #require(
                try await ada.send(.POST, "/me/audiograms", json: AudiogramAPITests.body(app, id: audiogram)).status
                    == .created)

            // act
            let (_, files) = try await world.export(app)

            // verify
            #expect(set.status == .ok)
            #expect(before["events.csv"] == nil && before["fhir/Observation.ndjson"] == nil)
            let events = try CSVTable(files["events.csv"])
            #expect(events.rows.map { $0["pseudonym"] } == [world.ada])
            #expect(events.rows.first?["title"] == "Loud concert" && events.rows.first?["type"] == "tinnitusAttack")
            let points = try CSVTable(files["audiograms.csv"]).rows(
                where: "record_id", is: audiogram.uuidString.lowercased())
            #expect(points.count == 14)
            #expect(points.first { $0["ear"] == "left" && $0["frequency_hz"] == "8000" }?["no_response"] == "1")
            #expect(
                points.first { $0["ear"] == "right" && $0["frequency_hz"] == "1000" && $0["conduction"] == "air" }?[
                    "threshold_db_hl"] == "25")
            #expect(files["therapies.csv"] == nil && files["fhir/Procedure.ndjson"] == nil)
            let observations = String(decoding: try #require(files["fhir/Observation.ndjson"]), as: UTF8.self).split(
                separator: "\n")
            #expect(observations.count == 2)
            #expect(observations.allSatisfy { $0.contains(world.ada) && !$0.contains("ada@example.org") })
            let readme = String(decoding: try #require(files["README.txt"]), as: UTF8.self)
            #expect(files.keys.contains("events.csv") && readme.contains("audiograms.csv"))
        }
    }

    @Test("an export with since holds only what changed after it, and the participants as they are")
    func incremental() async throws {
        try await withTestApp { app in
            // setup
            let world = try await ExportWorld.build(app)

            // act: everything before Ben's late answer is old
            let (_, files) = try await world.export(app, since: "2026-03-05T00:00:00Z")

            // verify
            #expect(
                try CSVTable(files["prompts.csv"]).rows.compactMap { $0["prompt_id"] } == [
                    world.benLate.uuidString.lowercased()
                ])
            #expect(try CSVTable(files["responses_long.csv"]).rows.allSatisfy { $0["pseudonym"] == world.ben })
            #expect(try CSVTable(files["participants.csv"]).rows.count == 2)
            #expect(
                String(decoding: try #require(files["README.txt"]), as: UTF8.self).contains(
                    "what changed after 2026-03-05T00:00:00.000Z"))
        }
    }
}

@Suite("Exports: the background job, retention, erasure and the audit log")
struct ExportJobTests {
    func service(_ app: TestContext) -> ExportService {
        ExportService(database: app.database, services: app.app.interlude)
    }

    func start(_ world: ExportWorld) async throws -> String {
        let started = try await world.researcher.send(.POST, "/studies/\(world.studyID)/exports")
        try #require(started.status == .accepted, "\(started.text)")
        return try started.decoded(Components.Schemas.StudyExport.self).id
    }

    func status(_ world: ExportWorld, _ id: String) async throws -> Components.Schemas.StudyExport {
        try await world.researcher.send(.GET, "/exports/\(id)").decoded(Components.Schemas.StudyExport.self)
    }

    @Test("a queued export is not downloadable; once written it is ready at 100 % with its counts")
    func queuedThenReady() async throws {
        try await withTestApp { app in
            // setup
            let world = try await ExportWorld.build(app)
            let id = try await start(world)

            // act
            let early = try await world.researcher.send(.GET, "/exports/\(id)/file")
            let written = try await service(app).runPending()
            let ready = try await status(world, id)

            // verify
            #expect(early.status == .conflict && early.body["type"].string == "/problems/export-not-ready")
            #expect(written == 1)
            #expect(ready.status == .ready && ready.progress == 100)
            #expect(ready.participants == 2 && ready.prompts == 4 && ready.responses == 2)
            #expect((ready.size ?? 0) > 0 && ready.expiresAt == app.clock.now.addingTimeInterval(7 * 86_400))
            #expect(try await app.count("export_participants") == 2)
        }
    }

    @Test("after a restart, an export whose run stopped is written again from the start; half files are never offered")
    func restart() async throws {
        try await withTestApp { app in
            // setup: a run claimed it, wrote a part of the files and the zip, and the process died
            let world = try await ExportWorld.build(app)
            let id = try #require(UUID(uuidString: try await start(world)))
            let files = ExportFiles(services: app.app.interlude)
            let work = try files.prepare(id)
            try Data("half".utf8).write(to: work.appendingPathComponent("prompts.csv"))
            try Data("half a zip".utf8).write(to: files.partialZip(id))
            let record = try #require(try await ExportRecord.find(id, on: app.database))
            record.status = .running
            record.progress = 40
            record.claimedBy = UUID()
            record.claimedUntil = app.clock.now.addingTimeInterval(60)
            try await record.save(on: app.database)

            // act / verify: while the lease holds, nobody takes it over and nothing is offered
            #expect(try await service(app).runPending() == 0)
            #expect(try await world.researcher.send(.GET, "/exports/\(id.uuidString)/file").status == .conflict)

            // act: the lease runs out
            app.clock.advance(by: 61)
            let written = try await service(app).runPending()

            // verify
            #expect(written == 1)
            #expect(try await status(world, id.uuidString).status == .ready)
            #expect(!FileManager.default.fileExists(atPath: files.work(id).path))
            #expect(!FileManager.default.fileExists(atPath: files.partialZip(id).path))
            let zip = try await world.researcher.send(.GET, "/exports/\(id.uuidString)/file")
            #expect(try CSVTable(try ExportWorld.unpack(zip.data)["prompts.csv"]).rows.count == 4)
        }
    }

    @Test("past its retention an export's file is removed and its record says expired")
    func retention() async throws {
        try await withTestApp(settings: { $0.exportRetentionDays = 2 }) { app in
            // setup
            let world = try await ExportWorld.build(app)
            let id = try await start(world)
            _ = try await service(app).runPending()

            // act
            app.clock.advance(by: 86_400)
            let kept = try await service(app).sweep()
            app.clock.advance(by: 86_400 + 1)
            let removed = try await service(app).sweep()

            // verify
            #expect(kept == 0 && removed == 1)
            #expect(try await status(world, id).status == .expired)
            #expect(try await world.researcher.send(.GET, "/exports/\(id)/file").status == .conflict)
            #expect(try await !app.stores(.export(UUID(uuidString: id)!)))
        }
    }

    @Test(
        "when a participant in an export deletes their account, the export's file goes; the log keeps no trace of them")
    func erasure() async throws {
        try await withTestApp { app in
            // setup
            let world = try await ExportWorld.build(app)
            let id = try await start(world)
            _ = try await service(app).runPending()
            let ada = try await app.signIn("ada@example.org")

            // act
            let deleted = try await ada.send(.DELETE, "/me", json: ["password": .string(TestContext.password)])

            // verify
            #expect(deleted.status == .noContent)
            let export = try await status(world, id)
            #expect(export.status == .expired && export.error == ExportService.withdrawnAfterErasure)
            #expect(try await app.count("export_participants") == 1)
            #expect(try await !app.stores(.export(UUID(uuidString: id)!)))
        }
    }

    @Test("asking for an export and downloading it are audited for each participant, with the filter")
    func audit() async throws {
        try await withTestApp { app in
            // setup
            let world = try await ExportWorld.build(app)

            // act
            let (id, _) = try await world.export(app, since: "2026-03-01T00:00:00Z")

            // verify
            let requested = try await AuditEventRecord.query(on: app.database).filter(
                \.$action == "study.export.requested"
            ).all()
            let downloaded = try await AuditEventRecord.query(on: app.database).filter(
                \.$action == "study.export.downloaded"
            ).all()
            #expect(requested.count == 2 && downloaded.count == 2)
            #expect(
                requested.allSatisfy {
                    $0.target
                        == "study:\(UUID(uuidString: world.studyID)!.uuidString):export:\(id.lowercased()):since=2026-03-01T00:00:00Z"
                })
        }
    }

    @Test("a start in the future and a study one may not export are refused, nothing queued")
    func refusals() async throws {
        try await withTestApp { app in
            // setup
            let world = try await ExportWorld.build(app)
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
            let added = try await world.researcher.send(
                .POST, "/studies/\(world.studyID)/staff", json: ["email": "berger@praxis.example", "role": "therapist"])
            try #require(added.status == .created)

            // act
            let future = try await world.researcher.send(
                .POST, "/studies/\(world.studyID)/exports?since=2030-01-01T00%3A00%3A00Z")
            let byTherapist = try await therapist.send(.POST, "/studies/\(world.studyID)/exports")

            // verify
            #expect(future.status == .unprocessableEntity && future.body.problemFields == ["since"])
            #expect(byTherapist.status == .forbidden)
            #expect(try await app.count("exports") == 0)
        }
    }
}

@Suite("Console: a study's exports and access tokens")
struct ConsoleExportTests {
    @Test("a researcher starts an export, sees its progress bar while it waits, and downloads it when ready")
    func startFollowDownload() async throws {
        try await withTestApp { app in
            // setup
            let world = try await ExportWorld.build(app)
            let console = ConsoleBrowser(app)
            _ = try await console.signIn("lab@uni.example")
            let path = "/console/studies/\(world.studyID)/exports"
            _ = try await console.get(path)

            // act
            let started = try await console.post(path, [("since", "")])
            let waiting = try await console.get(path)
            _ = try await ExportService(database: app.database, services: app.app.interlude).runPending()
            let ready = try await console.get(path)
            let link = try #require(
                ready.html.components(separatedBy: "href=\"").dropFirst().first {
                    $0.lowercased().hasPrefix(path.lowercased() + "/")
                }?
                .components(separatedBy: "\"").first)
            let file = try await console.get(link)

            // verify
            #expect(started.status == .seeOther)
            #expect(waiting.html.contains("<progress max=\"100\" value=\"0\""))
            #expect(!ready.html.contains("<progress") && ready.html.contains("2 · 4 · 2"))
            #expect(file.status == .ok && file.html.hasPrefix("PK"))
        }
    }

    @Test("the study form's checkbox decides whether exports carry birth year and gender")
    func demographicsCheckbox() async throws {
        try await withTestApp { app in
            // setup
            let world = try await ExportWorld.build(app)
            let console = ConsoleBrowser(app)
            _ = try await console.signIn("lab@uni.example")
            let path = "/console/studies/\(world.studyID)/edit"
            let form = try await console.get(path)
            let fields = [
                ("title", "Stress study"), ("description", ""), ("consentText", "I agree."),
                ("consentVersion", "2026-1"),
                ("joinMode", "open"), ("status", "running"), ("arms", "app, control"), ("allocation", "alternating"),
            ]

            // act
            let asked = try await console.post(path, fields + [("asksDemographics", "on")])
            let askedNow = try await StudyRecord.find(UUID(uuidString: world.studyID), on: app.database)?
                .asksDemographics
            let shown = try await console.get(path)
            let unasked = try await console.post(path, fields)
            let unaskedNow = try await StudyRecord.find(UUID(uuidString: world.studyID), on: app.database)?
                .asksDemographics

            // verify
            #expect(
                !form.html.contains(
                    "name=\"asksDemographics\" type=\"checkbox\" value=\"on\" aria-describedby=\"asksDemographics-hint\" checked"
                ))
            #expect(asked.status == .seeOther && askedNow == true)
            #expect(shown.html.contains("aria-describedby=\"asksDemographics-hint\" checked"))
            #expect(unasked.status == .seeOther && unaskedNow == false)
        }
    }

    @Test("a token made on the page is shown once; a malformed start instant is refused with nothing queued")
    func tokenAndRefusal() async throws {
        try await withTestApp { app in
            // setup
            let world = try await ExportWorld.build(app)
            let console = ConsoleBrowser(app)
            _ = try await console.signIn("lab@uni.example")
            let path = "/console/studies/\(world.studyID)/exports"
            _ = try await console.get(path)

            // act
            let made = try await console.post(path + "/tokens", [("name", "pandas"), ("days", "7")])
            let again = try await console.get(path)
            let refused = try await console.post(path, [("since", "yesterday")])

            // verify
            #expect(made.html.contains("<code id=\"new-token\">ilpat_"))
            #expect(again.html.contains("pandas") && !again.html.contains("ilpat_"))
            #expect(refused.status == .unprocessableEntity && refused.html.contains("since-error"))
            #expect(try await app.count("exports") == 0)
        }
    }
}
