import Foundation
import Testing

@testable import InterludeCore

@Suite("Export formats: CSV fields, timestamps and column names")
struct ExportFormatTests {
    @Test(
        "a field is quoted only when it must be, its quotes doubled",
        arguments: [
            ("plain", "plain"), ("a,b", "\"a,b\""), ("say \"hi\"", "\"say \"\"hi\"\"\""),
            ("two\nlines", "\"two\nlines\""),
            ("cr\rlf", "\"cr\rlf\""), ("crlf\r\nbetween", "\"crlf\r\nbetween\""), (" padded", "\" padded\""),
            ("padded ", "\"padded \""), ("ümlaut; semikolon", "ümlaut; semikolon"),
        ])
    func field(_ value: String, written: String) {
        // act / verify
        #expect(CSV.field(value) == written)
    }

    @Test("a row ends with CRLF and writes an absent value as an empty field")
    func row() {
        // act
        let row = CSV.row(["a", nil, "c,d", ""])

        // verify
        #expect(row == "a,,\"c,d\",\r\n")
    }

    @Test(
        "numbers are written with a dot and without a needless fraction",
        arguments: [(3.0, "3"), (-2.0, "-2"), (2.5, "2.5"), (0.1, "0.1"), (Double.nan, ""), (1e20, "1e+20")])
    func number(_ value: Double, written: String) {
        // act / verify
        #expect(CSV.number(value) == written)
    }

    @Test(
        "an instant is written in UTC and in local time with its offset, across the spring change",
        arguments: [
            (1_774_747_800.0, "2026-03-29T01:30:00.000Z", "2026-03-29T03:30:00.000+02:00"),
            (1_774_744_200.0, "2026-03-29T00:30:00.000Z", "2026-03-29T01:30:00.000+01:00"),
            (1_774_744_200.25, "2026-03-29T00:30:00.250Z", "2026-03-29T01:30:00.250+01:00"),
        ])
    func time(_ seconds: Double, utc: String, local: String) {
        // act
        let time = ExportTime(Date(timeIntervalSince1970: seconds), in: TimeZone(identifier: "Europe/Vienna")!)

        // verify
        #expect(time.utc == utc)
        #expect(time.local == local)
        #expect(time.zone == "Europe/Vienna")
    }

    @Test("a half-hour offset west of UTC is written as such")
    func negativeOffset() {
        // act
        let time = ExportTime(Date(timeIntervalSince1970: 1_774_747_800), in: TimeZone(identifier: "America/St_Johns")!)

        // verify
        #expect(time.local == "2026-03-28T23:00:00.000-02:30")
    }

    @Test(
        "column names are lower case letters, digits and underscores, starting with a letter",
        arguments: [
            ("phq9_1", "phq9_1"), ("PHQ-9 item 1", "phq_9_item_1"), ("9th", "v_9th"), ("Müdigkeit", "m_digkeit"),
            ("__x__", "x"), ("", "v_"),
        ])
    func columnName(_ raw: String, name: String) {
        // act / verify
        #expect(ExportColumn.name(raw) == name)
    }

    @Test("a long name is cut to 100 characters, and an option's column keeps its code")
    func longNames() {
        // setup
        let long = String(repeating: "a", count: 150)

        // act / verify
        #expect(ExportColumn.name(long).count == 100)
        #expect(ExportColumn.option("stressors", "work") == "stressors___work")
        #expect(ExportColumn.option("symptom", "1") == "symptom___1")
        #expect(ExportColumn.option(long, "2").hasSuffix("___2") && ExportColumn.option(long, "2").count == 100)
    }
}

@Suite("CSV written and read back")
struct CSVRoundTripTests {
    @Test(
        "any row of fields, with commas, quotes, line breaks and spaces anywhere, reads back as written, formulas neutralised"
    )
    func roundTrip() {
        // setup
        var generator = SeededGenerator(seed: "csv-round-trip")
        let alphabet = Array("ab ,\"\r\n\tü;'=1")
        for _ in 0..<500 {
            let fields = (0..<Int.random(in: 1...6, using: &generator)).map { _ in
                String(
                    (0..<Int.random(in: 0...8, using: &generator)).map { _ in alphabet.randomElement(using: &generator)!
                    })
            }

            // act
            let read = CSV.parse(CSV.row(fields))

            // verify
            #expect(read == [fields.map(CSV.neutralised)], "\(fields)")
        }
    }

    @Test("a text cell a spreadsheet would run as a formula gets an apostrophe; numbers and other text stay")
    func formulasNeutralised() {
        for formula in [
            "=HYPERLINK(\"http://x\")", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\tnote", "\rnote", "-", "=",
        ] {
            #expect(CSV.neutralised(formula) == "'" + formula)
            #expect(CSV.parse(CSV.row([formula])) == [["'" + formula]])
        }
        for kept in ["-3.5", "+2", "1e-3", "-0", "2026-03-29T01:30:00.000Z", "Nobody wants me", "a=b", "", "'quoted"] {
            #expect(CSV.neutralised(kept) == kept)
        }
    }
}
