import Foundation
import Testing
import Vapor
import VaporTesting

@testable import InterludeServer

/// The console's addresses have one source: every `ConsoleURL` is a route the router serves, every console route
/// has its `ConsoleURL`, and every link and form in the templates goes to a route that exists.
@Suite("Console addresses")
struct ConsoleURLTests {
    static let patient = UUID()
    static let study = UUID()
    static let other = UUID()

    /// One of every address, with what it is asked with.
    static let samples: [(ConsoleURL, HTTPMethod)] = [
        (.home, .GET), (.login(), .GET), (.login(), .POST), (.logout, .POST), (.password, .GET), (.password, .POST),
        (.preferences, .POST), (.twoFactor, .POST), (.disableTwoFactor, .POST),
        (.users, .GET), (.users, .POST), (.userActive(other), .POST), (.userTwoFactorReset(other), .POST),
        (.user(other), .POST), (.userPassword(other), .POST), (.userDeletion(other), .POST),
        (.audit, .GET), (.settings, .GET), (.settings, .POST), (.settingsTwoFactor, .POST), (.settingsACT, .POST),
        (.settingsName, .POST),
        (.patients, .GET), (.patient(patient), .GET), (.assignPrompt(patient: patient), .POST),
        (.appointments(patient: patient), .POST), (.appointmentDecision(patient: patient, appointment: other), .POST),
        (.cancelAppointment(patient: patient, appointment: other), .POST), (.treatment(patient: patient), .POST),
        (.passwordReset(patient: patient), .POST), (.invitations, .POST),
        (.response(patient: patient, response: other), .GET),
        (.responseFHIR(patient: patient, response: other), .GET), (.healthRecord(patient: patient), .GET),
        (.thoughts(patient: patient), .GET), (.thoughts(patient: patient), .POST), (.report(patient: patient), .GET),
        (.notes(patient: patient), .POST), (.deleteNote(patient: patient, note: other), .POST), (.pairingCodes, .GET),
        (.pairingCodes, .POST),
        (.pairingCodeSheet, .GET), (.profile, .GET), (.profile, .POST),
        (.intersession(patient: patient), .GET), (.interventions(patient: patient), .POST),
        (.interventionTemplate(patient: patient), .POST), (.alerts, .GET), (.acknowledgement(alert: other), .POST),
        (.practiceRules, .GET), (.rules(study: study), .GET), (.rules(study: study), .POST),
        (.deleteRule(study: study, rule: other), .POST), (.templates(study: study), .POST),
        (.deleteTemplate(study: study, template: other), .POST), (.messages(study: study), .POST),
        (.deleteMessage(study: study, message: other), .POST), (.messagePlan(study: study), .POST),
        (.instruments, .GET), (.instruments, .POST), (.instrumentEditor, .GET), (.instrumentEditor, .POST),
        (.instrument(key: "phq9", version: 1), .GET),
        (.publication(key: "phq9", version: 1), .POST), (.instrumentFHIR(key: "phq9", version: 1), .GET),
        (.pin(key: "phq9", version: 1), .POST), (.practicePlans, .GET), (.plans(study: study), .GET),
        (.plans(study: study), .POST), (.deletePlan(study: study, plan: other), .POST),
        (.deactivatePlan(study: study, plan: other), .POST), (.activatePlan(study: study, plan: other), .POST),
        (.schedule(patient: patient), .GET), (.studies, .GET), (.newStudy, .GET), (.newStudy, .POST),
        (.study(study), .GET), (.editStudy(study), .GET), (.editStudy(study), .POST),
        (.enrollmentDecision(study: study, enrollment: other), .POST), (.team(study: study), .GET),
        (.team(study: study), .POST),
        (.teamMember(study: study, user: other), .POST), (.removeTeamMember(study: study, user: other), .POST),
        (.exports(study: study), .GET), (.exports(study: study), .POST),
        (.exportFile(study: study, export: other), .GET), (.monitor(study: study), .GET),
        (.monitorParticipant(study: study, patient: patient), .GET),
        (.consent(study: study), .GET), (.consent(study: study), .POST),
        (.practiceRecordSettings, .GET), (.recordSettings(study: study), .GET), (.recordSettings(study: study), .POST),
        (.practiceArms, .GET), (.arms(study: study), .GET), (.arms(study: study), .POST),
        (.exportTokens(study: study), .POST), (.revokeExportToken(study: study, token: other), .POST),
    ]

