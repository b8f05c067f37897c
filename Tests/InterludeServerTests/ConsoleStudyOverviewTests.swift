import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Console: a study's enrolment and compliance")
struct ConsoleStudyOverviewTests {
    /// A study with arms "app" and "control", assigned in turn: Ada (sharing with research, arm app) answered one of
    /// four prompts, Ben (not sharing, arm control) all of his. The researcher is signed in to the console.
    func study(_ app: TestContext) async throws -> (console: ConsoleBrowser, studyID: String, ada: String, ben: String)
    {
        let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
        let studyID = try await StudyAPITests().createStudy(
            researcher, StudyAPITests.study("open").merging(["arms": ["app", "control"], "allocation": "alternating"]))
        let (ada, adaID) = try await app.patient("ada@example.org", shareWithResearch: true)
        let (ben, benID) = try await app.patient("ben@example.org", shareWithResearch: false)
        for patient in [ada, ben] {
            _ = try await patient.send(.POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2026-1"])
        }
        let now = app.clock.now
        for (patientID, statuses) in [
            (adaID, [PromptStatus.completed, .expired, .expired, .expired]), (benID, [.completed, .completed]),
        ] {
            for (index, status) in statuses.enumerated() {
                let opens = now.addingTimeInterval(-Double(index + 1) * 86_400)
                let prompt = PromptRecord(
                    patientID: patientID, studyID: UUID(uuidString: studyID), assignedBy: nil,
                    instrumentKey: "mood-vas",
                    instrumentVersion: 1, opensAt: opens, closesAt: opens.addingTimeInterval(3600),
                    source: PromptSource.schedule, now: now)
                prompt.status = status
                try await prompt.create(on: app.database)
            }
        }
        let pseudonym = { (client: APIClient) in
            try await client.send(.GET, "/me").decoded(Components.Schemas.User.self).patient?.pseudonym ?? ""
        }
        let console = ConsoleBrowser(app)
        _ = try await console.signIn("lab@uni.example")
        return (console, studyID, try await pseudonym(ada), try await pseudonym(ben))
    }

    @Test("the enrolment table counts participants per arm: allocated, taking part, waiting, left")
    func enrolmentByArm() async throws {
        try await withTestApp { app in
            // setup
            let (console, studyID, _, _) = try await study(app)

            // act
            let page = try await console.get("/console/studies/\(studyID)")

            // verify
            #expect(
                page.html.contains(
                    "<tr data-arm=\"app\"><th scope=\"row\">app</th><td>1</td><td>1</td><td>0</td><td>0</td></tr>")
            )
            #expect(
                page.html.contains(
                    "<tr data-arm=\"control\"><th scope=\"row\">control</th><td>1</td><td>1</td><td>0</td><td>0</td></tr>"
                ))
        }
    }

    @Test("a design with factors shows each stratum's allocations per arm, and the control arm is named as such")
    func strata() async throws {
        try await withTestApp { app in
            // setup: three patients of a practice (who gave their gender there) and one who gave none
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let studyID = try await StudyAPITests().createStudy(
                researcher,
                StudyAPITests.study("open").merging([
                    "arms": ["app", "control"], "allocation": "permutedBlocks",
                    "allocationSettings": ["factors": ["gender"], "blockMultiples": [1], "control": [false, true]],
                ]))
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
            for index in 0..<4 {
                let (patient, _) = try await app.patient("p\(index)@example.org")
                if index < 3 { try await app.pair(patient, with: therapist) }
                try #require(try await StudyAPITests.join(patient, studyID).status == .created)
            }
            let console = ConsoleBrowser(app)
            _ = try await console.signIn("lab@uni.example")

            // act
            let page = try await console.get("/console/studies/\(studyID)")

            // verify
            let log = try await StudyAllocations(database: app.database, services: app.app.interlude)
                .log(of: try #require(UUID(uuidString: studyID)))
            let female = log.prefix(3).filter { $0.arm == "app" }.count
            #expect(page.html.contains("<table id=\"strata\">"))
            #expect(
                page.html.contains("<tr><th scope=\"row\">Female</th><td>\(female)</td><td>\(3 - female)</td></tr>"))
            let unknown = log[3].arm == "app" ? "<td>1</td><td>0</td>" : "<td>0</td><td>1</td>"
            #expect(page.html.contains("<tr><th scope=\"row\">Not given</th>\(unknown)</tr>"))
            #expect(
                page.html.contains(
                    "<th scope=\"row\">control<span class=\"hint\"> (control: questionnaires only)</span></th>"))
        }
    }

    @Test("researchers see how a participant keeps up only when the participant shares with research")
    func complianceOnlyWhenShared() async throws {
        try await withTestApp { app in
            // setup
            let (console, studyID, ada, ben) = try await study(app)

            // act
            let page = try await console.get("/console/studies/\(studyID)")

            // verify
            let rows = page.html.components(separatedBy: "<tr><td>").dropFirst()
            let adaRow = try #require(rows.first { $0.contains(ada) })
            let benRow = try #require(rows.first { $0.contains(ben) })
            #expect(adaRow.contains("1 / 3 / 0</span> · 25 %"))
            #expect(benRow.contains("not shared with research") && !benRow.contains("100 %"))
        }
    }

    @Test(
        "participants answering less than half of their prompts are listed, and the weekly chart counts only those who share"
    )
    func lowComplianceAndChart() async throws {
        try await withTestApp { app in
            // setup
            let (console, studyID, ada, ben) = try await study(app)

            // act
            let page = try await console.get("/console/studies/\(studyID)")

            // verify
            let list = try #require(
                page.html.components(separatedBy: "<ul id=\"low-compliance\">").last?.components(separatedBy: "</ul>")
                    .first)
            #expect(list.contains(ada) && !list.contains(ben))
            #expect(
                page.html.contains("role=\"img\"")
                    && page.html.contains("Share of prompts answered, week by week, over the last 8 weeks"))
            #expect(page.html.contains("25"))
        }
    }
}

