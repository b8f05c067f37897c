import Fluent
import Foundation
import InterludeCore

/// Registering the browsers and apps a person's notifications go to, and their notification choices.
struct DeviceService: Sendable {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    /// A device as the app registers it: a Web Push subscription or an APNs token.
    enum Registration: Sendable {
        case webPush(endpoint: String, p256dh: String, auth: String)
        case apns(token: String)
    }

    /// Registers (or re-registers) a device for `user`. A device another account registered moves only with proof
    /// that the request comes from it: a browser's subscription with the same secret keys, which only that browser
    /// and the server know. An APNs token has no such secret: one still registered to another account (whose app
    /// did not sign out) is not taken over, unless the push service said it is gone.
    func register(_ registration: Registration, for user: UserRecord) async throws -> DeviceRecord {
        let userID = try user.requireID()
        let (platform, address, p256dh, auth) = try Self.check(
            registration, allowLoopback: services.settings.push.allowLoopback)
        let now = self.now
        if let existing = try await DeviceRecord.query(on: database).filter(\.$address == address).first() {
            if existing.$user.id != userID, existing.disabledAt == nil {
                let proven = platform == .webpush && existing.auth == auth && existing.p256dh == p256dh
                guard proven else { throw AppError.conflict(.deviceTaken) }
            }
            existing.$user.id = userID
            existing.platform = platform
            existing.p256dh = p256dh
            existing.auth = auth
            existing.disabledAt = nil
            existing.disabledReason = nil
            existing.updatedAt = now
            try await existing.save(on: database)
            return existing
        }
        let device = DeviceRecord(
            userID: userID, platform: platform, address: address, p256dh: p256dh, auth: auth, now: now)
        do {
            try await device.create(on: database)
        } catch  where (error as? any DatabaseError)?.isConstraintFailure == true {
            // Registered at the same moment by another request: that one stands.
            guard let stored = try await DeviceRecord.query(on: database).filter(\.$address == address).first() else {
                throw error
            }
            return stored
        }
        return device
    }

    /// Every problem of a registration at once; a push endpoint must be https on a public host.
    static func check(_ registration: Registration, allowLoopback: Bool) throws(ValidationFailure)
        -> (DeviceRecord.Platform, String, String?, String?)
    {
        var validator = FieldValidator()
        switch registration {
        case .webPush(let endpoint, let p256dh, let auth):
            if !PushEndpointPolicy.accepts(endpoint, allowLoopback: allowLoopback) {
                validator.add("subscription.endpoint", .invalidValue)
            }
            if Data(base64URLEncoded: p256dh)?.count != 65 || Data(base64URLEncoded: p256dh)?.first != 4 {
                validator.add("subscription.keys.p256dh", .invalidFormat)
            }
            if Data(base64URLEncoded: auth)?.count != 16 { validator.add("subscription.keys.auth", .invalidFormat) }
            try validator.check()
            return (.webpush, endpoint, p256dh, auth)
        case .apns(let token):
            let hex = token.lowercased()
            if !(32...200).contains(hex.count) || !hex.allSatisfy(\.isHexDigit) {
                validator.add("token", .invalidFormat)
            }
            try validator.check()
            return (.apns, hex, nil, nil)
        }
    }

    func devices(of userID: UUID) async throws -> [DeviceRecord] {
        try await DeviceRecord.query(on: database).filter(\.$user.$id == userID).sort(\.$createdAt).all()
    }

    func delete(_ deviceID: UUID, of user: UserRecord) async throws {
        guard let device = try await DeviceRecord.find(deviceID, on: database), device.$user.id == user.id else {
            throw AppError.notFound
        }
        try await device.delete(on: database)
    }

    /// How a person can be reached now: active push devices per platform, and email.
    struct Reach: Sendable, Equatable {
        var webPush = 0
        var apns = 0
        var email = false

        var byPush: Bool { webPush + apns > 0 }
    }

    func reach(of user: UserRecord) async throws -> Reach {
        var reach = Reach(email: user.emailVerifiedAt != nil)
        for device in try await devices(of: user.requireID()) where device.disabledAt == nil {
            if device.platform == .apns { reach.apns += 1 } else { reach.webPush += 1 }
        }
        return reach
    }

    // MARK: Preferences

    func preferences(of userID: UUID) async throws -> NotificationPreferences {
        try await preferences(of: [userID])[userID] ?? .standard
    }

    /// The preferences of several people at once; those who never chose (or whose choice cannot be read) are not
    /// named and have the standard ones.
    func preferences(of userIDs: [UUID]) async throws -> [UUID: NotificationPreferences] {
        var found: [UUID: NotificationPreferences] = [:]
        for stored in try await NotificationPreferenceRecord.query(on: database).filter(\.$user.$id ~~ userIDs).all() {
            found[stored.$user.id] = try? JSONDecoder().decode(
                NotificationPreferences.self, from: Data(stored.preferences.utf8))
        }
        return found
    }

    func setPreferences(_ preferences: NotificationPreferences, of userID: UUID) async throws {
        try preferences.validate()
        let encoded = String(decoding: try JSONEncoder().encode(preferences), as: UTF8.self)
        if let stored = try await NotificationPreferenceRecord.query(on: database).filter(\.$user.$id == userID).first()
        {
            stored.preferences = encoded
            stored.updatedAt = now
            try await stored.save(on: database)
        } else {
            try await NotificationPreferenceRecord(userID: userID, preferences: encoded, now: now).create(on: database)
        }
    }
}
