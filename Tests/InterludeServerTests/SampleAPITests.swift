import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting
import ZIPFoundation

@testable import InterludeServer

@Suite("Samples from phones and watches: per-type choice, collection window, idempotent batches")
struct SampleAPITests {
    /// A researcher's study asking for `types`, and a patient taking part.
    static func study(
        _ app: TestContext, types: [String] = ["heartRate", "distanceWalkingRunning", "stepCount"],
        windowDays: Int? = nil,
        patient email: String = "ada@example.org"
    ) async throws -> (patient: APIClient, patientID: UUID, researcher: APIClient, studyID: String) {
        let (researcher, _) = try await app.staff("researcher", "lab-\(UUID().uuidString.prefix(6))@uni.example")
        let (patient, patientID) = try await app.patient(email)
        let studyID = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
        var settings: [String: JSONValue] = [
            "collects": ["mood"], "eventTypes": [],
            "sampleTypes": .array(
                types.map { ["type": .string($0), "purpose": .string("To relate \($0) to how you feel.")] }),
        ]
        if let windowDays { settings["windowDays"] = .number(Double(windowDays)) }
        let set = try await researcher.send(.PUT, "/studies/\(studyID)/record-settings", json: .object(settings))
        try #require(set.status == .ok, "\(set.text)")
        try #require(try await StudyAPITests.join(patient, studyID).status == .created)
        return (patient, patientID, researcher, studyID)
    }

    static func sample(
        _ type: String, _ value: Double, _ unit: String, start: Date, minutes: Double = 1,
        id: String = UUID().uuidString,
        startText: String? = nil
    ) -> JSONValue {
        [
            "type": .string(type), "value": .number(value), "unit": .string(unit),
            "startsAt": startText.map(JSONValue.string) ?? QuestionnaireAPITests.iso(start),
            "endsAt": QuestionnaireAPITests.iso(start.addingTimeInterval(minutes * 60)), "sourceId": .string(id),
            "source": ["app": "Health", "deviceName": "Watch", "deviceModel": "Watch6,1", "osVersion": "10.1.0"],
        ]
    }

    static func enable(_ patient: APIClient, _ types: String...) async throws {
        for type in types {
            let reply = try await patient.send(.PUT, "/me/sample-types/\(type)", json: ["enabled": true])
            try #require(reply.status == .ok, "\(reply.text)")
        }
    }

