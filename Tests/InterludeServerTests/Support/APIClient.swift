import Fluent
import Foundation
import NIOCore
import Testing
import VaporTesting

@testable import InterludeServer

/// A decoded JSON body, read with subscripts: `body["user"]["email"].string`.
struct JSON: @unchecked Sendable, CustomStringConvertible {
    let value: Any?

    init(_ value: Any?) {
        self.value = value
    }

    init(data: Data) {
        value = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
    }

    subscript(key: String) -> JSON { JSON((value as? [String: Any])?[key]) }
    subscript(index: Int) -> JSON {
        guard let array = value as? [Any], array.indices.contains(index) else { return JSON(nil) }
        return JSON(array[index])
    }

    var string: String? { value as? String }
    var bool: Bool? { value as? Bool }
    var int: Int? { value as? Int }
    var double: Double? { (value as? NSNumber)?.doubleValue }
    var array: [JSON] { (value as? [Any])?.map(JSON.init) ?? [] }
    var isNull: Bool { value == nil || value is NSNull }
    var description: String { String(describing: value) }

    /// The fields named in a problem's `errors`.
    var problemFields: [String] { self["errors"].array.compactMap { $0["field"].string } }

    /// The code a problem's `errors` give for each field they name (the first, when a field is named twice).
    var problemCodes: [String: String] {
        Dictionary(
            self["errors"].array.map { ($0["field"].string ?? "", $0["code"].string ?? "") },
            uniquingKeysWith: { first, _ in first })
    }
}

/// A JSON value written as a Swift literal, for request bodies; `nil` leaves the key out.
enum JSONValue: Sendable, Encodable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral,
    ExpressibleByFloatLiteral
{
    case string(String)
    case int(Int)
    case number(Double)
    case bool(Bool)
    case absent
    case array([JSONValue])
    case object([String: JSONValue])

    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int) { self = .int(value) }
    init(floatLiteral value: Double) { self = .number(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(nilLiteral: ()) { self = .absent }
    init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    init(_ value: String?) { self = value.map(JSONValue.string) ?? .absent }

    /// The object with `changes` put over its keys.
    func merging(_ changes: [String: JSONValue]) -> JSONValue {
        guard case .object(let values) = self else { return self }
        return .object(values.merging(changes) { _, new in new })
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .absent: try container.encodeNil()
        case .array(let values): try container.encode(values)
        case .object(let values):
            try container.encode(values.filter { if case .absent = $0.value { return false } else { return true } })
        }
    }
}

/// Makes API calls the way a client does: JSON in, JSON out, a bearer token when given.
struct APIClient: Sendable {
    let context: TestContext
    var token: String?
    /// Sent as `X-Forwarded-For`, so tests can act as different clients.
    var clientAddress = "203.0.113.10"
    var language: String?

    struct Reply: Sendable {
        let status: HTTPResponseStatus
        let headers: HTTPHeaders
        let body: JSON
        let text: String
        /// The body as sent, for answers that are not text (a zip).
        let data: Data

        /// The body as a type of the API document: `try reply.decoded(Components.Schemas.Study.self)`; a body that
        /// does not match the document fails the test.
        func decoded<Value: Decodable>(_ type: Value.Type) throws -> Value {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .custom { decoder in
                try APIDateTranscoder().decode(try decoder.singleValueContainer().decode(String.self))
            }
            return try decoder.decode(type, from: Data(text.utf8))
        }
    }

    func send(
        _ method: HTTPMethod, _ path: String, json: JSONValue? = nil, raw: String? = nil, bytes: Data? = nil,
        contentType: HTTPMediaType = .json, headers extra: HTTPHeaders = [:]
    ) async throws -> Reply {
        var headers: HTTPHeaders = ["X-Forwarded-For": clientAddress]
        headers.add(contentsOf: extra)
        if let token { headers.bearerAuthorization = BearerAuthorization(token: token) }
        if let language { headers.replaceOrAdd(name: .acceptLanguage, value: language) }
        var body: ByteBuffer?
        if let json {
            let encoded = try JSONEncoder().encode(json)
            TestSecrets.record(json: encoded)
            body = ByteBuffer(data: encoded)
            headers.contentType = .json
        } else if let raw {
            body = ByteBuffer(string: raw)
            headers.contentType = .json
        } else if let bytes {
            body = ByteBuffer(data: bytes)
            headers.contentType = contentType
        }
        let response = try await context.app.testing().sendRequest(
            method, "/api/v1" + path, headers: headers, body: body)
        let data = Data(buffer: response.body)
        TestSecrets.record(json: data)
        if response.headers.contentType?.subType.hasSuffix("json") == true {
            for violation in DateTimeContract.violations(in: data) {
                Issue.record("\(method) \(path) answered a date-time that is not ISO 8601: \(violation)")
            }
        }
        return Reply(
            status: response.status, headers: response.headers, body: JSON(data: data),
            text: String(decoding: data, as: UTF8.self), data: data)
    }

