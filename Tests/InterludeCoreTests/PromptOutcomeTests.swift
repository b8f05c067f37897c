import Foundation
import InterludeCore
import Testing

@Suite("How a prompt ended, and why")
struct PromptOutcomeTests {
    @Test("answered, still open or not yet open: completed or pending, with no reason")
    func answeredAndPending() {
        for status in [PromptStatus.scheduled, .open] {
            #expect(
                PromptOutcome.of(status: status, delivered: false, misses: [.quietHours], cancelled: nil) == (
                    .pending, nil
                ))
        }
        #expect(PromptOutcome.of(status: .completed, delivered: false, misses: [], cancelled: nil) == (.completed, nil))
    }

    @Test("expired after a notification reached the person: delivered, whatever the reminders met")
    func expiredDelivered() {
        let result = PromptOutcome.of(status: .expired, delivered: true, misses: [.hourlyCeiling], cancelled: nil)
        #expect(result == (.expiredDelivered, nil))
    }

    @Test("expired undelivered: the first notification's miss is the reason; none queued is never notified")
    func expiredUndelivered() {
        #expect(
            PromptOutcome.of(status: .expired, delivered: false, misses: [.quietHours, .refused], cancelled: nil)
                == (.expiredUndelivered, .missed(.quietHours)))
        #expect(
            PromptOutcome.of(status: .expired, delivered: false, misses: [.subscriptionGone], cancelled: nil)
                == (.expiredUndelivered, .missed(.subscriptionGone)))
        #expect(
            PromptOutcome.of(status: .expired, delivered: false, misses: [], cancelled: nil)
                == (.expiredUndelivered, .neverNotified))
    }

    @Test("cancelled says why; a deactivated questionnaire counts as cancelled")
    func cancelled() {
        #expect(
            PromptOutcome.of(status: .cancelled, delivered: true, misses: [], cancelled: .paused) == (
                .cancelled, .withdrawn(.paused)
            ))
        #expect(
            PromptOutcome.of(status: .cancelled, delivered: false, misses: [], cancelled: .ended) == (
                .cancelled, .withdrawn(.ended)
            ))
        #expect(
            PromptOutcome.of(status: .inactive, delivered: false, misses: [], cancelled: nil)
                == (.cancelled, .questionnaireDeactivated))
    }

    @Test("every miss and every withdrawal is a reason under its own name")
    func reasonsCoverMisses() {
        for miss in NotificationMiss.allCases {
            let reason = PromptOutcome.of(status: .expired, delivered: false, misses: [miss], cancelled: nil).reason
            #expect(reason?.rawValue == miss.rawValue)
        }
        for cancel in PromptCancelReason.allCases {
            let reason = PromptOutcome.of(status: .cancelled, delivered: false, misses: [], cancelled: cancel).reason
            #expect(reason?.rawValue == cancel.rawValue)
        }
    }

    @Test("what the channels answered names the miss: all gone is a gone subscription, none is no device")
    func missFromAttempts() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func attempt(_ channel: NotificationChannel, _ outcome: NotificationAttempt.Outcome) -> NotificationAttempt {
            NotificationAttempt(at: now, channel: channel, outcome: outcome, detail: "")
        }
        #expect(NotificationMiss(failedAttempts: []) == .noDevice)
        #expect(
            NotificationMiss(failedAttempts: [attempt(.webpush, .gone), attempt(.apns, .gone)]) == .subscriptionGone)
        #expect(NotificationMiss(failedAttempts: [attempt(.webpush, .gone), attempt(.email, .retry)]) == .refused)
        #expect(NotificationMiss(failedAttempts: [attempt(.webpush, .failed)]) == .refused)
        #expect(NotificationMiss(.preference) == .categoryOff)
    }

    @Test("an attempt log reads back as it was written; a damaged one reads as none")
    func attemptLog() {
        let log = [
            NotificationAttempt(
                at: Date(timeIntervalSince1970: 1_800_000_000), channel: .webpush, outcome: .gone, detail: "webpush 410"
            ),
            NotificationAttempt(
                at: Date(timeIntervalSince1970: 1_800_000_030), channel: .email, outcome: .delivered,
                detail: "email accepted"),
        ]
        #expect(NotificationAttempt.log(NotificationAttempt.text(of: log)) == log)
        #expect(NotificationAttempt.log("{not json") == [])
        #expect(NotificationAttempt.log(nil) == [])
    }
}
