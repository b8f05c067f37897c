import Foundation
import Testing
import VaporTesting

@testable import InterludeServer

/// One plan adjustment with a window count of 2^62 once stopped the process, and again after every restart. Every
/// integer a request can carry, in a path, a query, a header or anywhere in a JSON body, now has limits in
/// `openapi.yaml`, and the door refuses a value outside them naming the field before any handler runs.
@Suite("Integer bounds: every integer of every operation, at its extremes")
struct IntegerBoundsTests {
    static let extremes: [(name: String, literal: String)] = [
        ("2^62", "4611686018427387904"), ("-2^62", "-4611686018427387904"),
        ("Int.min", "-9223372036854775808"), ("Int.max", "9223372036854775807"),
    ]

    @Test("every integer a request can carry declares its least and greatest value")
    func everyIntegerHasLimits() throws {
        let places = try RequestBounds.builtIn().integerPlaces
        #expect(places.count > 100)
        let unbounded = places.filter { $0.minimum == nil || $0.maximum == nil }
            .map { "\($0.operation) \($0.location):\($0.path.joined(separator: "."))" }
        #expect(unbounded == [], "integers without both limits")
    }

    @Test(
        "±2^62, Int.min and Int.max in every integer of every operation: 422 naming the field, and the server answers after"
    )
    func extremesRefused() async throws {
        try await withTestApp { app in
            // setup
            let patient = try await app.patient().client
            let places = try RequestBounds.builtIn().integerPlaces
            var wrong: [String] = []
            // act
            for place in places {
                for extreme in Self.extremes {
                    let request = Self.request(place, value: extreme.literal, among: places)
                    let reply = try await patient.send(
                        request.method, request.path, raw: request.body, headers: request.headers)
                    // verify
                    let field = place.location == "body" ? place.path.joined(separator: ".") : place.path[0]
                    if reply.status != .unprocessableEntity || !reply.body.problemFields.contains(field) {
                        wrong.append(
                            "\(place.operation) \(field) = \(extreme.name): \(reply.status.code) \(reply.text.prefix(200))"
                        )
                    }
                }
            }
            #expect(wrong == [], "answers other than a 422 naming the field")
            let health = try await app.app.testing().sendRequest(.GET, "/health")
            #expect(health.status == .ok)
            let me = try await patient.send(.GET, "/me")
            #expect(me.status == .ok)
        }
    }

    @Test("a value inside the limits passes the door: a plan adjustment's count of 2 reaches the handler")
    func insideLimitsPasses() async throws {
        try await withTestApp { app in
            let patient = try await app.patient().client
            let body =
                #"{"planId": "\#(UUID().uuidString)", "adjustment": {"days": {"monday": [{"start": "08:00", "end": "20:00", "count": 2}]}}}"#
            let reply = try await patient.send(.PUT, "/me/plan-adjustments", raw: body)
            // The patient has no such plan: the handler, not the door, answers, about the plan and not the count.
            #expect(reply.status == .unprocessableEntity, "\(reply.text)")
            #expect(reply.body.problemFields == ["planId"])
        }
    }

    @Test(
        "an upload's announced length of 0 or -1, and an offset no integer holds, are named at the door: nothing starts"
    )
    func uploadHeaders() async throws {
        try await withTestApp { app in
            let patient = try await app.patient().client
            var answers: [String: [String]] = [:]
            for length in ["0", "-1"] {
                let reply = try await patient.send(
                    .POST, "/me/health-imports", bytes: Data("type".utf8), contentType: .binary,
                    headers: ["Upload-Length": length])
                answers["length \(length)"] =
                    reply.status == .unprocessableEntity
                    ? reply.body.problemCodes.map { "\($0.key) \($0.value)" } : [reply.text]
            }
            let offset = try await patient.send(
                .PATCH, "/me/health-imports/\(UUID())", bytes: Data("x".utf8), contentType: .binary,
                headers: ["Upload-Offset": "99999999999999999999999"])
            #expect(answers == ["length 0": ["Upload-Length outOfRange"], "length -1": ["Upload-Length outOfRange"]])
            #expect(
                offset.status == .unprocessableEntity && offset.body.problemCodes == ["Upload-Offset": "invalidFormat"],
                "\(offset.text)")
            #expect(try await app.count("health_imports") == 0)
        }
    }

    struct Request {
        let method: HTTPMethod
        let path: String
        let body: String?
        let headers: HTTPHeaders
    }

    /// The operation's request with `value` at the place and nothing else: other path parameters are an integer's
    /// least value or a fresh id.
    static func request(_ place: RequestBounds.IntegerPlace, value: String, among places: [RequestBounds.IntegerPlace])
        -> Request
    {
        let parts = place.operation.split(separator: " ", maxSplits: 1).map(String.init)
        let integerParameters = Set(
            places.filter { $0.operation == place.operation && $0.location == "path" }.map { $0.path[0] })
        let path = parts[1].split(separator: "/", omittingEmptySubsequences: false).map { segment -> String in
            guard segment.hasPrefix("{"), segment.hasSuffix("}") else { return String(segment) }
            let name = String(segment.dropFirst().dropLast())
            if place.location == "path" && place.path[0] == name { return value }
            return integerParameters.contains(name) ? "1" : UUID().uuidString
        }.joined(separator: "/")
        var headers = HTTPHeaders()
        if place.location == "header" { headers.add(name: place.path[0], value: value) }
        let query = place.location == "query" ? "?\(place.path[0])=\(value)" : ""
        return Request(
            method: HTTPMethod(rawValue: parts[0]), path: path + query,
            body: place.location == "body" ? json(at: place.path[...], value: value) : nil, headers: headers)
    }

    /// `{"a": [{"b": value}]}` for the path `a.0.b`.
    static func json(at path: ArraySlice<String>, value: String) -> String {
        guard let first = path.first else { return value }
        let inner = json(at: path.dropFirst(), value: value)
        return Int(first) != nil ? "[\(inner)]" : "{\"\(first)\": \(inner)}"
    }
}
