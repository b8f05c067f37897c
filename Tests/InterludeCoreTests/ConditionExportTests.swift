import Foundation
import Testing

@testable import InterludeCore

@Suite("Conditions and answer bounds in the exports")
struct ConditionExportTests {
    static let definition = InstrumentDefinition(
        key: "bounds", version: 1, title: "Bounds",
        sections: [
            Section(
                id: "s",
                items: [
                    Item(
                        id: "worry", type: .single, text: "Worry",
                        options: (0...3).map { AnswerOption(code: String($0), label: LocalizedText(en: "\($0)")) }),
                    Item(id: "days", type: .number, text: "Days", decimals: 0),
                    Item(id: "born", type: .date, text: "Born", earliest: "1920-01-01", latest: "2010-12-31"),
                    Item(id: "walk", type: .text, text: "Walk", format: .minutesSeconds),
                    Item(
                        id: "why", type: .text, text: "Why?",
                        visibleWhen: Condition(
                            .any, [Clause(item: "worry", .equals, .text("1"))],
                            groups: [
                                Condition(
                                    .all,
                                    [
                                        Clause(item: "worry", .atLeast, .text("2")),
                                        Clause(item: "days", .less, .number(3)),
                                    ])
                            ])),
                    Item(
                        id: "often", type: .text, text: "Often?",
                        visibleWhen: Condition(.all, [Clause(item: "days", .atMost, .number(2))])),
                ])
        ])

    @Test("a condition with groups is FHIRPath in enableWhenExpression; at least and at most are enableWhen operators")
    func fhir() throws {
        #expect(Self.definition.problems() == [])
        let items = try #require(
            Self.definition.fhirQuestionnaire(canonicalURL: "https://x.example/q").item?.first?.item)
        let why = try #require(items.first { $0.linkId == "why" })
        #expect(why.enableWhen == nil)
        let expression = why.extension?.first(FHIR.URLs.enableWhenExpression)?.valueExpression
        #expect(expression?.language == "text/fhirpath")
        #expect(
            expression?.expression
                == "(%resource.repeat(item).where(linkId = 'worry').answer.value.code contains '1') or "
                + "(%resource.repeat(item).where(linkId = 'worry').answer.value.code.toDecimal() >= 2 and "
                + "%resource.repeat(item).where(linkId = 'days').answer.value < 3)")
        #expect(items.first { $0.linkId == "often" }?.enableWhen?.first?.operator == "<=")
        let born = try #require(items.first { $0.linkId == "born" })
        #expect(born.extension?.first(FHIR.URLs.minValue)?.valueDate == "1920-01-01")
        #expect(born.extension?.first(FHIR.URLs.maxValue)?.valueDate == "2010-12-31")
        #expect(
            items.first { $0.linkId == "walk" }?.extension?.first(FHIR.URLs.regex)?.valueString
                == "^[0-9]{1,3}:[0-5][0-9]$")
    }

    @Test("the REDCap dictionary writes groups in parentheses, at least and at most, date bounds and durations")
    func redcap() throws {
        let codebook = Codebook([Self.definition])
        let rows = CSV.parse(REDCapDictionary.csv(codebook)).dropFirst(2)
        func row(_ name: String) throws -> [String] { try #require(rows.first { $0[0] == name }) }
        #expect(try row("why")[11] == "[worry] = '1' or ([worry] >= 2 and [days] < 3)")
        #expect(try row("often")[11] == "[days] <= 2")
        #expect(try row("born")[7] == "date_ymd" && row("born")[8] == "1920-01-01" && row("born")[9] == "2010-12-31")
        #expect(try row("walk")[7] == "time_mm_ss")
        let back = try #require(try REDCapImport.instruments(fromCSV: REDCapDictionary.csv(codebook)).instruments.first)
        #expect(back.item("often")?.visibleWhen == Self.definition.item("often")?.visibleWhen)
        #expect(back.item("why")?.visibleWhen == Self.definition.item("why")?.visibleWhen)
        #expect(back.item("born")?.earliest == "1920-01-01" && back.item("walk")?.format == .minutesSeconds)
    }
}
