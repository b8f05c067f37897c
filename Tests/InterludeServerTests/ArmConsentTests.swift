import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("An arm's own consent: put to its participants once they are allocated, to nobody else")
struct ArmConsentTests {
    typealias Consents = Components.Schemas.MyConsents

    @Test(
        "a version for the app arm holds back its participants' answers until they agree; the control arm and new joiners keep the study's consent"
    )
    func armVersion() async throws {
        try await withTestApp { app in
            // setup: Ada joins first (the app arm), Ben second (the control arm)
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let studyID = try await StudyAPITests().createStudy(researcher, ControlArmTests.design)
            let study = ConsentVersionTests.Study(researcher: researcher, id: studyID)
            let (ada, adaID) = try await app.patient("ada@example.org")
            let (ben, benID) = try await app.patient("ben@example.org")
            try #require(try await StudyAPITests.join(ada, studyID).status == .created)
            try #require(try await StudyAPITests.join(ben, studyID).status == .created)
            let path = "/studies/\(studyID)/consent-versions"
            func version(_ name: String, arm: JSONValue) -> JSONValue {
                [
                    "version": .string(name), "texts": ["en": "I agree to take part.\nThe app sends me exercises."],
                    "reconsentRequired": true, "arm": arm,
                ]
            }

            // act: a version for an arm the study does not have, then one for the app arm
            let unknownArm = try await researcher.send(.POST, path, json: version("waitlist-1", arm: "waitlist"))
            let versionsAfterRefusal = try await app.count("consent_versions")
            let created = try await researcher.send(.POST, path, json: version("app-1", arm: "app"))
            let adaHeld = try await ConsentVersionTests().answer(ada, adaID, in: study, app)
            let benAnswered = try await ConsentVersionTests().answer(ben, benID, in: study, app)
            let adaConsents = try await ada.send(.GET, "/me/consents").decoded(Consents.self)
            let benConsents = try await ben.send(.GET, "/me/consents").decoded(Consents.self)
            let benTakesAppVersion = try await ben.send(
                .POST, "/me/consents", json: ["studyId": .string(studyID), "version": "app-1"])

            // verify: refused by name, nothing written
            #expect(unknownArm.status == .unprocessableEntity, "\(unknownArm.text)")
            #expect(try StudyAPITests.fields(unknownArm) == ["arm"])
            #expect(versionsAfterRefusal == 1)
            #expect(created.status == .created, "\(created.text)")
            #expect(created.body["arm"].string == "app")
            // Ada (app) must answer the arm's version first; Ben (control) sees and answers under the study's own.
            #expect(adaHeld.status == .conflict)
            #expect(adaHeld.body["type"].string == "/problems/consent-required")
            let adaDocument = try #require(adaConsents.documents.first { $0.studyId == studyID.lowercased() })
            #expect(adaDocument.version == "app-1")
            #expect(adaDocument.mustAnswer == true)
            #expect(
                adaDocument.changes?.contains { $0.kind == .added && $0.text == "The app sends me exercises." } == true)
            #expect(benAnswered.status == .created, "\(benAnswered.text)")
            let benDocument = try #require(benConsents.documents.first { $0.studyId == studyID.lowercased() })
            #expect(benDocument.version == "2026-1")
            #expect(benDocument.mustAnswer == false)
            #expect(benTakesAppVersion.body.problemCodes["version"] == "outdated")

            // act: Ada agrees; Cai joins with the study's own consent and is allocated to the app arm
            let adaAgrees = try await ada.send(
                .POST, "/me/consents", json: ["studyId": .string(studyID), "version": "app-1"])
            let adaAnswered = try await ConsentVersionTests().answer(ada, adaID, in: study, app)
            let (cai, caiID) = try await app.patient("cai@example.org")
            let caiWithArmVersion = try await StudyAPITests.join(cai, studyID, ["consentVersion": "app-1"])
            let caiJoined = try await StudyAPITests.join(cai, studyID)
            let caiHeld = try await ConsentVersionTests().answer(cai, caiID, in: study, app)
            let caiArm = try await EnrollmentRecord.query(on: app.database).filter(\.$patient.$id == caiID).first()?.arm
            let listed = try await researcher.send(.GET, path)
            let read = try await researcher.send(.GET, "/studies/\(studyID)")

            // verify
            #expect(adaAgrees.status == .created, "\(adaAgrees.text)")
            #expect(adaAnswered.status == .created, "\(adaAnswered.text)")
            #expect(caiWithArmVersion.body.problemCodes["consentVersion"] == "outdated")
            #expect(caiJoined.status == .created, "\(caiJoined.text)")
            #expect(caiArm == "app")
            #expect(caiHeld.status == .conflict)
            #expect(listed.body.array.map { $0["arm"].string } == [nil, "app"])
            #expect(read.body["consentVersion"].string == "2026-1")
        }
    }

    @Test("the console writes a version for one arm, shows which, and refuses an arm the study does not have")
    func console() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let studyID = try await StudyAPITests().createStudy(researcher, ControlArmTests.design)
            let console = ConsoleBrowser(app)
            _ = try await console.signIn("lab@uni.example")
            let path = "/console/studies/\(studyID)/consent"
            func form(_ version: String, arm: String) -> [(String, String)] {
                [("version", version), ("textEn", "The app sends me exercises."), ("arm", arm)]
            }
            // act
            let page = try await console.get(path)
            let refused = try await console.post(path, form("waitlist-1", arm: "waitlist"))
            let saved = try await console.post(path, form("app-1", arm: "app"))
            let shown = try await console.get(path)
            // verify
            #expect(page.html.contains("<option value=\"app\">app</option>"), "the study's arms to choose from")
            #expect(refused.status == .unprocessableEntity)
            #expect(refused.html.contains("id=\"arm-error\""))
            #expect(try await app.count("consent_versions WHERE version = 'waitlist-1'") == 0)
            #expect(saved.status == .seeOther)
            #expect(shown.html.contains("data-version=\"app-1\" data-arm=\"app\""))
            #expect(try await app.count("consent_versions WHERE version = 'app-1' AND arm = 'app'") == 1)
        }
    }
}
