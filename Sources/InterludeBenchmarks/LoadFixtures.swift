import Fluent
import Foundation
import InterludeCore
import InterludeServer

/// Made-up participants with API tokens, for loading the API with wrk (`scripts/benchmark`).
struct LoadFixtures {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    /// Participants with a practice's Daily planned and appointments ahead, one token per line, for GET /sync.
    func sync(participants count: Int, tokensFile: String) async throws {
        let people = try await BenchmarkPopulation.make(count, on: database, now: now)
        try await people.planDaily(on: database, now: now)
        _ = try await Planner(database: database, services: services).runAll(now: now)
        var tokens: [String] = []
        let appointments = AppointmentService(database: database, services: services)
        let zone = TimeZone(identifier: "Europe/Vienna")!
        for patient in people.patients {
            for offset in [2, 9] {
                let start = LocalDateTime(
                    date: LocalDate(now, in: zone).adding(days: offset), time: LocalTime("10:00")!
                )
                .instant(in: zone)
                _ = try await appointments.create(
                    for: patient, by: patient, title: "Session", startsAt: start,
                    endsAt: start.addingTimeInterval(3000),
                    comment: nil, tell: false)
            }
            tokens.append(try await token(for: patient))
        }
        try tokens.joined(separator: "\n").write(toFile: tokensFile, atomically: true, encoding: .utf8)
    }

    /// Participants with `promptsEach` open prompts of the PSS-10 (ten items, scored) each: one line per prompt
    /// with the participant's token, the prompt's id and the instrument's version, for POST /me/responses.
    func submissions(participants count: Int, promptsEach: Int, requestsFile: String) async throws {
        let people = try await BenchmarkPopulation.make(count, on: database, now: now)
        guard
            let instrument = try await InstrumentCatalog(database: database, services: services).latestPublished(
                Self.submissionInstrument)
        else { throw CommandFailure(message: "The instrument library has no \(Self.submissionInstrument).") }
        var lines: [String] = []
        for patient in people.patients {
            let token = try await token(for: patient)
            let prompts = (0..<promptsEach).map { _ in
                let prompt = PromptRecord(
                    patientID: patient.id!, studyID: people.practiceID, assignedBy: people.therapistID,
                    instrumentKey: instrument.key, instrumentVersion: instrument.version,
                    opensAt: now.addingTimeInterval(-3600),
                    closesAt: now.addingTimeInterval(7 * 86_400), source: .manual, now: now)
                prompt.id = UUID()
                return prompt
            }
            try await prompts.create(on: database)
            lines += prompts.map { "\(token) \($0.id!.lowercasedText) \(instrument.version)" }
        }
        try lines.shuffled().joined(separator: "\n").write(toFile: requestsFile, atomically: true, encoding: .utf8)
    }

    static let submissionInstrument = "pss-10"

    /// Participants of a practice whose Daily is not planned yet, for several processes to plan at once: a JSON
    /// file with the therapist's API token and each participant's id and token.
    func cluster(participants count: Int, file: String) async throws {
        struct Participant: Encodable {
            let id: UUID
            let token: String
        }
        struct Fixtures: Encodable {
            let therapist: String
            let participants: [Participant]
        }
        let people = try await BenchmarkPopulation.make(count, on: database, now: now)
        try await people.planDaily(on: database, now: now)
        guard let therapist = try await UserRecord.find(people.therapistID, on: database) else { return }
        var participants: [Participant] = []
        for patient in people.patients {
            participants.append(Participant(id: try patient.requireID(), token: try await token(for: patient)))
        }
        try JSONEncoder().encode(Fixtures(therapist: try await token(for: therapist), participants: participants))
            .write(to: URL(fileURLWithPath: file))
    }

    /// A researcher's study with one export ready whose zip holds the bytes of `source`, kept in this installation's
    /// file store; writes a line with the researcher's API token and the export's id, for downloading it.
    func download(source: String, file: String) async throws {
        let (researcher, study) = try await BenchmarkPopulation.researchStudy(
            "Download benchmark", on: database, now: now)
        let export = ExportRecord(
            studyID: try study.requireID(), requestedBy: try researcher.requireID(), since: nil, now: now)
        export.status = .ready
        export.progress = 100
        export.finishedAt = now
        export.expiresAt = now.addingTimeInterval(86_400)
        export.size = (try FileManager.default.attributesOfItem(atPath: source)[.size] as? NSNumber)?.int64Value
        try await export.create(on: database)
        try FileManager.default.createDirectory(at: services.scratchDirectory, withIntermediateDirectories: true)
        let copy = services.scratchDirectory.appendingPathComponent("download-\(UUID().lowercasedText)")
        try FileManager.default.copyItem(at: URL(fileURLWithPath: source), to: copy)
        try await services.files(on: database).put(.export(try export.requireID()), from: copy)
        try "\(try await token(for: researcher)) \(try export.requireID().lowercasedText)\n"
            .write(toFile: file, atomically: true, encoding: .utf8)
    }

    private func token(for user: UserRecord) async throws -> String {
        let token = SecretToken.generate()
        try await SessionRecord(
            userID: try user.requireID(), kind: .api, tokenHash: token.hash, csrfToken: nil,
            expiresAt: now.addingTimeInterval(AccountLifetimes.apiSession), now: now
        ).create(on: database)
        return token.value
    }
}
