import Foundation
import NIOCore
import Testing
import VaporTesting

@testable import InterludeServer

/// Drives the console the way a browser does: keeps cookies, posts forms with the CSRF token of the last page.
final class ConsoleBrowser: @unchecked Sendable {
    let context: TestContext
    private var cookies: [String: String] = [:]
    private(set) var lastPage = ""
    /// The CSRF token of the last page that had forms; error pages have none.
    private(set) var csrf: String?

    init(_ context: TestContext) {
        self.context = context
    }

    struct Page {
        let status: HTTPResponseStatus
        let location: String?
        let html: String
    }

    static func value(of name: String, in html: String) -> String? {
        guard let range = html.range(of: "name=\"\(name)\" value=\"") else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }

    @discardableResult
    func get(_ path: String) async throws -> Page {
        try await send(.GET, path, form: nil)
    }

    /// Posts a form; the CSRF token of the last page is added unless `csrf` overrides it.
    @discardableResult
    func post(_ path: String, _ form: [(String, String)], csrf override: String? = nil) async throws -> Page {
        var fields = form
        if let token = override ?? csrf { fields.append(("_csrf", token)) }
        return try await send(.POST, path, form: fields)
    }

    /// Posts a form with a file, as a browser sends `multipart/form-data`; the CSRF token of the last page is added.
    @discardableResult
    func upload(_ path: String, _ form: [(String, String)], file: (field: String, name: String, content: String))
        async throws -> Page
    {
        let boundary = "interlude-test-boundary"
        var body = ""
        for (name, value) in form + (csrf.map { [("_csrf", $0)] } ?? []) {
            body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n"
        }
        body +=
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(file.field)\"; filename=\"\(file.name)\"\r\n"
            + "Content-Type: text/csv\r\n\r\n\(file.content)\r\n--\(boundary)--\r\n"
        return try await send(
            .POST, path, body: ByteBuffer(string: body),
            contentType: HTTPMediaType(type: "multipart", subType: "form-data", parameters: ["boundary": boundary]))
    }

    private func send(_ method: HTTPMethod, _ path: String, form: [(String, String)]?) async throws -> Page {
        guard let form else { return try await send(method, path, body: nil, contentType: nil) }
        TestSecrets.record(form.filter { ["email", "password", "newPassword", "token"].contains($0.0) }.map(\.1))
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let encoded = form.map {
            "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }.joined(separator: "&")
        return try await send(method, path, body: ByteBuffer(string: encoded), contentType: .urlEncodedForm)
    }

    private func send(_ method: HTTPMethod, _ path: String, body: ByteBuffer?, contentType: HTTPMediaType?)
        async throws -> Page
    {
        var headers: HTTPHeaders = ["X-Forwarded-For": "203.0.113.50"]
        if !cookies.isEmpty {
            headers.add(name: .cookie, value: cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))
        }
        if let contentType { headers.contentType = contentType }
        let response = try await context.app.testing().sendRequest(method, path, headers: headers, body: body)
        for header in response.headers[.setCookie] {
            let pair = header.split(separator: ";").first.map(String.init) ?? ""
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            if parts[1].isEmpty || header.lowercased().contains("max-age=0") || header.contains("1970") {
                cookies.removeValue(forKey: parts[0])
            } else {
                cookies[parts[0]] = parts[1]
                TestSecrets.record([parts[1]])
            }
        }
        let html = response.body.string
        if method == .GET || response.status != .seeOther { lastPage = html }
        if let token = Self.value(of: "_csrf", in: html) { csrf = token }
        return Page(status: response.status, location: response.headers.first(name: .location), html: html)
    }

    /// Signs in through the login form.
    func signIn(_ email: String, password: String = TestContext.password, code: String? = nil) async throws -> Page {
        let form = try await get("/console/login")
        #expect(form.status == .ok)
        let token = try #require(Self.value(of: "_csrf", in: form.html))
        let fields = [("email", email), ("password", password), ("next", "")] + (code.map { [("code", $0)] } ?? [])
        return try await post("/console/login", fields, csrf: token)
    }
}