    @Test(
        "a batch keeps the valid samples converted to the canonical unit, names each refused one by index, and changes nothing when sent again"
    )
    func batch() async throws {
        try await withTestApp { app in
            // setup
            let (ada, _, _, _) = try await Self.study(app)
            try await Self.enable(ada, "heartRate", "distanceWalkingRunning")
            let hour = app.clock.now.addingTimeInterval(-3600)
            let broken = Self.sample("heartRate", 70, "count/min", start: hour, startText: "yesterday")
            let batch: JSONValue = [
                "samples": [
                    Self.sample("heartRate", 72, "count/min", start: hour, id: "hk-1"),
                    Self.sample("distanceWalkingRunning", 1.2, "km", start: hour, minutes: 20, id: "hk-2"),
                    Self.sample("stepCount", 1500, "count", start: hour, id: "hk-3"),
                    Self.sample("heartRate", 400, "count/min", start: hour, id: "hk-4"),
                    broken,
                    Self.sample("heartRate", 75, "count/min", start: hour, id: "hk-1"),
                    Self.sample("heartRate", 75, "kg", start: hour, id: "hk-7"),
                ]
            ]

            // act
            let first = try await ada.send(.POST, "/me/samples", json: batch)
            let again = try await ada.send(.POST, "/me/samples", json: batch)
            let all = try await ada.send(.GET, "/me/samples")
            let distance = try await ada.send(.GET, "/me/samples?type=distanceWalkingRunning")
            let later = try await ada.send(
                .GET, "/me/samples?from=\(ISO8601DateFormatter().string(from: app.clock.now))")
            let unknown = try await ada.send(.GET, "/me/samples?type=mood")
            let types = try await ada.send(.GET, "/me/sample-types").decoded([Components.Schemas.SampleTypeChoice].self)

            // verify
            #expect(first.status == .ok, "\(first.text)")
            #expect(first.body["stored"].int == 2 && first.body["duplicates"].int == 0)
            let rejected = first.body["rejected"].array.map {
                ($0["index"].int ?? -1, $0["errors"].array.compactMap { $0["field"].string })
            }
            #expect(rejected.map(\.0) == [2, 3, 4, 5, 6])
            #expect(
                rejected.map(\.1) == [
                    ["samples[2].type"], ["samples[3].value"], ["samples[4].startsAt"], ["samples[5].sourceId"],
                    ["samples[6].unit"],
                ])
            #expect(first.body["rejected"][0]["errors"][0]["code"].string == "notAllowed", "step count is not enabled")
            #expect(first.body["rejected"][2]["errors"][0]["code"].string == "invalidFormat")
            #expect(again.body["stored"].int == 0 && again.body["duplicates"].int == 2, "\(again.text)")
            #expect(all.body["samples"].array.count == 2)
            #expect(distance.body["samples"].array.map { $0["value"].double } == [1200])
            #expect(distance.body["samples"][0]["unit"].string == "m")
            #expect(later.body["samples"].array.isEmpty)
            #expect(unknown.status == .unprocessableEntity && unknown.body.problemFields == ["type"])
            #expect(types.map(\._type) == ["heartRate", "stepCount", "distanceWalkingRunning"])
            #expect(types.map(\.enabled) == [true, false, true])
            #expect(types.map(\.count) == [1, 0, 1])
            #expect(types[0].purposes == ["To relate heartRate to how you feel."])
            #expect(try await app.count("samples") == 2)
        }
    }

    @Test(
        "disabling a type deletes its samples at once and refuses further uploads; a type no study asks for cannot be enabled"
    )
    func disable() async throws {
        try await withTestApp { app in
            // setup
            let (ada, _, _, _) = try await Self.study(app)
            let (ben, _, _, _) = try await Self.study(app, patient: "ben@example.org")
            try await Self.enable(ada, "heartRate", "stepCount")
            try await Self.enable(ben, "heartRate")
            let hour = app.clock.now.addingTimeInterval(-3600)
            let samples: JSONValue = [
                "samples": [
                    Self.sample("heartRate", 72, "count/min", start: hour),
                    Self.sample("heartRate", 80, "/min", start: hour),
                    Self.sample("stepCount", 300, "count", start: hour),
                ]
            ]
            try #require(try await ada.send(.POST, "/me/samples", json: samples).body["stored"].int == 3)
            try #require(try await ben.send(.POST, "/me/samples", json: samples).body["stored"].int == 2)

            // act
            let disabled = try await ada.send(.PUT, "/me/sample-types/heartRate", json: ["enabled": false])
            let refused = try await ada.send(.POST, "/me/samples", json: samples)
            let notAsked = try await ada.send(.PUT, "/me/sample-types/bodyMass", json: ["enabled": true])
            let notAType = try await ada.send(.PUT, "/me/sample-types/mood", json: ["enabled": true])

            // verify
            #expect(disabled.status == .ok && disabled.body["enabled"].bool == false && disabled.body["count"].int == 0)
            #expect(
                refused.body["stored"].int == 0 && refused.body["duplicates"].int == 1,
                "the step count was stored before")
            #expect(
                refused.body["rejected"].array.compactMap { $0["errors"][0]["code"].string } == [
                    "notAllowed", "notAllowed",
                ])
            #expect(notAsked.status == .unprocessableEntity && notAsked.body.problemFields == ["type"])
            #expect(notAType.status == .notFound)
            let left = try await SampleRecord.query(on: app.database).all()
            #expect(left.filter { $0.type == .heartRate }.count == 2, "only the other person's heart rate is left")
            #expect(left.filter { $0.type == .stepCount }.count == 1)
        }
    }

    @Test("a study's window keeps samples from N days before the first mood report up to the last one")
    func window() async throws {
        try await withTestApp { app in
            // setup
            let (ada, _, _, _) = try await Self.study(app, windowDays: 7)
            try await Self.enable(ada, "heartRate")
            let now = app.clock.now
            let day = 86_400.0
            let samples: JSONValue = [
                "samples": [
                    Self.sample("heartRate", 70, "count/min", start: now.addingTimeInterval(-3 * day), id: "in"),
                    Self.sample("heartRate", 70, "count/min", start: now.addingTimeInterval(-11 * day), id: "before"),
                    Self.sample("heartRate", 70, "count/min", start: now.addingTimeInterval(-20 * 60), id: "after"),
                ]
            ]

            // act
            let withoutMood = try await ada.send(.POST, "/me/samples", json: samples)
            for offset in [-2 * day, -3600] {
                let mood: JSONValue = [
                    "id": .string(UUID().uuidString), "valence": 0.6,
                    "recordedAt": QuestionnaireAPITests.iso(now.addingTimeInterval(offset)),
                ]
                try #require(try await ada.send(.POST, "/me/moods", json: mood).status == .created)
            }
            let withMoods = try await ada.send(.POST, "/me/samples", json: samples)
            let types = try await ada.send(.GET, "/me/sample-types")

            // verify
            #expect(withoutMood.body["stored"].int == 0)
            #expect(
                withoutMood.body["rejected"].array.compactMap { $0["errors"][0]["code"].string }
                    == Array(repeating: "outsideWindow", count: 3))
            #expect(withMoods.body["stored"].int == 1, "\(withMoods.text)")
            #expect(
                withMoods.body["rejected"].array.compactMap { $0["errors"][0]["field"].string } == [
                    "samples[1].startsAt", "samples[2].endsAt",
                ])
            #expect(types.body[0]["windowDays"].int == 7)
        }
    }

    @Test("a batch may come gzipped over HTTP, unpacked before it is read")
    func gzip() async throws {
        try await withTestApp { app in
            // setup
            let (ada, _, _, _) = try await Self.study(app)
            try await Self.enable(ada, "stepCount")
            let start = app.clock.now.addingTimeInterval(-86_400)
            let batch: JSONValue = [
                "samples": .array(
                    (0..<2000).map {
                        Self.sample("stepCount", Double($0), "count", start: start.addingTimeInterval(Double($0) * 30))
                    })
            ]
            let json = try JSONEncoder().encode(batch)
            let packed = try Self.gzipped(json)

            // act
            let replies = try await RunningServer.parallel(app, 1) { server, _ in
                try await server.send(
                    ada, .POST, "/me/samples", bytes: packed,
                    headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"])
            }

            // verify
            #expect(packed.count * 5 < json.count)
            #expect(replies.first?.status == .ok, "\(replies.first?.text ?? "")")
            #expect(replies.first?.body["stored"].int == 2000)
        }
    }

    @Test("leaving a study with erasure takes the samples of the kinds no other study of the person asks for")
    func withdrawal() async throws {
        try await withTestApp { app in
            // setup
            let (ada, adaID, _, first) = try await Self.study(app, types: ["heartRate", "stepCount"])
            let (researcher, _) = try await app.staff("researcher", "second-lab@uni.example")
            let second = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            let settings: JSONValue = [
                "collects": [], "eventTypes": [],
                "sampleTypes": [["type": "heartRate", "purpose": "Also asked here."]],
            ]
            try #require(
                try await researcher.send(.PUT, "/studies/\(second)/record-settings", json: settings).status == .ok)
            try #require(try await StudyAPITests.join(ada, second).status == .created)
            try await Self.enable(ada, "heartRate", "stepCount")
            let hour = app.clock.now.addingTimeInterval(-3600)
            let batch: JSONValue = [
                "samples": [
                    Self.sample("heartRate", 70, "count/min", start: hour),
                    Self.sample("stepCount", 90, "count", start: hour),
                ]
            ]
            try #require(try await ada.send(.POST, "/me/samples", json: batch).body["stored"].int == 2)

            // act
            let left = try await ada.send(.DELETE, "/studies/\(first)/enrollment?erase=true")

            // verify
            #expect(left.status == .noContent || left.status == .ok, "\(left.text)")
            let kept = try await SampleRecord.query(on: app.database).filter(\.$patient.$id == adaID).all().map(\.type)
            #expect(kept == [.heartRate], "the second study still asks for heart rate")
        }
    }

    /// Data packed as gzip: header, deflate stream, CRC-32 and length.
    static func gzipped(_ data: Data) throws -> Data {
        var deflated = Data()
        let crc = try Data.compress(
            size: Int64(data.count), bufferSize: 64 * 1024,
            provider: { position, size in
                data.subdata(in: Int(position)..<(Int(position) + size))
            }, consumer: { deflated.append($0) })
        var packed = Data([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255])
        packed.append(deflated)
        withUnsafeBytes(of: crc.littleEndian) { packed.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(data.count).littleEndian) { packed.append(contentsOf: $0) }
        return packed
    }
}

