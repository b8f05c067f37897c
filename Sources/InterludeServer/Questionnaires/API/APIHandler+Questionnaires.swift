import Fluent
import Foundation
import InterludeCore
import InterludeSQLite
import OpenAPIRuntime

// MARK: - Instruments

extension APIHandler {
    func listInstruments(_ input: Operations.ListInstruments.Input) async throws -> Operations.ListInstruments.Output {
        let context = try APIContext.current()
        let user = try await context.user(.therapist, .researcher, .admin)
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let records = try await context.instrumentGovernance.visible(try await context.catalog.overview(), to: user)
        let page = ListPage(of: records, request, key: \.key, id: { $0.id! }, descending: false)
        return .ok(
            .init(
                headers: .init(nextCursor: page.next),
                body: .json(try page.items.map { try .init($0, language: context.request.language) })))
    }

    func importInstrument(_ input: Operations.ImportInstrument.Input) async throws -> Operations.ImportInstrument.Output
    {
        let context = try APIContext.current()
        let user = try await context.user(.therapist, .researcher, .admin)
        let data: Data
        let format: InstrumentCatalog.Format?
        switch input.body {
        case .json(let object):
            data = try JSONEncoder().encode(object)
            format = nil
        case .applicationFhirJson(let object):
            data = try JSONEncoder().encode(object)
            format = .fhir
        case .csv(let body):
            data = try await Data(collecting: body, upTo: 1_000_000)
            format = .redcap
        }
        let studyID = try input.query.studyId.map { raw in
            guard let id = UUID(uuidString: raw) else { throw AppError.field("studyId", .invalidFormat) }
            return id
        }
        let choice = try InstrumentCatalog.Choice(forms: input.query.forms, key: input.query.key)
        let governance = context.instrumentGovernance
        try await governance.requireImporter(for: studyID, by: user)
        let upload = try await InstrumentCatalog.parseUpload(
            data, format: format, choice: choice, on: context.request.application.threadPool)
        let records = try await governance.importUpload(
            upload, for: studyID, publish: input.query.publish == true, by: user)
        let language = context.request.language
        let summaries = try records.map { try Components.Schemas.InstrumentSummary($0, language: language) }
        guard let first = summaries.first else { throw AppError.field("forms", .required) }
        let localizer = context.services.localizer
        let notes = upload.notes.map { note in
            Components.Schemas.ImportNote(
                place: note.place, kind: .init(rawValue: note.kind.rawValue) ?? .readOnly, subject: note.subject,
                message: localizer.message(for: note, language))
        }
        return .created(.init(body: .json(.init(value1: first, value2: .init(imported: summaries, notes: notes)))))
    }

    func getInstrumentVersion(_ input: Operations.GetInstrumentVersion.Input) async throws
        -> Operations.GetInstrumentVersion.Output
    {
        let context = try APIContext.current()
        let user = try await context.user(.therapist, .researcher, .admin)
        guard
            let record = try await context.instrumentGovernance.visibleVersion(
                input.path.key, input.path.version, to: user)
        else {
            throw AppError.notFound
        }
        let definition = try record.decodedDefinition()
        let body: Data
        if input.query.format == .fhir {
            body = try JSONEncoder().encode(
                definition.fhirQuestionnaire(canonicalURL: context.services.settings.questionnaireURL(definition.key)))
        } else {
            body = try JSONEncoder().encode(definition)
        }
        return .ok(.init(body: .json(try JSONDecoder().decode(OpenAPIObjectContainer.self, from: body))))
    }

    func publishInstrumentVersion(_ input: Operations.PublishInstrumentVersion.Input) async throws
        -> Operations.PublishInstrumentVersion.Output
    {
        let context = try APIContext.current()
        let user = try await context.user(.therapist, .researcher, .admin)
        let record = try await context.instrumentGovernance.publish(input.path.key, input.path.version, by: user)
        return .ok(.init(body: .json(try .init(record, language: context.request.language))))
    }

