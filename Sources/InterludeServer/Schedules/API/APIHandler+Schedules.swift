import Fluent
import Foundation
import InterludeCore
import OpenAPIRuntime

// MARK: - Plans

extension APIHandler {
    func listPlans(_ input: Operations.ListPlans.Input) async throws -> Operations.ListPlans.Output {
        let context = try APIContext.current()
        let user = try await context.user(.therapist, .researcher, .admin)
        let grant = try await context.access.require(.viewPlans, in: try pathID(input.path.studyId), by: user)
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let page = ListPage(
            of: try await context.schedules.plans(in: grant), request, moment: \.createdAt, id: { $0.id! },
            descending: false)
        return .ok(
            .init(headers: .init(nextCursor: page.next), body: .json(try page.items.map(Components.Schemas.Plan.init))))
    }

    func createPlan(_ input: Operations.CreatePlan.Input) async throws -> Operations.CreatePlan.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let user = try await context.user(.therapist, .researcher, .admin)
        let (plan, patientID) = try body.plan()
        let grant = try await context.access.require(.editPlans, in: try pathID(input.path.studyId), by: user)
        let record = try await context.schedules.create(plan, in: grant, patientID: patientID, arm: body.arm)
        return .created(.init(body: .json(try .init(record))))
    }

    func updatePlan(_ input: Operations.UpdatePlan.Input) async throws -> Operations.UpdatePlan.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let user = try await context.user(.therapist, .researcher, .admin)
        let (plan, patientID) = try body.plan()
        let existing = try await context.schedules.plan(try pathID(input.path.planId))
        let grant = try await context.access.require(.editPlans, in: existing.$study.id, by: user)
        let record = try await context.schedules.update(
            existing, with: plan, in: grant, patientID: patientID, arm: body.arm)
        return .ok(.init(body: .json(try .init(record))))
    }

    func deletePlan(_ input: Operations.DeletePlan.Input) async throws -> Operations.DeletePlan.Output {
        let context = try APIContext.current()
        let user = try await context.user(.therapist, .researcher, .admin)
        let existing = try await context.schedules.plan(try pathID(input.path.planId))
        let grant = try await context.access.require(.editPlans, in: existing.$study.id, by: user)
        try await context.schedules.delete(existing, in: grant)
        return .noContent
    }

    func deactivatePlan(_ input: Operations.DeactivatePlan.Input) async throws -> Operations.DeactivatePlan.Output {
        .ok(.init(body: .json(try await setPlanActive(false, input.path.planId))))
    }

    func reactivatePlan(_ input: Operations.ReactivatePlan.Input) async throws -> Operations.ReactivatePlan.Output {
        .ok(.init(body: .json(try await setPlanActive(true, input.path.planId))))
    }

    private func setPlanActive(_ active: Bool, _ rawPlanID: String) async throws -> Components.Schemas.Plan {
        let context = try APIContext.current()
        let user = try await context.user(.therapist, .researcher, .admin)
        let existing = try await context.schedules.plan(try pathID(rawPlanID))
        let grant = try await context.access.require(.editPlans, in: existing.$study.id, by: user)
        return try .init(try await context.schedules.setActive(active, existing, in: grant))
    }

    func previewSchedule(_ input: Operations.PreviewSchedule.Input) async throws -> Operations.PreviewSchedule.Output {
        let context = try APIContext.current()
        let user = try await context.user(.therapist, .researcher, .admin)
        let patientID = try pathID(input.path.patientId)
        guard let from = LocalDate(input.query.from) else { throw AppError.field("from", .invalidFormat) }
        guard let days = ScheduleSpan.days(input.query.days) else {
            throw AppError.field("days", .outOfRange, limit: ScheduleSpan.maximumDays)
        }
        var zone = TimeZone.gmt
        var planned: [ScheduleService.Planned] = []
        for chart in try await PatientChart.charts(
            of: patientID, for: user, database: context.database, services: context.services)
        {
            let schedule = try await chart.schedule(from: from, days: days)
            zone = schedule.0
            planned += schedule.1
        }
        planned.sort { $0.occurrence.opensAt < $1.occurrence.opensAt }
        return .ok(
            .init(
                body: .json(
                    planned.map { item in
                        .init(
                            planId: item.plan.id!.lowercasedText, instrumentKey: item.plan.instrumentKey,
                            opensAt: item.occurrence.opensAt, closesAt: item.occurrence.closesAt,
                            timeZone: zone.identifier,
                            localOpensAt: LocalDateTime(item.occurrence.opensAt, in: zone).description,
                            localClosesAt: LocalDateTime(item.occurrence.closesAt, in: zone).description)
                    })))
    }
}

