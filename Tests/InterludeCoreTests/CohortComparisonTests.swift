import Foundation
import InterludeCore
import Testing

@Suite("Comparison with all participants")
struct CohortComparisonTests {
    /// Ten people: "a" answered 8 and 12, the others once each 20, 30, …, 100.
    static let cohort: [String: [Double]] = {
        var values: [String: [Double]] = ["a": [8, 12]]
        for (index, value) in stride(from: 20.0, through: 100, by: 10).enumerated() { values["p\(index)"] = [value] }
        return values
    }()

    @Test("the person's mean against the median and middle half of everyone's means, by hand")
    func handCalculation() throws {
        // Means sorted: 10 20 30 40 50 60 70 80 90 100. Median at rank 4.5 (from 0): 50 + 0.5 × 10 = 55;
        // first quartile at 2.25: 30 + 0.25 × 10 = 32.5; third at 6.75: 70 + 0.75 × 10 = 77.5.
        let comparison = try #require(CohortComparison.compare("a", values: Self.cohort))
        #expect(comparison.personMean == 10)
        #expect(comparison.personCount == 2)
        #expect(comparison.median == 55)
        #expect(comparison.lowerQuartile == 32.5)
        #expect(comparison.upperQuartile == 77.5)
        #expect(comparison.contributors == 10)
    }

    @Test("each person weighs once, however often they answered")
    func onePersonOneMean() throws {
        var values = Self.cohort
        values["p8"] = [100, 100, 100, 100, 100, 100, 100, 100]
        #expect(try #require(CohortComparison.compare("a", values: values)).median == 55)
    }

    @Test("nothing is shown below ten people, to a person without an answer, or from values that are not numbers")
    func withheld() {
        var nine = Self.cohort
        nine["p0"] = nil
        #expect(CohortComparison.compare("a", values: nine) == nil)
        var empty = Self.cohort
        empty["p1"] = []
        #expect(CohortComparison.compare("a", values: empty) == nil, "someone without a value does not count")
        #expect(CohortComparison.compare("nobody", values: Self.cohort) == nil)
        var broken = Self.cohort
        broken["a"] = [.nan, 10]
        #expect(CohortComparison.compare("a", values: broken)?.personMean == 10)
    }

    @Test("quantiles interpolate between ranks and hold for one value")
    func quantiles() {
        #expect(CohortComparison.quantile([1, 2, 3, 4], 0.5) == 2.5)
        #expect(CohortComparison.quantile([7], 0.25) == 7)
        #expect(CohortComparison.quantile([1, 3], 0.75) == 2.5)
    }
}