    func shareInstrument(_ input: Operations.ShareInstrument.Input) async throws -> Operations.ShareInstrument.Output {
        let context = try APIContext.current()
        let user = try await context.user(.therapist, .researcher, .admin)
        let record = try await context.instrumentGovernance.share(input.path.key, by: user)
        return .ok(.init(body: .json(try .init(record, language: context.request.language))))
    }

    func listInstrumentPins(_ input: Operations.ListInstrumentPins.Input) async throws
        -> Operations.ListInstrumentPins.Output
    {
        let context = try APIContext.current()
        let user = try await context.user(.therapist, .researcher, .admin)
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let pins = try await context.instrumentGovernance.pins(in: try pathID(input.path.studyId), by: user)
        let page = ListPage(of: pins, request, key: \.pin.instrumentKey, id: { $0.pin.id! }, descending: false)
        return .ok(
            .init(
                headers: .init(nextCursor: page.next),
                body: .json(page.items.map { Components.Schemas.InstrumentPin($0.pin, newest: $0.newest) })))
    }

    func moveInstrumentPin(_ input: Operations.MoveInstrumentPin.Input) async throws
        -> Operations.MoveInstrumentPin.Output
    {
        let context = try APIContext.current()
        let user = try await context.user(.therapist, .researcher, .admin)
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let moved = try await context.instrumentGovernance.movePin(
            input.path.key, to: body.version, in: try pathID(input.path.studyId), by: user)
        return .ok(.init(body: .json(.init(moved.pin, newest: moved.newest))))
    }
}

extension Components.Schemas.InstrumentPin {
    init(_ pin: InstrumentPinRecord, newest: Int) {
        self.init(instrumentKey: pin.instrumentKey, version: pin.version, newestVersion: newest, pinnedAt: pin.pinnedAt)
    }
}

// MARK: - Prompts and responses for therapists

extension APIHandler {
    func listPatientPrompts(_ input: Operations.ListPatientPrompts.Input) async throws
        -> Operations.ListPatientPrompts.Output
    {
        let context = try APIContext.current()
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let chart = try await context.chart(of: input.path.patientId)
        let page = ListPage(of: try await chart.prompts(), request, moment: \.record.closesAt, id: { $0.record.id! })
        return .ok(
            .init(headers: .init(nextCursor: page.next), body: .json(try await context.promptBodies(page.items))))
    }

    func assignPrompt(_ input: Operations.AssignPrompt.Input) async throws -> Operations.AssignPrompt.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let chart = try await context.chart(of: input.path.patientId)
        try checkLimits([(body.instrumentKey, "instrumentKey", InstrumentDefinition.keyMaxLength)])
        let prompt = try await chart.assignPrompt(
            instrumentKey: body.instrumentKey, opensAt: body.opensAt, closesAt: body.closesAt)
        return .created(.init(body: .json(try await context.promptBodies([context.prompts.current(prompt)])[0])))
    }

    func listPatientResponses(_ input: Operations.ListPatientResponses.Input) async throws
        -> Operations.ListPatientResponses.Output
    {
        let context = try APIContext.current()
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let chart = try await context.chart(of: input.path.patientId)
        let page = ListPage(of: try await chart.responses(), request)
        return .ok(
            .init(headers: .init(nextCursor: page.next), body: .json(try await context.responseBodies(page.items))))
    }
}

// MARK: - The patient's own questionnaires

extension APIHandler {
    func listMyPrompts(_ input: Operations.ListMyPrompts.Input) async throws -> Operations.ListMyPrompts.Output {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let status: PromptStatus = input.query.status == .completed ? .completed : .open
        let prompts = try await context.prompts.prompts(
            of: patient.requireID(), statuses: status == .open ? [.open, .inactive] : [status])
        let blocked = try await context.prompts.blocked(among: prompts, patientID: patient.requireID())
        // Open ones run one-time first, then by deadline; completed ones newest first.
        let page = ListPage(
            of: prompts, request,
            key: {
                (status == .open && PromptService.isOneTime($0.record) ? "0" : "1") + SortKey.moment($0.record.closesAt)
            },
            id: { $0.record.id! }, descending: status != .open)
        return .ok(
            .init(
                headers: .init(nextCursor: page.next),
                body: .json(try await context.promptBodies(page.items, blocked: blocked))))
    }

