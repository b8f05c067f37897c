import Foundation
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Administration API")
struct AdminAPITests {
    @Test("an admin creates a therapist with a one-time password that must be changed first")
    func createTherapist() async throws {
        try await withTestApp { app in
            let (admin, _) = try await app.staff("admin", "admin@clinic.example")
            let created = try await admin.send(
                .POST, "/users", json: ["email": "berger@praxis.example", "role": "therapist", "name": "Dr. Anna Berger"])
            #expect(created.status == .created)
            let oneTime = try #require(created.body["oneTimePassword"].string)
            #expect(oneTime.count == 16)
            #expect(created.body["user"]["role"].string == "therapist")

            let therapist = try await app.signIn("berger@praxis.example", password: oneTime)
            let blocked = try await therapist.send(.GET, "/pairing-codes")
            #expect(blocked.status == .forbidden)
            #expect(blocked.body["type"].string == "/problems/password-change-required")
            #expect(try await therapist.send(.GET, "/me").body["mustChangePassword"].bool == true)
            let changed = try await therapist.send(
                .PUT, "/me/password", json: ["currentPassword": .string(oneTime), "newPassword": "my own passphrase"])
            #expect(changed.status == .noContent)
            #expect(try await therapist.send(.GET, "/pairing-codes").status == .ok)
            #expect(try await app.count("studies WHERE join_mode = 'pairingCode'") == 1)
            #expect(try await app.count("audit_events WHERE action = 'user.created'") == 1)

            let duplicate = try await admin.send(.POST, "/users", json: ["email": "berger@praxis.example", "role": "researcher"])
            #expect(duplicate.status == .conflict)
            let patientRole = try await admin.send(.POST, "/users", json: ["email": "p@example.org", "role": "patient"])
            #expect(patientRole.status == .unprocessableEntity)
            #expect(patientRole.body.problemFields == ["role"])
            let badEmail = try await admin.send(.POST, "/users", json: ["email": "nope", "role": "researcher"])
            #expect(badEmail.body.problemFields == ["email"])
        }
    }

    @Test("a deactivated account is signed out everywhere and cannot sign in; reactivation restores it")
    func deactivate() async throws {
        try await withTestApp { app in
            let (admin, adminID) = try await app.staff("admin", "admin@clinic.example")
            let (therapist, therapistID) = try await app.staff("therapist", "berger@praxis.example")
            let off = try await admin.send(.PATCH, "/users/\(therapistID.uuidString)", json: ["active": false])
            #expect(off.status == .ok)
            #expect(off.body["active"].bool == false)
            #expect(try await therapist.send(.GET, "/me").status == .unauthorized)
            let login = try await app.api.send(
                .POST, "/sessions", json: ["email": "berger@praxis.example", "password": .string(TestContext.password)])
            #expect(login.status == .forbidden)
            #expect(login.body["type"].string == "/problems/account-deactivated")
            #expect(try await admin.send(.PATCH, "/users/\(adminID.uuidString)", json: ["active": false]).status == .forbidden)
            #expect(try await admin.send(.PATCH, "/users/\(UUID().uuidString)", json: ["active": false]).status == .notFound)
            _ = try await admin.send(.PATCH, "/users/\(therapistID.uuidString)", json: ["active": true])
            _ = try await app.signIn("berger@praxis.example")
            let list = try await admin.send(.GET, "/users")
            #expect(list.body.array.count == 2)
        }
    }

    @Test("only admins manage users")
    func adminOnly() async throws {
        try await withTestApp { app in
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
            let (patient, patientID) = try await app.patient()
            for client in [therapist, patient] {
                #expect(try await client.send(.GET, "/users").status == .forbidden)
                #expect(try await client.send(.POST, "/users", json: ["email": "x@example.org", "role": "admin"]).status == .forbidden)
                #expect(try await client.send(.PATCH, "/users/\(patientID.uuidString)", json: ["active": false]).status == .forbidden)
            }
            #expect(try await app.api.send(.GET, "/users").status == .unauthorized)
            #expect(try await app.count("users") == 2)
        }
    }
}
