import Foundation
import InterludeCore

extension ExportPackage {
    /// The open files of a package and their header rows; a wide file per form once it has a response.
    struct Writer {
        let directory: URL
        let codebook: Codebook
        let participants, timeZones, prompts, responsesLong, scores, compliance, consents, esm: PackageFile
        let allocations: PackageFile?
        /// Every decision point of the participants, when the study has or had micro-randomised decision points.
        let decisionPoints: PackageFile?
        let readme, codebookCSV, codebookJSON, questionnaires, fhirResponses, fhirConsents: PackageFile
        private var wide: [String: PackageFile] = [:]
        /// A file per record kind the study collects, and the FHIR resources they become by resource type.
        let records: [RecordKind: PackageFile]
        private var fhirRecords: [String: PackageFile] = [:]
        /// Samples one per row, and per type and day, when the study asks for samples.
        let samples, samplesDaily: PackageFile?
        /// The position and noise level kept with answers, when an instrument of the study asks for them.
        let context: PackageFile?
        /// Where each form's variables start among esm.csv's item columns.
        private let esmOffsets: [String: Int]
        private let esmWidth: Int

        init(
            directory: URL, codebook: Codebook, hasArms: Bool, demographics: Bool, recordKinds: [RecordKind],
            asksSamples: Bool, decides: Bool = false
        ) throws {
            self.directory = directory
            self.codebook = codebook
            func file(_ path: String, _ header: [String]?) throws -> PackageFile {
                let file = try PackageFile(in: directory, path: path)
                if let header { try file.row(header) }
                return file
            }
            readme = try file("README.txt", nil)
            participants = try file(
                "participants.csv",
                [
                    "pseudonym", "arm", "status", "enrolled_utc", "enrolled_local", "ended_utc", "ended_local",
                    "time_zone", "time_zones",
                    "planned", "answered", "expired", "rate",
                ] + (demographics ? ["birth_year", "gender"] : []))
            timeZones = try file("time_zones.csv", ["pseudonym", "time_zone", "from_utc", "until_utc"])
            prompts = try file(
                "prompts.csv",
                [
                    "prompt_id", "pseudonym", "instrument_key", "instrument_version", "plan_id", "source", "day_n",
                    "beep_n", "obs_n",
                    "time_zone",
                ] + Self.times(["scheduled", "closes", "notified", "opened", "started", "submitted", "expired"])
                    + ["status", "reminders_sent", "channel"] + Self.times(["device_planned"])
                    + ["outcome", "outcome_reason"] + ResponseQuality.exportColumns)
            responsesLong = try file(
                "responses_long.csv",
                [
                    "prompt_id", "response_id", "pseudonym", "instrument_key", "instrument_version", "item_id",
                    "variable", "raw",
                    "label", "numeric", "shown", "submitted_utc", "submitted_local", "time_zone",
                ])
            scores = try file(
                "scores.csv",
                [
                    "pseudonym", "prompt_id", "response_id", "instrument_key", "instrument_version", "score", "value",
                    "band",
                    "submitted_utc", "submitted_local", "time_zone",
                ])
            compliance = try file(
                "compliance.csv", ["pseudonym", "day_n", "planned", "answered", "expired", "open", "rate"])
            consents = try file(
                "consents.csv",
                [
                    "pseudonym", "document", "version", "granted_utc", "granted_local", "revoked_utc", "revoked_local",
                    "time_zone",
                    "modules", "method", "replaced_utc",
                ])
            allocations =
                hasArms
                ? try file(
                    "allocations.csv",
                    [
                        "pseudonym", "arm", "method", "sequence", "kind", "stratum", "block", "slot", "cycle", "site",
                        "probability", "reason", "recorded_by", "seed", "allocated_utc", "allocated_local",
                    ]) : nil
            decisionPoints =
                decides
                ? try file(
                    "decision_points.csv",
                    [
                        "pseudonym", "point", "decision_utc", "decision_local", "time_zone", "available", "probability",
                        "assigned", "option", "option_kind", "delivered", "outcome_ends_utc", "outcome_ends_local",
                        "outcome_instrument", "outcome_score", "outcome_n", "outcome_mean", "outcome_values", "seed",
                    ]) : nil
            var offsets: [String: Int] = [:]
            var width = 0
            for form in codebook.forms {
                offsets[form.name] = width
                width += form.variables.count
            }
            esmOffsets = offsets
            esmWidth = width
            esm = try file(
                "esm.csv",
                [
                    "id", "obsno", "daycum", "beepno", "valid", "scheduled", "sent", "start", "end", "time_zone",
                    "instrument",
                    "scheduled_utc", "sent_utc", "start_utc", "end_utc",
                ] + codebook.forms.flatMap { $0.variables.map(\.name) })
            codebookCSV = try file("codebook.csv", nil)
            codebookJSON = try file("codebook.json", nil)
            questionnaires = try file("fhir/Questionnaire.ndjson", nil)
            fhirResponses = try file("fhir/QuestionnaireResponse.ndjson", nil)
            fhirConsents = try file("fhir/Consent.ndjson", nil)
            records = try Dictionary(
                uniqueKeysWithValues: recordKinds.map { kind in
                    (
                        kind,
                        try file(
                            "\(kind.exportFile).csv",
                            ["pseudonym", "record_id", "version"] + kind.content.exportColumns)
                    )
                })
            samples =
                asksSamples
                ? try file(
                    "samples.csv",
                    [
                        "pseudonym", "sample_id", "type", "value", "unit", "start_utc", "start_local", "end_utc",
                        "end_local", "time_zone",
                        "source_app", "device_model", "os_version", "motion_context",
                    ]) : nil
            samplesDaily =
                asksSamples
                ? try file("samples_daily.csv", ["pseudonym", "type", "date", "value", "unit", "aggregate", "samples"])
                : nil
            context =
                codebook.forms.contains { !$0.definition.context.isEmpty }
                ? try file(
                    "context.csv",
                    [
                        "pseudonym", "prompt_id", "response_id", "instrument_key", "instrument_version", "latitude",
                        "longitude",
                        "accuracy_m",
                    ] + Self.times(["location"]) + ["dbfs", "noise_duration_s"] + Self.times(["noise"])
                        + ["time_zone"]) : nil
        }