    func getMyPrompt(_ input: Operations.GetMyPrompt.Input) async throws -> Operations.GetMyPrompt.Output {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let prompt = try await context.prompts.open(try pathID(input.path.promptId), for: patient.requireID())
        guard
            let definition = try await context.catalog.definition(
                prompt.record.instrumentKey, prompt.record.instrumentVersion)
        else { throw AppError.notFound }
        let body = try await context.promptBodies([prompt])[0]
        let crisisItems = StudyRule.crisisItems(of: prompt.record.instrumentKey)
        var crisis: Components.Schemas.CrisisSupport?
        if !crisisItems.isEmpty {
            let therapist = try await TherapistProfiles(database: context.database).contact(
                ofTherapistOf: patient.requireID())
            crisis = .init(
                items: crisisItems.map { .init(itemId: $0.id, above: $0.value ?? 0) },
                emergencyNumber: therapist?.emergencyNumber, therapistName: therapist?.fullName)
        }
        var contextGranted = false
        if !definition.context.isEmpty, let studyID = prompt.record.$study.id {
            contextGranted = try await context.consents.grants(.context, by: patient.requireID(), in: studyID)
        }
        return .ok(
            .init(
                body: .json(.init(prompt: body, definition: definition, crisis: crisis, contextGranted: contextGranted))
            ))
    }

    func listMyResponses(_ input: Operations.ListMyResponses.Input) async throws -> Operations.ListMyResponses.Output {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let page = ListPage(of: try await context.responses.responses(of: patient.requireID()), request)
        return .ok(
            .init(headers: .init(nextCursor: page.next), body: .json(try await context.responseBodies(page.items))))
    }

    func getMyResults(_ input: Operations.GetMyResults.Input) async throws -> Operations.GetMyResults.Output {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let period = try DayPeriod.instants(from: input.query.from, to: input.query.to, in: patient.zone)
        let results = try await ResultsService(database: context.database, services: context.services)
            .results(of: patient.requireID(), in: period, language: context.request.language)
        return .ok(.init(body: .json(results.map { .init($0, language: context.request.language) })))
    }

