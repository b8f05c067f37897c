import Foundation
import InterludeCore
import Testing

@Suite("Caseload queries: found by name, pseudonym or email, by state and days of last activity, in any order")
struct CaseloadQueryTests {
    let ada = CaseloadFacts(
        shownName: "Adélaïde Lovelace", pseudonym: "P-7KQ2", email: "ada@example.org",
        lastActivityAt: Date(timeIntervalSince1970: 1_780_000_000),
        pairedSince: Date(timeIntervalSince1970: 1_770_000_000),
        therapyStart: LocalDate("2026-03-01"), status: .paused)

    @Test("words are found in any of the three, whatever their case, accents or width")
    func words() throws {
        for words in ["adelaide", "  LOVELACE ", "7kq2", "@EXAMPLE", "ＡＤＡ"] {
            #expect(
                try CaseloadQuery.validate(q: words, status: nil, from: nil, to: nil, sort: nil, order: nil).includes(
                    ada, activityDay: nil))
        }
        #expect(
            try !CaseloadQuery.validate(q: "grace", status: nil, from: nil, to: nil, sort: nil, order: nil).includes(
                ada, activityDay: nil))
    }

    @Test("state and days of last activity narrow the list; no activity is outside every range")
    func filters() throws {
        let day = LocalDate("2026-05-28")!
        #expect(CaseloadQuery(status: .paused).includes(ada, activityDay: day))
        #expect(!CaseloadQuery(status: .active).includes(ada, activityDay: day))
        #expect(CaseloadQuery(from: day, to: day).includes(ada, activityDay: day))
        #expect(!CaseloadQuery(from: day.adding(days: 1)).includes(ada, activityDay: day))
        #expect(!CaseloadQuery(to: day.adding(days: -1)).includes(ada, activityDay: day))
        #expect(!CaseloadQuery(from: day).includes(ada, activityDay: nil))
    }

    @Test("sort keys order as their values; unknown options and a range ending before it starts are named")
    func order() throws {
        var later = ada
        later.lastActivityAt = ada.lastActivityAt!.addingTimeInterval(1)
        let query = try CaseloadQuery.validate(
            q: nil, status: nil, from: nil, to: nil, sort: "lastActivity", order: "asc")
        #expect(query.sortKey(of: ada) < query.sortKey(of: later) && !query.descending)
        #expect(SortKey.moment(Date(timeIntervalSince1970: -86_400)) < SortKey.moment(Date(timeIntervalSince1970: 9)))
        #expect(
            CaseloadQuery(sort: .status).sortKey(of: ada)
                > CaseloadQuery(sort: .status).sortKey(of: later.with(status: .active)))
        #expect(
            throws: ValidationFailure([
                FieldError(field: "status", code: .notAnOption), FieldError(field: "sort", code: .notAnOption),
                FieldError(field: "order", code: .notAnOption), FieldError(field: "to", code: .outOfRange),
            ])
        ) {
            try CaseloadQuery.validate(
                q: nil, status: "gone", from: "2026-05-02", to: "2026-05-01", sort: "age", order: "up")
        }
    }
}

extension CaseloadFacts {
    fileprivate func with(status: TreatmentStatus) -> CaseloadFacts {
        var copy = self
        copy.status = status
        return copy
    }
}
