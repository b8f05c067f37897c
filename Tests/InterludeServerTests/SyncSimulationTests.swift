import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

/// Two devices of one patient edit appointments through offline and online phases in random interleavings. An
/// oracle applies the same mutations in the order they reach the server by the version rule; in the end the
/// server, both devices and the oracle agree, and every change the oracle refuses was reported to its device.
@Suite("Sync: two devices, random offline phases, against an oracle")
struct SyncSimulationTests {
    struct Appointment: Equatable, CustomStringConvertible {
        var version: Int
        var title: String
        var startsAt: String

        var description: String { "v\(version) \(title) \(startsAt)" }
    }

    enum Change {
        case create(id: String, title: String, startsAt: Date)
        case update(id: String, base: Int, title: String, startsAt: Date)
        case delete(id: String, base: Int)
    }

    struct Device {
        let client: APIClient
        var appointments: [String: Appointment] = [:]
        var queue: [(mutation: String, change: Change)] = []
        var online = true
        var cursor: String?
        var conflicts: [String] = []
    }

    /// The server as it should be: the version rule applied in arrival order.
    struct Oracle {
        var appointments: [String: Appointment] = [:]
        var conflicts: Set<String> = []

        mutating func apply(_ mutation: String, _ change: Change) -> String {
            switch change {
            case .create(let id, let title, let startsAt):
                if appointments[id] == nil {
                    appointments[id] = Appointment(
                        version: 1, title: title, startsAt: SyncSimulationTests.stamp(startsAt))
                }
                return "applied"
            case .update(let id, let base, let title, let startsAt):
                guard let current = appointments[id], current.version == base else {
                    conflicts.insert(mutation)
                    return "conflict"
                }
                appointments[id] = Appointment(
                    version: base + 1, title: title, startsAt: SyncSimulationTests.stamp(startsAt))
                return "applied"
            case .delete(let id, let base):
                guard let current = appointments[id] else { return "applied" }
                guard current.version == base else {
                    conflicts.insert(mutation)
                    return "conflict"
                }
                appointments[id] = nil
                return "applied"
            }
        }
    }

    static func stamp(_ date: Date) -> String { QuestionnaireAPITests.iso(date).stringValue }

    static func json(_ mutation: String, _ change: Change) -> JSONValue {
        func fields(_ title: String, _ start: Date) -> JSONValue {
            [
                "title": .string(title), "startsAt": QuestionnaireAPITests.iso(start),
                "endsAt": QuestionnaireAPITests.iso(start.addingTimeInterval(50 * 60)),
            ]
        }
        switch change {
        case .create(let id, let title, let start):
            return [
                "id": .string(mutation), "type": "appointment.create", "appointmentId": .string(id),
                "appointment": fields(title, start),
            ]
        case .update(let id, let base, let title, let start):
            return [
                "id": .string(mutation), "type": "appointment.update", "appointmentId": .string(id),
                "baseVersion": .int(base),
                "appointment": fields(title, start),
            ]
        case .delete(let id, let base):
            return [
                "id": .string(mutation), "type": "appointment.delete", "appointmentId": .string(id),
                "baseVersion": .int(base),
            ]
        }
    }

    /// Sends the device's queue, checks each answer against the oracle, then pulls what changed.
    func sync(_ device: inout Device, _ oracle: inout Oracle) async throws {
        if !device.queue.isEmpty {
            let reply = try await device.client.send(
                .POST, "/sync", json: ["mutations": .array(device.queue.map { Self.json($0.mutation, $0.change) })])
            try #require(reply.status == .ok, "\(reply.text)")
            let results = reply.body["results"].array
            #expect(results.count == device.queue.count)
            for (result, queued) in zip(results, device.queue) {
                let expected = oracle.apply(queued.mutation, queued.change)
                #expect(result["status"].string == expected, "\(queued.change)")
                if result["status"].string == "conflict" { device.conflicts.append(queued.mutation) }
            }
            device.queue = []
        }
        let pulled = try await device.client.send(.GET, device.cursor.map { "/sync?since=\($0)" } ?? "/sync")
        try #require(pulled.status == .ok)
        if pulled.body["full"].bool == true { device.appointments = [:] }
        for appointment in pulled.body["appointments"].array {
            device.appointments[appointment["id"].string!] = Appointment(
                version: appointment["version"].int!, title: appointment["title"].string!,
                startsAt: appointment["startsAt"].string!)
        }
        for gone in pulled.body["deleted"].array where gone["entity"].string == "appointment" {
            device.appointments[gone["id"].string!] = nil
        }
        device.cursor = pulled.body["cursor"].string
    }