    func getMyResultComparison(_ input: Operations.GetMyResultComparison.Input) async throws
        -> Operations.GetMyResultComparison.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let patientID = try patient.requireID()
        guard try await Caseloads(database: context.database).profile(of: patientID)?.hidesComparison != true else {
            return .ok(.init(body: .json(.init(hidden: true, items: []))))
        }
        let lines = try await CohortScores(database: context.database, services: context.services).comparisons(
            for: patientID)
        let language = context.request.language
        var items: [Components.Schemas.ResultComparison] = []
        for line in lines {
            let definition = try await context.catalog.latestPublished(line.instrumentKey, usableIn: line.study.id)?
                .decodedDefinition()
            let rule = definition?.scores.first { $0.id == line.scoreID }
            items.append(
                .init(
                    studyId: try line.study.requireID().lowercasedText, studyTitle: line.study.titles.text(language),
                    instrumentKey: line.instrumentKey, title: definition?.title.text(language) ?? line.instrumentKey,
                    scoreId: line.scoreID, scoreTitle: rule?.title.text(language) ?? line.scoreID,
                    personMean: line.personMean,
                    personCount: line.personCount, median: line.cohort?.median,
                    lowerQuartile: line.cohort?.lowerQuartile,
                    upperQuartile: line.cohort?.upperQuartile, contributors: line.cohort?.contributors,
                    withheld: line.withheld.flatMap { .init(rawValue: $0.rawValue) }))
        }
        return .ok(.init(body: .json(.init(hidden: false, items: items))))
    }

    func submitResponse(_ input: Operations.SubmitResponse.Input) async throws -> Operations.SubmitResponse.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        let outcome = try await context.responses.submit(try Self.submission(from: body), patient: patient)
        switch outcome {
        case .created(let stored):
            return .created(.init(body: .json(try await context.responseBodies([stored])[0])))
        case .repeated(let stored):
            return .ok(.init(body: .json(try await context.responseBodies([stored])[0])))
        }
    }

    /// A submitted response checked for its ids and answers.
    static func submission(from body: Components.Schemas.ResponseSubmission) throws -> ResponseService.Submission {
        try checkLimits([(body.instrumentKey, "instrumentKey", InstrumentDefinition.keyMaxLength)])
        var validator = FieldValidator()
        let id = UUIDText.parse(body.id)
        if id == nil { validator.add("id", .invalidFormat) }
        let promptID = UUIDText.parse(body.promptId)
        if promptID == nil { validator.add("promptId", .invalidFormat) }
        let answers = Self.answers(from: body.answers, into: &validator)
        var itemSeconds: [String: Double] = [:]
        for (itemID, milliseconds) in body.itemTimesMs?.additionalProperties ?? [:] {
            guard (0...ResponseService.longestItemTime).contains(milliseconds) else {
                validator.add("itemTimesMs.\(itemID)", .outOfRange, limit: ResponseService.longestItemTime)
                continue
            }
            itemSeconds[itemID] = Double(milliseconds) / 1000
        }
        try validator.check()
        let context = try body.context.map { context in
            try AnswerContext.validate(
                location: context.location.map { ($0.latitude, $0.longitude, $0.accuracyM, $0.capturedAt) },
                noise: context.noise.map { ($0.dbfs, $0.durationS, $0.capturedAt) })
        }
        return .init(
            id: id!, promptID: promptID!, instrumentKey: body.instrumentKey, version: body.version, answers: answers,
            startedAt: body.startedAt, completedAt: body.completedAt, context: context, itemSeconds: itemSeconds)
    }

    func getResponse(_ input: Operations.GetResponse.Input) async throws -> Operations.GetResponse.Output {
        let context = try APIContext.current()
        let user = try await context.authenticated().user
        let responseID = try pathID(input.path.responseId)
        let stored: ResponseService.Stored
        switch user.role {
        case .patient:
            guard let own = try await context.responses.response(responseID), own.record.$patient.id == user.id else {
                throw AppError.notFound
            }
            stored = own
        case .therapist:
            stored = try await PatientChart.open(
                response: responseID, for: user, database: context.database, services: context.services
            ).1
        default:
            throw AppError.notFound
        }
        let body: Data
        if input.query.format == .fhir {
            body = try JSONEncoder().encode(try await context.responses.fhirDocument(of: stored))
        } else {
            body = try APIJSON.encoder.encode(try await context.responseBodies([stored])[0])
        }
        return .ok(.init(body: .json(try JSONDecoder().decode(OpenAPIObjectContainer.self, from: body))))
    }

    /// Reads each answer on its own, so a value of the wrong kind is named by its item.
    static func answers(from object: OpenAPIObjectContainer, into validator: inout FieldValidator) -> Answers {
        var answers: Answers = [:]
        for (itemID, value) in object.value {
            guard let answer = AnswerValue(json: value) else {
                validator.add("answers.\(itemID)", .wrongType)
                continue
            }
            answers[itemID] = answer
        }
        return answers
    }
}

extension APIContext {
    var catalog: InstrumentCatalog { InstrumentCatalog(database: database, services: services) }
    var instrumentGovernance: InstrumentGovernance { InstrumentGovernance(database: database, services: services) }
    var prompts: PromptService { PromptService(database: database, services: services) }
    var responses: ResponseService { ResponseService(database: database, services: services) }

    /// Prompts as the API shows them, titled in the caller's language.
    func promptBodies<Prompt: ListedPrompt>(_ prompts: [Prompt], blocked: Set<UUID> = []) async throws
        -> [Components.Schemas.Prompt]
    {
        let definitions = try await catalog.definitions(
            Set(prompts.map { InstrumentVersionKey(key: $0.instrumentKey, version: $0.instrumentVersion) }))
        let language = request.language
        return prompts.map { prompt in
            let title =
                definitions[InstrumentVersionKey(key: prompt.instrumentKey, version: prompt.instrumentVersion)]?
                .title.text(language) ?? prompt.instrumentKey
            return Components.Schemas.Prompt(
                id: prompt.id.lowercasedText, instrumentKey: prompt.instrumentKey,
                instrumentVersion: prompt.instrumentVersion, title: title, opensAt: prompt.opensAt,
                closesAt: prompt.closesAt,
                status: .init(rawValue: prompt.status.rawValue) ?? .open,
                source: .init(rawValue: prompt.source.rawValue) ?? .manual,
                completedAt: prompt.completedAt, responseId: prompt.responseID?.lowercasedText,
                blocked: blocked.contains(prompt.id) ? true : nil)
        }
    }

