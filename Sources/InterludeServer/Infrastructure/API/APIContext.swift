import Fluent
import Foundation
import InterludeCore
import InterludeSQLite
import Vapor

/// What an API handler needs from the request it serves: the database, the services, the caller.
struct APIContext: Sendable {
    let request: Request
    /// Looked up once: each service a handler asks for is built on them.
    let database: any Database
    let services: AppServices

    init(request: Request) {
        self.request = request
        database = request.db
        services = request.services
    }

    static func current() throws -> APIContext {
        APIContext(request: try CurrentRequest.get())
    }

    var now: Date { services.clock.now }

    /// The client, for rate limits; never stored in clear.
    var client: RateLimiter.Subject { .client(request.clientAddress(trustedProxies: services.settings.trustedProxies)) }

    /// The signed-in caller. A staff member who still has to replace a one-time password may only do that.
    func authenticated(allowPendingPasswordChange: Bool = false) async throws -> SessionService.Authenticated {
        guard let bearer = request.headers.bearerAuthorization?.token,
            let authenticated = try await SessionService(database: database, services: services)
                .authenticate(token: bearer, kind: .api)
        else { throw AppError.unauthenticated }
        if authenticated.user.mustChangePassword && !allowPendingPasswordChange {
            throw AppError.forbidden(.passwordChangeRequired)
        }
        return authenticated
    }

    /// The signed-in caller, who must hold one of `roles`.
    func user(_ roles: Role...) async throws -> UserRecord {
        let user = try await authenticated().user
        guard roles.contains(user.role) else { throw AppError.forbidden(.notAllowed) }
        return user
    }

    var access: StudyAccess { StudyAccess(database: database, services: services) }

    /// The signed-in therapist's chart of the patient named in the path.
    func chart(of rawPatientID: String) async throws -> PatientChart {
        let therapist = try await user(.therapist)
        return try await PatientChart.open(
            try pathID(rawPatientID), for: therapist, database: database, services: services)
    }

    /// A staff member's chart of the patient named in the path, in one study.
    func chart(of rawPatientID: String, in studyID: UUID) async throws -> PatientChart {
        let staff = try await user(.therapist, .researcher, .admin)
        let grant = try await access.require(.readParticipantData, in: studyID, by: staff)
        return try await PatientChart.open(try pathID(rawPatientID), in: grant, database: database, services: services)
    }
}

extension Request {
    /// The address of the client: the socket peer, or behind trusted proxies the right-most `X-Forwarded-For`
    /// entry they did not write themselves.
    func clientAddress(trustedProxies: Int) -> String {
        ForwardedFor.client(
            headers: headers[.xForwardedFor], peer: remoteAddress?.ipAddress, trustedProxies: trustedProxies)
    }
}

/// Reads an id from a path; a malformed one names nothing that exists.
func pathID(_ raw: String) throws -> UUID {
    guard let id = UUIDText.parse(raw) else { throw AppError.notFound }
    return id
}

/// Reads an id an app chose for what it creates; a malformed one is refused naming `field`.
func clientID(_ raw: String?, field: String = "id") throws -> UUID? {
    guard let raw else { return nil }
    guard let id = UUID(uuidString: raw) else { throw AppError.field(field, .invalidFormat) }
    return id
}

/// Checks documented maximum lengths before anything else looks at the values.
func checkLimits(_ limits: [(value: String?, field: String, maxLength: Int)]) throws {
    var validator = FieldValidator()
    for limit in limits { validator.limit(limit.value, field: limit.field, maxLength: limit.maxLength) }
    try validator.check()
}
