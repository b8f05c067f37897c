import Foundation
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
            (60, "1 hour", "1 Stunde"), (90, "1 hour 30 minutes", "1 Stunde 30 Minuten"),
            (720, "12 hours", "12 Stunden"),
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

    @Test("a deadline is said as briefly as the day allows: the time, the weekday within the week, else the date")
    func deadlines() throws {
        let vienna = try #require(TimeZone(identifier: "Europe/Vienna"))
        let opens = LocalDateTime(date: LocalDate("2026-12-02")!, time: LocalTime("08:00")!).instant(in: vienna)
        let at = { (day: String, time: String) in
            LocalDateTime(date: LocalDate(day)!, time: LocalTime(time)!).instant(in: vienna)
        }
        let english = DateDisplay(language: .en, timeZone: vienna)
        let german = DateDisplay(language: .de, timeZone: vienna)
        #expect(english.deadline(at("2026-12-02", "20:00"), from: opens) == "20:00")
        #expect(english.deadline(at("2026-12-04", "03:29"), from: opens) == "Friday 03:29")
        #expect(german.deadline(at("2026-12-04", "03:29"), from: opens) == "Freitag, 03:29")
        #expect(english.deadline(at("2026-12-12", "09:00"), from: opens) == "12 December at 09:00")
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
