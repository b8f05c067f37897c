import Fluent
import Foundation
import InterludeCore

/// Writes the files of one study export into a folder, participant by participant, so no more than one
/// participant's prompts and answers are held at a time. Every timestamp is written twice, in UTC and as local
/// time with its offset, in the zone the participant lived in then; the zone has a column of its own.
struct ExportPackage {
    struct Counts: Equatable {
        var participants = 0
        var prompts = 0
        var responses = 0
    }

    let database: any Database
    let services: AppServices
    let scope: StudyExportScope
    let exportID: UUID
    let since: Date?
    let directory: URL
    /// Called after each participant with the share done, 0…1; throws to stop the run.
    let progress: (Double) async throws -> Void

    private var now: Date { services.clock.now }
    private var study: StudyRecord { scope.grant.study }

    /// Writes every file and `checksums.txt`; returns the counts, the files' paths and whose data they hold.
    func write() async throws -> (counts: Counts, files: [String], participants: [StudyExportScope.Participant]) {
        let participants = try await scope.participants()
        let definitions = try await definitionsUsed()
        let codebook = Codebook(definitions)
        let decisions = try await DecisionPointExport(database: database, services: services, study: study)
        var writer = try Writer(
            directory: directory, codebook: codebook, hasArms: study.arms != nil, demographics: study.asksDemographics,
            recordKinds: study.recordSettings.keptKinds, asksSamples: !study.recordSettings.samples.requests.isEmpty,
            decides: decisions.any)
        var counts = Counts()
        for (index, participant) in participants.enumerated() {
            let written = try await write(participant, codebook: codebook, into: &writer)
            if let file = writer.decisionPoints {
                try await decisions.write(of: participant, since: since, into: file)
            }
            counts.participants += 1
            counts.prompts += written.prompts
            counts.responses += written.responses
            try await progress(Double(index + 1) / Double(max(participants.count, 1)))
        }
        for definition in definitions {
            try writer.questionnaires.line(
                try Self.json.encode(
                    definition.fhirQuestionnaire(canonicalURL: services.settings.questionnaireURL(definition.key))))
        }
        try writer.readme.write(readme(codebook: codebook, counts: counts, participants: participants))
        try writer.codebookCSV.write(REDCapDictionary.csv(codebook))
        try writer.codebookJSON.write(String(decoding: try codebook.json(), as: UTF8.self))
        let sums = try writer.close()
        let checksums = try PackageFile(in: directory, path: "checksums.txt")
        for (path, sum) in sums.sorted(by: { $0.key < $1.key }) { try checksums.write("\(sum)  \(path)\n") }
        _ = try checksums.close()
        return (counts, sums.keys.sorted() + ["checksums.txt"], participants)
    }

    static let json: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// The instrument versions the study's prompts and responses use.
    private func definitionsUsed() async throws -> [InstrumentDefinition] {
        let prompts = try await PromptRecord.query(on: database).filter(\.$study.$id == scope.grant.studyID)
            .unique().field(\.$instrumentKey).field(\.$instrumentVersion).all()
        let responses = try await ResponseRecord.query(on: database).filter(\.$studyID == scope.grant.studyID)
            .unique().field(\.$instrumentKey).field(\.$instrumentVersion).all()
        let pairs = Set(
            prompts.map { InstrumentVersionKey(key: $0.instrumentKey, version: $0.instrumentVersion) }
                + responses.map { InstrumentVersionKey(key: $0.instrumentKey, version: $0.instrumentVersion) })
        let definitions = try await InstrumentCatalog(database: database, services: services).definitions(pairs)
        return Array(definitions.values)
    }

    // MARK: One participant

