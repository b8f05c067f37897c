import Fluent
import Foundation
import InterludeCore
import NIOConcurrencyHelpers
import Vapor

/// The instruments Interlude knows: the shipped library and what researchers import, each version a draft until
/// published and unchangeable after.
package struct InstrumentCatalog: Sendable {
    let database: any Database
    let services: AppServices

    package init(database: any Database, services: AppServices) {
        self.database = database
        self.services = services
    }

    private var now: Date { services.clock.now }

    /// What a file is, judged by its content.
    package enum Format: String, Sendable {
        case json
        case fhir
        case redcap

        /// Where an instrument read in this format comes from.
        var origin: InstrumentVersionRecord.Origin {
            switch self {
            case .json: .json
            case .fhir: .fhir
            case .redcap: .redcap
            }
        }
    }

    /// How long reading an uploaded instrument may take.
    static let uploadBudget: Duration = .seconds(5)

    /// What an import asks for besides the file: which forms of a REDCap dictionary (all when nil), and a key of
    /// the importer's own in place of the one the file suggests.
    package struct Choice: Sendable {
        var forms: [String]?
        var key: String?

        init(forms: [String]? = nil, key: String? = nil) {
            self.forms = forms
            self.key = key
        }

        /// From the comma-separated form names and the key a person typed; blank means not chosen.
        init(forms: String?, key: String?) throws {
            let names = (forms ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
            self.forms = names.isEmpty ? nil : names
            let key = key?.trimmingCharacters(in: .whitespaces) ?? ""
            guard key.isEmpty || InstrumentDefinition.isValidKey(key) else {
                throw AppError.field("key", .invalidFormat)
            }
            self.key = key.isEmpty ? nil : key
        }
    }

    /// The instruments a file holds (one per form of a REDCap dictionary), what was left out of them on purpose,
    /// and the format they were read in.
    package struct Upload: Sendable {
        var definitions: [InstrumentDefinition]
        var notes: [ImportNote]
        var format: Format
    }

    /// Reads an uploaded instrument on the thread pool, off the threads that serve requests, within `uploadBudget`.
    static func parseUpload(_ data: Data, format: Format?, choice: Choice = Choice(), on threadPool: NIOThreadPool)
        async throws -> Upload
    {
        try await threadPool.runIfActive {
            try parse(data, format: format, choice: choice, budget: WorkBudget(uploadBudget))
        }
    }

    /// Reads instruments from our JSON, a FHIR Questionnaire or a REDCap data dictionary and checks them.
    static func parse(_ data: Data, format: Format?, choice: Choice = Choice(), budget: WorkBudget = .unlimited)
        throws -> Upload
    {
        let detected = format ?? detect(data)
        var upload = Upload(definitions: [], notes: [], format: detected)
        switch detected {
        case .fhir:
            let result = try FHIRQuestionnaireImport.read(from: data, budget: budget)
            upload.definitions = [result.definition]
            upload.notes = result.notes
        case .redcap:
            let result = try REDCapImport.instruments(
                fromCSV: String(decoding: data, as: UTF8.self), forms: choice.forms, budget: budget)
            upload.definitions = result.instruments
            upload.notes = result.notes
        case .json:
            do {
                upload.definitions = [try JSONDecoder().decode(InstrumentDefinition.self, from: data)]
            } catch let error as DecodingError {
                throw ProblemMiddleware.map(error)
            }
        }
        if let key = choice.key {
            let several = upload.definitions.count > 1
            for index in upload.definitions.indices {
                let own = several ? key + "-" + upload.definitions[index].key : key
                upload.definitions[index].key = String(own.prefix(InstrumentDefinition.keyMaxLength))
            }
        }
        for definition in upload.definitions { try definition.validate() }
        return upload
    }

    static func detect(_ data: Data) -> Format {
        guard
            let first = data.first(where: {
                !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF)
            }),
            first == UInt8(ascii: "{")
        else { return .redcap }
        let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        return object?["resourceType"] as? String == "Questionnaire" ? .fhir : .json
    }

    /// Loads the shipped library files, once per process; a broken one stops the start, naming the file.
    static func loadLibrary(directory: String) throws -> [InstrumentDefinition] {
        try shippedLibraries.value(of: directory, load: readLibrary(directory:))
    }

    private static let shippedLibraries = ShippedFiles<[InstrumentDefinition]>()

    private static func readLibrary(directory: String) throws -> [InstrumentDefinition] {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }
            .sorted()
        return try files.map { file in
            let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file))
            do {
                return try parse(data, format: .json).definitions[0]
            } catch {
                throw SettingsError.invalid(
                    name: "Resources/Instruments/\(file)", value: "", expected: "a valid instrument: \(error)")
            }
        }
    }

    /// Stores every library instrument that is not in the database yet as a published version.
    func installLibrary(_ library: [InstrumentDefinition], logger: Logger) async throws {
        for definition in library {
            if let stored = try await version(definition.key, definition.version) {
                if try stored.decodedDefinition() != definition {
                    logger.warning(
                        "Library file for \(definition.key) version \(definition.version) differs from the stored version; the stored one stays. Give the file a new version to publish a change."
                    )
                }
                continue
            }
            let record = InstrumentVersionRecord(
                key: definition.key, version: definition.version, title: definition.title.text(.en), origin: .library,
                definition: try Self.encode(definition), createdBy: nil, now: now)
            record.status = .published
            record.publishedAt = now
            try await record.create(on: database)
        }
    }

    /// Imports a new version of an instrument as a draft: it replaces an earlier draft of the same key, or
    /// follows the newest published version.
    /// The owner and sharing are decided by `InstrumentGovernance`.
    package func importDraft(
        _ definition: InstrumentDefinition, format: Format, owner: UUID?, shared: Bool, by user: UserRecord
    )
        async throws -> InstrumentVersionRecord
    {
        var draft = definition
        let existing = try await InstrumentVersionRecord.query(on: database)
            .filter(\.$key == definition.key).sort(\.$version, .descending).first()
        if let existing, existing.status == .draft {
            draft.version = existing.version
            existing.definition = try Self.encode(draft)
            existing.title = draft.title.text(.en)
            existing.origin = format.origin
            existing.$createdBy.id = try user.requireID()
            existing.createdAt = now
            try await existing.save(on: database)
            return existing
        }
        draft.version = (existing?.version ?? 0) + 1
        let record = InstrumentVersionRecord(
            key: draft.key, version: draft.version, title: draft.title.text(.en),
            origin: format.origin,
            definition: try Self.encode(draft), createdBy: try user.requireID(), ownerStudy: owner, shared: shared,
            now: now)
        do {
            try await record.create(on: database)
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw AppError.conflict(.versionExists)
        }
        return record
    }

    /// Makes a draft available for prompts; from now on it never changes.
    package func publish(_ record: InstrumentVersionRecord) async throws -> InstrumentVersionRecord {
        guard record.status == .draft else {
            throw AppError.conflict(.alreadyPublished)
        }
        record.status = .published
        record.publishedAt = now
        try await record.save(on: database)
        return record
    }

    /// Offers every version of `key` to all studies.
    func share(_ key: String) async throws {
        try await InstrumentVersionRecord.query(on: database).filter(\.$key == key).set(\.$shared, to: true).update()
    }

    func version(_ key: String, _ version: Int) async throws -> InstrumentVersionRecord? {
        try await InstrumentVersionRecord.query(on: database)
            .filter(\.$key == key).filter(\.$version == version).first()
    }

    /// The version of `key` new prompts of `studyID` use: the one the study pinned; at its first use the newest
    /// published version it may use, pinned from then on (a parallel first use keeps the pin the other made).
    func pinnedVersion(_ key: String, for studyID: UUID?) async throws -> InstrumentVersionRecord? {
        guard let studyID else { return try await latestPublished(key, usableIn: nil) }
        if let pin = try await pin(key, in: studyID) { return try await version(key, pin.version) }
        guard let latest = try await latestPublished(key, usableIn: studyID) else { return nil }
        try await Statements.insertPin(key, version: latest.version, in: studyID, at: now, on: database)
        guard let pin = try await pin(key, in: studyID) else { return latest }
        return pin.version == latest.version ? latest : try await version(key, pin.version)
    }

    func pin(_ key: String, in studyID: UUID) async throws -> InstrumentPinRecord? {
        try await InstrumentPinRecord.query(on: database).filter(\.$study.$id == studyID).filter(
            \.$instrumentKey == key
        ).first()
    }

    /// The versions a study has pinned, by instrument.
    func pins(in studyID: UUID) async throws -> [InstrumentPinRecord] {
        try await InstrumentPinRecord.query(on: database).filter(\.$study.$id == studyID).sort(\.$instrumentKey).all()
    }

    /// Points the study at another version of `key`; of parallel moves the last one stays.
    func movePin(_ key: String, to version: Int, in studyID: UUID) async throws -> InstrumentPinRecord {
        try await Statements.insertPin(key, version: version, in: studyID, at: now, on: database)
        try await Statements.movePin(key, to: version, in: studyID, at: now, on: database)
        guard let pin = try await pin(key, in: studyID) else { throw AppError.notFound }
        return pin
    }

    /// The newest published version of `key` that `studyID` may use (see `isUsable(in:)`), the one its new prompts
    /// use; nil when there is none.
    func latestPublished(_ key: String, usableIn studyID: UUID?) async throws -> InstrumentVersionRecord? {
        try await latestPublished(key).flatMap { $0.isUsable(in: studyID) ? $0 : nil }
    }

    /// The title of the newest published version of `key` in `language`; the key itself when there is none.
    func title(of key: String, in language: Language) async throws -> String {
        try await latestPublished(key)?.title(in: language) ?? key
    }

    /// The newest published version of `key`, the one new prompts use.
    package func latestPublished(_ key: String) async throws -> InstrumentVersionRecord? {
        try await InstrumentVersionRecord.query(on: database)
            .filter(\.$key == key)
            .filter(\.$status == InstrumentVersionRecord.Status.published)
            .sort(\.$version, .descending)
            .first()
    }

    /// Every instrument with its newest version (drafts included for staff who import).
    func overview() async throws -> [InstrumentVersionRecord] {
        let all = try await InstrumentVersionRecord.query(on: database).sort(\.$key).sort(\.$version, .descending).all()
        var seen = Set<String>()
        return all.filter { seen.insert($0.key).inserted }
    }

    /// Every version of `key`, newest first.
    func versions(of key: String) async throws -> [InstrumentVersionRecord] {
        try await InstrumentVersionRecord.query(on: database).filter(\.$key == key).sort(\.$version, .descending).all()
    }

    /// The definitions of several versions at once, keyed by key and version. A published version never changes,
    /// so this process reads and decodes it once; drafts are read every time.
    func definitions(_ pairs: Set<InstrumentVersionKey>) async throws -> [InstrumentVersionKey: InstrumentDefinition] {
        var result = services.published.definitions(pairs)
        let missing = pairs.filter { result[$0] == nil }
        guard !missing.isEmpty else { return result }
        let records = try await InstrumentVersionRecord.query(on: database).filter(\.$key ~~ Set(missing.map(\.key)))
            .all()
        for record in records {
            let pair = InstrumentVersionKey(key: record.key, version: record.version)
            guard missing.contains(pair) else { continue }
            let definition = try record.decodedDefinition()
            result[pair] = definition
            if record.isPublished { services.published.remember(definition, for: pair) }
        }
        return result
    }

    /// The definition of one version, as `definitions(_:)` reads it.
    func definition(_ key: String, _ version: Int) async throws -> InstrumentDefinition? {
        let pair = InstrumentVersionKey(key: key, version: version)
        return try await definitions([pair])[pair]
    }

    /// The definition as JSON, keys sorted; `pretty` for people to read.
    static func encode(_ definition: InstrumentDefinition, pretty: Bool = false) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys]
        return String(decoding: try encoder.encode(definition), as: UTF8.self)
    }
}