@Suite("Samples and moods in the research export")
struct SampleExportTests {
    @Test(
        "samples.csv holds the asked types without the device's name, samples_daily.csv sums or averages per local day, mood.csv the valence, FHIR the Observations"
    )
    func export() async throws {
        try await withTestApp { app in
            // setup
            let (ada, _, researcher, studyID) = try await SampleAPITests.study(app, types: ["heartRate", "stepCount"])
            try await SampleAPITests.enable(ada, "heartRate", "stepCount")
            // 22:30 and 23:30 UTC are 23:30 and 00:30 in Vienna: two local days.
            let evening = Date(
                timeIntervalSince1970: (app.clock.now.timeIntervalSince1970 / 86_400).rounded(.down) * 86_400 - 86_400
                    + 22.5 * 3600)
            let batch: JSONValue = [
                "samples": [
                    SampleAPITests.sample("stepCount", 1000, "count", start: evening, id: "s1"),
                    SampleAPITests.sample("stepCount", 500, "count", start: evening.addingTimeInterval(600), id: "s2"),
                    SampleAPITests.sample("stepCount", 200, "count", start: evening.addingTimeInterval(3600), id: "s3"),
                    SampleAPITests.sample("heartRate", 60, "count/min", start: evening, id: "h1"),
                    SampleAPITests.sample(
                        "heartRate", 80, "count/min", start: evening.addingTimeInterval(60), id: "h2"),
                ]
            ]
            try #require(try await ada.send(.POST, "/me/samples", json: batch).body["stored"].int == 5)
            let mood: JSONValue = [
                "id": .string(UUID().uuidString), "valence": 0.25, "recordedAt": QuestionnaireAPITests.iso(evening),
                "note": "Private words",
            ]
            try #require(try await ada.send(.POST, "/me/moods", json: mood).status == .created)

            // act
            let started = try await researcher.send(.POST, "/studies/\(studyID)/exports")
            let id = try #require(started.body["id"].string)
            _ = try await ExportService(database: app.database, services: app.app.interlude).runPending()
            let files = try ExportWorld.unpack(try await researcher.send(.GET, "/exports/\(id)/file").data)

            // verify
            let samples = try CSVTable(files["samples.csv"])
            #expect(samples.rows.count == 5)
            #expect(
                !samples.header.contains("device_name")
                    && !String(decoding: files["samples.csv"] ?? Data(), as: UTF8.self).contains("\"Watch\""))
            #expect(samples.rows.first { $0["type"] == "heartRate" }?["unit"] == "/min")
            #expect(samples.rows.first?["device_model"] == "Watch6,1")
            let daily = try CSVTable(files["samples_daily.csv"])
            let steps = daily.rows.filter { $0["type"] == "stepCount" }.map {
                "\($0["value"] ?? "")/\($0["samples"] ?? "")"
            }
            #expect(steps == ["1500/2", "200/1"], "23:30 and 23:40 are one day in Vienna, 00:30 the next")
            #expect(daily.rows.filter { $0["type"] == "heartRate" }.map { $0["value"] } == ["70"])
            let moods = try CSVTable(files["mood.csv"])
            #expect(moods.rows.map { $0["valence"] } == ["0.25"])
            #expect(!String(decoding: files["mood.csv"] ?? Data(), as: UTF8.self).contains("Private"))
            let observations = String(decoding: files["fhir/Observation.ndjson"] ?? Data(), as: UTF8.self).split(
                separator: "\n")
            #expect(observations.count == 6)
            #expect(
                observations.filter { $0.contains("\"8867-4\"") && $0.contains("HKQuantityTypeIdentifierHeartRate") }
                    .count == 2)
            #expect(observations.filter { $0.contains("\"55423-8\"") }.count == 3)
        }
    }
}
