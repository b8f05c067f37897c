import Fluent
import Foundation
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Pairing and caseload API")
struct PairingAPITests {
    @Test("a therapist creates single-use codes; a patient redeems one and joins the caseload under a pseudonym")
    func pairing() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example", name: "Dr. Anna Berger")
            let (patient, patientID) = try await app.patient(name: "Ada")
            let created = try await therapist.send(
                .POST, "/pairing-codes", json: ["note": "Ada, first session", "count": 2])
            #expect(created.status == .created)
            #expect(created.body.array.count == 2)
            let code = try #require(created.body[0]["code"].string)
            #expect(code.count == 8 && code.allSatisfy(\.isNumber))
            #expect(created.body[0]["status"].string == "open")
            let expiresAt = try #require(
                created.body[0]["expiresAt"].string.flatMap { try? Date($0, strategy: .iso8601) })
            #expect(abs(expiresAt.timeIntervalSince(Date.t0) - 30 * 24 * 3600) < 1)
            #expect(try await patient.send(.GET, "/me/therapist").status == .notFound)

            // act
            let spaced = "\(code.prefix(4)) \(code.suffix(4))"
            let paired = try await patient.send(
                .POST, "/me/pairing", json: ["code": .string(spaced), "dateOfBirth": "1990-05-17", "gender": "female"])

            // verify
            #expect(paired.status == .created, "\(paired.text)")
            #expect(paired.body["therapist"]["fullName"].string == "Dr. Anna Berger")
            let pseudonym = try #require(paired.body["pseudonym"].string)
            #expect(pseudonym.hasPrefix("P-") && pseudonym.count == 8)
            let mine = try await patient.send(.GET, "/me/therapist")
            #expect(mine.status == .ok)
            #expect(mine.body["email"].string == "berger@praxis.example")
            let me = try await patient.send(.GET, "/me")
            #expect(me.body["patient"]["paired"].bool == true)
            #expect(me.body["patient"]["dateOfBirth"].string == "1990-05-17")
            #expect(me.body["patient"]["gender"].string == "female")

            let caseload = try await therapist.send(.GET, "/patients")
            #expect(caseload.status == .ok)
            #expect(caseload.body.array.count == 1)
            #expect(caseload.body[0]["pseudonym"].string == pseudonym)
            #expect(caseload.body[0]["name"].string == "Ada")
            #expect(caseload.body[0]["id"].string == patientID.uuidString.lowercased())
            let codes = try await therapist.send(.GET, "/pairing-codes")
            #expect(codes.body.array.compactMap { $0["status"].string }.sorted() == ["open", "redeemed"])
            let audited = try await app.count("audit_events WHERE action = 'caseload.read'")
            #expect(audited == 1)
        }
    }

    @Test("a used code, an expired code and a second pairing are refused with messages that say so")
    func refusedCodes() async throws {
        try await withTestApp { app in
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
            let (first, _) = try await app.patient("first@example.org")
            let (second, _) = try await app.patient("second@example.org")
            let code = try await app.pairingCode(therapist)
            let body: JSONValue = ["code": .string(code), "dateOfBirth": "1990-05-17", "gender": "male"]
            #expect(try await first.send(.POST, "/me/pairing", json: body).status == .created)

            let used = try await second.send(.POST, "/me/pairing", json: body)
            #expect(used.status == .conflict)
            #expect(used.body["type"].string == "/problems/pairing-code-used")

            let again = try await first.send(
                .POST, "/me/pairing",
                json: [
                    "code": .string(try await app.pairingCode(therapist)), "dateOfBirth": "1990-05-17",
                    "gender": "male",
                ])
            #expect(again.status == .conflict)
            #expect(again.body["type"].string == "/problems/already-paired")

            let stale = try await app.pairingCode(therapist)
            app.clock.advance(by: 30 * 24 * 3600 + 1)
            let expired = try await app.signIn("second@example.org").from("192.0.2.77").send(
                .POST, "/me/pairing", json: ["code": .string(stale), "dateOfBirth": "1990-05-17", "gender": "male"])
            #expect(expired.status == .conflict)
            #expect(expired.body["type"].string == "/problems/pairing-code-expired")
        }
    }

    /// Pairing inputs that are refused, with the fields each names.
    static let invalidPairings: [(body: JSONValue, fields: Set<String>)] = [
        (["code": "12ab", "dateOfBirth": "2999-01-01", "gender": "robot"], ["code", "dateOfBirth", "gender"]),
        (
            ["code": .string(String(repeating: "1", count: 21)), "dateOfBirth": "1990-01-01", "gender": "male"],
            ["code"]
        ),
        (["code": "12345678"], ["dateOfBirth"]),
    ]

    @Test("bad pairing input is refused per field and changes nothing", arguments: invalidPairings)
    func invalidPairing(_ body: JSONValue, _ fields: Set<String>) async throws {
        try await withTestApp { app in
            // setup
            let (patient, _) = try await app.patient()
            // act
            let reply = try await patient.send(.POST, "/me/pairing", json: body)
            // verify
            #expect(reply.status == .unprocessableEntity)
            #expect(
                Set(try reply.decoded(Components.Schemas.Problem.self).errors?.map(\.field) ?? []) == fields,
                "\(reply.text)")
            #expect(try await app.count("enrollments") == 0)
        }
    }

    @Test("five wrong codes within 15 minutes lock pairing for the account with 429 and Retry-After")
    func pairingRateLimit() async throws {
        try await withTestApp { app in
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
            let (patient, _) = try await app.patient()
            let real = try await app.pairingCode(therapist)
            let wrong = real == "00000000" ? "11111111" : "00000000"
            for attempt in 1...5 {
                let reply = try await patient.from("198.51.100.\(attempt)").send(
                    .POST, "/me/pairing", json: ["code": .string(wrong), "dateOfBirth": "1990-05-17", "gender": "male"])
                #expect(reply.status == .unprocessableEntity)
                #expect(reply.body.problemFields == ["code"])
            }
            let blocked = try await patient.send(
                .POST, "/me/pairing", json: ["code": .string(real), "dateOfBirth": "1990-05-17", "gender": "male"])
            #expect(blocked.status == .tooManyRequests)
            #expect(blocked.headers.first(name: "Retry-After").flatMap(Int.init) != nil)
            app.clock.advance(by: 15 * 60 + 1)
            let later = try await patient.send(
                .POST, "/me/pairing", json: ["code": .string(real), "dateOfBirth": "1990-05-17", "gender": "male"])
            #expect(later.status == .created)
        }
    }

    @Test("a therapist never sees another therapist's patients or codes")
    func isolation() async throws {
        try await withTestApp { app in
            let (berger, _) = try await app.staff("therapist", "berger@praxis.example")
            let (huber, _) = try await app.staff("therapist", "huber@praxis.example")
            let (patient, patientID) = try await app.patient()
            try await app.pair(patient, with: berger)
            let path = "/patients/\(patientID.uuidString)"
            #expect(try await berger.send(.GET, path).status == .ok)
            let other = try await huber.send(.GET, path)
            #expect(other.status == .notFound)
            #expect(try await huber.send(.GET, "/patients").body.array.isEmpty)
            #expect(try await huber.send(.GET, "/pairing-codes").body.array.isEmpty)
            #expect(try await huber.send(.GET, "/patients/not-a-uuid").status == .notFound)
            let practice = try #require(
                try await StudyRecord.query(on: app.database).filter(\.$joinMode == .pairingCode).all()
                    .first { $0.title.contains("berger") })
            #expect(try await huber.send(.GET, "/studies/\(practice.id!.uuidString)/enrollments").status == .notFound)
            #expect(try await huber.send(.GET, "/studies/\(practice.id!.uuidString)").status == .notFound)
            let reads = try await app.count("audit_events WHERE action = 'patient.read'")
            #expect(reads == 1)
        }
    }

    /// Who may not use the therapist's pairing and caseload operations, and what they are told.
    static let refusedCallers:
        [(caller: String, method: HTTPMethod, path: String, body: JSONValue?, status: HTTPResponseStatus)] = [
            ("patient", .POST, "/pairing-codes", ["count": 1], .forbidden),
            ("patient", .GET, "/pairing-codes", nil, .forbidden),
            ("patient", .GET, "/patients", nil, .forbidden),
            ("researcher", .POST, "/pairing-codes", ["count": 1], .forbidden),
            ("researcher", .GET, "/pairing-codes", nil, .forbidden),
            ("researcher", .GET, "/patients", nil, .forbidden),
            (
                "researcher", .POST, "/me/pairing",
                ["code": "12345678", "dateOfBirth": "1990-05-17", "gender": "male"], .forbidden
            ),
            ("nobody", .GET, "/patients", nil, .unauthorized),
            ("nobody", .POST, "/pairing-codes", ["count": 1], .unauthorized),
            ("nobody", .GET, "/me/therapist", nil, .unauthorized),
        ]

    @Test("only therapists use the pairing and caseload endpoints", arguments: refusedCallers)
    func refusedCaller(
        _ caller: String, _ method: HTTPMethod, _ path: String, _ body: JSONValue?, _ status: HTTPResponseStatus
    )
        async throws
    {
        try await withTestApp { app in
            // setup
            let client: APIClient
            switch caller {
            case "patient": client = try await app.patient().client
            case "researcher": client = try await app.staff("researcher", "lab@uni.example").client
            default: client = app.api
            }
            // act
            let reply = try await client.send(method, path, json: body)
            // verify
            #expect(reply.status == status)
            #expect(try await app.count("pairing_codes") == 0)
        }
    }

    /// Code requests outside the limits, with the field each names.
    static let refusedCodeRequests: [(body: JSONValue, field: String)] = [
        (["count": 51], "count"),
        (["count": 0], "count"),
        (["note": .string(String(repeating: "n", count: 201))], "note"),
    ]

    @Test("code requests outside the limits are refused per field", arguments: refusedCodeRequests)
    func codeLimits(_ body: JSONValue, _ field: String) async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
            // act
            let refused = try await therapist.send(.POST, "/pairing-codes", json: body)
            // verify
            #expect(refused.status == .unprocessableEntity)
            #expect(try refused.decoded(Components.Schemas.Problem.self).errors?.map(\.field) == [field])
            #expect(try await app.count("pairing_codes") == 0)
        }
    }

    @Test("a therapist edits the profile patients see; bad phone numbers are refused")
    func therapistProfile() async throws {
        try await withTestApp { app in
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example", name: "Anna Berger")
            let (patient, _) = try await app.patient()
            try await app.pair(patient, with: therapist)
            let updated = try await therapist.send(
                .PUT, "/me/therapist-profile",
                json: [
                    "fullName": "Dr. Anna Berger, MSc", "gender": "female",
                    "officeAddress": "Hauptplatz 1, 9020 Klagenfurt",
                    "phone": "+43 463 123456", "emergencyNumber": "+43 142",
                ])
            #expect(updated.status == .ok)
            let seen = try await patient.send(.GET, "/me/therapist")
            #expect(seen.body["fullName"].string == "Dr. Anna Berger, MSc")
            #expect(seen.body["emergencyNumber"].string == "+43 142")
            let bad = try await therapist.send(
                .PUT, "/me/therapist-profile", json: ["fullName": "", "phone": "call me"])
            #expect(bad.status == .unprocessableEntity)
            #expect(Set(bad.body.problemFields) == ["fullName", "phone"])
            #expect(try await patient.send(.GET, "/me/therapist").body["phone"].string == "+43 463 123456")
            #expect(try await patient.send(.PUT, "/me/therapist-profile", json: ["fullName": "X"]).status == .forbidden)
        }
    }
}
