import Foundation
import Testing
import VaporTesting

@testable import InterludeServer

/// Every API operation and every console route, asked by every kind of person about objects of a practice and of
/// a research study. A new operation or route without a row fails here; so does a cell that answers otherwise
/// than its row says, and any answer that shows something of a scope its reader may not see.
@Suite("Access matrix: every operation and route, every actor, both kinds of study")
struct AccessMatrixTests {
    /// The operation ids of `openapi.yaml`, read from the document the server serves.
    static func operations(_ app: TestContext) async throws -> Set<String> {
        let response = try await app.app.testing().sendRequest(.GET, "/api/v1/openapi.yaml")
        let spec = String(buffer: response.body)
        let pattern = try Regex(#"operationId:\s*([A-Za-z]+)"#)
        return Set(spec.matches(of: pattern).compactMap { $0.output[1].substring.map(String.init) })
    }

    /// The console's routes as the router knows them: `GET /console/patients/:patientID`.
    static func consoleRoutes(_ app: TestContext) -> Set<String> {
        Set(
            app.app.routes.all.compactMap { route in
                let path = "/" + route.path.map(\.description).joined(separator: "/")
                return path.hasPrefix("/console") ? "\(route.method.rawValue) \(path)" : nil
            })
    }

    @Test("every operation of the API document has a row, and every row an operation")
    func everyOperationHasARow() async throws {
        try await withTestApp { app in
            // setup
            let operations = try await Self.operations(app)
            let rows = Set(APIRow.all.map(\.operation))
            // verify
            #expect(operations.count > 80)
            #expect(operations.subtracting(rows).sorted() == [], "operations without a row")
            #expect(rows.subtracting(operations).sorted() == [], "rows without an operation")
        }
    }

    @Test("every console route has a row, and every row a route")
    func everyConsoleRouteHasARow() async throws {
        try await withTestApp { app in
            let routes = Self.consoleRoutes(app)
            let rows = Set(ConsoleRow.all.map(\.route))
            #expect(routes.count > 50)
            #expect(routes.subtracting(rows).sorted() == [], "routes without a row")
            #expect(rows.subtracting(routes).sorted() == [], "rows without a route")
        }
    }

    @Test(
        "every cell of every API operation answers as its row says, and shows nothing of another scope",
        arguments: APIRow.parts.indices)
    func apiCells(part: Int) async throws {
        try await withTestApp { app in
            // setup
            let world = try await AccessWorld.build(app)
            // act, verify
            try await MatrixReport.run(APIRow.parts[part], in: world, title: "API, part \(part + 1)") { row, cell in
                let request = try await row.request(cell)
                let client = (request.client ?? world.client(cell.actor)).fromNewAddress
                let reply = try await client.send(
                    request.method, request.path, json: request.json, bytes: request.bytes,
                    contentType: request.headers.contentType ?? .json, headers: request.headers)
                return (.status(reply.status.code), reply.text, true)
            }
        }
    }

    @Test(
        "every cell of every console route answers as its row says, and shows nothing of another scope",
        arguments: ConsoleRow.parts.indices)
    func consoleCells(part: Int) async throws {
        try await withTestApp { app in
            // setup
            let world = try await AccessWorld.build(app)
            let browsers = try await ConsoleBrowsers(world)
            // act, verify
            try await MatrixReport.run(
                ConsoleRow.parts[part], in: world, title: "console, part \(part + 1)"
            ) { row, cell in
                let request = try await row.request(cell)
                let browser = try await request.browser?(cell) ?? browsers[cell.actor]
                let page =
                    request.method == .GET
                    ? try await browser.get(request.path) : try await browser.post(request.path, request.form)
                let signIn = page.status == .seeOther && page.location?.hasPrefix("/console/login") == true
                return (signIn ? .login : .status(page.status.code), page.html, !(row.auditLog && cell.actor == .admin))
            }
        }
    }
}