// MARK: - Appointments

extension APIHandler {
    func listPatientAppointments(_ input: Operations.ListPatientAppointments.Input) async throws
        -> Operations.ListPatientAppointments.Output
    {
        let context = try APIContext.current()
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let appointments = try await context.chart(of: input.path.patientId).appointments(includePast: true)
        let page = ListPage(of: appointments, request, descending: false)
        return .ok(
            .init(
                headers: .init(nextCursor: page.next), body: .json(page.items.map(Components.Schemas.Appointment.init)))
        )
    }

    func createPatientAppointment(_ input: Operations.CreatePatientAppointment.Input) async throws
        -> Operations.CreatePatientAppointment.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let shown = try await context.chart(of: input.path.patientId).addAppointment(
            title: body.title, startsAt: body.startsAt, endsAt: body.endsAt, comment: body.comment,
            id: try clientID(body.id))
        return .created(.init(body: .json(.init(shown))))
    }

    func listMyAppointments(_ input: Operations.ListMyAppointments.Input) async throws
        -> Operations.ListMyAppointments.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let appointments = try await context.appointments.appointments(
            of: patient.requireID(), includePast: input.query.includePast ?? false)
        let page = ListPage(of: appointments, request, descending: false)
        return .ok(
            .init(
                headers: .init(nextCursor: page.next), body: .json(page.items.map(Components.Schemas.Appointment.init)))
        )
    }

    func createMyAppointment(_ input: Operations.CreateMyAppointment.Input) async throws
        -> Operations.CreateMyAppointment.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        let shown = try await context.appointments.create(
            for: patient, by: patient, title: body.title, startsAt: body.startsAt, endsAt: body.endsAt,
            comment: body.comment, id: try clientID(body.id))
        return .created(.init(body: .json(.init(shown))))
    }

    func updateMyAppointment(_ input: Operations.UpdateMyAppointment.Input) async throws
        -> Operations.UpdateMyAppointment.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        let shown = try await context.appointments.update(
            try pathID(input.path.appointmentId), of: patient, baseVersion: body.baseVersion, title: body.title,
            startsAt: body.startsAt, endsAt: body.endsAt, comment: body.comment)
        return .ok(.init(body: .json(.init(shown))))
    }

    func deleteMyAppointment(_ input: Operations.DeleteMyAppointment.Input) async throws
        -> Operations.DeleteMyAppointment.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        try await context.appointments.delete(try pathID(input.path.appointmentId), of: patient)
        return .noContent
    }

    func requestMyAppointmentChange(_ input: Operations.RequestMyAppointmentChange.Input) async throws
        -> Operations.RequestMyAppointmentChange.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        let shown = try await context.appointments.request(
            try pathID(input.path.appointmentId), of: patient, kind: AppointmentRequestKind(body.kind),
            startsAt: body.startsAt, endsAt: body.endsAt, note: body.note)
        return .ok(.init(body: .json(.init(shown))))
    }

    func withdrawMyAppointmentRequest(_ input: Operations.WithdrawMyAppointmentRequest.Input) async throws
        -> Operations.WithdrawMyAppointmentRequest.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        try await context.appointments.withdrawRequest(try pathID(input.path.appointmentId), of: patient)
        return .noContent
    }

    func cancelPatientAppointment(_ input: Operations.CancelPatientAppointment.Input) async throws
        -> Operations.CancelPatientAppointment.Output
    {
        let context = try APIContext.current()
        try await context.chart(of: input.path.patientId).cancelAppointment(try pathID(input.path.appointmentId))
        return .noContent
    }

    func decidePatientAppointmentRequest(_ input: Operations.DecidePatientAppointmentRequest.Input) async throws
        -> Operations.DecidePatientAppointmentRequest.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        try await context.chart(of: input.path.patientId).decideAppointmentRequest(
            try pathID(input.path.appointmentId), grant: body.grant, baseVersion: body.baseVersion)
        return .noContent
    }

    func getMyCalendarFeed(_ input: Operations.GetMyCalendarFeed.Input) async throws
        -> Operations.GetMyCalendarFeed.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        return .ok(.init(body: .json(.init(url: try await context.appointments.feedURL(for: patient)))))
    }

    func revokeMyCalendarFeed(_ input: Operations.RevokeMyCalendarFeed.Input) async throws
        -> Operations.RevokeMyCalendarFeed.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        try await context.appointments.revokeFeed(for: patient)
        return .noContent
    }
}