    private func write(
        _ participant: StudyExportScope.Participant, codebook: Codebook, into writer: inout Writer
    ) async throws -> (prompts: Int, responses: Int) {
        let patientID = participant.id
        let studyID = scope.grant.studyID
        let zones = try await zoneHistory(of: participant.user)
        let prompts = try await PromptRecord.query(on: database)
            .filter(\.$patient.$id == patientID).filter(\.$study.$id == studyID).sort(\.$opensAt).all()
        let responses = try await ResponseRecord.query(on: database)
            .filter(\.$patient.$id == patientID).filter(\.$studyID == studyID).sort(\.$completedAt).all()
        let notifications = try await deliveries(of: prompts.compactMap(\.id))
        let numbers = OccurrenceNumber.number(
            prompts.map(\.opensAt), enrolledAt: participant.enrollment.createdAt, zones: zones)
        let numberOfPrompt = Dictionary(
            zip(prompts.compactMap(\.id), numbers).map { ($0, $1) }, uniquingKeysWith: { first, _ in first })
        var responseOfPrompt: [UUID: ResponseRecord] = [:]
        var opened: [UUID: (Answers, [ScoreResult])] = [:]
        let stored = ResponseService(database: database, services: services)
        for response in responses {
            if let prompt = response.$prompt.id { responseOfPrompt[prompt] = response }
            let unsealed = try stored.open(response)
            opened[response.id!] = (unsealed.answers, unsealed.scores)
        }
        let pseudonym = participant.pseudonym

        var compliance: [Int: DayCompliance] = [:]
        var total = DayCompliance()
        var promptRows = 0
        for (prompt, number) in zip(prompts, numbers) {
            let status = PromptStatus.at(
                now, recorded: prompt.status, opensAt: prompt.opensAt, closesAt: prompt.closesAt)
            compliance[number.dayN, default: DayCompliance()].count(status)
            total.count(status)
            guard
                isNew(prompt.changedAt ?? prompt.createdAt)
                    || responseOfPrompt[prompt.id!].map({ isNew($0.receivedAt) }) == true
            else { continue }
            let response = responseOfPrompt[prompt.id!]
            let delivery = notifications[prompt.id!] ?? Delivery()
            let zone = zones.zone(at: prompt.opensAt)
            func time(_ date: Date?) -> [String?] {
                guard let date else { return [nil, nil] }
                let stamp = ExportTime(date, in: zones.zone(at: date))
                return [stamp.utc, stamp.local]
            }
            let expired: Date? = status == .expired ? prompt.closesAt : nil
            // A native app's own notification counts where the server sent none.
            let notified = delivery.notified ?? prompt.deviceNotifiedAt
            let channel = delivery.channel ?? (prompt.deviceNotifiedAt == nil ? nil : "device")
            let quality: [String?] =
                response.flatMap(ResponseService.quality(of:))?.exportValues
                ?? ResponseQuality.exportColumns.map { _ in nil }
            let (outcome, reason) = PromptOutcome.of(
                status: status, delivered: notified != nil, misses: delivery.misses, cancelled: prompt.cancelReason)
            try writer.prompts.row(
                [
                    prompt.id!.lowercasedText, pseudonym, prompt.instrumentKey, String(prompt.instrumentVersion),
                    prompt.planID?.lowercasedText,
                    prompt.source.exportName, String(number.dayN), String(number.beepN), String(number.obsN),
                    zone.identifier,
                ]
                    + time(prompt.opensAt) + time(prompt.closesAt) + time(notified)
                    + time(response?.openedAt ?? prompt.openedAt) + time(response?.startedAt)
                    + time(response?.completedAt)
                    + time(expired) + [status.rawValue, String(delivery.reminders), channel]
                    + time(prompt.devicePlannedAt) + [outcome.rawValue, reason?.rawValue] + quality)
            promptRows += 1
            if prompt.source == .schedule {
                try writer.esm(
                    pseudonym: pseudonym, number: number, valid: response != nil, zone: zone,
                    times: [
                        prompt.opensAt, notified, response?.startedAt ?? response?.openedAt, response?.completedAt,
                    ],
                    form: codebook.form(key: prompt.instrumentKey, version: prompt.instrumentVersion),
                    values: response.flatMap { opened[$0.id!] })
            }
        }
        var responseRows = 0
        for response in responses where isNew(response.receivedAt) {
            guard let form = codebook.form(key: response.instrumentKey, version: response.instrumentVersion),
                let (answers, scores) = opened[response.id!]
            else { continue }
            let number = response.$prompt.id.flatMap { numberOfPrompt[$0] }
            try writer.response(
                response, answers: answers, scores: scores, form: form, pseudonym: pseudonym, number: number,
                stamp: ExportTime(response.completedAt, in: zones.zone(at: response.completedAt)))
            if let kept = try stored.context(of: response) {
                try writer.context(kept, of: response, pseudonym: pseudonym, zone: zones.zone(at: response.completedAt))
            }
            try writer.fhirResponses.line(
                try Self.json.encode(
                    form.definition.fhirResponse(
                        id: response.id!.lowercasedText, answers: answers,
                        questionnaireURL: services.settings.questionnaireURL(form.definition.key),
                        authored: response.completedAt,
                        subject: FHIR.Identifier(system: services.settings.publicURL + "/pseudonym", value: pseudonym)))
            )
            responseRows += 1
        }
        for (day, counts) in compliance.sorted(by: { $0.key < $1.key }) where counts.planned > 0 {
            try writer.compliance.row(
                [
                    pseudonym, String(day), counts.planned.description, counts.answered.description,
                    counts.expired.description,
                    counts.open.description, counts.rate.map(CSV.number),
                ])
        }
        try await writeParticipant(participant, zones: zones, total: total, into: &writer)
        let collected = try await ConsentPeriods(database: database).collection(of: participant.enrollment, in: study)
        for kind in study.recordSettings.keptKinds {
            try await writeRecords(kind.content, of: participant, collected: collected, zones: zones, into: &writer)
        }
        try await writeSamples(of: participant, zones: zones, into: &writer)
        return (promptRows, responseRows)
    }