        /// A record's FHIR resource, in the file of its type.
        mutating func fhir(_ resource: any FHIRRecordResource) throws {
            let path = "fhir/\(resource.resourceType).ndjson"
            if fhirRecords[path] == nil { fhirRecords[path] = try PackageFile(in: directory, path: path) }
            try fhirRecords[path]!.line(try ExportPackage.json.encode(resource))
        }

        static func times(_ names: [String]) -> [String] {
            names.flatMap { [$0 + "_utc", $0 + "_local"] }
        }

        /// A response in responses_long.csv, its form's wide file and scores.csv.
        mutating func response(
            _ response: ResponseRecord, answers: Answers, scores results: [ScoreResult], form: Codebook.Form,
            pseudonym: String,
            number: OccurrenceNumber?, stamp: ExportTime
        ) throws {
            let definition = form.definition
            let promptID = response.$prompt.id?.lowercasedText
            let responseID = response.id!.lowercasedText
            let version = String(definition.version)
            let visible = InstrumentLogic(definition).visibility(answers)
            for item in definition.items where item.type.takesAnswer {
                let answer = answers[item.id]
                try responsesLong.row(
                    [
                        promptID, responseID, pseudonym, definition.key, version, item.id, form.itemNames[item.id],
                        answer.map { ExportValue.raw($0, for: item) },
                        answer.flatMap { ExportValue.label($0, for: item, in: definition) },
                        answer.flatMap { definition.numericValue(of: $0, for: item) }.map(CSV.number),
                        visible.items.contains(item.id) ? "1" : "0", stamp.utc, stamp.local, stamp.zone,
                    ])
            }
            for result in results {
                try scores.row(
                    [
                        pseudonym, promptID, responseID, definition.key, version, result.id,
                        result.value.map(CSV.number),
                        result.band.map(ExportValue.band), stamp.utc, stamp.local, stamp.zone,
                    ])
            }
            let file = try wideFile(form)
            try file.row(
                [
                    pseudonym, promptID, responseID, number.map { String($0.dayN) }, number.map { String($0.beepN) },
                    number.map { String($0.obsN) }, stamp.utc, stamp.local, stamp.zone,
                ] + form.values(answers: answers, scores: results))
        }

