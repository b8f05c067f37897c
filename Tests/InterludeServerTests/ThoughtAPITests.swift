import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Thoughts: recorded with ratings before and after defusion, matched by their words, added by the therapist")
struct ThoughtAPITests {
    static func occurrence(
        _ app: TestContext, id: UUID = UUID(), text: String, before: Double = -0.6, after: Double = -0.1,
        hoursAgo: Double = 1,
        extra: [String: JSONValue] = [:]
    ) -> JSONValue {
        var body: [String: JSONValue] = [
            "id": .string(id.uuidString), "text": .string(text), "ratingBefore": .number(before),
            "ratingAfter": .number(after),
            "recordedAt": QuestionnaireAPITests.iso(app.clock.now.addingTimeInterval(-hoursAgo * 3600)),
        ]
        body.merge(extra) { $1 }
        return .object(body)
    }

    @Test(
        "the same words in another case, spacing or Unicode form add an occurrence to their thought; a repeat changes nothing"
    )
    func matching() async throws {
        try await withTestApp { app in
            // setup
            let (ada, adaID) = try await app.patient("ada@example.org")
            let first = UUID()

            // act
            let created = try await ada.send(
                .POST, "/me/thoughts/occurrences",
                json: Self.occurrence(app, id: first, text: "Nobody likes Zoë", hoursAgo: 5))
            let repeated = try await ada.send(
                .POST, "/me/thoughts/occurrences",
                json: Self.occurrence(app, id: first, text: "Nobody likes Zoë", hoursAgo: 5))
            let again = try await ada.send(
                .POST, "/me/thoughts/occurrences",
                json: Self.occurrence(
                    app, text: "  NOBODY   likes zoe\u{308} ", before: -0.9, after: 0.2,
                    extra: [
                        "location": ["latitude": 55.87, "longitude": -4.29, "accuracy": 25], "note": "On the bus",
                    ]))
            let other = try await ada.send(
                .POST, "/me/thoughts/occurrences", json: Self.occurrence(app, text: "I will fail the exam", hoursAgo: 2)
            )
            let listed = try await ada.send(.GET, "/me/thoughts").decoded([Components.Schemas.Thought].self)
            let stored = try await EntryRecord.query(on: app.database).filter(\.$patient.$id == adaID).all()

            // verify
            #expect(created.status == .created && repeated.status == .ok)
            #expect(again.status == .created)
            #expect(again.body["thought"]["id"].string == created.body["thought"]["id"].string, "the same thought")
            #expect(other.body["thought"]["id"].string != created.body["thought"]["id"].string)
            #expect(
                listed.map(\.text) == ["I will fail the exam", "Nobody likes Zoë"],
                "newest first, the words as first written")
            let nobody = try #require(listed.last)
            #expect(nobody.origin == .patient && nobody.occurrences?.count == 2)
            #expect(
                nobody.occurrences?.first?.ratingBefore == -0.9 && nobody.occurrences?.first?.ratingAfter == 0.2,
                "the latest first")
            #expect(
                nobody.occurrences?.first?.location?.latitude == 55.87
                    && nobody.occurrences?.first?.note == "On the bus")
            #expect(stored.count == 5, "two thoughts, three occurrences")
            #expect(
                // With their spaces, which sealed text never holds: a short word may turn up in it by chance.
                stored.allSatisfy { !$0.content.contains("Nobody likes") && !$0.content.contains("On the bus") },
                "sealed at rest")
            #expect(
                Set(stored.compactMap(\.matchKey)).count == 2
                    && stored.compactMap(\.matchKey).allSatisfy { !$0.contains("nobody") })
        }
    }

    @Test(
        "missing or out-of-scale ratings, empty words, a future moment and a position off the globe are named; nothing is stored"
    )
    func refusals() async throws {
        try await withTestApp { app in
            // setup
            let (ada, _) = try await app.patient("ada@example.org")

            // act
            let noRatings = try await ada.send(
                .POST, "/me/thoughts/occurrences",
                json: [
                    "id": .string(UUID().uuidString), "text": "I am useless",
                    "recordedAt": QuestionnaireAPITests.iso(app.clock.now),
                ])
            let outOfScale = try await ada.send(
                .POST, "/me/thoughts/occurrences",
                json: Self.occurrence(app, text: "I am useless", before: -2, after: 1.01))
            let unsaid = try await ada.send(
                .POST, "/me/thoughts/occurrences", json: Self.occurrence(app, text: "  ", hoursAgo: -3))
            let offGlobe = try await ada.send(
                .POST, "/me/thoughts/occurrences",
                json: Self.occurrence(
                    app, text: "I am useless", extra: ["location": ["latitude": 120, "longitude": 0]]))
            let badID = try await ada.send(
                .POST, "/me/thoughts/occurrences",
                json: Self.occurrence(app, text: "I am useless", extra: ["thoughtId": "nope"]))
            let accepted = try await ada.send(
                .POST, "/me/thoughts/occurrences",
                json: Self.occurrence(app, text: "I am useless", before: -1, after: 1))

            // verify
            #expect(
                noRatings.status == .unprocessableEntity
                    && Set(noRatings.body.problemFields) == ["ratingBefore", "ratingAfter"])
            #expect(
                Set(outOfScale.body.problemFields) == ["ratingBefore", "ratingAfter"],
                "beyond the contract's limits: the door")
            #expect(Set(unsaid.body.problemFields) == ["text", "recordedAt"])
            #expect(offGlobe.body.problemFields == ["location.latitude"])
            #expect(badID.body.problemFields == ["thoughtId"])
            #expect(accepted.status == .created, "the ends of the scale are on it")
            #expect(try await app.count("records") == 2)
        }
    }

    @Test(
        "an occurrence is changed against its version and deleted alone; deleting a thought deletes its occurrences, another person's stays"
    )
    func changeAndDelete() async throws {
        try await withTestApp { app in
            // setup
            let (ada, _) = try await app.patient("ada@example.org")
            let (bea, _) = try await app.patient("bea@example.org")
            let (first, second) = (UUID(), UUID())
            let recorded = try await ada.send(
                .POST, "/me/thoughts/occurrences", json: Self.occurrence(app, id: first, text: "I ruin everything"))
            _ = try await ada.send(
                .POST, "/me/thoughts/occurrences", json: Self.occurrence(app, id: second, text: "i ruin everything"))
            let beas = try await bea.send(
                .POST, "/me/thoughts/occurrences", json: Self.occurrence(app, text: "I ruin everything"))
            let thoughtID = try #require(recorded.body["thought"]["id"].string)

            // act
            let changed = try await ada.send(
                .PATCH, "/me/thoughts/occurrences/\(first)",
                json: [
                    "baseVersion": 1, "ratingBefore": -0.5, "ratingAfter": 0.5,
                    "recordedAt": QuestionnaireAPITests.iso(app.clock.now),
                ])
            let stale = try await ada.send(
                .PATCH, "/me/thoughts/occurrences/\(first)",
                json: [
                    "baseVersion": 1, "ratingBefore": -0.5, "ratingAfter": 0.5,
                    "recordedAt": QuestionnaireAPITests.iso(app.clock.now),
                ])
            let notHers = try await bea.send(.DELETE, "/me/thoughts/\(thoughtID)?baseVersion=1")
            let oneGone = try await ada.send(.DELETE, "/me/thoughts/occurrences/\(second)?baseVersion=1")
            let afterOne = try await ada.send(.GET, "/me/thoughts").decoded([Components.Schemas.Thought].self)
            let staleThought = try await ada.send(.DELETE, "/me/thoughts/\(thoughtID)?baseVersion=2")
            let thoughtGone = try await ada.send(.DELETE, "/me/thoughts/\(thoughtID)?baseVersion=1")
            let afterAll = try await ada.send(.GET, "/me/thoughts").decoded([Components.Schemas.Thought].self)
            let tombstones = try await SyncTombstoneRecord.query(on: app.database).all().map(\.entity)

            // verify
            #expect(
                changed.status == .ok && changed.body["version"].int == 2
                    && changed.body["thoughtId"].string == thoughtID)
            #expect(stale.status == .conflict)
            #expect(notHers.status == .notFound)
            #expect(
                oneGone.status == .noContent
                    && afterOne.first?.occurrences?.map(\.id) == [first.uuidString.lowercased()])
            #expect(staleThought.status == .conflict)
            #expect(thoughtGone.status == .noContent && afterAll.isEmpty)
            #expect(
                tombstones.filter { $0 == .thought }.count == 1
                    && tombstones.filter { $0 == .thoughtOccurrence }.count == 2)
            let remaining = try await app.count("records")
            #expect(beas.status == .created && remaining == 2, "the other person's thought and occurrence stay")
        }
    }

    @Test(
        "the therapist adds an example thought once; the patient's phone receives it through sync once, marked as from the therapist"
    )
    func therapistAdds() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "tess@example.org")
            let (other, _) = try await app.staff("therapist", "otto@example.org")
            let (ada, adaID) = try await app.patient("ada@example.org")
            try await app.pair(ada, with: therapist)
            let before = try await SyncTests().pull(ada).decoded(Components.Schemas.SyncChanges.self)

            // act
            let added = try await therapist.send(
                .POST, "/patients/\(adaID)/thoughts", json: ["text": "My feelings are dangerous"])
            let twice = try await therapist.send(
                .POST, "/patients/\(adaID)/thoughts", json: ["text": "my feelings are  dangerous"])
            let empty = try await therapist.send(.POST, "/patients/\(adaID)/thoughts", json: ["text": " "])
            let stranger = try await other.send(.POST, "/patients/\(adaID)/thoughts", json: ["text": "Something else"])
            app.clock.advance(by: 600)
            let pulled = try await SyncTests().pull(ada, since: before.cursor).decoded(
                Components.Schemas.SyncChanges.self)
            let pulledAgain = try await SyncTests().pull(ada, since: pulled.cursor).decoded(
                Components.Schemas.SyncChanges.self)
            let recordedByAda = try await ada.send(
                .POST, "/me/thoughts/occurrences", json: Self.occurrence(app, text: "My feelings are dangerous"))
            let seen = try await therapist.send(.GET, "/patients/\(adaID)/thoughts").decoded(
                [Components.Schemas.Thought].self)

            // verify
            #expect(added.status == .created && added.body["origin"].string == "therapist")
            #expect(twice.status == .ok && twice.body["id"].string == added.body["id"].string)
            #expect(empty.body.problemFields == ["text"])
            #expect(stranger.status == .notFound)
            let thoughts = pulled.records.filter { $0.kind == .thought }
            #expect(thoughts.count == 1 && thoughts.first?.record.value["origin"] as? String == "therapist")
            #expect(pulledAgain.records.isEmpty, "sent once")
            #expect(
                recordedByAda.body["thought"]["id"].string == added.body["id"].string,
                "recording the example adds to it")
            #expect(seen.count == 1 && seen[0].origin == .therapist && seen[0].occurrences?.count == 1)
        }
    }

    @Test("the therapist finds thoughts by words and days and pages through them; a wrong day or limit is named")
    func therapistSearches() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "tess@example.org")
            let (ada, adaID) = try await app.patient("ada@example.org")
            try await app.pair(ada, with: therapist)
            for (index, text) in [
                "Nobody likes me", "I will fail", "Nobody calls me", "I am too slow", "I look stupid",
            ].enumerated() {
                _ = try await ada.send(
                    .POST, "/me/thoughts/occurrences",
                    json: Self.occurrence(app, text: text, hoursAgo: Double(5 - index) * 24))
            }
            let today = LocalDate(app.clock.now, in: TimeZone(identifier: "Europe/Vienna")!)
            let twoDaysAgo = LocalDate(daysSinceEpoch: today.daysSinceEpoch - 2)

            // act
            let found = try await therapist.send(.GET, "/patients/\(adaID)/thoughts?q=NOBODY").decoded(
                [Components.Schemas.Thought].self)
            let recent = try await therapist.send(.GET, "/patients/\(adaID)/thoughts?from=\(twoDaysAgo)&to=\(today)")
                .decoded([Components.Schemas.Thought].self)
            let badDay = try await therapist.send(.GET, "/patients/\(adaID)/thoughts?from=yesterday")
            let badLimit = try await therapist.send(.GET, "/patients/\(adaID)/thoughts?limit=0")
            var pages: [[String]] = []
            var cursor: String?
            repeat {
                let reply = try await therapist.send(
                    .GET, "/patients/\(adaID)/thoughts?limit=2" + (cursor.map { "&cursor=\($0)" } ?? ""))
                pages.append(try reply.decoded([Components.Schemas.Thought].self).map(\.text))
                cursor = reply.headers.first(name: "Next-Cursor")
            } while cursor != nil

            // verify
            #expect(found.map(\.text) == ["Nobody calls me", "Nobody likes me"])
            #expect(recent.map(\.text) == ["I look stupid", "I am too slow"])
            #expect(badDay.body.problemFields == ["from"])
            #expect(badLimit.body.problemFields == ["limit"])
            #expect(
                pages == [
                    ["I look stupid", "I am too slow"], ["Nobody calls me", "I will fail"], ["Nobody likes me"],
                ])
        }
    }

    @Test(
        "occurrences recorded offline on two phones find one thought; a thought deleted offline goes with its occurrences; a thought is never sent alone"
    )
    func offline() async throws {
        try await withTestApp { app in
            // setup
            let (phone, _) = try await app.patient("ada@example.org")
            let tablet = phone
            let (first, second, proposed) = (UUID(), UUID(), UUID())
            func create(_ id: UUID, _ text: String, thoughtID: UUID? = nil) -> JSONValue {
                var extra: [String: JSONValue] = [:]
                if let thoughtID { extra["thoughtId"] = .string(thoughtID.uuidString) }
                return [
                    "id": .string(UUID().uuidString), "type": "record.create", "recordKind": "thoughtOccurrence",
                    "recordId": .string(id.uuidString),
                    "record": Self.occurrence(app, id: id, text: text, extra: extra),
                ]
            }

            // act
            let fromPhone = try await SyncTests().push(phone, [create(first, "I am a burden", thoughtID: proposed)])
            let fromTablet = try await SyncTests().push(
                tablet,
                [
                    create(second, "i am a  BURDEN", thoughtID: UUID()),
                    [
                        "id": .string(UUID().uuidString), "type": "record.create", "recordKind": "thought",
                        "record": ["text": "Alone"],
                    ],
                    [
                        "id": .string(UUID().uuidString), "type": "record.create", "recordKind": "thoughtOccurrence",
                        "record": ["text": "No ratings", "recordedAt": QuestionnaireAPITests.iso(app.clock.now)],
                    ],
                ])
            let listed = try await phone.send(.GET, "/me/thoughts").decoded([Components.Schemas.Thought].self)
            let deleted = try await SyncTests().push(
                phone,
                [
                    [
                        "id": .string(UUID().uuidString), "type": "record.delete", "recordKind": "thought",
                        "recordId": .string(proposed.uuidString), "baseVersion": 1,
                    ]
                ])
            let afterDelete = try await phone.send(.GET, "/me/thoughts").decoded([Components.Schemas.Thought].self)

            // verify
            #expect(fromPhone.results.map(\.status) == [.applied])
            #expect(fromPhone.results[0].recordKind == .thoughtOccurrence)
            #expect(
                fromPhone.results[0].record?.value["thoughtId"] as? String == proposed.uuidString.lowercased(),
                "a new thought takes the id the app chose")
            #expect(fromTablet.results.map(\.status) == [.applied, .rejected, .rejected])
            #expect(
                fromTablet.results[0].record?.value["thoughtId"] as? String == proposed.uuidString.lowercased(),
                "the same words find the same thought")
            #expect(fromTablet.results[1].problem?.errors?.map(\.field) == ["recordKind"])
            #expect(
                Set(fromTablet.results[2].problem?.errors?.map(\.field) ?? []) == [
                    "record.ratingBefore", "record.ratingAfter",
                ])
            #expect(listed.count == 1 && listed[0].occurrences?.count == 2)
            #expect(deleted.results.map(\.status) == [.applied])
            let remaining = try await app.count("records")
            #expect(afterDelete.isEmpty && remaining == 0)
        }
    }
}