    @Test("random interleavings of edits, deletions and offline phases end in agreement", arguments: 1...8)
    func agreement(seed: Int) async throws {
        try await withTestApp { app in
            let (first, _) = try await app.patient()
            try await app.pair(first, with: try await app.staff("therapist", "berger@praxis.example").client)
            let second = try await app.signIn("patient@example.org")
            var devices = [Device(client: first), Device(client: second)]
            var oracle = Oracle()
            var generator = SeededGenerator(seed: "sync-simulation-\(seed)")
            let vienna = TimeZone(identifier: "Europe/Vienna")!
            let today = LocalDate(app.clock.now, in: vienna)
            func randomStart() -> Date {
                let day = today.adding(days: Int.random(in: 1...6, using: &generator))
                let time = LocalTime(
                    hour: Int.random(in: 8...17, using: &generator),
                    minute: 5 * Int.random(in: 0...11, using: &generator))!
                return LocalDateTime(date: day, time: time).instant(in: vienna)
            }
            var counter = 0
            for _ in 0..<60 {
                app.clock.advance(by: 40)
                let index = Int.random(in: 0...1, using: &generator)
                var device = devices[index]
                counter += 1
                let mutation = UUID().uuidString.lowercased()
                switch Int.random(in: 0...9, using: &generator) {
                case 0...1:
                    let id = UUID().uuidString.lowercased()
                    let start = randomStart()
                    device.appointments[id] = Appointment(
                        version: 1, title: "Session \(counter)", startsAt: Self.stamp(start))
                    device.queue.append((mutation, .create(id: id, title: "Session \(counter)", startsAt: start)))
                case 2...3:
                    guard let (id, current) = device.appointments.randomElement(using: &generator) else { break }
                    let start = randomStart()
                    device.appointments[id] = Appointment(
                        version: current.version, title: "Edit \(counter)", startsAt: Self.stamp(start))
                    device.queue.append(
                        (mutation, .update(id: id, base: current.version, title: "Edit \(counter)", startsAt: start)))
                case 4:
                    guard let (id, current) = device.appointments.randomElement(using: &generator) else { break }
                    device.appointments[id] = nil
                    device.queue.append((mutation, .delete(id: id, base: current.version)))
                case 5...6:
                    device.online.toggle()
                default:
                    if device.online { try await sync(&device, &oracle) }
                }
                devices[index] = device
            }
            // Back online, each device syncs twice: its own changes first, then what the other sent.
            for _ in 0..<2 {
                for index in devices.indices {
                    devices[index].online = true
                    try await sync(&devices[index], &oracle)
                }
            }
            let server = try await first.send(.GET, "/me/appointments?includePast=true").body.array
            var onServer: [String: Appointment] = [:]
            for appointment in server {
                onServer[appointment["id"].string!] = Appointment(
                    version: appointment["version"].int!, title: appointment["title"].string!,
                    startsAt: appointment["startsAt"].string!)
            }
            #expect(onServer == oracle.appointments)
            for device in devices {
                #expect(device.appointments == oracle.appointments)
                #expect(device.queue.isEmpty)
            }
            let reported = Set(devices.flatMap(\.conflicts))
            #expect(reported == oracle.conflicts)
        }
    }
}

extension JSONValue {
    var stringValue: String {
        if case .string(let value) = self { return value }
        return ""
    }
}
