import Foundation
import NIOHTTP1
import Testing

/// What one row of the access matrix expects of each cell (actor × scope), written compactly:
/// `"* 403, self 200, own@practice 201, @research 404"`. The most specific entry wins: `actor@scope`, then
/// `actor`, then those of the actor it stands for (a former therapist stands for any other therapist), then
/// `@scope`, then `*`. An outcome is a status code, or `login` for a console page that sends the visitor to sign in.
struct Expectation: Sendable, CustomStringConvertible {
    enum Outcome: Equatable, Sendable, CustomStringConvertible {
        case status(UInt)
        case login

        init?(_ text: String) {
            if text == "login" {
                self = .login
            } else if let code = UInt(text), (100...599).contains(code) {
                self = .status(code)
            } else {
                return nil
            }
        }

        var description: String {
            switch self {
            case .status(let code): String(code)
            case .login: "login"
            }
        }
    }

    let description: String
    private let entries: [String: Outcome]

    init(_ text: String) {
        description = text
        var entries: [String: Outcome] = [:]
        for entry in text.split(separator: ",") {
            let parts = entry.split(separator: " ").map(String.init)
            guard parts.count == 2, let outcome = Outcome(parts[1]), Self.isKey(parts[0]) else {
                Issue.record("malformed expectation entry '\(entry)' in '\(text)'")
                continue
            }
            entries[parts[0]] = outcome
        }
        self.entries = entries
    }

    private static func isKey(_ key: String) -> Bool {
        if key == "*" { return true }
        let parts = key.split(separator: "@", omittingEmptySubsequences: false).map(String.init)
        let actorOK = parts[0].isEmpty ? parts.count == 2 : AccessWorld.Actor(rawValue: parts[0]) != nil
        let scopeOK = parts.count == 1 || (parts.count == 2 && AccessWorld.Scope(rawValue: parts[1]) != nil)
        return actorOK && scopeOK && parts.count <= 2
    }

    /// The actor's own entries first, then those of the actor it stands for, then the scope's and the default.
    func outcome(_ actor: AccessWorld.Actor, _ scope: AccessWorld.Scope) -> Outcome? {
        let actors = [actor] + (actor.standsFor.map { [$0] } ?? [])
        for candidate in actors {
            if let outcome = entries["\(candidate.rawValue)@\(scope.rawValue)"] ?? entries[candidate.rawValue] {
                return outcome
            }
        }
        return entries["@\(scope.rawValue)"] ?? entries["*"]
    }

    /// The shortest expectation that describes `observed`, for reading a row's behaviour when writing it.
    static func describing(_ observed: [(AccessWorld.Actor, AccessWorld.Scope, Outcome)]) -> String {
        let counts = Dictionary(grouping: observed.map(\.2.description), by: { $0 }).mapValues(\.count)
        let common = counts.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }?.key ?? ""
        var parts = ["* \(common)"]
        for actor in AccessWorld.Actor.allCases {
            let cells = observed.filter { $0.0 == actor }
            let outcomes = Set(cells.map(\.2.description))
            if outcomes.count == 1, let only = outcomes.first {
                if only != common { parts.append("\(actor.rawValue) \(only)") }
            } else {
                for cell in cells where cell.2.description != common {
                    parts.append("\(actor.rawValue)@\(cell.1.rawValue) \(cell.2)")
                }
            }
        }
        return parts.joined(separator: ", ")
    }
}

/// One cell of the matrix: who asks, about an object of which scope, in which world.
struct AccessCell: Sendable {
    let world: AccessWorld
    let actor: AccessWorld.Actor
    let scope: AccessWorld.Scope

    /// The patient the request is about (Ben for the researcher's not-sharing cell, Ada otherwise).
    var subject: AccessWorld.Subject { world.subject(actor) }
    var studyID: UUID { world.studyID(scope) }
}

/// A row of the matrix: one operation or route, and what each cell expects.
protocol MatrixRow: Sendable {
    var name: String { get }
    /// Whether the request names an object of a study, so that it is asked about one of each kind.
    var scoped: Bool { get }
    var expect: Expectation { get }
}

/// Collects what the cells of every row answered: the mismatches, and each row's observed behaviour.
struct MatrixReport {
    private(set) var mismatches: [String] = []
    private(set) var observed: [String] = []
    private var cells: [(AccessWorld.Actor, AccessWorld.Scope, Expectation.Outcome)] = []

    mutating func check(
        _ row: String, _ cell: AccessCell, expected: Expectation, outcome: Expectation.Outcome, body: String,
        bodyChecked: Bool
    ) {
        cells.append((cell.actor, cell.scope, outcome))
        let want = expected.outcome(cell.actor, cell.scope)
        if want != outcome {
            mismatches.append(
                "\(row) [\(cell.actor.rawValue)@\(cell.scope.rawValue)]: expected \(want.map(String.init(describing:)) ?? "no entry"), got \(outcome): \(Self.gist(body))"
            )
        }
        guard bodyChecked else { return }
        let lowered = body.lowercased()
        for marker in cell.world.forbidden(for: cell.actor) where lowered.contains(marker.lowercased()) {
            mismatches.append("\(row) [\(cell.actor.rawValue)@\(cell.scope.rawValue)]: the answer shows '\(marker)'")
        }
    }

    /// The title and detail of a problem, or the title of a page: enough to see why a cell answered as it did.
    private static func gist(_ body: String) -> String {
        let title = body.range(of: "<title>").flatMap { start in body[start.upperBound...].split(separator: "<").first }
        return String(title ?? body.prefix(160)[...]).replacingOccurrences(of: "\n", with: " ")
    }

    mutating func endRow(_ row: String) {
        observed.append("\(row): \"\(Expectation.describing(cells))\"")
        cells = []
    }

    /// Asks every cell of every row through `ask` (outcome, body, whether the body is checked for other scopes),
    /// then records every difference.
    static func run<Row: MatrixRow>(
        _ rows: [Row], in world: AccessWorld, title: String,
        ask: (Row, AccessCell) async throws -> (Expectation.Outcome, String, Bool)
    ) async throws {
        var report = MatrixReport()
        for row in rows {
            for scope in AccessWorld.Scope.cases(scoped: row.scoped) {
                for actor in AccessWorld.Actor.allCases {
                    let cell = AccessCell(world: world, actor: actor, scope: scope)
                    let (outcome, body, bodyChecked) = try await ask(row, cell)
                    report.check(
                        row.name, cell, expected: row.expect, outcome: outcome, body: body, bodyChecked: bodyChecked)
                }
            }
            report.endRow(row.name)
        }
        report.conclude(title)
    }

    /// Prints every row's observed behaviour when `ACCESS_MATRIX_PRINT` is set, and records the mismatches.
    func conclude(_ title: String) {
        if ProcessInfo.processInfo.environment["ACCESS_MATRIX_PRINT"] != nil {
            print("== \(title)\n" + observed.joined(separator: "\n"))
        }
        for mismatch in mismatches { Issue.record(Comment(rawValue: mismatch)) }
        #expect(mismatches.count == 0, "cells that differ from their row")
    }
}

extension AccessWorld.Scope {
    /// Both scopes for a row about an object of a study; one for a row whose request names no study's object.
    static func cases(scoped: Bool) -> [Self] { scoped ? allCases : [.practice] }
}
