import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting
import ZIPFoundation

@testable import InterludeServer

@Suite("My data: the person's own copy of everything held about them")
struct SelfExportTests {
    /// Asks for a copy, lets the background job write it, and downloads it.
    static func copy(of patient: APIClient, _ app: TestContext) async throws -> [String: Data] {
        let asked = try await patient.send(.POST, "/me/export")
        try #require(asked.status == .accepted, "\(asked.text)")
        _ = try await SelfExportService(database: app.database, services: app.app.interlude).runPending()
        let file = try await patient.send(.GET, "/me/export")
        try #require(file.status == .ok, "\(file.text)")
        return try ExportWorld.unpack(file.data)
    }

    /// The ids in each `data/<table>.json`.
    static func ids(in files: [String: Data]) throws -> [String: Set<String>] {
        var ids: [String: Set<String>] = [:]
        for (path, data) in files where path.hasPrefix("data/") && path.hasSuffix(".json") {
            let table = String(path.dropFirst("data/".count).dropLast(".json".count))
            let rows = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
            ids[table] = Set(rows.compactMap { ($0["id"] as? String)?.lowercased() })
        }
        return ids
    }

    @Test(
        "the copy holds every row erasure deletes (compared by the erasure's keyed hashes), readable, and nothing of anyone else"
    )
    func holdsWhatErasureTakes() async throws {
        try await withTestApp { app in
            // setup
            let account = try await ErasureTests().fullAccount(app)
            let (ben, _) = try await app.patient("ben@example.org", name: "Ben Sharp")
            try await app.pair(ben, with: account.therapist)

            // act
            let files = try await Self.copy(of: account.patient, app)
            let exported = try Self.ids(in: files)
            _ = try await account.patient.send(.DELETE, "/me", json: ["password": .string(TestContext.password)])

            // verify: every id erasure removed is in the copy, in the same table
            let erased = try await ErasedIDRecord.query(on: app.database).all()
            #expect(erased.count > 10)
            var digests: [String: Set<String>] = [:]
            for (table, ids) in exported {
                for id in ids { digests[table, default: []].insert(try await ErasureTombstoneTests.digest(id, app)) }
            }
            for row in erased {
                #expect(
                    digests[row.table]?.contains(row.digest) == true,
                    "a row of \(row.table) erasure removed is missing from the copy")
            }
            // readable: answers opened, credentials withheld, nothing sealed
            let everything = files.values.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n")
            #expect(everything.contains("Ada Lovelace wrote this"))
            #expect(!everything.contains(FieldCipher.prefix))
            let users = String(decoding: try #require(files["data/users.json"]), as: UTF8.self)
            #expect(users.contains(PersonalData.withheld) && !users.contains("$argon2") && !users.contains("$2b$"))
            // nothing of anyone else
            // The therapist is named once, as whom the data is shared with (by display name, here the address).
            let summary = String(decoding: try #require(files["index.html"]), as: UTF8.self)
            #expect(summary.contains("Your therapist berger@praxis.example"))
            for other in ["ben@example.org", "Ben Sharp", "bob@example.org", account.otherID.uuidString.lowercased()] {
                let naming = files.filter {
                    String(decoding: $0.value, as: UTF8.self).lowercased().contains(other.lowercased())
                }.map(\.key)
                #expect(naming.isEmpty, "the copy names \(other) in \(naming)")
            }
            #expect(
                !files.filter { $0.key.hasPrefix("data/") }.contains {
                    String(decoding: $0.value, as: UTF8.self).contains("berger@praxis.example")
                })
            #expect(summary.contains("Your data at Interlude") && summary.contains("consent decisions"))
            let fhir = String(decoding: try #require(files["fhir/QuestionnaireResponse.ndjson"]), as: UTF8.self)
            #expect(fhir.split(separator: "\n").count == exported["responses"]?.count)
            #expect(fhir.contains("\"resourceType\":\"QuestionnaireResponse\""))
            let observations = String(decoding: try #require(files["fhir/Observation.ndjson"]), as: UTF8.self)
            #expect(observations.split(separator: "\n").count == 2, "the event and the audiogram")
            #expect(observations.contains("89015-2") && observations.contains("Ada Lovelace's ears rang"))
            #expect(
                String(decoding: try #require(files["fhir/Procedure.ndjson"]), as: UTF8.self).contains("hearingAid"))
            #expect(exported["records"]?.count == 3)
        }
    }

    @Test(
        "the person is told when it is ready; it downloads once, within a day; a second request while writing is the same one"
    )
    func onceWithinADay() async throws {
        try await withTestApp { app in
            // setup
            let (ada, _) = try await app.patient("ada@example.org")
            let (ben, _) = try await app.patient("ben@example.org")
            let mailsBefore = app.mailer.sent.count

            // act
            let first = try await ada.send(.POST, "/me/export").decoded(Components.Schemas.SelfExport.self)
            let again = try await ada.send(.POST, "/me/export").decoded(Components.Schemas.SelfExport.self)
            let early = try await ada.send(.GET, "/me/export")
            let nothingForBen = try await ben.send(.GET, "/me/export/status")
            _ = try await SelfExportService(database: app.database, services: app.app.interlude).runPending()
            let ready = try await ada.send(.GET, "/me/export/status").decoded(Components.Schemas.SelfExport.self)
            let download = try await ada.send(.GET, "/me/export")
            let second = try await ada.send(.GET, "/me/export")
            let after = try await ada.send(.GET, "/me/export/status").decoded(Components.Schemas.SelfExport.self)

            // verify
            #expect(first.status == .queued && again.id == first.id)
            #expect(early.status == .conflict)
            #expect(nothingForBen.status == .notFound)
            #expect(ready.status == .ready)
            #expect(ready.expiresAt == app.clock.now.addingTimeInterval(SelfExportService.downloadWindow))
            let mail = try #require(app.mailer.sent.dropFirst(mailsBefore).last)
            #expect(mail.to == "ada@example.org" && mail.subject == "Your copy of your data is ready")
            #expect(download.status == .ok)
            #expect(try ExportWorld.unpack(download.data)["index.html"] != nil)
            #expect(second.status == .conflict, "a copy downloads once")
            #expect(after.status == .expired && after.downloadedAt != nil)
            #expect(
                try await !app.stores(.selfExport(try #require(UUID(uuidString: first.id)))),
                "the file goes with the download")

            // act: a new copy left lying past its day
            let next = try await ada.send(.POST, "/me/export").decoded(Components.Schemas.SelfExport.self)
            _ = try await SelfExportService(database: app.database, services: app.app.interlude).runPending()
            app.clock.advance(by: SelfExportService.downloadWindow + 60)
            let late = try await ada.send(.GET, "/me/export")
            let swept = try await SelfExportService(database: app.database, services: app.app.interlude).sweep()

            // verify
            #expect(next.id != first.id)
            #expect(late.status == .conflict)
            #expect(swept >= 1)
            #expect(try await !app.stores(.selfExport(try #require(UUID(uuidString: next.id)))))
            #expect(
                try await ada.send(.GET, "/me/export/status").decoded(Components.Schemas.SelfExport.self).status
                    == .expired)
        }
    }
}