    /// The participant's entries of the allocation log: how each arm was drawn or corrected, and when. The seed
    /// is given once the study is closed; before, it would tell the allocations to come. Participants who joined
    /// before the log was kept have one row from their enrolment, without a place in it.
    private func writeAllocations(
        of participant: StudyExportScope.Participant, zones: ZoneHistory, into file: PackageFile
    ) async throws {
        let entries = try await AllocationRecord.query(on: database).filter(\.$study.$id == scope.grant.studyID)
            .filter(\.$participantID == participant.id).sort(\.$sequence).all()
        let seed = study.status == .closed ? StudyArms.design(of: study).map { String($0.seed) } : nil
        for entry in entries {
            let at = ExportTime(entry.createdAt, in: zones.zone(at: entry.createdAt))
            try file.row([
                participant.pseudonym, entry.arm, entry.method.rawValue, String(entry.sequence), entry.kind.rawValue,
                entry.stratum, entry.block.map(String.init), entry.slot.map(String.init), entry.cycle.map(String.init),
                entry.site, entry.probability.map(CSV.number), entry.reason,
                entry.recordedBy?.lowercasedText ?? "design", seed,
                at.utc, at.local,
            ])
        }
        let enrollment = participant.enrollment
        if entries.isEmpty, let arm = enrollment.arm {
            let at = ExportTime(enrollment.createdAt, in: zones.zone(at: enrollment.createdAt))
            let method = (study.allocation ?? .alternating).methodKind
            try file.row([
                participant.pseudonym, arm, method.rawValue, nil, AllocationEntry.Kind.drawn.rawValue, "", nil, nil,
                nil, nil, nil, nil, "design", nil, at.utc, at.local,
            ])
        }
    }

