import InterludeCore
import Testing

@testable import InterludeServer

@Suite("Words for counts and spans of time")
struct LocalizerTests {
    let localizer: Localizer

    init() throws {
        localizer = try Localizer(directory: "Resources/Locales")
    }

    @Test(
        "a span of minutes reads in weeks, days, hours and minutes, exactly",
        arguments: [
            (0, "0 minutes", "0 Minuten"), (1, "1 minute", "1 Minute"), (30, "30 minutes", "30 Minuten"),
            (60, "1 hour", "1 Stunde"), (90, "1 hour 30 minutes", "1 Stunde 30 Minuten"), (720, "12 hours", "12 Stunden"),
            (1_440, "1 day", "1 Tag"), (1_500, "1 day 1 hour", "1 Tag 1 Stunde"), (2_880, "2 days", "2 Tage"),
            (10_080, "1 week", "1 Woche"), (20_160, "2 weeks", "2 Wochen"), (11_520, "8 days", "8 Tage"),
        ])
    func duration(_ minutes: Int, _ english: String, _ german: String) {
        #expect(localizer.duration(minutes: minutes, .en) == english)
        #expect(localizer.duration(minutes: minutes, .de) == german)
    }

    @Test("every counted text has its form for one and for any other number, in both languages")
    func pluralPairs() {
        let english = localizer.table(prefix: "", .en).keys
        let counted = english.filter { $0.hasSuffix(".one") }.map { String($0.dropLast(4)) }
        #expect(counted.count > 10)
        for base in counted {
            #expect(localizer.has(base + ".other"), "\(base).one without \(base).other")
            for language in Language.allCases {
                let three = localizer.text(base, count: 3, language)
                #expect(!three.contains("{count}") && three != base + ".other", "\(base) in \(language): \(three)")
            }
        }
    }

    @Test("every kind of measurement has its unit in words, in both languages, never the code the data keeps")
    func unitWords() {
        for type in SampleType.allCases {
            for language in Language.allCases {
                let words = localizer.text("samples.unit.\(type.rawValue)", language)
                #expect(words != "samples.unit.\(type.rawValue)" && words != type.unit, "\(type) in \(language)")
            }
        }
        #expect(localizer.text("samples.unit.stepCount", .en) == "steps")
        #expect(localizer.text("samples.unit.heartRate", .de) == "Schläge pro Minute")
    }
}
