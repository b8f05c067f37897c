import Fluent
import Foundation
import InterludeCore

// MARK: - Pairing and caseload

extension APIHandler {
    func redeemPairingCode(_ input: Operations.RedeemPairingCode.Input) async throws
        -> Operations.RedeemPairingCode.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        try checkLimits([(body.code, "code", 20), (body.dateOfBirth, "dateOfBirth", 10), (body.gender, "gender", 20)])
        let today = LocalDate(context.now, in: TimeZone(identifier: patient.timeZone) ?? .gmt)
        let request = try PairingRequest.validate(
            code: body.code, dateOfBirth: body.dateOfBirth, gender: body.gender, today: today)
        let paired = try await context.pairing.redeem(patient: patient, request: request, client: context.client)
        let (profile, therapist) = try await TherapistProfiles(database: context.database).profile(
            of: paired.therapistID)
        return .created(
            .init(
                body: .json(
                    .init(
                        pseudonym: paired.profile.pseudonym, pairedSince: paired.enrollment.createdAt,
                        therapist: try .init(profile, user: therapist)))))
    }

    func getMyTherapist(_ input: Operations.GetMyTherapist.Input) async throws -> Operations.GetMyTherapist.Output {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        guard
            let contact = try await TherapistProfiles(database: context.database).contact(
                ofTherapistOf: patient.requireID())
        else { throw AppError.notFound }
        return .ok(.init(body: .json(.init(contact))))
    }

    func listMyTreatments(_ input: Operations.ListMyTreatments.Input) async throws -> Operations.ListMyTreatments.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let treatments = try await PatientTreatments(database: context.database, services: context.services)
            .list(of: patient.requireID())
        let page = ListPage(of: treatments, request, moment: \.enrollment.createdAt, id: { $0.enrollment.id! })
        return .ok(
            .init(
                headers: .init(nextCursor: page.next),
                body: .json(try page.items.map(Components.Schemas.Treatment.init))))
    }

    func endFormerTherapistAccess(_ input: Operations.EndFormerTherapistAccess.Input) async throws
        -> Operations.EndFormerTherapistAccess.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        try await PatientTreatments(database: context.database, services: context.services)
            .endAccess(try pathID(input.path.treatmentId), of: patient.requireID())
        return .noContent(.init())
    }

    func getOwnTherapistProfile(_ input: Operations.GetOwnTherapistProfile.Input) async throws
        -> Operations.GetOwnTherapistProfile.Output
    {
        let context = try APIContext.current()
        let therapist = try await context.user(.therapist)
        let (profile, user) = try await TherapistProfiles(database: context.database)
            .profile(of: therapist.requireID())
        return .ok(.init(body: .json(try .init(profile, user: user))))
    }

    func updateOwnTherapistProfile(_ input: Operations.UpdateOwnTherapistProfile.Input) async throws
        -> Operations.UpdateOwnTherapistProfile.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let therapist = try await context.user(.therapist)
        let (profile, user) = try await TherapistProfiles(database: context.database).update(
            therapistID: therapist.requireID(), fullName: body.fullName, gender: body.gender,
            officeAddress: body.officeAddress, phone: body.phone, emergencyNumber: body.emergencyNumber)
        return .ok(.init(body: .json(try .init(profile, user: user))))
    }

    func listPairingCodes(_ input: Operations.ListPairingCodes.Input) async throws
        -> Operations.ListPairingCodes.Output
    {
        let context = try APIContext.current()
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let therapist = try await context.user(.therapist)
        let page = ListPage(
            of: try await context.pairing.codes(of: therapist), request, moment: \.createdAt, id: { $0.id! })
        return .ok(
            .init(
                headers: .init(nextCursor: page.next),
                body: .json(try page.items.map { try .init($0, now: context.now) })))
    }

    func createPairingCodes(_ input: Operations.CreatePairingCodes.Input) async throws
        -> Operations.CreatePairingCodes.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let therapist = try await context.user(.therapist)
        let codes = try await context.pairing.createCodes(therapist: therapist, note: body.note, count: body.count ?? 1)
        return .created(.init(body: .json(try codes.map { try .init($0, now: context.now) })))
    }

    func listPatients(_ input: Operations.ListPatients.Input) async throws -> Operations.ListPatients.Output {
        let context = try APIContext.current()
        let q = input.query
        let page = try PageRequest(cursor: q.cursor, limit: q.limit)
        let query = try CaseloadQuery.validate(
            q: q.q, status: q.status, from: q.from, to: q.to, sort: q.sort, order: q.order)
        let therapist = try await context.user(.therapist)
        let rows = try await CaseloadView.read(
            for: therapist, query: query, page: page, database: context.database, services: context.services)
        return .ok(
            .init(
                headers: .init(nextCursor: rows.next),
                body: .json(
                    try rows.items.map {
                        try Components.Schemas.CaseloadPatient($0.entry, lastActivityAt: $0.facts.lastActivityAt)
                    })))
    }

    func updatePatient(_ input: Operations.UpdatePatient.Input) async throws -> Operations.UpdatePatient.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        try checkLimits([
            (body.displayName, "displayName", TreatmentUpdate.displayNameMaxLength),
            (body.therapyStart, "therapyStart", 10),
            (body.therapyEnd, "therapyEnd", 10), (body.status, "status", 20),
        ])
        let chart = try await context.chart(of: input.path.patientId)
        let update = try TreatmentUpdate.validate(
            displayName: body.displayName, therapyStart: body.therapyStart, therapyEnd: body.therapyEnd,
            status: body.status,
            current: (
                chart.profile.therapyStart.flatMap(LocalDate.init), chart.profile.therapyEnd.flatMap(LocalDate.init)
            ))
        return .ok(.init(body: .json(try .init(try await chart.updateTreatment(update)))))
    }

    func getPatient(_ input: Operations.GetPatient.Input) async throws -> Operations.GetPatient.Output {
        let context = try APIContext.current()
        let chart = try await context.chart(of: input.path.patientId).overview()
        return .ok(
            .init(
                body: .json(
                    try .init(
                        Caseloads.Entry(patient: chart.patient, profile: chart.profile, enrollment: chart.enrollment))))
        )
    }
}

extension APIContext {
    var pairing: PairingService { PairingService(database: database, services: services) }
}

extension Components.Schemas.Treatment {
    init(_ listed: PatientTreatments.Listed) throws {
        let enrollment = listed.enrollment
        self.init(
            id: try enrollment.requireID().lowercasedText, studyId: enrollment.$study.id.lowercasedText,
            therapistName: listed.therapistName, status: .init(rawValue: listed.status.rawValue) ?? .ended,
            startedAt: enrollment.startedAt, endedAt: enrollment.endedAt, formerAccess: listed.formerAccess)
    }
}
