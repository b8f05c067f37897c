import InterludeCore

/// A full sync holds a month of prompts and the definitions of their instruments. Written through `Encodable`, the
/// prompts were an eighth of the answer's CPU and the one definition, rewritten for every phone, a twentieth; the
/// prompts now write themselves and each published definition's JSON is written once.
extension Components.Schemas.SyncChanges: DirectJSONWritable {
    /// Published definitions never change; drafts differ from what is kept under their key and are written afresh.
    static let instrumentJSON = JSONMemo<InstrumentVersionKey, InstrumentDefinition>(capacity: 256)

    func write(to object: inout JSONObjectWriter) throws {
        object.field("cursor", cursor)
        object.field("full", full)
        try object.field("prompts", prompts)
        try object.field("instruments", instruments, memo: Self.instrumentJSON) {
            InstrumentVersionKey(key: $0.key, version: $0.version)
        }
        try object.field("appointments", encoding: appointments)
        try object.field("deleted", encoding: deleted)
        try object.field("therapist", encoding: therapist)
        try object.field("interventions", encoding: interventions)
        try object.field("records", encoding: records)
    }
}

extension Components.Schemas.Prompt: DirectJSONWritable {
    func write(to object: inout JSONObjectWriter) throws {
        object.field("id", id)
        object.field("instrumentKey", instrumentKey)
        object.field("instrumentVersion", instrumentVersion)
        object.field("title", title)
        try object.field("opensAt", opensAt)
        try object.field("closesAt", closesAt)
        object.field("status", status.rawValue)
        object.field("source", source.rawValue)
        try object.field("completedAt", completedAt)
        object.field("responseId", responseId)
        object.field("blocked", blocked)
    }
}