// MARK: - The participant's own schedule

extension APIHandler {
    func listMyPlanAdjustments(_ input: Operations.ListMyPlanAdjustments.Input) async throws
        -> Operations.ListMyPlanAdjustments.Output
    {
        let context = try APIContext.current()
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let patient = try await context.user(.patient)
        let page = ListPage(
            of: try await context.schedules.adjustablePlans(for: patient.requireID()), request,
            moment: \.plan.createdAt,
            id: { $0.plan.id! }, descending: false)
        return .ok(
            .init(headers: .init(nextCursor: page.next), body: .json(try await context.adjustableBodies(page.items))))
    }

    func setMyPlanAdjustment(_ input: Operations.SetMyPlanAdjustment.Input) async throws
        -> Operations.SetMyPlanAdjustment.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        let adjustment: PlanAdjustment? = try body.adjustment.map { value in
            do {
                return try JSONDecoder().decode(PlanAdjustment.self, from: JSONEncoder().encode(value))
            } catch let error as DecodingError {
                throw ProblemMiddleware.map(error)
            }
        }
        let result = try await context.schedules.adjust(
            planID: try pathID(body.planId), patientID: patient.requireID(), to: adjustment)
        return .ok(.init(body: .json(try await context.adjustableBodies([result])[0])))
    }

    func listMyOnDemandPlans(_ input: Operations.ListMyOnDemandPlans.Input) async throws
        -> Operations.ListMyOnDemandPlans.Output
    {
        let context = try APIContext.current()
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let patient = try await context.user(.patient)
        let page = ListPage(
            of: try await context.schedules.onDemandPlans(for: patient.requireID()), request, moment: \.plan.createdAt,
            id: { $0.plan.id! }, descending: false)
        var bodies: [Components.Schemas.OnDemandPlan] = []
        for item in page.items {
            bodies.append(
                .init(
                    planId: try item.plan.requireID().lowercasedText, instrumentKey: item.definition.instrumentKey,
                    title: try await context.instrumentTitle(item.definition.instrumentKey),
                    durationMinutes: item.definition.durationMinutes))
        }
        return .ok(.init(headers: .init(nextCursor: page.next), body: .json(bodies)))
    }

    func startOnDemandPrompt(_ input: Operations.StartOnDemandPrompt.Input) async throws
        -> Operations.StartOnDemandPrompt.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        guard let planID = UUID(uuidString: body.planId) else { throw AppError.field("planId", .invalidFormat) }
        let prompt = try await context.schedules.startOnDemand(planID: planID, patientID: patient.requireID())
        return .created(.init(body: .json(try await context.promptBodies([context.prompts.current(prompt)])[0])))
    }
}