@Suite("Thoughts in the research export")
struct ThoughtExportTests {
    @Test(
        "thoughts.csv holds the words and who added them, occurrences.csv the rating pair and its change without place or note, FHIR both"
    )
    func export() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (ada, _) = try await app.patient("ada@example.org")
            let studyID = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            let set = try await researcher.send(
                .PUT, "/studies/\(studyID)/record-settings", json: ["collects": ["thought"], "eventTypes": []])
            try #require(set.status == .ok, "\(set.text)")
            let refused = try await researcher.send(
                .PUT, "/studies/\(studyID)/record-settings",
                json: ["collects": ["thoughtOccurrence"], "eventTypes": []])
            try #require(try await StudyAPITests.join(ada, studyID).status == .created)
            let first = try await ada.send(
                .POST, "/me/thoughts/occurrences",
                json: ThoughtAPITests.occurrence(
                    app, text: "I ruin everything", before: -0.8, after: -0.3,
                    extra: ["location": ["latitude": 55.87, "longitude": -4.29], "note": "Secret note"]))
            _ = try await ada.send(
                .POST, "/me/thoughts/occurrences",
                json: ThoughtAPITests.occurrence(app, text: "i ruin EVERYTHING", before: -0.4, after: 0.1))
            let thoughtID = try #require(first.body["thought"]["id"].string)

