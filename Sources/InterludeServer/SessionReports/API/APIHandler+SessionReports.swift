import Foundation
import InterludeCore

extension APIHandler {
    func getPatientReport(_ input: Operations.GetPatientReport.Input) async throws -> Operations.GetPatientReport.Output
    {
        let context = try APIContext.current()
        let chart = try await context.chart(of: input.path.patientId)
        let period = try DayPeriod.read(
            from: input.query.from, to: input.query.to, in: chart.patient.zone, now: context.services.clock.now,
            defaultDays: SessionReportService.defaultDays)
        let language = context.request.language
        let report = try await SessionReportService(database: context.database, services: context.services)
            .report(chart, period: period, language: language)
        return .ok(.init(body: .json(try .init(report, language: language))))
    }

    func pinPatientNote(_ input: Operations.PinPatientNote.Input) async throws -> Operations.PinPatientNote.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let note = try PinnedNote.checked(day: body.day, text: body.text)
        let chart = try await context.chart(of: input.path.patientId)
        return .created(.init(body: .json(.init(try await chart.pinNote(note)))))
    }

    func unpinPatientNote(_ input: Operations.UnpinPatientNote.Input) async throws -> Operations.UnpinPatientNote.Output
    {
        let context = try APIContext.current()
        let chart = try await context.chart(of: input.path.patientId)
        try await chart.unpinNote(try pathID(input.path.noteId))
        return .noContent
    }

    func listMyNotes(_ input: Operations.ListMyNotes.Input) async throws -> Operations.ListMyNotes.Output {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        var validator = FieldValidator()
        let from = validator.date(input.query.from, field: "from")
        let to = validator.date(input.query.to, field: "to")
        let request = PageRequest(cursor: input.query.cursor, limit: input.query.limit, checking: &validator)
        try validator.check()
        let notes = try await PinnedNoteService(database: context.database, services: context.services)
            .notes(of: patient.requireID(), from: from, to: to)
        let page = ListPage(of: notes, request, key: { $0.day.description }, id: \.id, descending: false)
        return .ok(
            .init(
                headers: .init(nextCursor: page.next), body: .json(page.items.map(Components.Schemas.PinnedNote.init))))
    }
}

extension Components.Schemas.PinnedNote {
    init(_ note: PinnedNoteService.Shown) {
        self.init(id: note.id.lowercasedText, day: note.day.description, text: note.text, author: note.authorName)
    }
}

extension Components.Schemas.InstrumentResults {
    init(_ instrument: ResultsService.Instrument, language: Language) {
        let series = { (list: [ResultsService.Series]) in
            list.map { series in
                Components.Schemas.ResultSeries(
                    id: series.id, title: series.title, low: series.range?.lowerBound, high: series.range?.upperBound,
                    yesNo: series.yesNo,
                    points: series.points.map {
                        .init(
                            at: $0.at, value: $0.value,
                            band: $0.band.map { .init(level: $0.level, label: $0.label.text(language)) })
                    })
            }
        }
        self.init(
            instrumentKey: instrument.key, title: instrument.title, answered: instrument.answered,
            missed: instrument.missed,
            momentary: instrument.momentary, scores: series(instrument.scores), items: series(instrument.items))
    }
}

extension Components.Schemas.SessionReport {
    init(_ report: SessionReportService.Report, language: Language) throws {
        let chart = report.chart
        self.init(
            patientId: chart.patientID.lowercasedText, pseudonym: chart.profile.pseudonym,
            name: chart.shownName,
            from: report.period.from.description, to: report.period.to.description,
            instruments: report.instruments.map { .init($0, language: language) },
            momentary: report.momentary.map { momentary in
                .init(
                    instrumentKey: momentary.instrumentKey, title: momentary.title, answered: momentary.answered,
                    missed: momentary.missed,
                    items: momentary.items.map {
                        .init(
                            id: $0.id, title: $0.title, count: $0.spread.count, mean: $0.spread.mean,
                            min: $0.spread.min, max: $0.spread.max)
                    })
            },
            notable: report.notable.map { notable in
                let (kind, title, value):
                    (Components.Schemas.SessionReport.NotablePayloadPayload.KindPayload, String, String) =
                        switch notable.reason {
                        case .crisisItem(let question, let answer): (.crisisItem, question, answer)
                        case .rule(let name, let reason): (.rule, name, reason)
                        }
                return .init(
                    responseId: notable.responseID.lowercasedText, at: notable.at,
                    instrumentTitle: notable.instrumentTitle,
                    kind: kind, title: title, value: value)
            },
            alerts: try report.alerts.map {
                try .init(AlertInbox.Shown(opened: $0, detailed: true, ownPatient: true), for: chart.viewer)
            },
            compliance: .init(
                answered: report.compliance.completed, missed: report.compliance.expired, open: report.compliance.open,
                percent: report.compliance.percent),
            events: report.events.map {
                .init(at: $0.at, kind: .init(rawValue: $0.kind.rawValue) ?? .healthEvent, title: $0.title)
            },
            notes: report.notes.map(Components.Schemas.PinnedNote.init))
    }
}
