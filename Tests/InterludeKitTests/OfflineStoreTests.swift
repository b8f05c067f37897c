import Crypto
import Foundation
import InterludeCore
import Testing

@testable import InterludeKit

@Suite("Offline store")
struct OfflineStoreTests {
    static func prompt(
        _ key: String = "vectors", opensAt: Date = Date(timeIntervalSince1970: 1_780_000_000), hours: Double = 2
    ) -> Prompt {
        Prompt(
            id: UUID(), instrumentKey: key, instrumentVersion: 1, title: "Check-in", opensAt: opensAt,
            closesAt: opensAt.addingTimeInterval(hours * 3600), status: .open, source: .schedule)
    }

    static func changes(
        _ prompts: [Prompt], definitions: [InstrumentDefinition] = [], full: Bool = true, deleted: [Tombstone] = []
    )
        -> ServerChanges
    {
        ServerChanges(
            cursor: "c1", full: full, prompts: prompts, instruments: definitions, appointments: [], interventions: [],
            records: [],
            deleted: deleted)
    }

    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("interludekit-\(UUID().uuidString)")
    }

    @Test("what a person wrote is sealed on disk, and opens again with the key after a restart")
    func sealedAtRest() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let keys = FileKeyStore(url: folder.appendingPathComponent("store.key"))
        let prompt = Self.prompt()
        do {
            let store = try OfflineStore(directory: folder, keyStore: keys)
            try store.apply(Self.changes([prompt]), etag: "e1")
            try store.saveAnswer(.text("my sister's wedding worries me"), item: "note", prompt: prompt.id, at: Date())
            try store.enqueue(
                .createAppointment(
                    id: UUID(), AppointmentDraft(title: "Dr. Kovac about the panic", startsAt: Date(), endsAt: Date())),
                at: Date())
            try store.saveInterventionAnswer("I called my brother", for: UUID())
        }
        let attributes = try FileManager.default.attributesOfItem(
            atPath: folder.appendingPathComponent("store.key").path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        var bytes = Data()
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path)
        where name.hasPrefix("interlude.sqlite") {
            bytes += try Data(contentsOf: folder.appendingPathComponent(name))
        }
        #expect(!bytes.isEmpty)
        for secret in ["sister's wedding", "panic", "called my brother"] {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) in the clear")
        }
        let reopened = try OfflineStore(directory: folder, keyStore: keys)
        #expect(try reopened.draft(for: prompt.id)?.answers["note"] == .text("my sister's wedding worries me"))
        #expect(try reopened.appointments().map(\.title) == ["Dr. Kovac about the panic"])
        // Another key opens nothing.
        let stranger = try OfflineStore(
            directory: folder, keyStore: FileKeyStore(url: Self.folder().appendingPathComponent("k")))
        #expect(throws: (any Error).self) { try stranger.draft(for: prompt.id) }
    }

    @Test("each answer is kept at once; the first answer's time stays the start; a taken-back answer goes")
    func drafts() throws {
        let store = try OfflineStore.inMemory()
        let prompt = Self.prompt()
        try store.apply(Self.changes([prompt]), etag: "e")
        let first = Date(timeIntervalSince1970: 1_780_000_100)
        try store.saveAnswer(.number(3), item: "a", prompt: prompt.id, at: first)
        try store.saveAnswer(.text("x"), item: "b", prompt: prompt.id, at: first.addingTimeInterval(30))
        try store.saveAnswer(nil, item: "a", prompt: prompt.id, at: first.addingTimeInterval(60))
        let draft = try #require(try store.draft(for: prompt.id))
        #expect(draft.answers == ["b": .text("x")])
        #expect(draft.startedAt == first)
    }

    @Test("changes wait in order; an answered prompt shows as done at once and again after a full pull")
    func outbox() throws {
        let store = try OfflineStore.inMemory()
        let prompt = Self.prompt()
        try store.apply(Self.changes([prompt]), etag: "e")
        let response = ResponseSubmission(
            promptID: prompt.id, instrumentKey: prompt.instrumentKey, version: 1, answers: [:], startedAt: nil,
            completedAt: prompt.opensAt.addingTimeInterval(60))
        let appointment = UUID()
        try store.enqueue(.response(response), label: "Check-in", at: Date())
        try store.enqueue(.deleteAppointment(id: appointment, baseVersion: 2), at: Date())
        #expect(
            try store.pending().map(\.change) == [
                .response(response), .deleteAppointment(id: appointment, baseVersion: 2),
            ])
        #expect(try store.prompt(prompt.id)?.status == .completed)
        try store.apply(Self.changes([prompt]), etag: "e2")
        #expect(try store.prompt(prompt.id)?.status == .completed)
        #expect(try store.cursor.cursor == "c1" && store.cursor.etag == "e2")
    }

    @Test("a tombstone removes the prompt and its draft; a delta keeps the rest")
    func tombstones() throws {
        let store = try OfflineStore.inMemory()
        let kept = Self.prompt()
        let gone = Self.prompt()
        try store.apply(Self.changes([kept, gone]), etag: "e")
        try store.saveAnswer(.bool(true), item: "x", prompt: gone.id, at: Date())
        try store.apply(Self.changes([], full: false, deleted: [Tombstone(entity: .prompt, id: gone.id)]), etag: "e2")
        #expect(try store.prompts().map(\.id) == [kept.id])
        #expect(try store.draft(for: gone.id) == nil)
    }

    @Test("a notification event counts once per prompt and goes to the outbox once")
    func paradata() throws {
        let store = try OfflineStore.inMemory()
        let prompt = UUID()
        let at = Date(timeIntervalSince1970: 1_780_000_000)
        try store.recordNotification(.delivered, prompt: prompt, at: at)
        try store.recordNotification(.delivered, prompt: prompt, at: at.addingTimeInterval(60))
        try store.recordNotification(.opened, prompt: prompt, at: at.addingTimeInterval(90))
        #expect(try store.notificationEvents(for: prompt) == [.delivered: at, .opened: at.addingTimeInterval(90)])
        #expect(
            try store.pending().map(\.change) == [
                .notification(promptID: prompt, .delivered, at: at),
                .notification(promptID: prompt, .opened, at: at.addingTimeInterval(90)),
            ])
    }
}
