import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Which health records a study collects, and the event types it adds")
struct RecordSettingsTests {
    @Test("a study collects nothing until its owner chooses; its event types then count for its participants' events")
    func studyEventTypes() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (ada, _) = try await app.patient("ada@example.org")
            let studyID = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            try #require(try await StudyAPITests.join(ada, studyID).status == .created)
            let event: JSONValue = [
                "id": .string(UUID().uuidString), "title": "Bad night",
                "occurredAt": QuestionnaireAPITests.iso(app.clock.now),
                "type": "Sleepless night",
            ]

            // act
            let before = try await researcher.send(.GET, "/studies/\(studyID)/record-settings")
            let refusedEvent = try await ada.send(.POST, "/me/events", json: event)
            let refused = try await researcher.send(
                .PUT, "/studies/\(studyID)/record-settings",
                json: [
                    "collects": ["event", "diary"],
                    "eventTypes": ["Sleepless night", "Sleepless night", "appointment", " "],
                ])
            let unchanged = try await researcher.send(.GET, "/studies/\(studyID)/record-settings")
            let set = try await researcher.send(
                .PUT, "/studies/\(studyID)/record-settings",
                json: ["collects": ["audiogram", "event"], "eventTypes": ["Sleepless night"]])
            let accepted = try await ada.send(.POST, "/me/events", json: event)
            let me = try await ada.send(.GET, "/me")

