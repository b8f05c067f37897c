import Fluent
import Foundation
import InterludeCore
import InterludeServer
import SQLKit
import Vapor

/// `interlude benchmark planner|dispatcher|export|samples|…-fixtures`: how fast this machine
/// plans, sends, exports and takes samples, each measured against a ceiling in the same run, and the fixtures
/// `scripts/benchmark` loads the API with through wrk. It fills an empty
/// database with made-up people, so it refuses to run on a database that holds anyone.
public struct BenchmarkCommand: AsyncCommand {
    public init() {}

    public struct Signature: CommandSignature {
        public init() {}

        @Argument(
            name: "subject",
            help:
                "planner, dispatcher, export, samples, sync-fixtures, submission-fixtures, cluster-fixtures or download-fixtures"
        )
        var subject: String

        @Option(
            name: "participants",
            help: "How many participants (default 10000 for planner, 1000 for export, 100 otherwise).")
        var participants: Int?

        @Option(
            name: "days", help: "export: how many days of three answered prompts each participant has (default 60).")
        var days: Int?

        @Option(name: "notifications", help: "How many notifications the dispatcher sends (default 2000).")
        var notifications: Int?

        @Option(name: "tokens", help: "sync-fixtures: the file to write one API token per participant to.")
        var tokens: String?

        @Option(name: "prompts", help: "submission-fixtures: how many open prompts each participant has (default 300).")
        var prompts: Int?

        @Option(
            name: "requests",
            help: """
                submission-fixtures: the file to write one line per prompt to (token, prompt id, version); cluster-fixtures: the JSON \
                file; download-fixtures: the file to write the token and the export's id to.
                """)
        var requests: String?

        @Option(name: "samples", help: "samples: how many samples the eight clients send together (default 1000000).")
        var samples: Int?

        @Option(name: "megabytes", help: "samples: the size of the Apple Health export imported (default 500).")
        var megabytes: Int?

        @Option(name: "from", help: "download-fixtures: the file whose bytes the ready export holds.")
        var from: String?
    }

    public var help: String {
        "Measures the planner, the dispatcher, a research export or sample uploads against a ceiling, or writes load fixtures, on an empty database."
    }

    public func run(using context: CommandContext, signature: Signature) async throws {
        let app = context.application
        try await migrate(app)
        guard try await UserRecord.query(on: app.db).count() == 0 else {
            throw CommandFailure(
                message:
                    "The benchmark fills the database with made-up people; point INTERLUDE_DATA_DIR at an empty directory."
            )
        }
        switch signature.subject {
        case "planner":
            let result = try await PlannerBenchmark(
                database: app.db, services: app.interlude, databasePath: try sqlitePath(app)
            )
            .run(participants: signature.participants ?? 10_000)
            context.console.print(result.report)
        case "dispatcher":
            let result = try await DispatcherBenchmark(app: app).run(notifications: signature.notifications ?? 2000)
            context.console.print(result.report)
        case "export":
            let result = try await ExportBenchmark(
                database: app.db, services: app.interlude, databasePath: try sqlitePath(app)
            )
            .run(participants: signature.participants ?? 1000, days: signature.days ?? 60)
            context.console.print(result.report)
        case "samples":
            let result = try await SampleBenchmark(app: app).run(
                samples: signature.samples ?? 1_000_000, exportMegabytes: signature.megabytes ?? 500)
            context.console.print(result.report)
        case "sync-fixtures":
            guard let file = signature.tokens else {
                throw CommandFailure(message: "Name the token file with --tokens.")
            }
            try await LoadFixtures(database: app.db, services: app.interlude).sync(
                participants: signature.participants ?? 100, tokensFile: file)
        case "submission-fixtures":
            guard let file = signature.requests else {
                throw CommandFailure(message: "Name the requests file with --requests.")
            }
            try await LoadFixtures(database: app.db, services: app.interlude).submissions(
                participants: signature.participants ?? 100, promptsEach: signature.prompts ?? 300, requestsFile: file)
        case "cluster-fixtures":
            guard let file = signature.requests else {
                throw CommandFailure(message: "Name the fixtures file with --requests.")
            }
            try await LoadFixtures(database: app.db, services: app.interlude).cluster(
                participants: signature.participants ?? 30, file: file)
        case "download-fixtures":
            guard let source = signature.from, let file = signature.requests else {
                throw CommandFailure(
                    message: "Name the export's bytes with --from and the file to write with --requests.")
            }
            try await LoadFixtures(database: app.db, services: app.interlude).download(source: source, file: file)
        default:
            throw CommandFailure(
                message:
                    "Choose planner, dispatcher, export, samples, sync-fixtures, submission-fixtures, cluster-fixtures or download-fixtures."
            )
        }
    }