    private func writeParticipant(
        _ participant: StudyExportScope.Participant, zones: ZoneHistory, total: DayCompliance, into writer: inout Writer
    ) async throws {
        let enrollment = participant.enrollment
        let enrolled = ExportTime(enrollment.createdAt, in: zones.zone(at: enrollment.createdAt))
        let ended =
            enrollment.status == .ended
            ? ExportTime(enrollment.updatedAt, in: zones.zone(at: enrollment.updatedAt)) : nil
        let current = zones.zone(at: now).identifier
        try writer.participants.row(
            [
                participant.pseudonym, enrollment.arm, enrollment.status.rawValue, enrolled.utc, enrolled.local,
                ended?.utc, ended?.local,
                current, zones.periods.map(\.zone.identifier).joined(separator: "|"), total.planned.description,
                total.answered.description, total.expired.description, total.rate.map(CSV.number),
            ]
                + (study.asksDemographics ? [participant.birthYear, participant.gender] : []))
        for period in zones.periods {
            let from = period.since == .distantPast ? nil : ExportTime(period.since, in: period.zone).utc
            try writer.timeZones.row([
                participant.pseudonym, period.zone.identifier, from,
                period.until.map { ExportTime($0, in: period.zone).utc },
            ])
        }
        if let allocations = writer.allocations {
            try await writeAllocations(of: participant, zones: zones, into: allocations)
        }
        let consents = try await ConsentRecord.query(on: database).filter(\.$user.$id == participant.id)
            .group(.or) { either in
                either.filter(\.$study.$id == scope.grant.studyID)
                either.filter(\.$document == ConsentRecord.Document.researchSharing.rawValue)
            }.sort(\.$grantedAt).all()
        let subject = FHIR.Identifier(system: services.settings.publicURL + "/pseudonym", value: participant.pseudonym)
        for consent in consents {
            let granted = ExportTime(consent.grantedAt, in: zones.zone(at: consent.grantedAt))
            let revoked = consent.revokedAt.map { ExportTime($0, in: zones.zone(at: $0)) }
            let modules = (consent.choices?.granted ?? [:]).sorted { $0.key < $1.key }
                .map { "\($0.key.rawValue)=\($0.value ? "yes" : "no")" }.joined(separator: "|")
            try writer.consents.row(
                [
                    participant.pseudonym, consent.document, consent.version, granted.utc, granted.local, revoked?.utc,
                    revoked?.local,
                    granted.zone, modules, consent.method?.rawValue,
                    consent.replacedAt.map { ExportTime($0, in: .gmt).utc },
                ])
            if let studyID = consent.$study.id, consent.document == ConsentRecord.Document.studyConsent.rawValue {
                try writer.fhirConsents.line(
                    try Self.json.encode(
                        FHIR.Consent(
                            id: try consent.requireID(), document: .studyConsent(studyID: studyID),
                            version: consent.version, subject: subject,
                            decidedAt: consent.grantedAt, ended: consent.revokedAt ?? consent.replacedAt,
                            choices: consent.choices)))
            }
        }
    }

    /// The participant's records of one kind the study collects, changed since the last export when it is one of
    /// changes, in the kind's file and as FHIR: only those made or dated while they belonged to the study
    /// (`collected`), and never a thought the therapist wrote.
    private func writeRecords<Content: RecordKindContent>(
        _ type: Content.Type, of participant: StudyExportScope.Participant, collected: KindPeriods, zones: ZoneHistory,
        into writer: inout Writer
    ) async throws {
        let stored = try await RecordService(database: database, services: services).list(type, of: participant.id)
        let subject = FHIR.Identifier(system: services.settings.publicURL + "/pseudonym", value: participant.pseudonym)
        let today = LocalDate(now, in: zones.zone(at: now))
        let kind = Content.recordKind
        for record in stored.reversed() where isNew(record.record.updatedAt) {
            guard
                collected.covers(kind, at: record.record.createdAt)
                    || collected.covers(kind, at: record.record.occurredAt),
                (record.content as? Thought)?.origin != .therapist
            else { continue }
            let id = try record.record.requireID()
            for row in record.content.exportRows({ ExportTime($0, in: zones.zone(at: $0)) }) {
                try writer.records[Content.recordKind]?.row(
                    [participant.pseudonym, id.lowercasedText, String(record.record.version)] + row)
            }
            try writer.fhir(record.content.fhirResource(id: id, subject: subject, today: today))
        }
    }