            // verify
            #expect(before.body["collects"].array.isEmpty && before.body["eventTypes"].array.isEmpty)
            #expect(refusedEvent.body.problemFields == ["type"])
            #expect(
                Set(refused.body.problemFields) == ["collects", "eventTypes[1]", "eventTypes[2]", "eventTypes[3]"],
                "\(refused.text)")
            #expect(unchanged.body["collects"].array.isEmpty)
            #expect(set.status == .ok)
            #expect(
                set.body["collects"].array.compactMap(\.string) == ["event", "audiogram"], "listed in the kinds' order")
            #expect(accepted.status == .created, "\(accepted.text)")
            #expect(me.body["patient"]["records"]["collects"].array.compactMap(\.string) == ["event", "audiogram"])
            #expect(me.body["patient"]["records"]["eventTypes"].array.compactMap(\.string) == ["Sleepless night"])
        }
    }

    @Test(
        "an event type takes a German name and a sample reason German text; events stay under the type's own name; a name for no type is refused"
    )
    func germanNames() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (ada, _) = try await app.patient("ada@example.org")
            try #require(try await ada.send(.PATCH, "/me", json: ["locale": "de"]).status == .ok)
            let studyID = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            try #require(try await StudyAPITests.join(ada, studyID).status == .created)
            let path = "/studies/\(studyID)/record-settings"

            // act
            let refused = try await researcher.send(
                .PUT, path,
                json: [
                    "collects": ["event"], "eventTypes": ["Hearing test"],
                    "eventTypeNames": ["Hearing tset": "Hörtest"],
                ])
            let set = try await researcher.send(
                .PUT, path,
                json: [
                    "collects": ["event"], "eventTypes": ["Hearing test"],
                    "eventTypeNames": ["Hearing test": "Hörtest"],
                    "sampleTypes": [
                        [
                            "type": "stepCount",
                            "purposes": ["en": "How much you move.", "de": "Wie viel Sie sich bewegen."],
                        ]
                    ],
                ])
            let me = try await ada.send(.GET, "/me")
            let types = try await ada.send(.GET, "/me/sample-types")
            let event = try await ada.send(
                .POST, "/me/events",
                json: [
                    "id": .string(UUID().uuidString), "title": "Test",
                    "occurredAt": QuestionnaireAPITests.iso(app.clock.now), "type": "Hearing test",
                ])

            // verify
            #expect(refused.body.problemFields == ["eventTypeNames.Hearing tset"])
            #expect(set.status == .ok, "\(set.text)")
            #expect(set.body["eventTypeNames"]["Hearing test"]["de"].string == "Hörtest")
            #expect(set.body["sampleTypes"][0]["purpose"].string == "How much you move.")
            #expect(me.body["patient"]["records"]["eventTypeNames"]["Hearing test"]["de"].string == "Hörtest")
            let steps = try #require(types.body.array.first { $0["type"].string == "stepCount" })
            #expect(steps["purposes"].array.compactMap(\.string) == ["Wie viel Sie sich bewegen."])
            #expect(steps["purposeTexts"][0]["en"].string == "How much you move.")
            #expect(event.status == .created)
        }
    }

    @Test("a therapist sets what their practice collects; a researcher of the study may read but not change it")
    func practiceAndTeam() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, therapistID) = try await app.staff("therapist", "t@example.org")
            let (owner, _) = try await app.staff("researcher", "lab@uni.example")
            let (colleague, colleagueID) = try await app.staff("researcher", "colleague@uni.example")
            let (ada, _) = try await app.patient("ada@example.org")
            try await app.pair(ada, with: therapist)
            let practice = try await PairingService(database: app.database, services: app.app.interlude).practice(
                of: therapistID)
            let studyID = try await StudyAPITests().createStudy(owner, StudyAPITests.study("open"))
            try await StudyStaffRecord(studyID: UUID(uuidString: studyID)!, userID: colleagueID, role: .researcher)
                .create(on: app.database)

            // act
            let own = try await therapist.send(
                .PUT, "/studies/\(practice.requireID())/record-settings",
                json: ["collects": ["therapy"], "eventTypes": []])
            let colleagueRead = try await colleague.send(.GET, "/studies/\(studyID)/record-settings")
            let colleagueWrite = try await colleague.send(
                .PUT, "/studies/\(studyID)/record-settings", json: ["collects": ["therapy"], "eventTypes": []])
            let me = try await ada.send(.GET, "/me")

            // verify
            #expect(own.status == .ok)
            #expect(colleagueRead.status == .ok)
            #expect(colleagueWrite.status == .forbidden)
            #expect(me.body["patient"]["records"]["collects"].array.compactMap(\.string) == ["therapy"])
            let stored = try #require(try await StudyRecord.find(UUID(uuidString: studyID), on: app.database))
            #expect(stored.recordSettings.collects.isEmpty)
        }
    }

    @Test(
        "in the console the therapist ticks the records their practice collects; a wrong event type is named and nothing changes"
    )
    func console() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, _, practiceID) = try await ConsoleScheduleTests().practice(app)
            let path = "/console/studies/\(practiceID)/records"

            // act
            let menu = try await console.get("/console/records")
            let refused = try await console.post(
                path, [("collects[]", "event"), ("eventTypes", "Long flight\nappointment")])
            let afterRefusal = try #require(try await StudyRecord.find(practiceID, on: app.database)).recordSettings
            let saved = try await console.post(
                path,
                [
                    ("collects[]", "event"), ("collects[]", "audiogram"),
                    ("eventTypes", "Long flight | Langstreckenflug\n\nSleepless night"),
                ])
            let page = try await console.get(path)

            // verify
            #expect(menu.status == .seeOther && menu.location == path)
            #expect(refused.status == .unprocessableEntity)
            #expect(refused.html.contains(#"id="eventTypes-error""#))
            #expect(afterRefusal == RecordSettings())
            #expect(saved.status == .seeOther)
            let stored = try #require(try await StudyRecord.find(practiceID, on: app.database)).recordSettings
            #expect(stored.eventTypes == ["Long flight", "Sleepless night"])
            #expect(stored.eventTypeNames == ["Long flight": LocalizedText(en: "Long flight", de: "Langstreckenflug")])
            #expect(stored.collects == [.event, .audiogram])
            #expect(page.html.contains("Long flight | Langstreckenflug\nSleepless night</textarea>"))
            #expect(
                page.html.contains(
                    #"id="collects-audiogram" name="collects[]" type="checkbox" value="audiogram" checked"#))
            #expect(!page.html.contains(#"value="therapy" checked"#))
        }
    }
}
