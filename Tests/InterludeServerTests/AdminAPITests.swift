import Foundation
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Administration API")
struct AdminAPITests {
    typealias StaffUser = Components.Schemas.StaffUser
    typealias CreatedStaffUser = Components.Schemas.CreatedStaffUser
    typealias Problem = Components.Schemas.Problem

    @Test("an admin creates a therapist with a one-time password, a practice and an audit event")
    func createTherapist() async throws {
        try await withTestApp { app in
            // setup
            let (admin, _) = try await app.staff("admin", "admin@clinic.example")
            // act
            let reply = try await admin.send(
                .POST, "/users",
                json: ["email": "berger@praxis.example", "role": "therapist", "name": "Dr. Anna Berger"])
            // verify
            #expect(reply.status == .created)
            let created = try reply.decoded(CreatedStaffUser.self)
            #expect(created.oneTimePassword?.count == 16)
            #expect(created.user.role == .therapist)
            #expect(try await app.count("studies WHERE join_mode = 'pairingCode'") == 1)
            #expect(try await app.count("audit_events WHERE action = 'user.created'") == 1)
        }
    }

    @Test("a one-time password must be changed before anything else")
    func oneTimePasswordMustChange() async throws {
        try await withTestApp { app in
            // setup
            let (admin, _) = try await app.staff("admin", "admin@clinic.example")
            let created = try await admin.send(
                .POST, "/users", json: ["email": "berger@praxis.example", "role": "therapist"]
            )
            .decoded(CreatedStaffUser.self)
            let oneTime = try #require(created.oneTimePassword)
            let therapist = try await app.signIn("berger@praxis.example", password: oneTime)
            // act
            let blocked = try await therapist.send(.GET, "/pairing-codes")
            let changed = try await therapist.send(
                .PUT, "/me/password", json: ["currentPassword": .string(oneTime), "newPassword": "my own passphrase"])
            let afterwards = try await therapist.send(.GET, "/pairing-codes")
            // verify
            #expect(blocked.status == .forbidden)
            #expect(try blocked.decoded(Problem.self)._type == "/problems/password-change-required")
            #expect(changed.status == .noContent)
            #expect(afterwards.status == .ok)
        }
    }

    /// New staff accounts that are refused: the status, and the field named when there is one.
    static let refusedAccounts: [(body: JSONValue, status: HTTPResponseStatus, field: String?)] = [
        (["email": "taken@praxis.example", "role": "researcher"], .conflict, nil),
        (["email": "p@example.org", "role": "patient"], .unprocessableEntity, "role"),
        (["email": "nope", "role": "researcher"], .unprocessableEntity, "email"),
    ]

    @Test("a taken address, a patient role and a malformed address are refused", arguments: refusedAccounts)
    func refusedAccount(_ body: JSONValue, _ status: HTTPResponseStatus, _ field: String?) async throws {
        try await withTestApp { app in
            // setup
            let (admin, _) = try await app.staff("admin", "admin@clinic.example")
            _ = try await app.staff("therapist", "taken@praxis.example")
            // act
            let refused = try await admin.send(.POST, "/users", json: body)
            // verify
            #expect(refused.status == status)
            #expect(try refused.decoded(Problem.self).errors?.map(\.field) == field.map { [$0] })
            #expect(try await app.count("users") == 2)
        }
    }

    @Test("a deactivated account is signed out everywhere and cannot sign in")
    func deactivate() async throws {
        try await withTestApp { app in
            // setup
            let (admin, _) = try await app.staff("admin", "admin@clinic.example")
            let (therapist, therapistID) = try await app.staff("therapist", "berger@praxis.example")
            // act
            let off = try await admin.send(.PATCH, "/users/\(therapistID.uuidString)", json: ["active": false])
            let login = try await app.api.send(
                .POST, "/sessions", json: ["email": "berger@praxis.example", "password": .string(TestContext.password)])
            // verify
            #expect(try off.decoded(StaffUser.self).active == false)
            #expect(try await therapist.send(.GET, "/me").status == .unauthorized)
            #expect(login.status == .forbidden)
            #expect(try login.decoded(Problem.self)._type == "/problems/account-deactivated")
        }
    }

    @Test("reactivation lets the account sign in again")
    func reactivate() async throws {
        try await withTestApp { app in
            // setup
            let (admin, _) = try await app.staff("admin", "admin@clinic.example")
            let (_, therapistID) = try await app.staff("therapist", "berger@praxis.example")
            _ = try await admin.send(.PATCH, "/users/\(therapistID.uuidString)", json: ["active": false])
            // act
            let on = try await admin.send(.PATCH, "/users/\(therapistID.uuidString)", json: ["active": true])
            // verify
            #expect(try on.decoded(StaffUser.self).active)
            #expect(try await app.signIn("berger@praxis.example").token != nil)
            #expect(try await admin.send(.GET, "/users").decoded([StaffUser].self).count == 2)
        }
    }

    @Test("an admin cannot deactivate themselves, and an unknown account is not found")
    func deactivationLimits() async throws {
        try await withTestApp { app in
            // setup
            let (admin, adminID) = try await app.staff("admin", "admin@clinic.example")
            // act
            let own = try await admin.send(.PATCH, "/users/\(adminID.uuidString)", json: ["active": false])
            let unknown = try await admin.send(.PATCH, "/users/\(UUID().uuidString)", json: ["active": false])
            // verify
            #expect(own.status == .forbidden)
            #expect(unknown.status == .notFound)
        }
    }

    /// Who may not manage users, and what they are told.
    static let refusedCallers: [(caller: String, method: HTTPMethod, status: HTTPResponseStatus)] = [
        ("therapist", .GET, .forbidden), ("therapist", .POST, .forbidden), ("therapist", .PATCH, .forbidden),
        ("patient", .GET, .forbidden), ("patient", .POST, .forbidden), ("patient", .PATCH, .forbidden),
        ("nobody", .GET, .unauthorized),
    ]

    @Test("only admins manage users", arguments: refusedCallers)
    func adminOnly(_ caller: String, _ method: HTTPMethod, _ status: HTTPResponseStatus) async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
            let (patient, patientID) = try await app.patient()
            let client = caller == "therapist" ? therapist : caller == "patient" ? patient : app.api
            // act
            let reply: APIClient.Reply
            switch method {
            case .POST:
                reply = try await client.send(.POST, "/users", json: ["email": "x@example.org", "role": "admin"])
            case .PATCH:
                reply = try await client.send(.PATCH, "/users/\(patientID.uuidString)", json: ["active": false])
            default: reply = try await client.send(.GET, "/users")
            }
            // verify
            #expect(reply.status == status)
            #expect(try await app.count("users WHERE deactivated_at IS NULL") == 2)
        }
    }
}