            // act
            let started = try await researcher.send(.POST, "/studies/\(studyID)/exports")
            let id = try #require(started.body["id"].string)
            _ = try await ExportService(database: app.database, services: app.app.interlude).runPending()
            let files = try ExportWorld.unpack(try await researcher.send(.GET, "/exports/\(id)/file").data)

            // verify
            #expect(
                refused.status == .unprocessableEntity && refused.body.problemFields == ["collects"],
                "occurrences come with thoughts")
            let thoughts = try CSVTable(files["thoughts.csv"])
            #expect(
                thoughts.rows.map { $0["text"] } == ["I ruin everything"] && thoughts.rows.first?["origin"] == "patient"
            )
            #expect(thoughts.rows.first?["record_id"] == thoughtID)
            let occurrences = try CSVTable(files["occurrences.csv"])
            #expect(
                Set(
                    occurrences.rows.map {
                        "\($0["rating_before"] ?? "")/\($0["rating_after"] ?? "")/\($0["change"] ?? "")"
                    }) == ["-0.8/-0.3/0.5", "-0.4/0.1/0.5"])
            #expect(occurrences.rows.allSatisfy { $0["thought_id"] == thoughtID })
            let text = String(decoding: files["occurrences.csv"] ?? Data(), as: UTF8.self)
            #expect(!text.contains("55.87") && !text.contains("Secret"))
            let observations = String(decoding: files["fhir/Observation.ndjson"] ?? Data(), as: UTF8.self).split(
                separator: "\n")
            #expect(
                observations.count == 3 && observations.filter { $0.contains("Observation/\(thoughtID)") }.count == 2)
        }
    }
}
