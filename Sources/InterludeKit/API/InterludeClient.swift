import Foundation
import HTTPTypes
import InterludeCore
import OpenAPIRuntime

#if canImport(OpenAPIURLSession)
    import OpenAPIURLSession
#elseif canImport(OpenAPIAsyncHTTPClient)
    import OpenAPIAsyncHTTPClient
#endif

/// The Interlude API for a patient's app: signing in, joining a study or pairing with a therapist, prompts and
/// answers, and the two halves of sync. Every call goes through the client generated from `openapi.yaml`; this type
/// speaks in the SDK's own types and throws a `Problem` when the server refuses.
public final class InterludeClient: Sendable {
    let api: Client
    let session: SessionToken

    /// `serverURL` is the installation's address (`https://interlude.example.org`); the API lives under `/api/v1`.
    /// Without a `transport` the platform's own is used: URLSession on Apple platforms, AsyncHTTPClient elsewhere.
    /// `middlewares` see every request after the session's token is added (logging, a proxy's headers).
    public init(
        serverURL: URL, token: String? = nil, transport: (any ClientTransport)? = nil,
        middlewares: [any ClientMiddleware] = []
    ) {
        session = SessionToken(token)
        api = Client(
            serverURL: serverURL.appendingPathComponent("api/v1"), transport: transport ?? Self.platformTransport,
            middlewares: [BearerToken(session: session)] + middlewares)
    }

    static var platformTransport: any ClientTransport {
        #if canImport(OpenAPIURLSession)
            URLSessionTransport()
        #else
            AsyncHTTPClientTransport()
        #endif
    }

    /// The bearer token in use, for the app to keep in the keychain between launches.
    public var token: String? {
        get async { await session.token }
    }

    // MARK: Account

    /// Registers a patient account; a verification email goes to the address.
    public func register(
        email: String, password: String, privacyPolicyVersion: String, shareWithResearch: Bool, locale: String,
        timeZone: String
    ) async throws {
        guard let locale = Components.Schemas.Locale(rawValue: locale) else {
            throw Problem(
                type: "/problems/validation", title: "Unsupported language", status: 422,
                fields: [.init(field: "locale", code: "invalidValue", detail: locale)])
        }
        let body = Components.Schemas.Registration(
            email: email, password: password, privacyPolicyVersion: privacyPolicyVersion,
            shareWithResearch: shareWithResearch,
            locale: locale, timeZone: timeZone)
        switch try await api.register(body: .json(body)) {
        case .created: return
        case .default(let status, let problem): throw Problem(status, problem)
        }
    }

    /// Confirms the address with the token from the verification email's link.
    public func verifyEmail(token: String) async throws {
        switch try await api.verifyEmail(body: .json(.init(token: token))) {
        case .ok: return
        case .default(let status, let problem): throw Problem(status, problem)
        }
    }

    /// Signs in and keeps the session's token for every later call.
    @discardableResult
    public func signIn(email: String, password: String) async throws -> Account {
        switch try await api.login(body: .json(.init(email: email, password: password))) {
        case .created(let created):
            let session = try created.body.json
            await self.session.set(session.token)
            return try Account(session.user)
        case .default(let status, let problem): throw Problem(status, problem)
        }
    }

    /// Ends the session on the server and forgets the token.
    public func signOut() async throws {
        let output: Operations.Logout.Output
        do {
            output = try await api.logout()
        } catch {
            await session.set(nil)
            throw error
        }
        await session.set(nil)
        switch output {
        case .noContent: return
        case .default(let status, let problem): throw Problem(status, problem)
        }
    }

    /// The signed-in account.
    public func account() async throws -> Account {
        switch try await api.getMe() {
        case .ok(let ok): return try Account(try ok.body.json)
        case .default(let status, let problem): throw Problem(status, problem)
        }
    }

    /// Pairs with a therapist by the 8-digit code they gave.
    public func pair(code: String, dateOfBirth: String, gender: String) async throws {
        let body = Components.Schemas.PairingRedemption(code: code, dateOfBirth: dateOfBirth, gender: gender)
        switch try await api.redeemPairingCode(body: .json(body)) {
        case .created: return
        case .default(let status, let problem): throw Problem(status, problem)
        }
    }

    /// Joins a study, accepting its consent version with the optional modules granted (true) or declined.
    public func join(study: UUID, consentVersion: String, modules: [String: Bool] = [:]) async throws {
        let body = Components.Schemas.JoinRequest(
            consentVersion: consentVersion, modules: modules.isEmpty ? nil : .init(additionalProperties: modules))
        switch try await api.joinStudy(path: .init(studyId: study.uuidString.lowercased()), body: .json(body)) {
        case .created: return
        case .default(let status, let problem): throw Problem(status, problem)
        }
    }

    // MARK: Questionnaires