extension APIContext {
    var schedules: ScheduleService { ScheduleService(database: database, services: services) }
    var appointments: AppointmentService { AppointmentService(database: database, services: services) }

    /// An instrument's title in the request's language, or its key when it has none published.
    func instrumentTitle(_ key: String) async throws -> String {
        try await catalog.title(of: key, in: request.language)
    }

    func adjustableBodies(_ plans: [ScheduleService.ParticipantPlan]) async throws
        -> [Components.Schemas.AdjustablePlan]
    {
        var result: [Components.Schemas.AdjustablePlan] = []
        for item in plans {
            let title = try await instrumentTitle(item.definition.instrumentKey)
            let encoder = JSONEncoder()
            result.append(
                .init(
                    planId: item.plan.id!.lowercasedText, instrumentKey: item.definition.instrumentKey,
                    title: title, studyKind: item.kind == .practice ? .practice : .research,
                    bounds: try JSONDecoder().decode(
                        Components.Schemas.AdjustmentBounds.self, from: encoder.encode(item.definition.adjustment)),
                    pattern: try JSONDecoder().decode(
                        Components.Schemas.PlanPattern.self, from: encoder.encode(item.definition.pattern)),
                    durationMinutes: item.definition.durationMinutes,
                    adjustment: try item.adjustment.map {
                        try JSONDecoder().decode(Components.Schemas.PlanAdjustmentValue.self, from: encoder.encode($0))
                    }))
        }
        return result
    }
}

extension Components.Schemas.PlanInput {
    /// The plan in it, read the way Interlude stores plans; a malformed part is named by its place.
    func plan() throws -> (SchedulePlan, UUID?) {
        var patientID: UUID?
        if let patientId {
            guard let id = UUID(uuidString: patientId) else { throw AppError.field("patientId", .invalidFormat) }
            patientID = id
        }
        do {
            return (try JSONDecoder().decode(SchedulePlan.self, from: JSONEncoder().encode(self)), patientID)
        } catch let error as DecodingError {
            throw ProblemMiddleware.map(error)
        }
    }
}

extension Components.Schemas.Plan {
    init(_ record: PlanRecord) throws {
        var object = try JSONSerialization.jsonObject(with: Data(record.definition.utf8)) as? [String: Any] ?? [:]
        object["id"] = record.id!.lowercasedText
        object["studyId"] = record.$study.id.lowercasedText
        object["patientId"] = record.$patient.id?.lowercasedText
        object["arm"] = record.arm
        object["createdAt"] = ISO8601DateFormatter().string(from: record.createdAt)
        object["deactivatedAt"] = record.deactivatedAt.map { ISO8601DateFormatter().string(from: $0) }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        self = try decoder.decode(Self.self, from: JSONSerialization.data(withJSONObject: object))
    }
}

extension Components.Schemas.Appointment {
    init(_ shown: AppointmentService.Shown) {
        self.init(
            id: shown.id.lowercasedText, title: shown.title, startsAt: shown.startsAt, endsAt: shown.endsAt,
            comment: shown.comment, timeZone: shown.timeZone, version: shown.version,
            bookedBy: shown.bookedByTherapist ? .therapist : .patient,
            request: shown.request.map { request in
                .init(
                    kind: .init(request.kind), startsAt: request.startsAt, endsAt: request.endsAt, note: request.note,
                    requestedAt: request.requestedAt)
            })
    }
}

extension AppointmentRequestKind {
    init(_ kind: Components.Schemas.AppointmentRequestInput.KindPayload) {
        switch kind {
        case .move: self = .move
        case .cancel: self = .cancel
        }
    }
}

extension Components.Schemas.AppointmentRequest.KindPayload {
    init(_ kind: AppointmentRequestKind) {
        switch kind {
        case .move: self = .move
        case .cancel: self = .cancel
        }
    }
}