@Suite("Console: links lead somewhere, errors in the reader's language")
struct ConsoleLinkAndLanguageTests {
    @Test("a research study links its consent versions; a practice shows its version without a link to a missing page")
    func consentLinkOnlyForResearch() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let studyID = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            let (_, therapistID) = try await app.staff("therapist", "dr@practice.example")
            let practiceID = try await PairingService(database: app.database, services: app.app.interlude)
                .practice(of: therapistID).requireID()
            let lab = ConsoleBrowser(app)
            _ = try await lab.signIn("lab@uni.example")
            let practice = ConsoleBrowser(app)
            _ = try await practice.signIn("dr@practice.example")

            // act
            let study = try await lab.get("/console/studies/\(studyID)")
            let own = try await practice.get("/console/studies/\(practiceID)")

            // verify
            #expect(study.html.contains("/consent\">2026-1</a>"))
            #expect(own.status == .ok)
            #expect(!own.html.contains("/consent\""))
            #expect(try await practice.get("/console/studies/\(practiceID)/consent").status == .notFound)
        }
    }

    @Test("a signed-in staff member reads an error page in their own language; a visitor in the browser's")
    func errorPageLanguage() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "dr@practice.example")
            #expect(try await therapist.send(.PATCH, "/me", json: ["locale": "de"]).status == .ok)
            let console = ConsoleBrowser(app)
            _ = try await console.signIn("dr@practice.example")

            // act
            let missing = try await console.get("/console/patients/\(UUID())")
            let visitor = try await ConsoleBrowser(app).get("/console/nowhere")

            // verify
            #expect(missing.status == .notFound)
            #expect(missing.html.contains("lang=\"de\"") && missing.html.contains("Etwas ist schiefgelaufen"))
            #expect(visitor.status == .notFound)
            #expect(visitor.html.contains("lang=\"en\"") && !visitor.html.contains("Etwas ist schiefgelaufen"))
        }
    }
}