    /// The person's open prompts, by deadline (every page).
    public func prompts() async throws -> [Prompt] {
        var prompts: [Prompt] = []
        var cursor: String?
        repeat {
            switch try await api.listMyPrompts(query: .init(status: .open, cursor: cursor, limit: 200)) {
            case .ok(let ok):
                prompts += try ok.body.json.map { try Wire.reshape($0, as: Prompt.self) }
                cursor = ok.headers.nextCursor
            case .default(let status, let problem): throw Problem(status, problem)
            }
        } while cursor != nil
        return prompts
    }

    /// One prompt with the questionnaire to show for it and, where answers call for help at once, the crisis support.
    public func prompt(_ id: UUID) async throws -> PromptDetail {
        switch try await api.getMyPrompt(path: .init(promptId: id.uuidString.lowercased())) {
        case .ok(let ok):
            let body = try ok.body.json
            return PromptDetail(
                prompt: try Wire.reshape(body.prompt, as: Prompt.self), definition: body.definition,
                crisis: try body.crisis.map { try Wire.reshape($0, as: CrisisSupport.self) },
                contextGranted: body.contextGranted ?? false)
        case .default(let status, let problem): throw Problem(status, problem)
        }
    }

    /// Sends a response at once (online). Sending the same response again is harmless: its id makes it one.
    public func submit(_ response: ResponseSubmission) async throws {
        switch try await api.submitResponse(
            body: .json(try Wire.reshape(response, as: Components.Schemas.ResponseSubmission.self)))
        {
        case .created, .ok: return
        case .default(let status, let problem): throw Problem(status, problem)
        }
    }

    // MARK: Samples

    /// The sample types the person's studies ask for.
    public func sampleTypes() async throws -> [SampleTypeChoice] {
        switch try await api.listMySampleTypes() {
        case .ok(let ok):
            return try ok.body.json.map {
                SampleTypeChoice(type: $0._type, unit: $0.unit, purposes: $0.purposes, enabled: $0.enabled)
            }
        case .default(let status, let problem): throw Problem(status, problem)
        }
    }

    /// Allows (or stops, deleting those on the server) one sample type.
    public func setSampleType(_ type: String, enabled: Bool) async throws {
        switch try await api.setMySampleType(path: .init(_type: type), body: .json(.init(enabled: enabled))) {
        case .ok: return
        case .default(let status, let problem): throw Problem(status, problem)
        }
    }

    /// Uploads samples; those sent before (by source id) change nothing. Answers how many were stored now, were
    /// there already, and were refused.
    public func upload(_ samples: [Sample]) async throws -> (stored: Int, duplicates: Int, refused: Int) {
        let iso = ISO8601DateFormatter()
        let batch = Components.Schemas.SampleBatch(
            samples: samples.map {
                .init(
                    _type: $0.type, value: $0.value, unit: $0.unit, startsAt: iso.string(from: $0.startsAt),
                    endsAt: iso.string(from: $0.endsAt),
                    sourceId: $0.sourceID)
            })
        switch try await api.uploadMySamples(body: .json(batch)) {
        case .ok(let ok):
            let result = try ok.body.json
            return (result.stored, result.duplicates, result.rejected.count)
        case .default(let status, let problem): throw Problem(status, problem)
        }
    }

    // MARK: Sync

    /// The answer to a pull: nothing changed since the ETag sent, or the changes with the next cursor and ETag.
    public enum PullResult: Sendable {
        case notModified
        case changes(ServerChanges, etag: String)
    }

    /// What changed since `cursor` (everything without one); `etag` from the last answer makes an unchanged state
    /// cost one small reply.
    public func pull(since cursor: String?, etag: String?) async throws -> PullResult {
        switch try await api.pullChanges(query: .init(since: cursor), headers: .init(ifNoneMatch: etag)) {
        case .ok(let ok): return .changes(try ServerChanges(try ok.body.json), etag: ok.headers.eTag)
        case .notModified: return .notModified
        case .default(let status, let problem): throw Problem(status, problem)
        }
    }

    /// Sends changes made on the device, in order, each under its own id; one outcome per change.
    public func push(_ changes: [(id: UUID, change: Change)]) async throws -> [ChangeOutcome] {
        let batch = Components.Schemas.SyncBatch(mutations: try changes.map { try Wire.mutation($0.id, $0.change) })
        switch try await api.pushChanges(body: .json(batch)) {
        case .ok(let ok):
            let results = try ok.body.json.results
            guard results.count == changes.count else {
                throw Problem(
                    type: "/problems/sync", title: "The server answered a different number of changes", status: 502)
            }
            return try zip(changes, results).map { try Wire.outcome($1, for: $0.change, id: $0.id) }
        case .default(let status, let problem): throw Problem(status, problem)
        }
    }
}

/// The session's bearer token, shared by the client's requests.
actor SessionToken {
    private(set) var token: String?

    init(_ token: String?) {
        self.token = token
    }

    func set(_ token: String?) {
        self.token = token
    }
}

/// Adds the session's token to every request that has one.
struct BearerToken: ClientMiddleware {
    let session: SessionToken

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let token = await session.token {
            request.headerFields[.authorization] = "Bearer \(token)"
        }
        return try await next(request, body, baseURL)
    }
}