        /// What was kept with a response of an instrument asking for context, a row for each response that has any.
        func context(_ kept: AnswerContext, of response: ResponseRecord, pseudonym: String, zone: TimeZone) throws {
            guard let file = context else { return }
            func time(_ date: Date?) -> [String?] {
                guard let date else { return [nil, nil] }
                let stamp = ExportTime(date, in: zone)
                return [stamp.utc, stamp.local]
            }
            let location = kept.location
            let noise = kept.noise
            try file.row(
                [
                    pseudonym, response.$prompt.id?.lowercasedText, response.id!.lowercasedText, response.instrumentKey,
                    String(response.instrumentVersion), location.map { CSV.number($0.latitude) },
                    location.map { CSV.number($0.longitude) }, location.map { CSV.number($0.accuracyM) },
                ]
                    + time(location?.capturedAt) + [
                        noise.map { CSV.number($0.dbfs) }, noise.map { CSV.number($0.durationS) },
                    ]
                    + time(noise?.capturedAt) + [zone.identifier])
        }

        private mutating func wideFile(_ form: Codebook.Form) throws -> PackageFile {
            if let file = wide[form.name] { return file }
            let file = try PackageFile(in: directory, path: "\(form.definition.key)_v\(form.definition.version).csv")
            try file.row(
                [
                    Codebook.recordID, "prompt_id", "response_id", "day_n", "beep_n", "obs_n", "submitted_utc",
                    "submitted_local", "time_zone",
                ]
                    + form.variables.map(\.name))
            wide[form.name] = file
            return file
        }

        /// A planned occurrence in esm.csv: local times first, as ESM tools read them, then UTC.
        func esm(
            pseudonym: String, number: OccurrenceNumber, valid: Bool, zone: TimeZone, times: [Date?],
            form: Codebook.Form?,
            values: (Answers, [ScoreResult])?
        ) throws {
            let stamps = times.map { $0.map { ExportTime($0, in: zone) } }
            var items = [String?](repeating: nil, count: esmWidth)
            if let form, let values, let offset = esmOffsets[form.name] {
                for (index, value) in form.values(answers: values.0, scores: values.1).enumerated() {
                    items[offset + index] = value
                }
            }
            try esm.row(
                [pseudonym, String(number.obsN), String(number.dayN), String(number.beepN), valid ? "1" : "0"]
                    + stamps.map { $0?.local } + [zone.identifier, form?.name] + stamps.map { $0?.utc } + items)
        }

        /// Closes every file; returns each one's SHA-256 by path.
        func close() throws -> [String: String] {
            var sums: [String: String] = [:]
            let all =
                [
                    readme, participants, timeZones, prompts, responsesLong, scores, compliance, consents, esm,
                    codebookCSV,
                    codebookJSON, questionnaires, fhirResponses, fhirConsents,
                ] + [allocations, decisionPoints].compactMap { $0 } + Array(wide.values)
                + Array(records.values) + Array(fhirRecords.values)
                + [samples, samplesDaily, context].compactMap { $0 }
            for file in all { sums[file.path] = try file.close() }
            return sums
        }
    }
}
