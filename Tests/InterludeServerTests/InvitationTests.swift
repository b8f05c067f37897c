import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

/// A therapist invites a client by email; the client sets a password from the link and is paired at once. The
/// therapist can also send their client a link to choose a new password.
@Suite("Invitations by email and password-reset links from the therapist")
struct InvitationTests {
    static func acceptance(_ token: String, _ changes: [String: JSONValue] = [:]) -> JSONValue {
        JSONValue.object([
            "token": .string(token), "password": "a long enough password", "privacyPolicyVersion": "1",
            "shareWithResearch": false, "locale": "en", "timeZone": "Europe/Vienna", "name": "Ada Lovelace",
            "dateOfBirth": "1990-12-10", "gender": "female",
        ]).merging(changes)
    }

    @Test(
        "the invited client sets a password from the link and is the therapist's client at once; the link works once, for seven days, and wrong fields change nothing"
    )
    func invitation() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "tess@example.org", name: "Dr. Tess Berger")
            _ = try await app.patient("grace@example.org")

            // act
            let sent = try await therapist.send(
                .POST, "/patients/invitations", json: ["email": " Ada@Example.org ", "locale": "de"])
            let taken = try await therapist.send(.POST, "/patients/invitations", json: ["email": "grace@example.org"])
            let malformed = try await therapist.send(.POST, "/patients/invitations", json: ["email": "ada at example"])
            let email = try #require(app.mailer.sent.last { $0.to == "ada@example.org" })
            let token = try #require(app.mailer.token(for: "/app/invitation", to: "ada@example.org"))
            let usersBefore = try await app.count("users")
            let wrongToken = try await app.api.send(
                .POST, "/invitations/acceptance", json: Self.acceptance("not-a-token"))
            let wrongFields = try await app.api.send(
                .POST, "/invitations/acceptance",
                json: Self.acceptance(token, ["password": "short", "dateOfBirth": "", "gender": "other"]))
            let usersAfterRefusals = try await app.count("users")
            let accepted = try await app.api.send(.POST, "/invitations/acceptance", json: Self.acceptance(token))
            let again = try await app.api.send(.POST, "/invitations/acceptance", json: Self.acceptance(token))
            let client = app.api.authorized(accepted.body["token"].string)
            let ownTherapist = try await client.send(.GET, "/me/therapist")
            let caseload = try await therapist.send(.GET, "/patients?q=ada").decoded(
                [Components.Schemas.CaseloadPatient].self)
            let signIn = try await app.api.send(
                .POST, "/sessions", json: ["email": "ada@example.org", "password": "a long enough password"])
            _ = try await therapist.send(.POST, "/patients/invitations", json: ["email": "hedy@example.org"])
            let lateToken = try #require(app.mailer.token(for: "/app/invitation", to: "hedy@example.org"))
            app.clock.advance(by: 8 * 86_400)
            let late = try await app.api.send(.POST, "/invitations/acceptance", json: Self.acceptance(lateToken))

            // verify
            #expect(sent.status == .created && sent.body["email"].string == "ada@example.org", "\(sent.text)")
            #expect(email.subject == "Ihre Einladung zu Interlude" && email.text.contains("Dr. Tess Berger"))
            #expect(taken.status == .conflict && taken.body["type"].string == "/problems/email-taken")
            #expect(malformed.status == .unprocessableEntity && malformed.body.problemFields == ["email"])
            #expect(wrongToken.status == .unprocessableEntity && wrongToken.body.problemFields == ["token"])
            #expect(
                Set(wrongFields.body.problemFields) == ["password", "dateOfBirth", "gender"], "\(wrongFields.text)")
            #expect(usersAfterRefusals == usersBefore, "a refused acceptance creates nothing")
            #expect(
                accepted.status == .created && accepted.body["user"]["email"].string == "ada@example.org",
                "\(accepted.text)")
            #expect(again.status == .unprocessableEntity && again.body.problemFields == ["token"])
            #expect(ownTherapist.status == .ok, "paired at once: \(ownTherapist.text)")
            #expect(caseload.map(\.name) == ["Ada Lovelace"] && caseload.first?.status == .active)
            #expect(signIn.status == .created, "the address counts as confirmed")
            #expect(late.status == .unprocessableEntity && late.body["errors"][0]["code"].string == "expired")
            let audited = try await AuditEventRecord.query(on: app.database).filter(
                \.$action == AuditAction.invitationSent.rawValue
            ).count()
            #expect(audited == 2)
        }
    }

    @Test(
        "the therapist sends their client a link to choose a new password; another therapist cannot, nor a researcher")
    func passwordReset() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "tess@example.org")
            let (other, _) = try await app.staff("therapist", "otto@example.org")
            let (patient, patientID) = try await app.patient("ada@example.org")
            try await app.pair(patient, with: therapist)
            let before = app.mailer.sent.count

            // act
            let refused = try await other.send(.POST, "/patients/\(patientID)/password-reset")
            let sent = try await therapist.send(.POST, "/patients/\(patientID)/password-reset")
            let token = try #require(app.mailer.token(for: "/app/reset-password", to: "ada@example.org"))
            let chosen = try await app.api.send(
                .POST, "/password-resets/confirmation",
                json: ["token": .string(token), "newPassword": "a brand new password"])

            // verify
            #expect(refused.status == .notFound)
            #expect(sent.status == .accepted && app.mailer.sent.count == before + 1)
            #expect(chosen.status == .noContent)
            let audited = try await AuditEventRecord.query(on: app.database).filter(
                \.$action == AuditAction.passwordResetSent.rawValue
            ).count()
            #expect(audited == 1)
        }
    }

    @Test(
        "on the console the therapist invites by email from the pairing codes page and sends a password link from the client's page"
    )
    func console() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, patientID, _) = try await ConsoleScheduleTests().practice(app)

            // act
            let wrong = try await console.post("/console/invitations", [("email", "not an address"), ("locale", "en")])
            let sent = try await console.post(
                "/console/invitations", [("email", "hedy@example.org"), ("locale", "en")])
            let reset = try await console.post("/console/patients/\(patientID)/password-reset", [])

            // verify
            #expect(
                wrong.status == .unprocessableEntity && wrong.html.contains("id=\"email-error\"")
                    && wrong.html.contains("value=\"not an address\""))
            #expect(sent.status == .created && sent.html.contains("hedy@example.org"))
            #expect(app.mailer.token(for: "/app/invitation", to: "hedy@example.org") != nil)
            #expect(reset.status == .ok && reset.html.contains("role=\"status\""))
            let patient = try #require(try await UserRecord.find(patientID, on: app.database))
            #expect(app.mailer.token(for: "/app/reset-password", to: patient.email) != nil)
        }
    }
}
