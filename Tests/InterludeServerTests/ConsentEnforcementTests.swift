import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

/// What a participant agreed to decides what leaves with their data: an export holds a kind of record only from
/// when they agreed to its collection while taking part, and never a thought their therapist wrote; declining
/// research sharing keeps them out of exports; declining the diary for the therapist keeps it from the therapist.
@Suite("Consent enforced: collected kinds, research sharing, the diary")
struct ConsentEnforcementTests {
    static func iso(_ date: Date) -> JSONValue { QuestionnaireAPITests.iso(date) }

    static func mood(_ app: TestContext, _ valence: Double) -> JSONValue {
        ["id": .string(UUID().uuidString), "valence": .number(valence), "recordedAt": iso(app.clock.now)]
    }

    static func decide(_ patient: APIClient, _ studyID: String, _ version: String, _ modules: [String: JSONValue])
        async throws
    {
        let reply = try await patient.send(
            .POST, "/me/consents",
            json: ["studyId": .string(studyID), "version": .string(version), "modules": .object(modules)])
        try #require(reply.status == .created, "\(reply.text)")
    }

    @Test(
        "starting to collect a kind writes a consent version that asks again; collecting less, or a practice, does not")
    func collectingMoreAsksAgain() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let studyID = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            // While the study is set up and nobody has answered its consent, the version in force names the kinds.
            let settingUp = try await researcher.send(
                .PUT, "/studies/\(studyID)/record-settings", json: ["collects": ["event"], "eventTypes": []])
            try #require(settingUp.status == .ok)
            let (ada, _) = try await app.patient("ada@example.org")
            try #require(try await StudyAPITests.join(ada, studyID).status == .created)
            let (therapist, therapistID) = try await app.staff("therapist", "tess@example.org")
            let practice = try #require(
                try await StudyRecord.query(on: app.database).filter(\.$owner.$id == therapistID).first()?.id)
            func versions() async throws -> [Components.Schemas.ConsentVersion] {
                try await researcher.send(.GET, "/studies/\(studyID)/consent-versions").decoded(
                    [Components.Schemas.ConsentVersion].self)
            }
            let before = try await versions()

            // act
            let more = try await researcher.send(
                .PUT, "/studies/\(studyID)/record-settings", json: ["collects": ["mood", "thought"], "eventTypes": []])
            let afterMore = try await versions()
            let consents = try await ada.send(.GET, "/me/consents").decoded(Components.Schemas.MyConsents.self)
            let less = try await researcher.send(
                .PUT, "/studies/\(studyID)/record-settings", json: ["collects": ["mood"], "eventTypes": []])
            let afterLess = try await versions()
            let practiceSet = try await therapist.send(
                .PUT, "/studies/\(practice)/record-settings", json: ["collects": ["mood"], "eventTypes": []])

            // verify
            #expect(more.status == .ok && less.status == .ok && practiceSet.status == .ok)
            #expect(
                before.count == 1 && before.first?.collects?.map(\.rawValue) == ["event"],
                "set up in place: nobody had answered")
            #expect(afterMore.count == before.count + 1)
            let written = try #require(afterMore.last)
            #expect(written.reconsentRequired && written.version == "2026-1-r2", "\(written)")
            #expect(written.collects?.map(\.rawValue).sorted() == ["mood", "thought"])
            #expect(consents.documents.first { $0.studyId == studyID.lowercased() }?.mustAnswer == true)
            #expect(afterLess.count == afterMore.count, "collecting less needs no new version")
            #expect(
                try await ConsentVersionRecord.query(on: app.database).filter(\.$study.$id == practice).count() == 0)
        }
    }

    @Test(
        "an export holds a kind from when the participant agreed to its collection while enrolled, never a therapist's thought, nobody who declined sharing"
    )
    func exportsWhatWasAgreed() async throws {
        try await withTestApp { app in
            // setup: a study whose consent offers research sharing; Ada shares, Ben declines
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let studyID = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            let version = try await researcher.send(
                .POST, "/studies/\(studyID)/consent-versions",
                json: [
                    "version": "2026-2", "texts": ["en": "I agree."], "modules": ["researchSharing"],
                    "reconsentRequired": false,
                ])
            try #require(version.status == .created, "\(version.text)")
            let (therapist, _) = try await app.staff("therapist", "tess@example.org")
            let (ada, adaID) = try await app.patient("ada@example.org")
            let (ben, _) = try await app.patient("ben@example.org")
            try await app.pair(ada, with: therapist)
            try #require(try await ada.send(.POST, "/me/moods", json: Self.mood(app, 0.11)).status == .created)
            try #require(
                try await ada.send(
                    .POST, "/me/thoughts/occurrences",
                    json: ThoughtAPITests.occurrence(app, text: "Written before joining")
                ).status == .created)
            app.clock.advance(by: 60)
            try #require(
                try await StudyAPITests.join(
                    ada, studyID, ["consentVersion": "2026-2", "modules": ["researchSharing": true]]
                ).status == .created)
            try #require(
                try await StudyAPITests.join(
                    ben, studyID, ["consentVersion": "2026-2", "modules": ["researchSharing": false]]
                ).status == .created)
            try #require(try await ada.send(.POST, "/me/moods", json: Self.mood(app, 0.22)).status == .created)
            app.clock.advance(by: 60)
            let settings = try await researcher.send(
                .PUT, "/studies/\(studyID)/record-settings", json: ["collects": ["mood", "thought"], "eventTypes": []])
            try #require(settings.status == .ok)
            try #require(try await ada.send(.POST, "/me/moods", json: Self.mood(app, 0.33)).status == .created)
            try #require(try await ben.send(.POST, "/me/moods", json: Self.mood(app, 0.44)).status == .created)
            app.clock.advance(by: 60)
            try await Self.decide(ada, studyID, "2026-2-r2", ["researchSharing": true])
            try await Self.decide(ben, studyID, "2026-2-r2", ["researchSharing": false])
            try #require(try await ada.send(.POST, "/me/moods", json: Self.mood(app, 0.55)).status == .created)
            try #require(
                try await ada.send(
                    .POST, "/me/thoughts/occurrences",
                    json: ThoughtAPITests.occurrence(app, text: "=SUM(1;2) nobody likes me")
                ).status == .created)
            try #require(
                try await therapist.send(
                    .POST, "/patients/\(adaID)/thoughts", json: ["text": "THERAPIST-WORDS I am enough"]
                ).status == .created)

            // act
            let (_, files) = try await ExportWorld.export(app, researcher: researcher, studyID: studyID)

            // verify
            let moods = try CSVTable(files["mood.csv"])
            #expect(
                moods.rows.compactMap { $0["valence"] } == ["0.55"],
                "made before joining, before the kind was collected, before agreeing: out")
            let thoughts = try CSVTable(files["thoughts.csv"])
            #expect(
                thoughts.rows.compactMap { $0["text"] } == ["'=SUM(1;2) nobody likes me"],
                "neutralised; the therapist's thought and the one before joining stay out")
            let participants = try CSVTable(files["participants.csv"])
            #expect(participants.rows.count == 1, "Ben declined sharing with research")
            let raw = files.values.map { String(decoding: $0, as: UTF8.self) }.joined()
            #expect(
                !raw.contains("THERAPIST-WORDS") && !raw.contains("Written before joining") && !raw.contains("0.44"))
        }
    }

    @Test(
        "a diary declined in a study's consent is kept from the therapist while the decision holds, and shown again once granted"
    )
    func diaryWithheld() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let studyID = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            let version = try await researcher.send(
                .POST, "/studies/\(studyID)/consent-versions",
                json: [
                    "version": "2026-2", "texts": ["en": "I agree."], "modules": ["diaryWithTherapist"],
                    "reconsentRequired": false,
                ])
            try #require(version.status == .created, "\(version.text)")
            let (therapist, _) = try await app.staff("therapist", "tess@example.org")
            let (ada, adaID) = try await app.patient("ada@example.org")
            try await app.pair(ada, with: therapist)
            try #require(try await ada.send(.POST, "/me/moods", json: Self.mood(app, 0.11)).status == .created)
            app.clock.advance(by: 60)
            try #require(
                try await StudyAPITests.join(
                    ada, studyID, ["consentVersion": "2026-2", "modules": ["diaryWithTherapist": false]]
                ).status == .created)
            try #require(try await ada.send(.POST, "/me/moods", json: Self.mood(app, 0.22)).status == .created)
            try #require(
                try await ada.send(
                    .POST, "/me/thoughts/occurrences",
                    json: ThoughtAPITests.occurrence(app, text: "Kept from my therapist")
                ).status == .created)
            try #require(
                try await ada.send(
                    .POST, "/me/therapies",
                    json: [
                        "id": .string(UUID().uuidString), "name": "Hearing aid", "type": "hearingAid",
                        "startDate": "2026-01-10",
                    ]
                ).status == .created)
            func seen() async throws -> (moods: [Double], thoughts: [String], therapies: Int) {
                let moods = try await therapist.send(.GET, "/patients/\(adaID)/moods").body.array.compactMap {
                    $0["valence"].double
                }
                let thoughts = try await therapist.send(.GET, "/patients/\(adaID)/thoughts").body.array.compactMap {
                    $0["text"].string
                }
                let therapies = try await therapist.send(.GET, "/patients/\(adaID)/therapies").body.array.count
                return (moods.sorted(), thoughts, therapies)
            }

            // act
            let whileDeclined = try await seen()
            app.clock.advance(by: 60)
            try await Self.decide(ada, studyID, "2026-2", ["diaryWithTherapist": true])
            try #require(try await ada.send(.POST, "/me/moods", json: Self.mood(app, 0.33)).status == .created)
            let afterGranting = try await seen()

            // verify
            #expect(
                whileDeclined.moods == [0.11],
                "the mood from before the decision stays; the one while it holds does not")
            #expect(whileDeclined.thoughts == [])
            #expect(whileDeclined.therapies == 1, "a therapy is the clinical record, not the diary")
            #expect(afterGranting.moods == [0.11, 0.33])
        }
    }
}
