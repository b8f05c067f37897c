import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

/// What an admin does with staff accounts after creating them: rename and readdress, a new one-time password,
/// deletion that keeps the audit log's ids, and new admins.
@Suite("Staff accounts: edit, reset, delete, new admins")
struct StaffManagementTests {
    @Test(
        "an admin renames and readdresses an account, gives it a new one-time password that ends its sessions, and refuses a taken address"
    )
    func editAndReset() async throws {
        try await withTestApp { app in
            // setup
            let (admin, _) = try await app.staff("admin", "admin@clinic.example")
            let (researcher, researcherID) = try await app.staff("researcher", "rita@lab.example")
            _ = try await app.staff("therapist", "tess@praxis.example")

            // act
            let taken = try await admin.send(.PATCH, "/users/\(researcherID)", json: ["email": "tess@praxis.example"])
            let malformed = try await admin.send(
                .PATCH, "/users/\(researcherID)", json: ["email": "rita at lab", "name": "Rita"])
            let changed = try await admin.send(
                .PATCH, "/users/\(researcherID)", json: ["email": "rita.ross@lab.example", "name": "Dr. Rita Ross"])
            let reset = try await admin.send(.POST, "/users/\(researcherID)/password-reset")
            let oldSession = try await researcher.send(.GET, "/me")
            let oldPassword = try await app.api.send(
                .POST, "/sessions", json: ["email": "rita.ross@lab.example", "password": .string(TestContext.password)])
            let newPassword = try await app.api.send(
                .POST, "/sessions",
                json: [
                    "email": "rita.ross@lab.example", "password": .string(reset.body["oneTimePassword"].string ?? ""),
                ])
            let admins = try await admin.send(
                .POST, "/users", json: ["email": "second@clinic.example", "role": "admin"])

            // verify
            #expect(taken.status == .conflict && taken.body["type"].string == "/problems/email-taken")
            #expect(malformed.status == .unprocessableEntity && malformed.body.problemFields == ["email"])
            #expect(
                changed.status == .ok && changed.body["email"].string == "rita.ross@lab.example"
                    && changed.body["name"].string == "Dr. Rita Ross")
            #expect(reset.status == .ok && reset.body["oneTimePassword"].string?.count == 16)
            #expect(oldSession.status == .unauthorized, "every session ended")
            #expect(oldPassword.status == .unauthorized)
            #expect(
                newPassword.status == .created && newPassword.body["user"]["mustChangePassword"].bool == true,
                "\(newPassword.text)")
            #expect(admins.status == .created && admins.body["user"]["role"].string == "admin")
            #expect(try await app.count("audit_events WHERE action IN ('user.changed', 'user.password.reset')") == 2)
        }
    }

    @Test(
        "deleting an account removes its personal data and keeps its id for the audit log; refused for oneself, a therapist with clients and a study's last owner"
    )
    func deletion() async throws {
        try await withTestApp { app in
            // setup
            let (admin, adminID) = try await app.staff("admin", "admin@clinic.example")
            let (therapist, therapistID) = try await app.staff("therapist", "tess@praxis.example")
            let (patient, patientID) = try await app.patient("ada@example.org")
            try await app.pair(patient, with: therapist)
            let (owner, ownerID) = try await app.staff("researcher", "rita@lab.example")
            let study = try await owner.send(.POST, "/studies", json: StudyAPITests.study("open"))
            try #require(study.status == .created, "\(study.text)")
            let (leaver, leaverID) = try await app.staff("therapist", "leaver@praxis.example")
            let openCode = try await app.pairingCode(leaver)
            let (latePatient, _) = try await app.patient("late@example.org")
            _ = try await app.api.send(
                .POST, "/sessions", json: ["email": "leaver@praxis.example", "password": .string(TestContext.password)])

            // act
            let own = try await admin.send(.DELETE, "/users/\(adminID)")
            let withClients = try await admin.send(.DELETE, "/users/\(therapistID)")
            let lastOwner = try await admin.send(.DELETE, "/users/\(ownerID)")
            let deleted = try await admin.send(.DELETE, "/users/\(leaverID)")
            let again = try await admin.send(.DELETE, "/users/\(leaverID)")
            let signIn = try await app.api.send(
                .POST, "/sessions", json: ["email": "leaver@praxis.example", "password": .string(TestContext.password)])
            let redeemed = try await latePatient.send(
                .POST, "/me/pairing",
                json: ["code": .string(openCode), "dateOfBirth": "1990-01-01", "gender": "female"])
            _ = try await therapist.send(.PATCH, "/patients/\(patientID)", json: ["status": "ended"])
            let afterEnding = try await admin.send(.DELETE, "/users/\(therapistID)")
            let listed = try await admin.send(.GET, "/users").decoded([Components.Schemas.StaffUser].self)

            // verify
            #expect(own.status == .forbidden)
            #expect(withClients.status == .conflict && withClients.body["type"].string == "/problems/has-clients")
            #expect(lastOwner.status == .conflict && lastOwner.body["type"].string == "/problems/last-owner")
            #expect(deleted.status == .noContent && again.status == .notFound)
            #expect(signIn.status == .unauthorized)
            #expect(
                redeemed.status == .conflict && redeemed.body["type"].string == "/problems/pairing-code-expired",
                "\(redeemed.text)")
            #expect(afterEnding.status == .noContent, "\(afterEnding.text)")
            let gone = try #require(try await UserRecord.find(leaverID, on: app.database))
            #expect(gone.deletedAt != nil && gone.name == nil && !gone.email.contains("leaver"))
            #expect(try await app.count("sessions WHERE user_id = '\(leaverID.uuidString)'") == 0)
            #expect(
                !listed.contains {
                    $0.id == leaverID.uuidString.lowercased() || $0.id == therapistID.uuidString.lowercased()
                })
            #expect(try await app.count("audit_events WHERE action = 'user.deleted'") == 2)
        }
    }

    @Test(
        "on the console the admin creates an admin, changes an account, hands out a new one-time password and deletes after confirming"
    )
    func console() async throws {
        try await withTestApp { app in
            // setup
            _ = try await app.staff("admin", "admin@clinic.example")
            let (_, researcherID) = try await app.staff("researcher", "rita@lab.example")
            let console = ConsoleBrowser(app)
            _ = try await console.signIn("admin@clinic.example")
            _ = try await console.get("/console/users")

            // act
            let admin = try await console.post(
                "/console/users", [("email", "second@clinic.example"), ("name", "Second"), ("role", "admin")])
            let refused = try await console.post(
                "/console/users/\(researcherID)", [("name", "Rita"), ("email", "not an address")])
            _ = try await console.post(
                "/console/users/\(researcherID)", [("name", "Dr. Rita Ross"), ("email", "rita.ross@lab.example")])
            let reset = try await console.post("/console/users/\(researcherID)/password", [])
            let unconfirmed = try await console.post("/console/users/\(researcherID)/delete", [])
            let confirmed = try await console.post("/console/users/\(researcherID)/delete", [("confirm", "yes")])

            // verify
            #expect(admin.status == .created && admin.html.contains("id=\"one-time-password\""))
            #expect(refused.status == .unprocessableEntity && refused.html.contains("id=\"row-error\""))
            #expect(
                reset.status == .ok && reset.html.contains("rita.ross@lab.example")
                    && reset.html.contains("id=\"one-time-password\""))
            #expect(unconfirmed.status == .unprocessableEntity)
            #expect(confirmed.status == .seeOther)
            #expect(try await UserRecord.find(researcherID, on: app.database)?.deletedAt != nil)
        }
    }
}
