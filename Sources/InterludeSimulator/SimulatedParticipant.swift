import Foundation
import InterludeCore
import InterludeKit
import OpenAPIRuntime

/// One simulated person with their phone: an InterludeKit client, an offline store and a sync engine, as a native
/// app has them.
actor SimulatedParticipant {
    let email: String
    private let configuration: Simulation.Configuration
    private let client: InterludeClient
    private let store: OfflineStore
    private let engine: SyncEngine
    private var random: SeededRandom
    private var tally: Simulation.ParticipantTally
    private var offlineUntil: Date?
    private var lastSync = Date.distantPast
    /// When each prompt will be answered; nil for one the person lets pass.
    private var plans: [UUID: Date?] = [:]
    private var submitted: Set<UUID> = []
    private var sampleTypes: [SampleTypeChoice] = []

    private init(
        email: String, configuration: Simulation.Configuration, client: InterludeClient, store: OfflineStore,
        seed: UInt64
    ) {
        self.email = email
        self.configuration = configuration
        self.client = client
        self.store = store
        engine = SyncEngine(client: client, store: store)
        random = SeededRandom(seed: seed)
        tally = Simulation.ParticipantTally(email: email)
    }

    /// Signs the participant up (or in) and enrols them; waits out the server's rate limits on the simulation's clock.
    static func start(_ index: Int, _ configuration: Simulation.Configuration, clock: any SimulationClock) async throws
        -> SimulatedParticipant
    {
        let address = "10.\(index / 65_536 % 256).\(index / 256 % 256).\(index % 256)"
        let client = InterludeClient(
            serverURL: configuration.serverURL,
            middlewares: configuration.distinctAddresses ? [ForwardedFor(address: address)] : [])
        let email: String
        switch configuration.accounts {
        case .register(let prefix, let domain, let password, let verificationToken):
            email = "\(prefix)-\(index + 1)@\(domain)"
            try await patiently(clock) {
                try await client.register(
                    email: email, password: password, privacyPolicyVersion: "1", shareWithResearch: true, locale: "en",
                    timeZone: configuration.timeZone)
            }
            try await client.verifyEmail(token: try await verificationToken(email))
            try await patiently(clock) { try await client.signIn(email: email, password: password) }
        case .existing(let accounts):
            guard index < accounts.count else {
                throw Problem(type: "/problems/simulation", title: "Fewer accounts than participants", status: 400)
            }
            email = accounts[index].email
            try await patiently(clock) { try await client.signIn(email: email, password: accounts[index].password) }
        }
        switch configuration.enrolment {
        case .join(let study, let version, let modules):
            try await client.join(study: study, consentVersion: version, modules: modules)
        case .pair(let codes):
            guard index < codes.count else {
                throw Problem(type: "/problems/simulation", title: "Fewer codes than participants", status: 400)
            }
            try await patiently(clock) {
                try await client.pair(code: codes[index], dateOfBirth: "1990-01-01", gender: "diverse")
            }
        case .none:
            break
        }
        let participant = SimulatedParticipant(
            email: email, configuration: configuration, client: client, store: try .inMemory(),
            seed: configuration.seed &* 1_000_003 &+ UInt64(index))
        try await participant.prepare(at: await clock.now())
        return participant
    }

    /// Runs `action`, waiting on the simulation's clock as long as the server asks (429 with Retry-After).
    private static func patiently(_ clock: any SimulationClock, _ action: () async throws -> Void) async throws {
        for _ in 0..<20 {
            do {
                return try await action()
            } catch let problem as Problem where problem.status == 429 {
                try await clock.advance(to: await clock.now().addingTimeInterval(60))
            }
        }
        try await action()
    }

    private func prepare(at now: Date) async throws {
        sampleTypes = try await client.sampleTypes()
        for type in sampleTypes where !type.enabled { try await client.setSampleType(type.type, enabled: true) }
        try await sync(at: now)
    }

    /// One look at the phone at `now`.
    func live(at now: Date) async throws {
        let hours = configuration.step / 3600
        if let until = offlineUntil {
            if now >= until {
                offlineUntil = nil
                try await sync(at: now)
            }
        } else if random.chance(configuration.offlineRate * hours) {
            offlineUntil = now.addingTimeInterval(random.between(1, 4) * 3600)
            tally.offlinePeriods += 1
        }
        var answered = false
        for prompt in try store.prompts()
        where prompt.status(at: now) == .open && !submitted.contains(prompt.id) && !prompt.blocked {
            if plans[prompt.id] == nil {
                let window = prompt.closesAt.timeIntervalSince(max(prompt.opensAt, now))
                let delay = random.between(0, min(window * 0.8, configuration.answerWithin))
                plans[prompt.id] =
                    random.chance(configuration.answerRate)
                    ? max(prompt.opensAt, now).addingTimeInterval(delay) : .some(nil)
            }
            guard let planned = plans[prompt.id], let at = planned, at <= now else { continue }
            try answer(prompt, at: now)
            answered = true
        }
        if random.chance(configuration.recordsPerDay * hours / 24) { try await record(at: now) }
        if offlineUntil == nil, answered || now.timeIntervalSince(lastSync) >= configuration.syncInterval {
            try await sync(at: now)
        }
    }

    /// The last sync once the time is over, and the simulator's count.
    func finish(at now: Date) async throws -> Simulation.ParticipantTally {
        offlineUntil = nil
        try await sync(at: now)
        let refusedResponses = try store.refusals().filter {
            if case .response = $0.change.change { true } else { false }
        }.count
        tally.refused = refusedResponses
        tally.answered =
            submitted.count - refusedResponses
            - (try store.pending().filter { if case .response = $0.change { true } else { false } }.count)
        tally.missed = try store.prompts().filter { $0.status(at: now) == .expired }.count
        return tally
    }

    private func answer(_ prompt: Prompt, at now: Date) throws {
        let session = try QuestionnaireSession(prompt: prompt.id, store: store)
        var generator = PlausibleAnswers(random: random)
        // Answers come one by one, as a person gives them, a few seconds apart.
        let answers = generator.answers(to: session.definition, at: now)
        random = generator.random
        var at = now.addingTimeInterval(-Double(answers.count) * 5)
        for (item, value) in answers.sorted(by: { $0.key < $1.key }) {
            try session.answer(item, value, at: max(at, prompt.opensAt))
            at = at.addingTimeInterval(5)
        }
        try session.submit(at: now)
        submitted.insert(prompt.id)
    }

    private func record(at now: Date) async throws {
        let id = UUID()
        let thoughts = ["I will not manage this", "Nobody listens to me", "I can take a break", "This will pass"]
        let body: [String: Any] = [
            "id": id.uuidString.lowercased(), "text": thoughts[random.index(thoughts.count)],
            "ratingBefore": (random.between(-1, 1) * 10).rounded() / 10,
            "ratingAfter": (random.between(-1, 1) * 10).rounded() / 10,
            "recordedAt": ISO8601DateFormatter().string(from: now),
        ]
        try store.enqueue(
            .createRecord(.thoughtOccurrence, id: id, body: try JSONSerialization.data(withJSONObject: body)), at: now)
        tally.thoughts += 1
        guard offlineUntil == nil, !sampleTypes.isEmpty else { return }
        let samples = sampleTypes.map { type in
            Sample(
                type: type.type, value: (random.between(40, 120)).rounded(), unit: type.unit,
                startsAt: now.addingTimeInterval(-600),
                endsAt: now, sourceID: UUID().uuidString)
        }
        tally.samples += try await client.upload(samples).stored
    }

    private func sync(at now: Date) async throws {
        try await engine.sync()
        lastSync = now
        tally.syncs += 1
    }
}