    /// Whether a route's pattern matches an address's segments; `*` in `segments` stands for a template value.
    static func matches(_ route: Route, _ method: HTTPMethod, _ segments: [String]) -> Bool {
        guard route.method == method, route.path.count == segments.count else { return false }
        return zip(route.path, segments).allSatisfy { component, segment in
            switch component {
            case .constant(let constant): constant == segment
            case .parameter: true
            case .anything, .catchall: true
            }
        }
    }

    static func consoleRoutes(_ app: TestContext) -> [Route] {
        app.app.routes.all.filter { $0.path.first?.description == "console" && $0.method != .HEAD }
    }

    static func segments(of path: String) -> [String] {
        let bare = path.split(separator: "?", maxSplits: 1)[0].split(separator: "#", maxSplits: 1).first ?? ""
        return bare.split(separator: "/").map { $0.removingPercentEncoding ?? String($0) }
    }

    @Test("every address is a route the router serves")
    func everyAddressIsServed() async throws {
        try await withTestApp { app in
            // setup
            let routes = Self.consoleRoutes(app)
            // verify
            for (url, method) in Self.samples {
                #expect(
                    routes.contains { Self.matches($0, method, Self.segments(of: url.path)) }, "\(method) \(url.path)")
            }
        }
    }

    @Test("every console route has its address")
    func everyRouteHasAnAddress() async throws {
        try await withTestApp { app in
            // verify
            for route in Self.consoleRoutes(app) {
                let named = Self.samples.contains { Self.matches(route, $0.1, Self.segments(of: $0.0.path)) }
                #expect(
                    named, "\(route.method) /\(route.path.map(\.description).joined(separator: "/")) has no ConsoleURL")
            }
        }
    }

    @Test("addresses escape what they carry and keep what a redirect adds")
    func escaping() {
        // verify
        #expect(
            ConsoleURL.login(next: "/console/patients?x=1").path == "/console/login?next=%2Fconsole%2Fpatients%3Fx%3D1")
        #expect(ConsoleURL.instrument(key: "a b/c", version: 2).path == "/console/instruments/a%20b%2Fc/2")
        #expect(ConsoleURL.home.path == "/console")
        #expect(
            ConsoleURL.intersession(patient: Self.patient).with([("sent", "1")], fragment: "interventions")
                == "/console/patients/\(Self.patient.uuidString)/intersession?sent=1#interventions")
    }

    @Test("every link and form of the templates goes to a console route")
    func templatesLinkToRoutes() async throws {
        try await withTestApp { app in
            // setup
            let routes = Self.consoleRoutes(app)
            let views = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("Resources/Views")
            let tag = try Regex(#"<(a|form)\b[^>]*>"#)
            let address = try Regex(#"(?:href|action)="(/console[^"]*)""#)
            let template = try Regex(#"#\([^)]*\)"#)
            var checked = 0
            // act
            let enumerator = FileManager.default.enumerator(at: views, includingPropertiesForKeys: nil)
            while let file = enumerator?.nextObject() as? URL {
                guard file.pathExtension == "leaf" else { continue }
                let text = try String(contentsOf: file, encoding: .utf8)
                for element in text.matches(of: tag) {
                    let html = String(element.output[0].substring ?? "")
                    guard let link = html.firstMatch(of: address) else { continue }
                    let path = String(link.output[1].substring ?? "")
                    let segments = Self.segments(of: path.replacing(template, with: "*"))
                    let isPost = html.hasPrefix("<form") && !html.contains(#"method="get""#)
                    let method: HTTPMethod = isPost ? .POST : .GET
                    // verify
                    #expect(
                        routes.contains { Self.matches($0, method, segments) },
                        "\(file.lastPathComponent): \(method) \(path) is not a console route")
                    checked += 1
                }
            }
            #expect(checked > 50)
        }
    }
}
