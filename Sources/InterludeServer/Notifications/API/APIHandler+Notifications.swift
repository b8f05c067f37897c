import Foundation
import InterludeCore
import OpenAPIRuntime

extension APIHandler {
    func listMyDevices(_ input: Operations.ListMyDevices.Input) async throws -> Operations.ListMyDevices.Output {
        let context = try APIContext.current()
        let user = try await context.authenticated().user
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let devices = try await context.devices.devices(of: user.requireID())
        let page = ListPage(of: devices, request, moment: \.createdAt, id: { $0.id! }, descending: false)
        return .ok(
            .init(
                headers: .init(nextCursor: page.next), body: .json(try page.items.map(Components.Schemas.Device.init))))
    }

    func registerMyDevice(_ input: Operations.RegisterMyDevice.Input) async throws -> Operations.RegisterMyDevice.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let user = try await context.authenticated().user
        let registration: DeviceService.Registration
        switch body.platform {
        case .webpush:
            guard let subscription = body.subscription else { throw AppError.field("subscription", .required) }
            registration = .webPush(
                endpoint: subscription.endpoint, p256dh: subscription.keys.p256dh, auth: subscription.keys.auth)
        case .apns:
            guard let token = body.token else { throw AppError.field("token", .required) }
            registration = .apns(token: token)
        }
        let device = try await context.devices.register(registration, for: user)
        return .created(.init(body: .json(try .init(device))))
    }

    func deleteMyDevice(_ input: Operations.DeleteMyDevice.Input) async throws -> Operations.DeleteMyDevice.Output {
        let context = try APIContext.current()
        let user = try await context.authenticated().user
        try await context.devices.delete(try pathID(input.path.deviceId), of: user)
        return .noContent
    }

    func getMyNotificationPreferences(_ input: Operations.GetMyNotificationPreferences.Input) async throws
        -> Operations.GetMyNotificationPreferences.Output
    {
        let context = try APIContext.current()
        let user = try await context.authenticated().user
        return .ok(.init(body: .json(.init(try await context.devices.preferences(of: user.requireID())))))
    }

    func setMyNotificationPreferences(_ input: Operations.SetMyNotificationPreferences.Input) async throws
        -> Operations.SetMyNotificationPreferences.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let user = try await context.authenticated().user
        let preferences = try NotificationPreferences(body)
        try await context.devices.setPreferences(preferences, of: user.requireID())
        return .ok(.init(body: .json(.init(preferences))))
    }

    func listPatientNotifications(_ input: Operations.ListPatientNotifications.Input) async throws
        -> Operations.ListPatientNotifications.Output
    {
        let context = try APIContext.current()
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let (reach, sent) = try await context.chart(of: input.path.patientId).notifications()
        let page = ListPage(of: sent, request)
        return .ok(
            .init(
                headers: .init(nextCursor: page.next),
                body: .json(
                    .init(
                        reachableByPush: reach.byPush, reachableByEmail: reach.email,
                        devices: reach.webPush + reach.apns,
                        notifications: try page.items.map(Components.Schemas.SentNotification.init)))))
    }

    func getPushPublicKey(_ input: Operations.GetPushPublicKey.Input) async throws -> Operations.GetPushPublicKey.Output
    {
        let context = try APIContext.current()
        return .ok(.init(body: .json(.init(publicKey: context.request.notificationChannels.vapidPublicKey))))
    }

    func recordNotificationClick(_ input: Operations.RecordNotificationClick.Input) async throws
        -> Operations.RecordNotificationClick.Output
    {
        let context = try APIContext.current()
        try await NotificationHistory(database: context.database, services: context.services)
            .recordClick(try pathID(input.path.notificationId), key: input.query.key)
        return .noContent
    }
}

extension APIContext {
    var devices: DeviceService { DeviceService(database: database, services: services) }
}

extension Components.Schemas.Device {
    init(_ record: DeviceRecord) throws {
        self.init(
            id: try record.requireID().lowercasedText,
            platform: .init(rawValue: record.platform.rawValue) ?? .webpush, createdAt: record.createdAt,
            active: record.disabledAt == nil)
    }
}

extension Components.Schemas.NotificationPreferences {
    init(_ preferences: NotificationPreferences) {
        self.init(
            questionnaires: preferences.questionnaires, interventions: preferences.interventions,
            appointments: preferences.appointments, messages: preferences.messages,
            quietHours: preferences.quietHours.map { .init(start: $0.start.description, end: $0.end.description) },
            messageEmails: .init(rawValue: preferences.messageEmails.rawValue))
    }
}

extension NotificationPreferences {
    init(_ body: Components.Schemas.NotificationPreferences) throws(ValidationFailure) {
        var quiet: QuietHours?
        if let hours = body.quietHours {
            var validator = FieldValidator()
            let start = LocalTime(hours.start)
            let end = LocalTime(hours.end)
            if start == nil { validator.add("quietHours.start", .invalidFormat) }
            if end == nil { validator.add("quietHours.end", .invalidFormat) }
            try validator.check()
            quiet = QuietHours(start: start!, end: end!)
        }
        self.init(
            questionnaires: body.questionnaires, interventions: body.interventions, appointments: body.appointments,
            messages: body.messages, quietHours: quiet,
            messageEmails: body.messageEmails.flatMap { MessageEmails(rawValue: $0.rawValue) } ?? .daily)
    }
}

extension Components.Schemas.SentNotification {
    init(_ record: NotificationRecord) throws {
        self.init(
            id: try record.requireID().lowercasedText, category: .init(rawValue: record.category.rawValue) ?? .messages,
            title: record.title, dueAt: record.dueAt, status: .init(rawValue: record.status.rawValue) ?? .queued,
            channel: record.channel, receipt: record.receipt, attempts: record.attempts, sentAt: record.sentAt,
            clickedAt: record.clickedAt)
    }
}