    /// The planner and export benchmarks compare with the `sqlite3` shell on the same file.
    private func sqlitePath(_ app: Application) throws -> String {
        guard case .sqliteFile(let path) = app.interlude.settings.database else {
            throw CommandFailure(message: "This benchmark runs on the embedded SQLite database (unset DATABASE_URL).")
        }
        return path
    }
}

/// Plans the Intersession-Daily (three random prompts a day, 14 days ahead) for many participants, then has the
/// `sqlite3` shell insert exactly the rows it made again in one transaction, and compares the two rates.
struct PlannerBenchmark {
    let database: any Database
    let services: AppServices
    let databasePath: String

    private var now: Date { services.clock.now }

    struct Result {
        let participants: Int
        let prompts: Int
        let plannerSeconds: Double
        let insertSeconds: Double

        var plannerRate: Double { Double(prompts) / plannerSeconds }
        var insertRate: Double { Double(prompts) / insertSeconds }
        /// Planner throughput as a share of the shell's; the aim is at least 0.5.
        var ratio: Double { plannerRate / insertRate }

        var report: String {
            [
                "participants: \(participants)",
                "prompts: \(prompts)",
                String(format: "planner: %.2f s, %.0f prompts/s", plannerSeconds, plannerRate),
                String(
                    format: "sqlite3 shell, the same rows in one transaction: %.2f s, %.0f rows/s", insertSeconds,
                    insertRate),
                String(format: "ratio (planner / sqlite3): %.2f (aim: at least 0.50)", ratio),
            ].joined(separator: "\n")
        }
    }

    func run(participants: Int) async throws -> Result {
        try await populate(participants)
        let clock = ContinuousClock()
        var report = Planner.Report()
        let planning = try await clock.measure {
            report = try await Planner(database: database, services: services).runAll(now: now)
        }
        let statements = FileManager.default.temporaryDirectory.appendingPathComponent("planner-\(UUID()).sql")
        defer { try? FileManager.default.removeItem(at: statements) }
        try Data("BEGIN;\n".utf8).write(to: statements)
        try SQLiteShell.run(
            ["-cmd", ".mode insert \(PromptRecord.schema)", databasePath, "SELECT * FROM \(PromptRecord.schema)"],
            appendingTo: statements)
        try Data("COMMIT;\n".utf8).append(to: statements)
        try await PromptRecord.query(on: database).delete()
        let inserting = try clock.measure { try SQLiteShell.run([databasePath], input: statements) }
        return Result(
            participants: participants, prompts: report.created, plannerSeconds: planning.seconds,
            insertSeconds: inserting.seconds)
    }

    /// One therapist's practice with `count` paired participants in Vienna and the Daily for all of them.
    private func populate(_ count: Int) async throws {
        try await BenchmarkPopulation.make(count, on: database, now: now).planDaily(on: database, now: now)
    }
}

enum BenchmarkPopulation {
    struct Made {
        let therapistID: UUID
        let practiceID: UUID
        let patients: [UserRecord]

        /// Gives the practice the Intersession-Daily for everyone in it.
        func planDaily(on database: any Database, now: Date) async throws {
            let daily = SchedulePlan.intersessionDaily()
            try await PlanRecord(
                studyID: practiceID, patientID: nil, arm: nil, createdBy: therapistID,
                instrumentKey: daily.instrumentKey,
                definition: try ScheduleService.encode(daily), now: now
            ).create(on: database)
        }
    }

