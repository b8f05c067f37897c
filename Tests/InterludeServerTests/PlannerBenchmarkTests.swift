import Foundation
import Testing

@testable import InterludeServer

@Suite("Planner benchmark")
struct PlannerBenchmarkTests {
    @Test("the benchmark plans 14 days for every made-up participant and inserts the same rows again")
    func smallRun() async throws {
        try await withTestApp { app in
            let result = try await PlannerBenchmark(database: app.database, services: app.app.interlude).run(participants: 12)
            // Three a day up to 14 days from now in each participant's zone: the days in between whole, today and the
            // fourteenth day in part, depending on the hour there.
            #expect(result.prompts >= 12 * 13 * 3 && result.prompts <= 12 * 15 * 3, "\(result.prompts)")
            #expect(try await app.count("prompts") == result.prompts)
            #expect(result.report.contains("ratio (planner / raw insert)"))
        }
    }
}