    /// The participant's samples of the types the study asks for, sent while they took part, a page at a time: each
    /// new one in samples.csv and as a FHIR Observation, and every day's sum or mean (in the zone the participant
    /// lived in) in samples_daily.csv. The device's name stays out: people name their phones after themselves.
    private func writeSamples(
        of participant: StudyExportScope.Participant, zones: ZoneHistory, into writer: inout Writer
    ) async throws {
        let types = study.recordSettings.samples.types
        guard let file = writer.samples, let daily = writer.samplesDaily, !types.isEmpty else { return }
        let subject = FHIR.Identifier(system: services.settings.publicURL + "/pseudonym", value: participant.pseudonym)
        var days: [SampleType: [LocalDate: SampleType.Day]] = [:]
        var offset = 0
        while true {
            let page = try await SampleRecord.query(on: database).filter(\.$patient.$id == participant.id).filter(
                \.$type ~~ types
            )
            .sort(\.$start).sort(\.$id).offset(offset).limit(Self.samplePage).all()
            for record in page where participant.enrollment.wasActive(at: record.createdAt) {
                let sample = record.sample
                let zone = zones.zone(at: sample.start)
                days[sample.type, default: [:]][LocalDate(sample.start, in: zone), default: .init(value: 0, count: 0)]
                    .add(sample.value)
                guard isNew(record.createdAt) else { continue }
                let id = try record.requireID()
                let start = ExportTime(sample.start, in: zone)
                let end = ExportTime(sample.end, in: zones.zone(at: sample.end))
                try file.row(
                    [
                        participant.pseudonym, id.lowercasedText, sample.type.rawValue, CSV.number(sample.value),
                        sample.type.unit, start.utc,
                        start.local, end.utc, end.local, start.zone, sample.source.app, sample.source.deviceModel,
                        sample.source.osVersion,
                        sample.motionContext.map { String($0.rawValue) },
                    ])
                try writer.fhir(sample.fhirObservation(id: id, subject: subject))
            }
            guard page.count == Self.samplePage else { break }
            offset += page.count
        }
        for type in types {
            for (date, day) in (days[type] ?? [:]).sorted(by: { $0.key < $1.key }) {
                let value = type.dailyAggregate == .mean ? day.value / Double(day.count) : day.value
                try daily.row(
                    [
                        participant.pseudonym, type.rawValue, date.description, CSV.number(value), type.unit,
                        type.dailyAggregate.rawValue,
                        String(day.count),
                    ])
            }
        }
    }

    /// Samples read at once while writing an export.
    static let samplePage = 5000

    private func isNew(_ date: Date) -> Bool {
        since.map { date > $0 } ?? true
    }

    private func zoneHistory(of user: UserRecord) async throws -> ZoneHistory {
        let changes = try await TimeZoneChangeRecord.query(on: database).filter(\.$user.$id == user.requireID()).all()
        guard !changes.isEmpty else { return ZoneHistory([(zone: user.timeZone, since: .distantPast)]) }
        return ZoneHistory(changes.map { (zone: $0.timeZone, since: $0.since) })
    }

    /// What the notifications about a prompt did: when the first was sent, how many reminders went out, by which
    /// channel, and why those that reached nobody ended, in the order they were due.
    struct Delivery {
        var notified: Date?
        var reminders = 0
        var channel: String?
        var misses: [NotificationMiss] = []
    }

    private func deliveries(of promptIDs: [UUID]) async throws -> [UUID: Delivery] {
        guard !promptIDs.isEmpty else { return [:] }
        let notifications = try await NotificationRecord.query(on: database)
            .filter(\.$promptID ~~ promptIDs.map(Optional.some))
            .group(.or) { $0.filter(\.$sentAt != nil).filter(\.$miss != nil) }
            .sort(\.$dueAt).all()
        var result: [UUID: Delivery] = [:]
        for notification in notifications {
            guard let promptID = notification.promptID else { continue }
            var delivery = result[promptID] ?? Delivery()
            if let miss = notification.miss { delivery.misses.append(miss) }
            if let sentAt = notification.sentAt {
                if delivery.notified.map({ sentAt < $0 }) ?? true {
                    delivery.notified = sentAt
                    delivery.channel = notification.channel
                }
                if notification.dedupeKey.contains(":reminder:") { delivery.reminders += 1 }
            }
            result[promptID] = delivery
        }
        return result
    }