    func authorized(_ token: String?) -> APIClient {
        var copy = self
        copy.token = token
        return copy
    }

    func from(_ address: String) -> APIClient {
        var copy = self
        copy.clientAddress = address
        return copy
    }

    /// The same client, seen from an address no other request came from: for tests that are not about rate limits.
    var fromNewAddress: APIClient {
        let bytes = UUID().uuid
        return from("198.18.\(bytes.0).\(bytes.1)")
    }
}

extension TestContext {
    /// Version 1 of an instrument as the database holds it: what the API must send, field for field.
    func storedDefinition(_ key: String) async throws -> NSDictionary? {
        let record = try #require(
            try await InstrumentVersionRecord.query(on: database).filter(\.$key == key).filter(\.$version == 1).first())
        return try JSONSerialization.jsonObject(with: Data(record.definition.utf8)) as? NSDictionary
    }

    var api: APIClient { APIClient(context: self) }

    static let password = "a long enough password"

    /// Registers a patient through the API, confirms the address through the emailed link and signs in.
    func patient(_ email: String = "patient@example.org", name: String? = nil, shareWithResearch: Bool = true)
        async throws
        -> (client: APIClient, id: UUID)
    {
        let registered = try await api.fromNewAddress.send(
            .POST, "/accounts",
            json: [
                "email": .string(email), "password": .string(Self.password), "privacyPolicyVersion": "1",
                "shareWithResearch": .bool(shareWithResearch), "locale": "en", "timeZone": "Europe/Vienna",
                "name": JSONValue(name),
            ])
        try #require(registered.status == .created, "\(registered.text)")
        let token = try #require(mailer.token(for: "/app/verify", to: email))
        let verified = try await api.send(.POST, "/accounts/verification", json: ["token": .string(token)])
        try #require(verified.status == .ok, "\(verified.text)")
        let client = try await signIn(email)
        return (client, try #require(UUID(uuidString: registered.body["id"].string ?? "")))
    }

    func signIn(_ email: String, password: String = TestContext.password) async throws -> APIClient {
        let session = try await api.send(
            .POST, "/sessions", json: ["email": .string(email), "password": .string(password)])
        try #require(session.status == .created, "\(session.text)")
        return api.authorized(session.body["token"].string)
    }

    /// Creates a staff account directly and signs it in through the API.
    func staff(_ role: String, _ email: String, name: String? = nil) async throws -> (client: APIClient, id: UUID) {
        let created = try await StaffAccounts(database: database, services: app.interlude).create(
            email: email, role: role, name: name, password: Self.password, forceChange: false, by: nil)
        return (try await signIn(email), try created.user.requireID())
    }

    /// A fresh pairing code of `therapist`.
    func pairingCode(_ therapist: APIClient) async throws -> String {
        let reply = try await therapist.send(.POST, "/pairing-codes", json: ["count": 1])
        try #require(reply.status == .created, "\(reply.text)")
        return try #require(reply.body[0]["code"].string)
    }

    /// Pairs `patient` with `therapist` through a new code.
    func pair(_ patient: APIClient, with therapist: APIClient, born: String = "1990-05-17") async throws {
        let code = try await pairingCode(therapist)
        let reply = try await patient.send(
            .POST, "/me/pairing", json: ["code": .string(code), "dateOfBirth": .string(born), "gender": "female"])
        try #require(reply.status == .created, "\(reply.text)")
    }

    func count(_ table: String) async throws -> Int {
        let row = try await sql.raw("SELECT COUNT(*) AS n FROM \(unsafeRaw: table)").first()
        return try row?.decode(column: "n", as: Int.self) ?? 0
    }
}
