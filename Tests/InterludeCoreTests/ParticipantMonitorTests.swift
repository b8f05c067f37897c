import Foundation
import InterludeCore
import Testing

@Suite("The study monitor's figures and flags for one participant")
struct ParticipantMonitorTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// A prompt that opened `hoursAgo` for two hours.
    static func prompt(
        _ hoursAgo: Double, _ status: PromptStatus, delivered: Double? = nil, opened: Double? = nil,
        submitted: Double? = nil, quality: [ResponseQuality.Flag] = []
    ) -> MonitoredPrompt {
        let opens = now.addingTimeInterval(-hoursAgo * 3600)
        return MonitoredPrompt(
            opensAt: opens, closesAt: opens.addingTimeInterval(7200), status: status,
            deliveredAt: delivered.map { opens.addingTimeInterval($0) },
            openedAt: opened.map { opens.addingTimeInterval($0) },
            submittedAt: submitted.map { opens.addingTimeInterval($0) }, qualityFlags: quality)
    }

    @Test("counts what opened, reached the person and was answered; medians of the times between")
    func figures() {
        let monitor = ParticipantMonitor.of(
            prompts: [
                Self.prompt(30, .completed, delivered: 10, opened: 70, submitted: 190),
                Self.prompt(20, .completed, delivered: 5, opened: 305, submitted: 365, quality: [.fast]),
                Self.prompt(10, .expired, delivered: 0),
                Self.prompt(5, .cancelled),
                Self.prompt(1, .open, delivered: 2, opened: 62),
                Self.prompt(-3, .scheduled),
            ],
            subscriptionGone: false, lastSeen: Self.now.addingTimeInterval(-600), now: Self.now)
        #expect(monitor.planned == 4 && monitor.delivered == 4 && monitor.answered == 2 && monitor.missedInRow == 1)
        #expect(monitor.deliveredToOpened == 60 && monitor.openedToSubmitted == 90 && monitor.flaggedResponses == 1)
        #expect(monitor.flags == [])
    }

    @Test("a silent phone: prompts opened today and nothing reached the person, no contact for two days, gone")
    func silent() {
        let monitor = ParticipantMonitor.of(
            prompts: [
                Self.prompt(50, .completed, delivered: 1, opened: 2, submitted: 3),
                Self.prompt(30, .expired), Self.prompt(20, .expired), Self.prompt(10, .expired),
                Self.prompt(1, .open),
            ],
            subscriptionGone: true, lastSeen: Self.now.addingTimeInterval(-49 * 3600), now: Self.now)
        #expect(monitor.flags == [.noDelivery, .subscriptionGone, .missedInRow, .noContact])
        #expect(monitor.missedInRow == 3)
    }

    @Test("the edges: two missed are not three, a delivery 23 hours ago is recent, contact 47 hours ago is recent")
    func edges() {
        let monitor = ParticipantMonitor.of(
            prompts: [
                Self.prompt(30, .expired), Self.prompt(23, .expired, delivered: 0), Self.prompt(22, .completed),
                Self.prompt(3, .expired), Self.prompt(2.5, .expired),
            ],
            subscriptionGone: false, lastSeen: Self.now.addingTimeInterval(-47 * 3600), now: Self.now)
        #expect(monitor.missedInRow == 2 && monitor.flags == [])
    }

    @Test("never seen counts as no contact; a period without prompts raises nothing else")
    func quiet() {
        let monitor = ParticipantMonitor.of(prompts: [], subscriptionGone: false, lastSeen: nil, now: Self.now)
        #expect(monitor.planned == 0 && monitor.deliveredToOpened == nil && monitor.flags == [.noContact])
    }
}
