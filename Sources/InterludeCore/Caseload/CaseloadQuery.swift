import Foundation

/// Where a client's treatment stands: followed, paused for a while (nothing is planned for them), or ended (the
/// enrolment is over and nothing more is planned; what happened stays).
public enum TreatmentStatus: String, Sendable, Codable, CaseIterable {
    case active
    case paused
    case ended

    /// An ended treatment stays ended; the others move freely between each other and to the end.
    public func canChange(to next: TreatmentStatus) -> Bool {
        self != .ended || next == .ended
    }
}

/// What a client of a caseload is found and ordered by.
public struct CaseloadFacts: Sendable, Equatable {
    public var shownName: String
    public var pseudonym: String
    public var email: String
    public var lastActivityAt: Date?
    public var pairedSince: Date
    public var therapyStart: LocalDate?
    public var status: TreatmentStatus
    /// Alerts about the client that wait for acknowledgement: the high-priority ones, and all of them.
    public var highAlerts: Int
    public var openAlerts: Int

    public init(
        shownName: String, pseudonym: String, email: String, lastActivityAt: Date?, pairedSince: Date,
        therapyStart: LocalDate?, status: TreatmentStatus, highAlerts: Int = 0, openAlerts: Int = 0
    ) {
        self.highAlerts = highAlerts
        self.openAlerts = openAlerts
        self.shownName = shownName
        self.pseudonym = pseudonym
        self.email = email
        self.lastActivityAt = lastActivityAt
        self.pairedSince = pairedSince
        self.therapyStart = therapyStart
        self.status = status
    }
}

/// How a therapist looks through their caseload: words found in a client's name, pseudonym or email, the
/// treatments' states, the days of their last activity, and an order.
public struct CaseloadQuery: Sendable, Equatable {
    public static let wordsMaxLength = 200

    public enum Sort: String, Sendable, CaseIterable {
        /// High-priority alerts waiting, then any alert waiting, then the longest without activity.
        case risk
        case name
        case lastActivity
        case pairedSince
        case therapyStart
        case status
    }

    public var words: String?
    public var status: TreatmentStatus?
    /// The first and last day, in the therapist's zone, of the last activity of the clients wanted.
    public var from: LocalDate?
    public var to: LocalDate?
    public var sort: Sort
    public var descending: Bool

    public init(
        words: String? = nil, status: TreatmentStatus? = nil, from: LocalDate? = nil, to: LocalDate? = nil,
        sort: Sort = .risk, descending: Bool = true
    ) {
        self.words = words
        self.status = status
        self.from = from
        self.to = to
        self.sort = sort
        self.descending = descending
    }

    /// The query's parameters as sent, checked; each problem named by its parameter.
    public static func validate(
        q: String?, status: String?, from: String?, to: String?, sort: String?, order: String?
    ) throws(ValidationFailure) -> CaseloadQuery {
        var validator = FieldValidator()
        var query = CaseloadQuery()
        query.words = validator.text(q, field: "q", required: false, maxLength: wordsMaxLength)
        func option<Value: RawRepresentable<String>>(_ text: String?, _ field: String) -> Value? {
            guard let text, !text.isEmpty else { return nil }
            guard let value = Value(rawValue: text) else {
                validator.add(field, .notAnOption)
                return nil
            }
            return value
        }
        query.status = option(status, "status")
        if let sort = option(sort, "sort") as Sort? { query.sort = sort }
        switch order {
        case nil, "", "desc": query.descending = true
        case "asc": query.descending = false
        default: validator.add("order", .notAnOption)
        }
        if let from, !from.isEmpty { query.from = validator.date(from, field: "from") }
        if let to, !to.isEmpty { query.to = validator.date(to, field: "to") }
        if let start = query.from, let end = query.to, end < start { validator.add("to", .outOfRange) }
        try validator.check()
        return query
    }

    /// Whether a client is among those asked for; `activityDay` is the day of their last activity in the
    /// therapist's zone.
    public func includes(_ facts: CaseloadFacts, activityDay: LocalDate?) -> Bool {
        if let status, facts.status != status { return false }
        if from != nil || to != nil {
            guard let activityDay else { return false }
            if let from, activityDay < from { return false }
            if let to, activityDay > to { return false }
        }
        guard let words = words.map(SortKey.words), !words.isEmpty else { return true }
        return [facts.shownName, facts.pseudonym, facts.email].contains { SortKey.words($0).contains(words) }
    }

    /// The text a client is ordered by in this query's order; ties are broken by id.
    public func sortKey(of facts: CaseloadFacts) -> String {
        switch sort {
        case .name: return SortKey.words(facts.shownName)
        case .lastActivity: return facts.lastActivityAt.map(SortKey.moment) ?? ""
        case .pairedSince: return SortKey.moment(facts.pairedSince)
        case .therapyStart: return facts.therapyStart?.description ?? ""
        case .status: return String(TreatmentStatus.allCases.firstIndex(of: facts.status) ?? 0)
        case .risk:
            // Descending: more high alerts, then more alerts, then the longer silence (an earlier moment ranks higher).
            let silence = facts.lastActivityAt.map {
                String(format: "%012d", max(0, 999_999_999_999 - Int($0.timeIntervalSince1970)))
            }
            return String(format: "%06d%06d", min(facts.highAlerts, 999_999), min(facts.openAlerts, 999_999))
                + (silence ?? "999999999999")
        }
    }
}