    /// A researcher who owns a running study called `title`.
    static func researchStudy(_ title: String, on database: any Database, now: Date) async throws -> (
        UserRecord, StudyRecord
    ) {
        let researcher = UserRecord(
            email: "benchmark-researcher@example.org", passwordHash: "-", role: .researcher, name: nil, locale: "en",
            timeZone: "Europe/Vienna", mustChangePassword: false, now: now)
        try await researcher.create(on: database)
        let study = StudyRecord(
            ownerID: try researcher.requireID(), title: .neutral(title), description: LocalizedText([:]),
            consentText: "Yes", consentVersion: "1",
            joinMode: .open, joinPasswordHash: nil, status: .running, now: now)
        try await study.create(on: database)
        try await StudyStaffRecord(studyID: try study.requireID(), userID: try researcher.requireID(), role: .owner)
            .create(on: database)
        return (researcher, study)
    }

    static func make(_ count: Int, on database: any Database, now: Date) async throws -> Made {
        let therapist = UserRecord(
            email: "benchmark-therapist@example.org", passwordHash: "-", role: .therapist, name: nil,
            locale: "en", timeZone: "Europe/Vienna", mustChangePassword: false, now: now)
        try await therapist.create(on: database)
        try await TherapistProfileRecord(userID: try therapist.requireID(), fullName: "Dr. Benchmark").create(
            on: database)
        let practice = StudyRecord(
            ownerID: try therapist.requireID(), title: "Benchmark", description: LocalizedText([:]), consentText: "",
            consentVersion: StaffAccounts.practiceConsent, joinMode: .pairingCode,
            joinPasswordHash: nil, status: .running, now: now)
        try await practice.create(on: database)
        let practiceID = try practice.requireID()
        try await StudyStaffRecord(studyID: practiceID, userID: try therapist.requireID(), role: .owner).create(
            on: database)
        var patients: [UserRecord] = []
        for start in stride(from: 0, to: count, by: 500) {
            let users = (start..<min(start + 500, count)).map { index in
                let user = UserRecord(
                    id: UUID(), email: "benchmark-\(index)@example.org", passwordHash: "-",
                    role: .patient, name: nil, locale: "en", timeZone: "Europe/Vienna",
                    mustChangePassword: false, now: now)
                user.emailVerifiedAt = now
                return user
            }
            try await users.create(on: database)
            try await users.map {
                PatientProfileRecord(
                    userID: $0.id!, pseudonym: "B-\($0.email.dropFirst(10).prefix { $0 != "@" })",
                    shareWithResearch: false)
            }.create(on: database)
            try await users.map {
                EnrollmentRecord(
                    studyID: practiceID, patientID: $0.id!, therapistID: therapist.id, status: EnrollmentStatus.active,
                    consentVersion: StaffAccounts.practiceConsent, now: now)
            }.create(on: database)
            patients += users
        }
        return Made(therapistID: try therapist.requireID(), practiceID: practiceID, patients: patients)
    }
}

/// The `sqlite3` command-line shell, the ceiling of the benchmarks on SQLite.
///
/// Started with `posix_spawnp` rather than Foundation's `Process`: on Linux, `Process.run()` lists the open files
/// of the calling process by copying whole directory entries, and now and then reads past the end of its buffer
/// and crashes the process that starts it.
enum SQLiteShell {
    static func run(_ arguments: [String], input: URL? = nil, output: URL? = nil, appendingTo appended: URL? = nil)
        throws
    {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let input { posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, input.path, O_RDONLY, 0) }
        if let output {
            posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
        if let appended {
            posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, appended.path, O_WRONLY | O_APPEND, 0)
        }
        let argv: [UnsafeMutablePointer<CChar>?] = (["sqlite3"] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var child: pid_t = 0
        guard posix_spawnp(&child, "sqlite3", &actions, nil, argv, environ) == 0 else {
            throw CommandFailure(message: "sqlite3 could not be started (is the sqlite3 command installed?)")
        }
        var status: Int32 = 0
        while waitpid(child, &status, 0) == -1 {
            guard errno == EINTR else { throw CommandFailure(message: "waiting for sqlite3 failed (errno \(errno))") }
        }
        // A signal that stopped the shell is in the low seven bits of the status, its exit status in the next eight.
        guard status & 0x7f == 0 else {
            throw CommandFailure(message: "sqlite3 was stopped by signal \(status & 0x7f)")
        }
        guard (status >> 8) & 0xff == 0 else {
            throw CommandFailure(message: "sqlite3 exited with status \((status >> 8) & 0xff)")
        }
    }
}

extension Data {
    func append(to url: URL) throws {
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: self)
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