    /// Responses as the API shows them. Patients get their scores too (it is their data); the patient app shows
    /// them only where the instrument offers feedback.
    func responseBodies(_ responses: [ResponseService.Stored]) async throws
        -> [Components.Schemas.ResponseResult]
    {
        let definitions = try await catalog.definitions(
            Set(
                responses.map {
                    InstrumentVersionKey(key: $0.record.instrumentKey, version: $0.record.instrumentVersion)
                }))
        let language = request.language
        return try responses.map { stored in
            let record = stored.record
            let definition = definitions[
                InstrumentVersionKey(key: record.instrumentKey, version: record.instrumentVersion)]
            let scores: [Components.Schemas.Score] = stored.scores.map { score in
                let rule = definition?.scores.first { $0.id == score.id }
                return .init(
                    id: score.id, title: rule?.title.text(language) ?? score.id, value: score.value,
                    band: score.band.map { .init(level: $0.level, label: $0.label.text(language)) })
            }
            return .init(
                id: try record.requireID().lowercasedText, promptId: record.$prompt.id?.lowercasedText,
                instrumentKey: record.instrumentKey, version: record.instrumentVersion,
                title: definition?.title.text(language) ?? record.instrumentKey, scores: scores,
                answers: try OpenAPIObjectContainer(unvalidatedValue: stored.answers.mapValues(\.json)),
                openedAt: record.openedAt, startedAt: record.startedAt, completedAt: record.completedAt,
                receivedAt: record.receivedAt,
                context: try self.responses.context(of: record).map(Components.Schemas.AnswerContext.init))
        }
    }
}

extension Components.Schemas.AnswerContext {
    init(_ context: AnswerContext) {
        self.init(
            location: context.location.map {
                .init(
                    latitude: $0.latitude, longitude: $0.longitude, accuracyM: $0.accuracyM, capturedAt: $0.capturedAt)
            },
            noise: context.noise.map { .init(dbfs: $0.dbfs, durationS: $0.durationS, capturedAt: $0.capturedAt) })
    }
}

extension Components.Schemas.InstrumentSummary {
    init(_ record: InstrumentVersionRecord, language: Language) throws {
        let title = record.title(in: language)
        self.init(
            key: record.key, version: record.version, title: title,
            status: record.isPublished ? .published : .draft, origin: .init(rawValue: record.origin.rawValue) ?? .json,
            publishedAt: record.publishedAt, ownerStudyId: record.$ownerStudy.id?.lowercasedText, shared: record.shared)
    }
}

extension Settings {
    /// The canonical URL of an instrument in FHIR exports.
    func questionnaireURL(_ key: String) -> String { publicURL + "/fhir/Questionnaire/" + key }
}

extension AnswerValue {
    /// The answer a JSON value sent in `answers` gives: a boolean, a number, a text or a list of texts.
    init?(json value: (any Sendable)?) {
        switch value {
        case let bool as Bool: self = .bool(bool)
        case let integer as Int: self = .number(Double(integer))
        case let number as Double: self = .number(number)
        case let text as String: self = .text(text)
        case let list as [(any Sendable)?]:
            let texts = list.compactMap { $0 as? String }
            guard texts.count == list.count else { return nil }
            self = .list(texts)
        default: return nil
        }
    }

    /// The answer as a JSON value, as its `Encodable` form reads back (whole numbers as integers).
    var json: (any Sendable)? {
        switch self {
        case .bool(let value): value
        case .number(let value): Int(exactly: value) ?? value
        case .text(let value): value
        case .list(let value): value.map { $0 as (any Sendable)? }
        }
    }
}
