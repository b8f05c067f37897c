import FluentKit
import Foundation
import InterludeCore
import SQLKit

extension Statements {
    /// Inserts samples in one multi-row statement; a source id the person stored before is passed over. The number
    /// inserted.
    static func insertSamples(_ samples: [Sample], of patientID: UUID, at created: Date, on database: any Database)
        async throws -> Int
    {
        guard !samples.isEmpty else { return 0 }
        var builder = sql(database).insert(into: SampleRecord.schema).columns(SampleRecord.columns)
        for sample in samples {
            builder = builder.values([
                SQLBind(UUID()), SQLBind(created), SQLBind(patientID), SQLBind(sample.type.rawValue),
                SQLBind(sample.value),
                SQLBind(sample.start), SQLBind(sample.end), SQLBind(sample.sourceID), SQLBind(sample.source.app),
                SQLBind(sample.source.deviceName), SQLBind(sample.source.deviceModel), SQLBind(sample.source.osVersion),
                SQLBind(sample.motionContext?.rawValue),
            ])
        }
        return try await builder.ignoringConflicts(with: ["patient_id", "source_id"]).returning("id").all().count
    }

    /// How many samples of each type the person has stored.
    static func sampleCounts(of patientID: UUID, on database: any Database) async throws -> [SampleType: Int] {
        let rows = try await sql(database).select().column("type").column(
            SQLFunction("COUNT", args: SQLLiteral.all), as: "n"
        )
        .from(SampleRecord.schema).where("patient_id", .equal, SQLBind(patientID)).groupBy("type").all()
        var counts: [SampleType: Int] = [:]
        for row in rows {
            guard let type = SampleType(rawValue: try row.decode(column: "type", as: String.self)) else { continue }
            counts[type] = try row.decode(column: "n", as: Int.self)
        }
        return counts
    }

    /// The values of one type the person's samples hold from `since` on, with when each started.
    static func sampleValues(
        _ type: SampleType, of patientID: UUID, since: Date, on database: any Database
    ) async throws -> [(value: Double, start: Date)] {
        try await sql(database).select().column("value").column("start_at").from(SampleRecord.schema)
            .where("patient_id", .equal, SQLBind(patientID)).where("type", .equal, SQLBind(type.rawValue))
            .where("start_at", .greaterThanOrEqual, SQLBind(since)).all()
            .map {
                (
                    value: try $0.decode(column: "value", as: Double.self),
                    start: try $0.decode(column: "start_at", as: Date.self)
                )
            }
    }
}
