import Foundation
import HTTPTypes
import InterludeCore
import InterludeKit
import OpenAPIRuntime

/// What a simulation's time is: the wall clock for demos and load, or a clock the caller moves (a test moves the
/// server's with it).
public protocol SimulationClock: Sendable {
    func now() async -> Date
    /// Returns once `instant` has come.
    func advance(to instant: Date) async throws
}

/// Real time.
public struct WallSimulationClock: SimulationClock {
    public init() {}

    public func now() async -> Date { SystemTime.now() }

    public func advance(to instant: Date) async throws {
        let wait = instant.timeIntervalSince(SystemTime.now())
        if wait > 0 { try await Task.sleep(for: .seconds(wait)) }
    }
}

/// Participants using a native app built on InterludeKit against a real server: each registers (or signs in), joins a
/// study or pairs with a therapist, then lives through the simulated time — answering most open prompts after a
/// while, going offline now and then (answers wait on the device and go with the next sync), noting thoughts and
/// sending samples. At the end every participant syncs once more and the simulator counts what it did.
public struct Simulation: Sendable {
    public enum Accounts: Sendable {
        /// New accounts `<prefix>-<n>@<domain>`; `verificationToken` finds the token of the address's verification email.
        case register(
            prefix: String, domain: String, password: String,
            verificationToken: @Sendable (String) async throws -> String)
        /// Accounts that exist, one per participant.
        case existing([(email: String, password: String)])
    }

    public enum Enrolment: Sendable {
        case join(study: UUID, consentVersion: String, modules: [String: Bool])
        /// One therapist's pairing code per participant.
        case pair(codes: [String])
        /// Already enrolled.
        case none
    }

    public struct Configuration: Sendable {
        public var serverURL: URL
        public var participants: Int
        public var duration: TimeInterval
        /// How far time moves between two looks at the app.
        public var step: TimeInterval
        public var seed: UInt64
        public var accounts: Accounts
        public var enrolment: Enrolment
        /// Share of prompts answered.
        public var answerRate = 0.8
        /// The longest a participant waits before answering an open prompt (never beyond most of its window).
        public var answerWithin: TimeInterval = 2 * 3600
        /// Chance per hour online of losing the connection (for one to four hours).
        public var offlineRate = 0.08
        /// Without changes waiting, an app syncs this often.
        public var syncInterval: TimeInterval = 2 * 3600
        /// Thoughts noted and sample batches sent per day.
        public var recordsPerDay = 1.0
        /// Each participant sends `X-Forwarded-For` with an address of its own, for a server that trusts a proxy in front.
        public var distinctAddresses = false
        public var timeZone = "Europe/Vienna"

        public init(
            serverURL: URL, participants: Int, duration: TimeInterval, step: TimeInterval, seed: UInt64,
            accounts: Accounts,
            enrolment: Enrolment
        ) {
            self.serverURL = serverURL
            self.participants = participants
            self.duration = duration
            self.step = step
            self.seed = seed
            self.accounts = accounts
            self.enrolment = enrolment
        }
    }

    /// What one participant did, by the simulator's own count.
    public struct ParticipantTally: Sendable, Equatable {
        public var email: String
        /// Responses the server took.
        public var answered = 0
        /// Prompts that closed without an answer.
        public var missed = 0
        /// Responses the server refused.
        public var refused = 0
        public var thoughts = 0
        public var samples = 0
        public var offlinePeriods = 0
        public var syncs = 0
    }

    public struct Tally: Sendable, Equatable {
        public var participants: [ParticipantTally]
        public var answered: Int { participants.reduce(0) { $0 + $1.answered } }
        public var missed: Int { participants.reduce(0) { $0 + $1.missed } }
        public var refused: Int { participants.reduce(0) { $0 + $1.refused } }
        public var offlinePeriods: Int { participants.reduce(0) { $0 + $1.offlinePeriods } }
    }

    public let configuration: Configuration

    public init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    /// Runs the simulation to its end; `log` hears of each participant's start and of the end.
    public func run(clock: any SimulationClock, log: @escaping @Sendable (String) -> Void = { _ in }) async throws
        -> Tally
    {
        var participants: [SimulatedParticipant] = []
        for index in 0..<configuration.participants {
            let participant = try await SimulatedParticipant.start(index, configuration, clock: clock)
            log("participant \(index + 1) ready: \(participant.email)")
            participants.append(participant)
        }
        let start = await clock.now()
        let end = start.addingTimeInterval(configuration.duration)
        var now = start
        while now < end {
            now = min(end, now.addingTimeInterval(configuration.step))
            try await clock.advance(to: now)
            let at = now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for participant in participants { group.addTask { try await participant.live(at: at) } }
                try await group.waitForAll()
            }
        }
        var tallies: [ParticipantTally] = []
        for participant in participants { tallies.append(try await participant.finish(at: await clock.now())) }
        let tally = Tally(participants: tallies)
        log(
            "done: \(tally.answered) answered, \(tally.missed) missed, \(tally.refused) refused, \(tally.offlinePeriods) offline periods"
        )
        return tally
    }
}

/// Gives each simulated participant an address of its own, for a server that trusts a proxy.
struct ForwardedFor: ClientMiddleware {
    let address: String

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[HTTPField.Name("X-Forwarded-For")!] = address
        return try await next(request, body, baseURL)
    }
}