/// An instrument and one of its versions.
struct InstrumentVersionKey: Hashable, Sendable {
    let key: String
    let version: Int
}

extension InstrumentVersionRecord {
    /// Definition texts decoded once per process: drafts, which are read again on every use, and the versions staff
    /// open (published ones are also kept decoded by `PublishedDefinitions`).
    private static let decoded = DecodedCache<InstrumentDefinition>(capacity: 256)

    func decodedDefinition() throws -> InstrumentDefinition {
        try Self.decoded.value(for: definition) {
            try JSONDecoder().decode(InstrumentDefinition.self, from: Data($0.utf8))
        }
    }

    var isPublished: Bool { status == .published }

    /// The instrument's title in `language`, or the stored English title when the definition cannot be read.
    func title(in language: Language) -> String {
        (try? decodedDefinition().title.text(language)) ?? title
    }
}

/// Published versions' definitions, decoded. Publishing fixes a version for good, so what one request read serves
/// every later one, in every process alike.
final class PublishedDefinitions: Sendable {
    private let known = NIOLockedValueBox<[InstrumentVersionKey: InstrumentDefinition]>([:])

    func definitions(_ pairs: Set<InstrumentVersionKey>) -> [InstrumentVersionKey: InstrumentDefinition] {
        known.withLockedValue { known in
            var found: [InstrumentVersionKey: InstrumentDefinition] = [:]
            for pair in pairs { found[pair] = known[pair] }
            return found
        }
    }

    func remember(_ definition: InstrumentDefinition, for pair: InstrumentVersionKey) {
        known.withLockedValue { $0[pair] = definition }
    }
}
