import Fluent
import Foundation
import InterludeCore
import Testing
import Vapor
import VaporTesting

@testable import InterludeServer

/// Pages and documents as a reader gets them, held against files under `Snapshots/`. Ids and pseudonyms are
/// replaced by placeholders, so only what the page shows and how it is laid out counts. After a deliberate change,
/// `SNAPSHOTS=record swift test --filter SnapshotTests` writes the files anew; review them like code.
@Suite("Snapshots of console pages and FHIR documents")
struct SnapshotTests {
    /// A therapist whose paired patient answered the PHQ-9 once and has an appointment next week.
    struct World {
        let therapist: UserRecord
        let chart: PatientChart
        let stored: ResponseService.Stored
        let definition: InstrumentDefinition
    }

    static func world(_ app: TestContext) async throws -> World {
        // setup
        let questionnaires = QuestionnaireAPITests()
        let (therapistClient, patient, patientID, promptID) = try await questionnaires.setUp(app)
        let answered = try await patient.send(
            .POST, "/me/responses",
            json: questionnaires.submission(
                promptID, answers: QuestionnaireAPITests.phqAnswers([1, 2, 0, 3, 1, 0, 2, 1, 0]),
                completedAt: app.clock.now))
        try #require(answered.status == .created, "\(answered.text)")
        let booked = try await therapistClient.send(
            .POST, "/patients/\(patientID.uuidString)/appointments",
            json: [
                "title": "Session", "startsAt": QuestionnaireAPITests.iso(app.clock.now.addingTimeInterval(7 * 86_400)),
                "endsAt": QuestionnaireAPITests.iso(app.clock.now.addingTimeInterval(7 * 86_400 + 3000)),
            ])
        try #require(booked.status == .created, "\(booked.text)")
        let therapist = try #require(
            try await UserRecord.query(on: app.database).filter(\.$email == "berger@praxis.example").first())
        let chart = try await PatientChart.open(
            patientID, for: therapist, database: app.database, services: app.app.interlude)
        let responseID = try #require(UUID(uuidString: answered.body["id"].string ?? ""))
        let stored = try await chart.response(responseID)
        let definition = try #require(
            try await InstrumentCatalog(database: app.database, services: app.app.interlude).version("phq-9", 1)?
                .decodedDefinition())
        return World(therapist: therapist, chart: chart, stored: stored, definition: definition)
    }

    /// A page's template rendered with its content, as the console sends it (without the navigation).
    static func render<Content: Encodable & Sendable>(
        _ template: String, _ content: Content, for user: UserRecord, _ app: TestContext
    ) async throws -> String {
        let localizer = app.app.interlude.localizer
        let page = Page(
            lang: user.language.rawValue, t: localizer.templateTable(user.language), title: template, csrf: "csrf",
            nav: nil, script: nil, assets: try #require(app.app.publicAssets).prefix, page: content)
        let view = try await app.app.view.render(template, page).get()
        return String(buffer: view.data)
    }

    /// Ids and pseudonyms become placeholders numbered in order of appearance; the public files' version a placeholder.
    static func normalised(_ text: String) throws -> String {
        var result = text
        var names: [String: String] = [:]
        let uuid = try Regex("[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
        for match in text.matches(of: uuid) {
            let id = String(text[match.range]).lowercased()
            if names[id] == nil { names[id] = "<id-\(names.count + 1)>" }
        }
        result = result.replacing(uuid) { names[String(result[$0.range]).lowercased()] ?? "<id>" }
        return result.replacing(try Regex("P-[2-9A-Z]{6}"), with: "<pseudonym>")
            .replacing(try Regex("/assets/[0-9a-f]{12}/"), with: "/assets/<version>/")
    }

    /// Compares with the stored snapshot, or writes it when asked to record.
    static func expectSnapshot(_ text: String, named name: String, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Snapshots/\(name)")
        let actual = try normalised(text)
        if ProcessInfo.processInfo.environment["SNAPSHOTS"] == "record" {
            try actual.write(to: file, atomically: true, encoding: .utf8)
            return
        }
        let expected = try? String(contentsOf: file, encoding: .utf8)
        let firstDifference = zip((expected ?? "").split(separator: "\n"), actual.split(separator: "\n"))
            .first { $0.0 != $0.1 }
        #expect(
            expected == actual,
            "\(name) differs from its snapshot; first differing line: \(firstDifference.map { "\($0.0) ≠ \($0.1)" } ?? "(length)")",
            sourceLocation: sourceLocation)
    }

    @Test("the caseload lists the patient with compliance and last activity")
    func caseload() async throws {
        try await withTestApp { app in
            // setup
            let world = try await Self.world(app)
            let pages = CaseloadPages(therapist: world.therapist, database: app.database, services: app.app.interlude)
            // act
            let html = try await Self.render(
                "console/patients", try await pages.caseload(passwordChanged: false), for: world.therapist, app)
            // verify
            try Self.expectSnapshot(html, named: "console-patients.html")
        }
    }

    @Test("a patient's page shows prompts, scores, the appointment and the forms")
    func patientPage() async throws {
        try await withTestApp { app in
            // setup
            let world = try await Self.world(app)
            let pages = CaseloadPages(therapist: world.therapist, database: app.database, services: app.app.interlude)
            // act
            let html = try await Self.render(
                "console/patient", try await pages.patient(world.chart, .init()), for: world.therapist, app)
            // verify
            try Self.expectSnapshot(html, named: "console-patient.html")
        }
    }

    @Test("a response page shows the answers in the instrument's order with the scores")
    func responsePage() async throws {
        try await withTestApp { app in
            // setup
            let world = try await Self.world(app)
            let pages = CaseloadPages(therapist: world.therapist, database: app.database, services: app.app.interlude)
            // act
            let content = try pages.response(world.chart, world.stored, definition: world.definition)
            let html = try await Self.render("console/response", content, for: world.therapist, app)
            // verify
            try Self.expectSnapshot(html, named: "console-response.html")
        }
    }

    @Test("a research study's page shows its participants by pseudonym and a request waiting for a decision")
    func studyPage() async throws {
        try await withTestApp { app in
            // setup
            let (researcherClient, researcherID) = try await app.staff("researcher", "lab@uni.example")
            let studyID = try #require(
                UUID(
                    uuidString: try await StudyAPITests().createStudy(researcherClient, StudyAPITests.study("approval"))
                ))
            let (patient, _) = try await app.patient()
            let requested = try await StudyAPITests.join(patient, studyID.uuidString)
            try #require(requested.status == .created, "\(requested.text)")
            let researcher = try #require(try await UserRecord.find(researcherID, on: app.database))
            let grant = try await StudyAccess(database: app.database, services: app.app.interlude).require(
                .viewParticipants, in: studyID, by: researcher)
            // act
            let content = try await StudyPages(viewer: researcher, database: app.database, services: app.app.interlude)
                .study(grant, saved: false)
            let html = try await Self.render("console/study", content, for: researcher, app)
            // verify
            #expect(!html.contains("patient@example.org"))
            try Self.expectSnapshot(html, named: "console-study.html")
        }
    }

    @Test("the FHIR QuestionnaireResponse of an answered PHQ-9")
    func responseDocument() async throws {
        try await withTestApp { app in
            // setup
            let world = try await Self.world(app)
            // act
            let resource = try await ResponseService(database: app.database, services: app.app.interlude).fhirDocument(
                of: world.stored)
            // verify
            try Self.expectSnapshot(
                String(decoding: try FHIRDownload.encode(resource), as: UTF8.self),
                named: "fhir-questionnaire-response.json")
        }
    }

    @Test("the FHIR Questionnaire of the PHQ-9")
    func questionnaireDocument() async throws {
        try await withTestApp { app in
            // setup
            let world = try await Self.world(app)
            // act
            let resource = world.definition.fhirQuestionnaire(canonicalURL: app.settings.questionnaireURL("phq-9"))
            // verify
            try Self.expectSnapshot(
                String(decoding: try FHIRDownload.encode(resource), as: UTF8.self), named: "fhir-questionnaire.json")
        }
    }
}
