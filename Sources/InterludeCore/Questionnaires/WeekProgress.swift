import Foundation

/// How the person's week goes: for each day from Monday to Sunday of the week that holds `now` (in their zone),
/// the questionnaires planned for that day and how many of them were answered.
public struct WeekProgress: Sendable, Equatable {
    public struct Day: Sendable, Equatable {
        public let date: LocalDate
        /// Questionnaires that open that day, withdrawn ones left out.
        public var planned: Int
        public var answered: Int
    }

    public let days: [Day]

    /// The Monday of the week that holds `now` in `zone`.
    public static func start(of now: Date, in zone: TimeZone) -> LocalDate {
        let today = LocalDate(now, in: zone)
        return today.adding(days: 1 - today.weekday.isoNumber)
    }

    /// `prompts`: when each opened and where it stands now.
    public init(prompts: [(opensAt: Date, status: PromptStatus)], now: Date, zone: TimeZone) {
        let monday = Self.start(of: now, in: zone)
        var days = (0..<7).map { Day(date: monday.adding(days: $0), planned: 0, answered: 0) }
        for prompt in prompts where prompt.status != .cancelled {
            let index = monday.days(to: LocalDate(prompt.opensAt, in: zone))
            guard days.indices.contains(index) else { continue }
            days[index].planned += 1
            if prompt.status == .completed { days[index].answered += 1 }
        }
        self.days = days
    }
}

/// Who the person is to Interlude, which decides what their home offers.
public enum PatientSituation: String, Sendable, Codable, CaseIterable {
    /// In treatment with a therapist (member of a practice) only.
    case client
    /// Taking part in research studies only.
    case participant
    case both
    /// Neither yet: an account that has not paired nor joined.
    case neither

    public init(inPractice: Bool, inStudy: Bool) {
        switch (inPractice, inStudy) {
        case (true, true): self = .both
        case (true, false): self = .client
        case (false, true): self = .participant
        case (false, false): self = .neither
        }
    }
}