    // MARK: README

    private func readme(codebook: Codebook, counts: Counts, participants: [StudyExportScope.Participant]) -> String {
        let exported = ExportTime(now, in: TimeZone(identifier: "UTC")!).utc
        let zones = Set(participants.map(\.user.timeZone)).sorted()
        let instruments = codebook.forms.map { "  \($0.definition.key) version \($0.definition.version) (\($0.name))" }
        return """
            Interlude research export
            Study: \(study.title)
            Study id: \(scope.grant.studyID.lowercasedText)
            Export id: \(exportID.lowercasedText)
            Exported at: \(exported)
            Contents: \(since.map { "what changed after " + ExportTime($0, in: TimeZone(identifier: "UTC")!).utc } ?? "everything")
            Participants: \(counts.participants) (enrolled, sharing their data with research)
            Prompts: \(counts.prompts)  Responses: \(counts.responses)
            Time zones of the participants now: \(zones.isEmpty ? "none" : zones.joined(separator: ", "))
            Instrument versions:
            \(instruments.isEmpty ? "  none" : instruments.joined(separator: "\n"))

            Every timestamp is written twice: <name>_utc in UTC (ending in Z) and <name>_local in the participant's
            local time with its offset, in the zone they lived in at that moment (time_zones.csv lists each zone with
            the time it took effect). Files are CSV per RFC 4180: comma-separated, dot as decimal mark, UTF-8, a header
            row, lines ending in CRLF. Participants appear under their pseudonyms only. A text cell that starts with
            =, +, -, @, a tab or a carriage return gets a leading apostrophe (') so that a spreadsheet shows it
            instead of running it as a formula; numbers are written as they are. Remove the apostrophe when the text
            itself matters. codebook.csv keeps REDCap's own syntax (choices, branching logic, @ action tags) as is.

            What a participant agreed to decides what is here. A record (an event, a mood, a thought...) is
            exported only when it was made or dated while the participant took part and while their decision in
            force answered a consent version that names its kind: records from before joining, or from before they
            agreed to a kind the study began collecting later, stay out. Thoughts a therapist wrote for a client
            never leave. Samples count from when the participant joined. Participants who declined sharing with
            research in the study's consent are in no file.

            Files
            participants.csv      one row per participant: arm, status, enrolment and end, time zones, totals (and
                                  birth year and gender when the study asks for them)
            time_zones.csv        each zone a participant lived in, from when until when
            prompts.csv           one row per planned occurrence, also expired, cancelled and future ones: study day
                                  (day_n, day 1 is the day of enrolment), occurrence within the day (beep_n),
                                  running count (obs_n), when it was scheduled, notified, opened, started, submitted
                                  or expired, its status, reminders sent and the channel ("device" for a
                                  native app's own notification, with when the app planned it); how it ended
                                  (outcome: pending, completed, expired_delivered, expired_undelivered or
                                  cancelled) and why (outcome_reason: for an undelivered one no_device,
                                  subscription_gone, category_off, quiet_hours, hourly_ceiling, refused,
                                  expired_before_sending, daily_email, no_longer_needed or never_notified; for a
                                  cancelled one paused, ended or questionnaire_deactivated); for an answered one
                                  the response-quality indices: quality_flags (fast, straightlined,
                                  low_variability), fast_share (items under a second), median_item_seconds,
                                  longstring, sd, irv and mode_share (docs/features/response-quality.md)
            responses_long.csv    one row per item of each response: raw value, label, numeric value, and whether a
                                  condition showed the item
            <key>_v<version>.csv  one row per response to that instrument version, items as columns (a multiple
                                  choice as item___code columns of 1/0), then scores and bands
            scores.csv            one row per score of each response, with its band
            context.csv           the position and background noise level kept with answers (studies whose
                                  instruments ask for them, from participants who allowed it): latitude,
                                  longitude and accuracy in metres, the level in dBFS and over how many seconds,
                                  and when each was measured; never any sound
            compliance.csv        per participant and study day: planned (opened by the time of export), answered,
                                  expired, still open, and rate = answered / (answered + expired)
            consents.csv          study consent and research sharing: every decision, its modules (module=yes|no),
                                  how it was taken, and when it was revoked or replaced by a later one
            decision_points.csv   studies with micro-randomised decision points: one row per point of each
                                  participant (day and time, point), when in UTC and local time, whether they
                                  were available, the chance of a message or questionnaire, whether the draw
                                  assigned one (1/0) and which option of the plan (counted from 1, with its kind),
                                  whether it was delivered (points decided more than 30 minutes late are logged
                                  but deliver nothing), the end of the outcome window, and the values of the
                                  outcome score answered in it (how many, their mean, all of them in order);
                                  the seed of the draws once the study is closed
            allocations.csv       studies with arms: each allocation of a participant from the study's log, in
                                  order: arm, method, place in the log (sequence), drawn or corrected (with the
                                  reason), stratum, block and place in the stratum's sequence, cycle, site (for
                                  cycles by site, the id of the participant's practice), the chance of a random
                                  draw, who recorded it (the design, or a researcher's id), and when; the seed of
                                  the study's random choices once the study is closed
            events.csv            health events (studies collecting them): when, type, title and description
            therapies.csv         therapies (studies collecting them): type, name, start and end date, note
            audiograms.csv        audiograms (studies collecting them): one row per ear, frequency and conduction,
                                  the threshold in dB HL (empty with no_response = 1), masking
            mood.csv              mood reports (studies collecting them): when, and the valence from 0 (not good
                                  at all) to 1 (great); the person's note stays with them
            thoughts.csv          difficult thoughts (studies collecting them): the words as the person wrote them,
                                  whether they or their therapist added it, and when it was first added
            occurrences.csv       each time a thought came back: its thought_id, when, the rating before and after
                                  the defusion exercise from -1 (most negative) to 1 (most positive) and the
                                  change; where it happened and the person's note stay with them
            samples.csv           samples of the types the study asks for (studies asking for samples): one row
                                  per sample, its value in the type's UCUM unit, start and end, the app, device
                                  model and OS version that took it (never the device's name), HealthKit's motion
                                  context (0 not set, 1 sedentary, 2 active)
            samples_daily.csv     every participant's samples per type and day, the day in the zone they lived in:
                                  the sum (steps, distance, minutes) or mean (rates, levels, speeds), and how many
                                  samples made it; always over all their samples, also in an export of changes
            esm.csv               scheduled prompts in the columns ESM tools expect: id, obsno, daycum, beepno,
                                  valid, scheduled, sent, start, end (local times) and the items
            codebook.csv          a REDCap data dictionary of all variables
            codebook.json         items, types, options, scoring, and how instrument versions differ
            fhir/Questionnaire.ndjson, fhir/QuestionnaireResponse.ndjson, fhir/Consent.ndjson, and for records
            fhir/Observation.ndjson (events, audiograms as the LOINC audiometry panel, moods, samples coded in
            LOINC where it has the measurement and always in Apple Health's identifier, thoughts and their
            occurrences), fhir/Procedure.ndjson
                                  FHIR R4 resources, one per line
            checksums.txt         SHA-256 of every file, as sha256sum -c reads it

            """
    }
}

extension PromptSource {
    /// The source as the export names it: a plan, by hand, a rule, asked for, or a decision point.
    var exportName: String {
        switch self {
        case .schedule: "plan"
        case .manual: "manual"
        case .rule: "rule"
        case .onDemand: "on_demand"
        case .decisionPoint: "decision_point"
        }
    }
}
