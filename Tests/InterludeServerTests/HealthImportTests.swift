import Fluent
import Foundation
import InterludeCore
import OpenAPIRuntime
import Testing
import VaporTesting
import ZIPFoundation

@testable import InterludeServer

@Suite(
    "Apple Health exports and CSV files imported: resumable uploads, read in the background, only what the person allows"
)
struct HealthImportTests {
    /// Apple Health's date format at UTC.
    static func health(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
        return formatter.string(from: date)
    }

    /// An export with `heartRates` heart rates over the last days, steps (to be disabled), double support, a night's
    /// sleep, a heart rate long before the window, and a type Interlude does not collect.
    static func export(now: Date, heartRates: Int) -> String {
        var lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#, "<!DOCTYPE HealthData [",
            "<!ELEMENT HealthData (ExportDate,Me,(Record)*)>", "]>",
            #"<HealthData locale="en_GB">"#, #" <ExportDate value="\#(health(now))"/>"#,
        ]
        func record(_ type: String, _ unit: String, _ value: String, _ start: Date, minutes: Double = 1) -> String {
            #" <Record type="\#(type)" sourceName="Watch" sourceVersion="10.1" device="&lt;&lt;HKDevice: 0x1&gt;, name:Apple Watch, model:Watch, hardware:Watch6,1, software:10.1&gt;" unit="\#(unit)" startDate="\#(health(start))" endDate="\#(health(start.addingTimeInterval(minutes * 60)))" value="\#(value)"/>"#
        }
        for index in 0..<heartRates {
            lines.append(
                record(
                    "HKQuantityTypeIdentifierHeartRate", "count/min", String(60 + index % 40),
                    now.addingTimeInterval(-Double(index + 1) * 300)))
        }
        lines.append(record("HKQuantityTypeIdentifierStepCount", "count", "420", now.addingTimeInterval(-7200)))
        lines.append(
            record(
                "HKQuantityTypeIdentifierWalkingDoubleSupportPercentage", "%", "0.31", now.addingTimeInterval(-7200),
                minutes: 10))
        lines.append(
            record(
                "HKCategoryTypeIdentifierSleepAnalysis", "", "HKCategoryValueSleepAnalysisAsleepDeep",
                now.addingTimeInterval(-20 * 3600), minutes: 90))
        lines.append(
            record("HKQuantityTypeIdentifierHeartRate", "count/min", "70", now.addingTimeInterval(-30 * 86_400)))
        lines.append(record("HKQuantityTypeIdentifierBasalEnergyBurned", "kcal", "12", now.addingTimeInterval(-7200)))
        lines.append("</HealthData>")
        return lines.joined(separator: "\n")
    }

    /// The export zipped as the Health app does, `apple_health_export/export.xml` beside the CDA file.
    static func zipped(_ xml: String) throws -> Data {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("export.zip")
        let archive = try Archive(url: url, accessMode: .create)
        for (path, text) in [
            ("apple_health_export/export_cda.xml", "<ClinicalDocument/>"), ("apple_health_export/export.xml", xml),
        ] {
            let data = Data(text.utf8)
            try archive.addEntry(
                with: path, type: .file, uncompressedSize: Int64(data.count), compressionMethod: .deflate
            ) { position, size in
                data.subdata(in: Int(position)..<(Int(position) + size))
            }
        }
        return try Data(contentsOf: url)
    }

    @Test(
        "an export uploaded in two parts resumes where the server stopped, is read in the background, and a second import changes nothing"
    )
    func appleHealth() async throws {
        try await withTestApp { app in
            // setup
            let (ada, adaID, _, _) = try await SampleAPITests.study(
                app, types: ["heartRate", "stepCount", "walkingDoubleSupport", "sleepAnalysis"], windowDays: 7)
            try await SampleAPITests.enable(ada, "heartRate", "walkingDoubleSupport", "sleepAnalysis")
            let now = app.clock.now
            for offset in [-3 * 86_400.0, -60] {
                let mood: JSONValue = [
                    "id": .string(UUID().uuidString), "valence": 0.5,
                    "recordedAt": QuestionnaireAPITests.iso(now.addingTimeInterval(offset)),
                ]
                try #require(try await ada.send(.POST, "/me/moods", json: mood).status == .created)
            }
            let file = try Self.zipped(Self.export(now: now, heartRates: 6000))
            let half = file.count / 2
            let service = HealthImportService(database: app.database, services: app.app.interlude)

            // act
            let started = try await ada.send(
                .POST, "/me/health-imports", bytes: file.prefix(half), contentType: .zip,
                headers: ["Upload-Length": String(file.count)])
            let id = try #require(started.body["id"].string)
            let misplaced = try await ada.send(
                .PATCH, "/me/health-imports/\(id)", bytes: file.suffix(from: half + 10), contentType: .binary,
                headers: ["Upload-Offset": String(half + 10)])
            let rest = try await ada.send(
                .PATCH, "/me/health-imports/\(id)", bytes: file.suffix(from: half), contentType: .binary,
                headers: ["Upload-Offset": String(half)])
            let read = try await service.runPending()
            let done = try await ada.send(.GET, "/me/health-imports/\(id)")
            let second = try await ada.send(.POST, "/me/health-imports", bytes: file, contentType: .binary)
            _ = try await service.runPending()
            let again = try await ada.send(.GET, "/me/health-imports/\(second.body["id"].string ?? "")")
            let ben = try await app.patient("ben@example.org").0.send(.GET, "/me/health-imports/\(id)")

            // verify
            #expect(
                started.status == .created && started.body["status"].string == "receiving"
                    && started.body["received"].int == half)
            #expect(misplaced.status == .conflict && misplaced.body["type"].string == "/problems/upload-offset")
            #expect(rest.status == .ok && rest.body["status"].string == "waiting", "\(rest.text)")
            #expect(read == 1)
            #expect(done.body["status"].string == "done", "\(done.text)")
            // 6000 heart rates every five minutes reach back almost 21 days: those older than 3 + 7 days are outside the window.
            let inWindow = (0..<6000).filter { Double($0 + 1) * 300 <= 10 * 86_400 && Double($0 + 1) * 300 >= 60 + 60 }
                .count
            #expect(
                done.body["stored"].int == inWindow + 2,
                "heart rates in the window, double support and sleep: \(done.text)")
            #expect(done.body["skipped"]["notEnabled"].int == 1, "the steps")
            #expect(done.body["skipped"]["outsideWindow"].int == 6000 - inWindow + 1)
            #expect(done.body["skipped"]["otherTypes"].int == 1)
            #expect(again.body["stored"].int == 0 && again.body["duplicates"].int == inWindow + 2, "\(again.text)")
            #expect(ben.status == .notFound)
            let support = try await SampleRecord.query(on: app.database).filter(\.$patient.$id == adaID).filter(
                \.$type == .walkingDoubleSupport
            ).all()
            #expect(support.map(\.value) == [31])
            let sleep = try await SampleRecord.query(on: app.database).filter(\.$type == .sleepAnalysis).all()
            #expect(sleep.map(\.value) == [90])
            #expect(try await app.count("health_imports") == 2)
            #expect(try await !app.stores(.healthImport(UUID(uuidString: id)!)), "the file goes once read")
        }
    }

    @Test("a CSV file is imported row by row; one without the header fails with its reason and stores nothing")
    func csv() async throws {
        try await withTestApp { app in
            // setup
            let (ada, _, _, _) = try await SampleAPITests.study(app, types: ["stepCount", "bodyMass"])
            try await SampleAPITests.enable(ada, "stepCount", "bodyMass")
            let day = ISO8601DateFormatter().string(from: app.clock.now.addingTimeInterval(-86_400))
            let csv =
                "type,value,unit,start,end\nstepCount,5400,count,\(day),\(day)\nbodyMass,150,lb,\(day),\(day)\nbodyMass,3000,kg,\(day),\(day)\n"
            let service = HealthImportService(database: app.database, services: app.app.interlude)

            // act
            let started = try await ada.send(
                .POST, "/me/health-imports", bytes: Data(csv.utf8),
                contentType: HTTPMediaType(type: "text", subType: "csv"))
            _ = try await service.runPending()
            let headless = try await ada.send(
                .POST, "/me/health-imports", bytes: Data("stepCount,1,count,\(day),\(day)\n".utf8), contentType: .binary
            )
            _ = try await service.runPending()
            let done = try await ada.send(.GET, "/me/health-imports/\(started.body["id"].string ?? "")")
            let failed = try await ada.send(.GET, "/me/health-imports/\(headless.body["id"].string ?? "")")

            // verify
            #expect(started.status == .created && started.body["format"].string == "csv")
            #expect(headless.body["format"].string == "csv")
            #expect(done.body["stored"].int == 2 && done.body["skipped"]["invalid"].int == 1, "\(done.text)")
            #expect(
                failed.body["status"].string == "failed"
                    && failed.body["problem"].string?.contains("type, value, unit") == true)
            let mass = try #require(try await SampleRecord.query(on: app.database).filter(\.$type == .bodyMass).first())
            #expect(abs(mass.value - 68.04) < 0.01)
        }
    }

    @Test(
        "one import at a time: a new upload gives up an unfinished one, a complete one waiting refuses the next, and an idle upload is given up after a day"
    )
    func oneAtATime() async throws {
        try await withTestApp { app in
            // setup
            let (ada, _, _, _) = try await SampleAPITests.study(app, types: ["stepCount"])
            let csv = HTTPMediaType(type: "text", subType: "csv")
            let part = Data("type,value,unit,start,end\n".utf8)

            // act
            let first = try await ada.send(
                .POST, "/me/health-imports", bytes: part, contentType: csv, headers: ["Upload-Length": "1000"])
            let second = try await ada.send(.POST, "/me/health-imports", bytes: part, contentType: csv)
            let refused = try await ada.send(
                .POST, "/me/health-imports", bytes: part, contentType: csv, headers: ["Upload-Length": "1000"])
            _ = try await HealthImportService(database: app.database, services: app.app.interlude).runPending()
            let third = try await ada.send(
                .POST, "/me/health-imports", bytes: part, contentType: csv, headers: ["Upload-Length": "1000"])
            app.clock.advance(by: 25 * 3600)
            let report = try await Retention(database: app.database, services: app.app.interlude).run()
            let replaced = try await ada.send(.GET, "/me/health-imports/\(first.body["id"].string ?? "")")
            let abandoned = try await ada.send(.GET, "/me/health-imports/\(third.body["id"].string ?? "")")

            // verify
            #expect(first.status == .created && second.status == .created && third.status == .created)
            #expect(refused.status == .conflict && refused.body["type"].string == "/problems/import-under-way")
            #expect(
                replaced.body["status"].string == "failed"
                    && replaced.body["problem"].string == "replaced by a new upload")
            #expect(report.abandonedImports == 1)
            #expect(abandoned.body["status"].string == "failed")
            for reply in [first, second, third] {
                #expect(
                    try await !app.stores(.healthImport(try #require(UUID(uuidString: reply.body["id"].string ?? "")))),
                    "no upload is left")
            }
        }
    }

    @Test("a zip that unpacks to far more than an export could be is refused unread, and nothing is stored")
    func zipBomb() async throws {
        try await withTestApp { app in
            // setup: 30 MB of one character in a zip of a few kilobytes
            let (ada, _, _, _) = try await SampleAPITests.study(app, types: ["heartRate"])
            try await SampleAPITests.enable(ada, "heartRate")
            let export = Self.export(now: app.clock.now, heartRates: 3) + String(repeating: " ", count: 30 << 20)
            let bomb = try Self.zipped(export)
            let honest = try Self.zipped(Self.export(now: app.clock.now, heartRates: 3))
            let service = HealthImportService(database: app.database, services: app.app.interlude)

            // act
            let sent = try await ada.send(.POST, "/me/health-imports", bytes: bomb, contentType: .zip)
            _ = try await service.runPending()
            let refused = try await ada.send(.GET, "/me/health-imports/\(sent.body["id"].string ?? "")")
            let fine = try await ada.send(.POST, "/me/health-imports", bytes: honest, contentType: .zip)
            _ = try await service.runPending()
            let read = try await ada.send(.GET, "/me/health-imports/\(fine.body["id"].string ?? "")")

            // verify
            #expect(
                bomb.count < 100_000 && HealthImportSource.inflationLimit(of: bomb.count) < Int64(export.utf8.count))
            #expect(refused.body["status"].string == "failed", "\(refused.text)")
            #expect(refused.body["problem"].string?.contains("unpacks to far more") == true)
            #expect(refused.body["stored"].int == 0)
            #expect(
                read.body["status"].string == "done" && read.body["stored"].int == 4,
                "its four heart rates: \(read.text)")
        }
    }

    @Test(
        "a person uploads at most their day's quota: an upload beyond it is refused with when to try again, and no part goes past it"
    )
    func dailyQuota() async throws {
        try await withTestApp { app in
            // setup: a quota of 100 bytes a day
            let (_, adaID, _, _) = try await SampleAPITests.study(app, types: ["stepCount"])
            var service = HealthImportService(database: app.database, services: app.app.interlude)
            service.dailyQuota = 100
            let header = "type,value,unit,start,end\n"

            // act
            let first = try await service.start(
                .csv, size: 80, body: HTTPBody(header + String(repeating: "#", count: 80 - header.utf8.count)),
                by: adaID)
            _ = try await service.runPending()
            var tooMuch: (any Error)?
            do { _ = try await service.start(.csv, size: 30, body: HTTPBody(header), by: adaID) } catch {
                tooMuch = error
            }
            var beyond: (any Error)?
            do {
                _ = try await service.start(
                    .csv, size: nil, body: HTTPBody(String(repeating: "#", count: 50)), by: adaID)
            } catch { beyond = error }
            let partial = try #require(
                try await HealthImportRecord.query(on: app.database).filter(\.$status == .receiving).first())
            app.clock.advance(by: 86_401)
            let tomorrow = try await service.start(
                .csv, size: 30, body: HTTPBody(String(repeating: "#", count: 30)), by: adaID)

            // verify
            #expect(first.received == 80)
            #expect(
                (tooMuch as? AppError).map {
                    if case .rateLimited(let seconds) = $0 { seconds > 86_000 } else { false }
                } == true, "\(String(describing: tooMuch))")
            #expect(beyond as? AppError == .field("body", .tooLong, limit: 20), "\(String(describing: beyond))")
            #expect(partial.received == 0, "nothing past the quota is kept")
            #expect(tomorrow.received == 30)
        }
    }

    @Test(
        "imports of different people are read side by side: a small one is read while a large one, sent first, is still being read"
    )
    func fairAcrossPeople() async throws {
        try await withTestApp { app in
            // setup: Ada sends 40 000 steps first, Ben a dozen
            let (ada, _, _, _) = try await SampleAPITests.study(app, types: ["stepCount"])
            let (ben, _, _, _) = try await SampleAPITests.study(app, types: ["stepCount"], patient: "ben@example.org")
            try await SampleAPITests.enable(ada, "stepCount")
            try await SampleAPITests.enable(ben, "stepCount")
            func csv(_ rows: Int) -> Data {
                let lines = (0..<rows).map { index in
                    let day = ISO8601DateFormatter().string(
                        from: app.clock.now.addingTimeInterval(-Double(index + 1) * 60))
                    return "stepCount,\(index % 100),count,\(day),\(day)"
                }
                return Data(("type,value,unit,start,end\n" + lines.joined(separator: "\n") + "\n").utf8)
            }
            let large = try await ada.send(
                .POST, "/me/health-imports", bytes: csv(40_000),
                contentType: HTTPMediaType(type: "text", subType: "csv"))
            app.clock.advance(by: 1)
            let small = try await ben.send(
                .POST, "/me/health-imports", bytes: csv(12), contentType: HTTPMediaType(type: "text", subType: "csv"))
            let largeID = try #require(UUID(uuidString: large.body["id"].string ?? ""))
            let smallID = try #require(UUID(uuidString: small.body["id"].string ?? ""))
            let service = HealthImportService(database: app.database, services: app.app.interlude)

            // act: read in the background; look at the large one the moment the small one is done
            let reading = Task { try await service.runPending() }
            var largeWhenSmallDone: HealthImportRecord.Status?
            while largeWhenSmallDone == nil {
                if try await HealthImportRecord.find(smallID, on: app.database)?.status == .done {
                    largeWhenSmallDone = try await HealthImportRecord.find(largeID, on: app.database)?.status
                }
                try await Task.sleep(for: .milliseconds(5))
            }
            let read = try await reading.value

            // verify
            #expect(largeWhenSmallDone == .reading, "Ben's file waited for Ada's")
            #expect(read == 2)
            #expect(try await HealthImportRecord.find(largeID, on: app.database)?.stored == 40_000)
        }
    }
}
