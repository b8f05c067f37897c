import Foundation
import InterludeCore
import Testing

@Suite("Week progress and text previews")
struct WeekProgressTests {
    let vienna = TimeZone(identifier: "Europe/Vienna")!

    func instant(_ text: String) -> Date {
        LocalDateTime(text)!.instant(in: vienna)
    }

    @Test("the week runs Monday to Sunday in the person's zone, withdrawn questionnaires left out")
    func week() {
        let now = instant("2026-12-02T10:00")  // a Wednesday
        let progress = WeekProgress(
            prompts: [
                (instant("2026-11-30T00:30"), .completed),  // Monday, just after midnight in Vienna
                (instant("2026-11-30T20:00"), .expired),
                (instant("2026-12-02T08:00"), .cancelled),
                (instant("2026-12-06T23:30"), .scheduled),  // Sunday
                (instant("2026-11-29T23:30"), .completed),  // the Sunday before: not this week
            ],
            now: now, zone: vienna)

        #expect(
            progress.days.map(\.date.description) == [
                "2026-11-30", "2026-12-01", "2026-12-02", "2026-12-03", "2026-12-04", "2026-12-05", "2026-12-06",
            ])
        #expect(progress.days[0].planned == 2 && progress.days[0].answered == 1)
        #expect(progress.days[2].planned == 0)
        #expect(progress.days[6].planned == 1 && progress.days[6].answered == 0)
        #expect(WeekProgress.start(of: instant("2026-12-06T23:59"), in: vienna).description == "2026-11-30")
        #expect(WeekProgress.start(of: instant("2026-11-30T00:00"), in: vienna).description == "2026-11-30")
    }

    @Test("a situation follows from practice and study membership")
    func situation() {
        #expect(PatientSituation(inPractice: true, inStudy: false) == .client)
        #expect(PatientSituation(inPractice: false, inStudy: true) == .participant)
        #expect(PatientSituation(inPractice: true, inStudy: true) == .both)
        #expect(PatientSituation(inPractice: false, inStudy: false) == .neither)
    }

    @Test("a message's first line skips blank lines and is cut at a word")
    func firstLine() {
        #expect("\n \n  Hello there  \nSecond".firstLine(shortenedTo: 140) == "Hello there")
        #expect("one two three four".firstLine(shortenedTo: 10) == "one two…")
        #expect("".firstLine(shortenedTo: 10) == "")
        #expect("short".shortened(to: 10) == "short")
    }
}
