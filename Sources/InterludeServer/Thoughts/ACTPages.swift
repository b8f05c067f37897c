import Foundation
import InterludeCore
import Vapor

/// ACT information in the patient app: the hexaflex, its six core processes around psychological flexibility as
/// links in an SVG, and a page for each process with the operator's text (or the shipped one).
struct ACTPages {
    struct Node: Encodable, Sendable {
        let slug: String
        let label: String
        let lines: [Line]
        let x: Int
        let y: Int
    }

    struct Line: Encodable, Sendable {
        let text: String
        let dy: String
    }

    struct Edge: Encodable, Sendable {
        let x1: Int
        let y1: Int
        let x2: Int
        let y2: Int
    }

    struct HexaflexContent: Encodable, Sendable {
        let nodes: [Node]
        let edges: [Edge]
    }

    struct ProcessContent: Encodable, Sendable {
        let paragraphs: [String]
        let previous: Node
        let next: Node
    }

    static let centre = 200.0
    static let radius = 138.0

    func register(on routes: any RoutesBuilder) {
        routes.get("act", use: hexaflex)
        routes.get("act", ":process", use: process)
    }

    func hexaflex(_ request: Request) async throws -> Response {
        let nodes = ACTProcess.allCases.map { node($0, request) }
        var edges: [Edge] = []
        for (index, from) in nodes.enumerated() {
            for to in nodes[(index + 1)...] { edges.append(Edge(x1: from.x, y1: from.y, x2: to.x, y2: to.y)) }
        }
        return try await request.renderPage(
            "app/act", titleKey: "app.act.title", content: HexaflexContent(nodes: nodes, edges: edges),
            script: PatientAppController.script)
    }

    func process(_ request: Request) async throws -> Response {
        guard let slug = request.parameters.get("process"), let process = ACTProcess(slug: slug) else {
            throw AppError.notFound
        }
        let text = try await SiteTexts(database: request.db).text(
            process, request.language, localizer: request.services.localizer)
        let all = ACTProcess.allCases
        let index = all.firstIndex(of: process)!
        return try await request.renderPage(
            "app/act-process", titleKey: "act.process.\(process.rawValue)",
            content: ProcessContent(
                paragraphs: PatientAppController.paragraphs(text),
                previous: node(all[(index + all.count - 1) % all.count], request),
                next: node(all[(index + 1) % all.count], request)),
            script: PatientAppController.script)
    }

    /// A process's place on the hexagon, clockwise from the top, its name broken into lines.
    private func node(_ process: ACTProcess, _ request: Request) -> Node {
        let index = ACTProcess.allCases.firstIndex(of: process)!
        let angle = (-90.0 + 60.0 * Double(index)) * .pi / 180
        let label = request.services.localizer.text("act.process.\(process.rawValue)", request.language)
        let words = label.split(separator: " ").map(String.init)
        let lines =
            words.count > 1
            ? [words[..<(words.count / 2 + words.count % 2)], words[(words.count / 2 + words.count % 2)...]]
                .map { $0.joined(separator: " ") } : words
        return Node(
            slug: process.slug, label: label,
            lines: lines.enumerated().map {
                Line(text: $1, dy: $0 == 0 ? (lines.count == 1 ? "0.35em" : "-0.25em") : "1.2em")
            },
            x: Int((Self.centre + Self.radius * cos(angle)).rounded()),
            y: Int((Self.centre + Self.radius * sin(angle)).rounded()))
    }
}
