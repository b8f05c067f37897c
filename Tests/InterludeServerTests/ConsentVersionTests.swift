import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Consent as versioned documents with modules: new versions, re-consent, declined modules")
struct ConsentVersionTests {
    typealias Consents = Components.Schemas.MyConsents

    struct Study {
        let researcher: APIClient
        let id: String
    }

    func study(_ app: TestContext) async throws -> Study {
        let (researcher, _) = try await app.staff("researcher", "study@uni.example")
        return Study(
            researcher: researcher, id: try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open")))
    }

    func addVersion(
        _ study: Study, _ version: String, text: String = "I agree to take part.", modules: [JSONValue] = [],
        reconsent: Bool = false
    ) async throws -> APIClient.Reply {
        try await study.researcher.send(
            .POST, "/studies/\(study.id)/consent-versions",
            json: [
                "version": .string(version), "texts": ["en": .string(text)], "modules": .array(modules),
                "reconsentRequired": .bool(reconsent),
            ])
    }

    /// An instrument version and answers to it.
    struct Answered {
        var key: String
        var version: Int
        var answers: JSONValue

        static let mood = Answered(key: "mood-vas", version: 1, answers: ["mood": 40])
        /// The daily questionnaire that asks for the position and the noise level.
        static let daily = Answered(
            key: "tys-daily", version: 2,
            answers: [
                "stress": 70, "control": 40, "negative": 60, "positive": 20, "stressors": ["work"], "valence": 3,
                "arousal": 7, "importance": 80, "abilities": 50,
            ])
    }

    /// A study whose consent offers the context module: Ada declined it, Ben allowed it.
    func contextStudy(_ app: TestContext) async throws
        -> (study: Study, ada: APIClient, adaID: UUID, ben: APIClient, benID: UUID)
    {
        let study = try await study(app)
        try #require(try await addVersion(study, "2026-2", modules: ["context"]).status == .created)
        let (ada, adaID) = try await app.patient("ada@example.org")
        let (ben, benID) = try await app.patient("ben@example.org")
        try #require(
            try await StudyAPITests.join(ada, study.id, ["consentVersion": "2026-2", "modules": ["context": false]])
                .status == .created)
        try #require(
            try await StudyAPITests.join(ben, study.id, ["consentVersion": "2026-2", "modules": ["context": true]])
                .status == .created)
        return (study, ada, adaID, ben, benID)
    }

    /// A prompt of the study for the patient, open for an hour from now.
    func openPrompt(_ patientID: UUID, in study: Study, _ answered: Answered, _ app: TestContext) async throws -> UUID {
        let prompt = PromptRecord(
            patientID: patientID, studyID: UUID(uuidString: study.id), assignedBy: nil, instrumentKey: answered.key,
            instrumentVersion: answered.version, opensAt: app.clock.now,
            closesAt: app.clock.now.addingTimeInterval(3600),
            source: .schedule, now: app.clock.now)
        try await prompt.create(on: app.database)
        return try prompt.requireID()
    }

    /// An open prompt of the study for the patient, answered with a mood unless told otherwise.
    func answer(
        _ patient: APIClient, _ patientID: UUID, in study: Study, answering answered: Answered = .mood,
        context: JSONValue = nil,
        _ app: TestContext
    ) async throws -> APIClient.Reply {
        let promptID = try await openPrompt(patientID, in: study, answered, app)
        return try await patient.send(
            .POST, "/me/responses", json: Self.response(prompt: promptID, answering: answered, context: context, app))
    }

    static func response(
        prompt: UUID, id: UUID = UUID(), answering answered: Answered = .mood, context: JSONValue = nil,
        _ app: TestContext
    ) -> JSONValue {
        [
            "id": .string(id.uuidString), "promptId": .string(prompt.uuidString),
            "instrumentKey": .string(answered.key),
            "version": .number(Double(answered.version)), "answers": answered.answers,
            "completedAt": QuestionnaireAPITests.iso(app.clock.now), "context": context,
        ]
    }

    static func context(_ app: TestContext, latitude: Double = 48.2) -> JSONValue {
        [
            "location": [
                "latitude": .number(latitude), "longitude": 16.37, "accuracyM": 25,
                "capturedAt": QuestionnaireAPITests.iso(app.clock.now),
            ],
            "noise": ["dbfs": -42.5, "durationS": 3, "capturedAt": QuestionnaireAPITests.iso(app.clock.now)],
        ]
    }

    @Test(
        "a silent version applies to new participants only; a re-consent version holds back answers with consent-required until answered"
    )
    func reconsentBlocks() async throws {
        try await withTestApp { app in
            // setup
            let study = try await study(app)
            let (ada, adaID) = try await app.patient("ada@example.org")
            try #require(try await StudyAPITests.join(ada, study.id).status == .created)

            // act: a version for new participants
            let silent = try await addVersion(
                study, "2026-2", text: "I agree to take part.\nMy answers may be used in teaching.",
                modules: ["context"])
            let answeredAfterSilent = try await answer(ada, adaID, in: study, app)
            let (ben, _) = try await app.patient("ben@example.org")
            let benOutdated = try await StudyAPITests.join(ben, study.id)
            let benJoined = try await StudyAPITests.join(ben, study.id, ["consentVersion": "2026-2"])
            let afterSilent = try await ada.send(.GET, "/me/consents").decoded(Consents.self)

            // verify
            #expect(silent.status == .created, "\(silent.text)")
            #expect(answeredAfterSilent.status == .created, "\(answeredAfterSilent.text)")
            #expect(benOutdated.status == .unprocessableEntity)
            #expect(benOutdated.body.problemCodes["consentVersion"] == "outdated")
            #expect(benJoined.status == .created, "\(benJoined.text)")
            let adaStudy = try #require(afterSilent.documents.first { $0.studyId == study.id.lowercased() })
            #expect(adaStudy.version == "2026-2")
            #expect(adaStudy.mustAnswer == false)
            #expect(adaStudy.decision?.version == "2026-1")
            #expect(adaStudy.changes?.map(\.kind) == [.same, .added])
            #expect(adaStudy.changes?.last?.text == "My answers may be used in teaching.")

            // act: a version everyone must answer
            let reconsent = try await addVersion(
                study, "2026-3", text: "I agree to take part.\nMy location may be recorded.", modules: ["context"],
                reconsent: true)
            let held = try await answer(ada, adaID, in: study, app)
            let pending = try await ada.send(.GET, "/me/consents").decoded(Consents.self)

            // verify
            #expect(reconsent.status == .created, "\(reconsent.text)")
            #expect(held.status == .conflict)
            #expect(held.body["type"].string == "/problems/consent-required")
            let waiting = try #require(pending.documents.first { $0.studyId == study.id.lowercased() })
            #expect(waiting.mustAnswer == true)
            #expect(waiting.reconsentRequired == true)
            #expect(waiting.modules == [.context])
            #expect(
                waiting.changes?.contains { $0.kind == .added && $0.text == "My location may be recorded." } == true)

            // act: refused answers, then the right one
            let path = "/me/consents"
            let old = try await ada.send(.POST, path, json: ["studyId": .string(study.id), "version": "2026-2"])
            let declinedParticipation = try await ada.send(
                .POST, path,
                json: ["studyId": .string(study.id), "version": "2026-3", "modules": ["participation": false]])
            let unknown = try await ada.send(
                .POST, path, json: ["studyId": .string(study.id), "version": "2026-3", "modules": ["telepathy": true]])
            let notOffered = try await ada.send(
                .POST, path,
                json: ["studyId": .string(study.id), "version": "2026-3", "modules": ["diaryWithTherapist": true]])
            let stillHeld = try await answer(ada, adaID, in: study, app)
            let accepted = try await ada.send(
                .POST, path, json: ["studyId": .string(study.id), "version": "2026-3", "modules": ["context": true]])
            let answered = try await answer(ada, adaID, in: study, app)
            let after = try await ada.send(.GET, "/me/consents").decoded(Consents.self)

            // verify
            #expect(old.body.problemCodes["version"] == "outdated")
            #expect(declinedParticipation.body.problemCodes["modules.participation"] == "required")
            #expect(unknown.body.problemCodes["modules.telepathy"] == "unknown")
            #expect(notOffered.body.problemCodes["modules.diaryWithTherapist"] == "notAllowed")
            #expect(stillHeld.status == .conflict)
            #expect(accepted.status == .created, "\(accepted.text)")
            #expect(accepted.body["method"].string == "reconsent")
            #expect(accepted.body["modules"]["context"].bool == true)
            #expect(answered.status == .created, "\(answered.text)")
            let settled = try #require(after.documents.first { $0.studyId == study.id.lowercased() })
            #expect(settled.mustAnswer == false)
            #expect(settled.changes == nil)
            let studyHistory = after.history.filter { $0.studyId == study.id.lowercased() }
            #expect(studyHistory.map(\.version) == ["2026-3", "2026-1"])
            #expect(studyHistory.map(\.method) == [.reconsent, .joining])
            #expect(studyHistory.last?.replacedAt != nil)
            #expect(
                try await app.count("consents WHERE version = '2026-2'") == 1, "only Ben agreed to the silent version")
        }
    }

    @Test("sync holds a change back while consent is required, keeps no answer for it, and applies it once answered")
    func syncWaits() async throws {
        try await withTestApp { app in
            // setup
            let study = try await study(app)
            let (ada, adaID) = try await app.patient("ada@example.org")
            try #require(try await StudyAPITests.join(ada, study.id).status == .created)
            try #require(try await addVersion(study, "2026-2", reconsent: true).status == .created)
            let prompt = PromptRecord(
                patientID: adaID, studyID: UUID(uuidString: study.id), assignedBy: nil, instrumentKey: "mood-vas",
                instrumentVersion: 1,
                opensAt: app.clock.now, closesAt: app.clock.now.addingTimeInterval(3600), source: .schedule,
                now: app.clock.now)
            try await prompt.create(on: app.database)
            let mutation: JSONValue = [
                "id": .string(UUID().uuidString), "type": "response",
                "response": Self.response(prompt: try prompt.requireID(), app),
            ]

            // act
            let first = try await SyncTests().push(ada, [mutation])
            let keptAnswers = try await app.count("sync_mutations")
            let consented = try await ada.send(
                .POST, "/me/consents", json: ["studyId": .string(study.id), "version": "2026-2"])
            let second = try await SyncTests().push(ada, [mutation])

            // verify
            #expect(first.results.map(\.status) == [.waiting])
            #expect(first.results.first?.problem?._type == "/problems/consent-required")
            #expect(keptAnswers == 0)
            #expect(consented.status == .created)
            #expect(second.results.map(\.status) == [.applied])
            #expect(second.results.first?.replayed == false)
        }
    }

    @Test(
        "context is kept where the person granted the module and the instrument asks for it; sent against a refusal it is refused"
    )
    func declinedContextRefused() async throws {
        try await withTestApp { app in
            // setup
            let (study, ada, adaID, ben, benID) = try await contextStudy(app)
            let before = try await app.count("responses")

            // act
            let outOfRange = try await answer(
                ben, benID, in: study, answering: .daily, context: Self.context(app, latitude: 91), app)
            let adas = try await answer(ada, adaID, in: study, answering: .daily, context: Self.context(app), app)
            let adasWithout = try await answer(ada, adaID, in: study, answering: .daily, app)
            let bens = try await answer(ben, benID, in: study, answering: .daily, context: Self.context(app), app)
            let unasked = try await answer(ben, benID, in: study, answering: .mood, context: Self.context(app), app)

            // verify
            #expect(outOfRange.status == .unprocessableEntity)
            #expect(outOfRange.body.problemFields == ["context.location.latitude"])
            #expect(adas.status == .unprocessableEntity)
            #expect(adas.body.problemCodes == ["context": "notAllowed"])
            #expect(adasWithout.status == .created, "\(adasWithout.text)")
            #expect(bens.status == .created, "\(bens.text)")
            #expect(unasked.status == .created, "\(unasked.text)")
            #expect(try await app.count("responses") == before + 3)
            let responses = ResponseService(database: app.database, services: app.app.interlude)
            let adaRecord = try #require(
                try await ResponseRecord.query(on: app.database).filter(\.$patient.$id == adaID).first())
            let benRecord = try #require(
                try await ResponseRecord.query(on: app.database).filter(\.$patient.$id == benID).filter(
                    \.$instrumentKey == "tys-daily"
                )
                .first())
            let unaskedRecord = try #require(
                try await ResponseRecord.query(on: app.database).filter(\.$patient.$id == benID).filter(
                    \.$instrumentKey == "mood-vas"
                )
                .first())
            #expect(adaRecord.context == nil)
            #expect(unaskedRecord.context == nil, "the mood scale asks for no context")
            #expect(bens.body["context"]["location"]["latitude"].double == 48.2)
            #expect(bens.body["context"]["noise"]["dbfs"].double == -42.5)
            #expect(unasked.body["context"].isNull)
            let kept = try #require(try responses.context(of: benRecord))
            #expect(kept.location?.latitude == 48.2)
            #expect(kept.location?.accuracyM == 25)
            #expect(kept.noise?.dbfs == -42.5)
            #expect(benRecord.context?.contains("48.2") == false, "sealed at rest")
        }
    }

    @Test(
        "answers captured offline with context reach the server after the person declined it: the answers are kept, the context is not"
    )
    func declinedContextDroppedFromOfflineAnswers() async throws {
        try await withTestApp { app in
            // setup
            let (study, ada, adaID, _, _) = try await contextStudy(app)
            let promptID = try await openPrompt(adaID, in: study, .daily, app)
            let mutation: JSONValue = [
                "id": .string(UUID().uuidString), "type": "response",
                "response": Self.response(prompt: promptID, answering: .daily, context: Self.context(app), app),
            ]

            // act
            let pushed = try await SyncTests().push(ada, [mutation])

            // verify
            #expect(pushed.results.map(\.status) == [.applied])
            let stored = try #require(
                try await ResponseRecord.query(on: app.database).filter(\.$patient.$id == adaID).first())
            #expect(stored.$prompt.id == promptID)
            #expect(stored.context == nil)
        }
    }

    @Test(
        "in therapy, the person's own switch lets their therapist keep context; the therapist then sees it in the API and the console"
    )
    func contextInTherapy() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID, promptID) = try await QuestionnaireAPITests().setUp(
                app, instrument: "tys-daily")
            let second = try await therapist.send(
                .POST, "/patients/\(patientID)/prompts",
                json: [
                    "instrumentKey": "tys-daily", "opensAt": QuestionnaireAPITests.iso(app.clock.now),
                    "closesAt": QuestionnaireAPITests.iso(app.clock.now.addingTimeInterval(3600)),
                ])
            let secondID = try #require(UUID(uuidString: second.body["id"].string ?? ""))
            let first = try #require(UUID(uuidString: promptID))
            let console = ConsoleBrowser(app)
            _ = try await console.signIn("berger@praxis.example")

            // act
            let before = try await patient.send(.GET, "/me/prompts/\(promptID)")
            let refused = try await patient.send(
                .POST, "/me/responses",
                json: Self.response(prompt: first, answering: .daily, context: Self.context(app), app))
            let switched = try await patient.send(.PATCH, "/me", json: ["shareContextWithTherapist": true])
            let after = try await patient.send(.GET, "/me/prompts/\(secondID)")
            let kept = try await patient.send(
                .POST, "/me/responses",
                json: Self.response(prompt: secondID, answering: .daily, context: Self.context(app), app))
            let listed = try await therapist.send(.GET, "/patients/\(patientID)/responses")
            let page = try await console.get("/console/patients/\(patientID)/responses/\(kept.body["id"].string ?? "")")

            // verify
            #expect(before.body["contextGranted"].bool == false)
            #expect(refused.body.problemCodes == ["context": "notAllowed"])
            #expect(switched.body["patient"]["sharesContextWithTherapist"].bool == true)
            #expect(after.body["contextGranted"].bool == true)
            #expect(kept.status == .created, "\(kept.text)")
            #expect(
                listed.body.array.first { $0["id"].string == kept.body["id"].string }?["context"]["location"][
                    "latitude"
                ].double == 48.2)
            #expect(page.html.contains("Position 48.20000, 16.37000 (within 25 m)"))
            #expect(page.html.contains("Noise level -42.5 dBFS over 3 s"))
        }
    }

    @Test("a questionnaire that asks for context tells the app whether the person allowed it for the study")
    func contextGrantedInPrompt() async throws {
        try await withTestApp { app in
            // setup
            let (study, ada, adaID, ben, benID) = try await contextStudy(app)

            // act
            let adaDaily = try await ada.send(
                .GET, "/me/prompts/\(try await openPrompt(adaID, in: study, .daily, app))")
            let benDaily = try await ben.send(
                .GET, "/me/prompts/\(try await openPrompt(benID, in: study, .daily, app))")
            let benMood = try await ben.send(.GET, "/me/prompts/\(try await openPrompt(benID, in: study, .mood, app))")

            // verify
            #expect(adaDaily.body["definition"]["context"].array.compactMap(\.string) == ["location", "noise"])
            #expect(adaDaily.body["contextGranted"].bool == false)
            #expect(benDaily.body["contextGranted"].bool == true)
            #expect(benMood.body["definition"]["context"].isNull)
            #expect(benMood.body["contextGranted"].bool == false)
        }
    }

    @Test(
        "versions never change: a name used before is refused, a changed text under the same name too; a practice has none"
    )
    func versionsAreWrittenOnce() async throws {
        try await withTestApp { app in
            // setup
            let study = try await study(app)
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
            let (patient, _) = try await app.patient("ada@example.org")
            try await app.pair(patient, with: therapist)
            let practice = try #require(try await EnrollmentRecord.query(on: app.database).first()).$study.id

            // act
            let repeated = try await addVersion(study, "2026-1", text: "Something else")
            let badModule = try await addVersion(study, "2026-2", modules: ["context", "telepathy"])
            let noText = try await study.researcher.send(
                .POST, "/studies/\(study.id)/consent-versions", json: ["version": "2026-2", "texts": [:]])
            let changedInPlace = try await study.researcher.send(
                .PUT, "/studies/\(study.id)",
                json: StudyAPITests.study("open").merging(["consentText": "A different text"]))
            let renamed = try await study.researcher.send(
                .PUT, "/studies/\(study.id)",
                json: StudyAPITests.study("open").merging([
                    "consentText": "A different text", "consentVersion": "2026-2",
                ]))
            let (admin, _) = try await app.staff("admin", "admin@praxis.example")
            let practiceVersion = try await admin.send(
                .POST, "/studies/\(practice.uuidString)/consent-versions",
                json: ["version": "2", "texts": ["en": "Yes"]])
            let listed = try await study.researcher.send(.GET, "/studies/\(study.id)/consent-versions")
                .decoded([Components.Schemas.ConsentVersion].self)

            // verify
            #expect(repeated.status == .conflict)
            #expect(repeated.body["type"].string == "/problems/version-exists")
            #expect(badModule.body.problemFields == ["modules[1]"])
            #expect(noText.body.problemFields == ["texts"])
            #expect(changedInPlace.body.problemCodes["consentVersion"] == "taken")
            #expect(renamed.status == .ok, "\(renamed.text)")
            #expect(practiceVersion.status == .notFound)
            #expect(listed.map(\.version) == ["2026-1", "2026-2"])
            #expect(listed.map(\.sequence) == [1, 2])
            #expect(listed.first?.texts.en == "I agree to take part.")
            #expect(listed.last?.texts.en == "A different text")
        }
    }

    @Test("agreeing to the privacy policy's current version replaces the earlier decision; another version is refused")
    func privacyPolicy() async throws {
        try await withTestApp { app in
            // setup
            let (ada, _) = try await app.patient("ada@example.org")

            // act
            let wrong = try await ada.send(.POST, "/me/consents", json: ["version": "0"])
            let withModules = try await ada.send(
                .POST, "/me/consents", json: ["version": "1", "modules": ["context": true]])
            let agreed = try await ada.send(.POST, "/me/consents", json: ["version": "1"])
            let consents = try await ada.send(.GET, "/me/consents").decoded(Consents.self)

            // verify
            #expect(wrong.body.problemCodes["version"] == "outdated")
            #expect(withModules.body.problemFields == ["modules"])
            #expect(agreed.status == .created)
            let policy = consents.history.filter { $0.document == .privacyPolicy }
            #expect(policy.map(\.method) == [.reconsent, .registration])
            #expect(policy.map { $0.replacedAt == nil } == [true, false])
            #expect(consents.documents.first?.document == .privacyPolicy)
            #expect(consents.documents.first?.decision?.id == agreed.body["id"].string)
        }
    }
}
