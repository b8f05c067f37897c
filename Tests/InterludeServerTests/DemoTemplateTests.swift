import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Demo templates")
struct DemoTemplateTests {
    typealias Prompt = Components.Schemas.Prompt
    typealias Planned = Components.Schemas.PlannedPrompt

    let vienna = TimeZone(identifier: "Europe/Vienna")!

    func create(_ template: DemoSetup.Template, _ app: TestContext) async throws -> [DemoSetup.Account] {
        try await DemoSetup(database: app.database, services: app.app.interlude, logger: app.app.logger).create(
            template)
    }

    /// Signs in the template's account of `role`.
    func signIn(_ role: Role, of accounts: [DemoSetup.Account], _ app: TestContext) async throws -> APIClient {
        let account = try #require(accounts.first { $0.role == role })
        return try await app.signIn(account.email, password: account.password)
    }

    func answer(_ prompt: Prompt, _ answers: JSONValue, as patient: APIClient, at now: Date) async throws
        -> HTTPResponseStatus
    {
        try await patient.send(
            .POST, "/me/responses",
            json: [
                "id": .string(UUID().uuidString), "promptId": .string(prompt.id),
                "instrumentKey": .string(prompt.instrumentKey),
                "version": .int(prompt.instrumentVersion), "answers": answers,
                "completedAt": QuestionnaireAPITests.iso(now),
            ]
        ).status
    }

    /// What the patient's plans give for `days` from tomorrow, read by `staff`.
    func preview(_ staff: APIClient, of patient: APIClient, days: Int, _ app: TestContext) async throws -> [Planned] {
        let patientID = try await patient.send(.GET, "/me").decoded(Components.Schemas.User.self).id
        let today = LocalDate(app.clock.now, in: vienna)
        let reply = try await staff.send(
            .GET, "/patients/\(patientID)/schedule-preview?from=\(today.adding(days: 1))&days=\(days)")
        try #require(reply.status == .ok, "\(reply.text)")
        return try reply.decoded([Planned].self)
    }

    // MARK: Intersession

    @Test("intersession makes a therapist and a paired patient in Vienna, each with a printed line and a long password")
    func intersessionAccounts() async throws {
        try await withTestApp { app in
            // act
            let accounts = try await create(.intersession, app)

            // verify
            #expect(accounts.map(\.role) == [.therapist, .patient])
            #expect(accounts.allSatisfy { $0.line.wholeMatch(of: /(therapist|patient): \S+@\S+ \S{12,}/) != nil })
            let patient = try await signIn(.patient, of: accounts, app)
            #expect(
                try await patient.send(.GET, "/me").decoded(Components.Schemas.User.self).timeZone == "Europe/Vienna")
            let therapist = try await patient.send(.GET, "/me/therapist").decoded(
                Components.Schemas.TherapistProfile.self)
            #expect(therapist.emergencyNumber == "+43 1 000 00 99")
        }
    }

    @Test("intersession's practice has a rule for missed Dailies and two intervention templates")
    func intersessionPractice() async throws {
        try await withTestApp { app in
            // setup
            let accounts = try await create(.intersession, app)
            let therapist = try await signIn(.therapist, of: accounts, app)
            let practice = try #require(
                try await StudyRecord.query(on: app.database).filter(\.$joinMode == .pairingCode).first())

            // act
            let rules = try await therapist.send(.GET, "/studies/\(practice.id!.uuidString)/rules").decoded(
                [Components.Schemas.Rule].self)

            // verify
            #expect(rules.map(\.name) == ["Three Dailies missed"])
            #expect(try await app.count("intervention_templates") == 2)
        }
    }

    @Test("intersession plans the Daily three times a day, half an hour each, one in each window")
    func intersessionDaily() async throws {
        try await withTestApp { app in
            // setup
            let accounts = try await create(.intersession, app)
            let therapist = try await signIn(.therapist, of: accounts, app)
            let patient = try await signIn(.patient, of: accounts, app)

            // act
            let planned = try await preview(therapist, of: patient, days: 13, app).filter {
                $0.instrumentKey == "intersession-daily"
            }

            // verify
            let byDay = Dictionary(grouping: planned) { String($0.localOpensAt.prefix(10)) }
            #expect(byDay.count == 13)
            for (day, prompts) in byDay {
                let starts = prompts.map { String($0.localOpensAt.suffix(5)) }.sorted()
                try #require(starts.count == 3, "\(day)")
                #expect(("08:00"..."11:59").contains(starts[0]) && ("12:00"..."15:59").contains(starts[1]))
                #expect(("16:00"..."19:59").contains(starts[2]))
                #expect(prompts.allSatisfy { $0.closesAt.timeIntervalSince($0.opensAt) == 30 * 60 })
            }
        }
    }

    @Test("intersession opens the ISF-K 24 hours before each of the two sessions, until the session starts")
    func intersessionBeforeSessions() async throws {
        try await withTestApp { app in
            // setup
            let accounts = try await create(.intersession, app)
            let therapist = try await signIn(.therapist, of: accounts, app)
            let patient = try await signIn(.patient, of: accounts, app)

            // act
            let sessions = try await patient.send(.GET, "/me/appointments").decoded(
                [Components.Schemas.Appointment].self)
            let beforeSession = try await preview(therapist, of: patient, days: 13, app).filter {
                $0.instrumentKey == "isf-k"
            }

            // verify
            #expect(sessions.count == 2)
            #expect(beforeSession.map(\.opensAt) == sessions.map { $0.startsAt.addingTimeInterval(-86_400) })
            #expect(beforeSession.map(\.closesAt) == sessions.map(\.startsAt))
        }
    }

    @Test("on the day before the first session the ISF-K is there to answer")
    func intersessionISFKOpen() async throws {
        try await withTestApp { app in
            // setup
            let accounts = try await create(.intersession, app)
            let patient = try await signIn(.patient, of: accounts, app)
            let first = try #require(
                try await patient.send(.GET, "/me/appointments").decoded([Components.Schemas.Appointment].self).first)
            app.clock.advance(by: first.startsAt.addingTimeInterval(-86_400).timeIntervalSince(app.clock.now) + 60)
            _ = try await Planner(database: app.database, services: app.app.interlude).runAll(now: app.clock.now)

            // act
            let open = try await patient.send(.GET, "/me/prompts").decoded([Prompt].self)

            // verify
            #expect(open.contains { $0.instrumentKey == "isf-k" && $0.source == .schedule })
        }
    }

    // MARK: Track Your Stress

    static let dailyAnswers: JSONValue = [
        "stress": 40, "control": 60, "negative": 30, "positive": 20, "stressors": ["work"], "valence": 6,
        "arousal": 4, "importance": 50, "abilities": 70,
    ]
    /// An answer to every item of the one-time questionnaire: the middle of each slider, the first option of each choice.
    func baselineAnswers(_ app: TestContext) async throws -> JSONValue {
        let definition = try #require(
            try await InstrumentCatalog(database: app.database, services: app.app.interlude).definition(
                "tys-baseline", 2))
        return .object(
            Dictionary(
                uniqueKeysWithValues: definition.items.map { item in
                    (item.id, item.type == .slider ? JSONValue.int(3) : .string(definition.options(of: item)[0].code))
                }))
    }

    /// Track Your Stress with the clock at the first daily prompt drawn after the join; answers the patient and the open prompts.
    func atFirstDaily(_ app: TestContext) async throws -> (patient: APIClient, open: [Prompt]) {
        let accounts = try await create(.trackYourStress, app)
        let patient = try await signIn(.patient, of: accounts, app)
        // A window drawn before the join may still be open for a minute or two; the first one after it is the test's.
        let firstDaily = try #require(
            try await PromptRecord.query(on: app.database).filter(\.$instrumentKey == "tys-daily")
                .filter(\.$opensAt > app.clock.now).sort(\.$opensAt).first())
        app.clock.advance(by: firstDaily.opensAt.timeIntervalSince(app.clock.now) + 60)
        let open = try await patient.send(.GET, "/me/prompts").decoded([Prompt].self)
        // A short list fails here, naming what was listed, rather than stopping every test at an index.
        let listed = open.map { "\($0.instrumentKey) \($0.status) \($0.opensAt)–\($0.closesAt)" }.joined(
            separator: ", ")
        try #require(
            open.count >= 2,
            "at \(app.clock.now), first daily \(firstDaily.opensAt)–\(firstDaily.closesAt) (\(firstDaily.status)): \(listed)"
        )
        return (patient, open)
    }

    @Test("track-your-stress makes a researcher, a therapist and a patient enrolled in the study")
    func trackYourStressAccounts() async throws {
        try await withTestApp { app in
            // act
            let accounts = try await create(.trackYourStress, app)

            // verify
            #expect(Set(accounts.map(\.role)) == [.therapist, .patient, .researcher])
            let patient = try await signIn(.patient, of: accounts, app)
            let studies = try await patient.send(.GET, "/studies").decoded([Components.Schemas.Study].self)
            #expect(studies.first { $0.title == "Track Your Stress" }?.enrollment?.status == .active)
        }
    }

    @Test("the one-time questionnaire is open at once, and a daily prompt waits for it")
    func baselineFirst() async throws {
        try await withTestApp { app in
            // setup / act
            let (patient, open) = try await atFirstDaily(app)
            let early = try await answer(open[1], Self.dailyAnswers, as: patient, at: app.clock.now)

            // verify
            #expect(open.map(\.instrumentKey) == ["tys-baseline", "tys-daily"])
            #expect(open.map(\.blocked) == [nil, true])
            #expect(early == .conflict)
        }
    }

    @Test("once the one-time questionnaire is answered, the daily one opens and is answered")
    func dailyAfterBaseline() async throws {
        try await withTestApp { app in
            // setup
            let (patient, open) = try await atFirstDaily(app)

            // act
            let baseline = try await answer(open[0], try await baselineAnswers(app), as: patient, at: app.clock.now)
            let after = try await patient.send(.GET, "/me/prompts").decoded([Prompt].self)

            // verify
            #expect(baseline == .created)
            #expect(after.map(\.instrumentKey) == ["tys-daily"])
            #expect(try await answer(after[0], Self.dailyAnswers, as: patient, at: app.clock.now) == .created)
        }
    }

    @Test(
        "the daily questionnaire may be adjusted, up to six a day; the weekly and monthly ones only in their time of day"
    )
    func dailyAdjustable() async throws {
        try await withTestApp { app in
            // setup
            let accounts = try await create(.trackYourStress, app)
            let patient = try await signIn(.patient, of: accounts, app)

            // act
            let adjustable = try await patient.send(.GET, "/me/plan-adjustments").decoded(
                [Components.Schemas.AdjustablePlan].self)

            // verify
            #expect(Set(adjustable.map(\.instrumentKey)) == ["tys-daily", "tys-weekly", "tys-monthly"])
            #expect(adjustable.first { $0.instrumentKey == "tys-daily" }?.bounds.maxCount == 6)
            #expect(adjustable.allSatisfy { $0.studyKind == .research })
            #expect(
                adjustable.filter { $0.instrumentKey != "tys-daily" }.allSatisfy {
                    $0.bounds.minCount == 1 && $0.bounds.maxCount == 1
                })
        }
    }

    @Test(
        "weekly on Sunday and monthly on the 1st at 18:00 in Vienna; the daily one three times on weekdays, twice at weekends"
    )
    func trackYourStressRhythm() async throws {
        try await withTestApp { app in
            // setup
            let accounts = try await create(.trackYourStress, app)
            let researcher = try await signIn(.researcher, of: accounts, app)
            let patient = try await signIn(.patient, of: accounts, app)

            // act
            let planned = try await preview(researcher, of: patient, days: 42, app)

            // verify
            let byInstrument = Dictionary(grouping: planned, by: \.instrumentKey)
            let sundays = byInstrument["tys-weekly"] ?? []
            #expect(sundays.count == 6)
            #expect(
                sundays.allSatisfy {
                    $0.localOpensAt.hasSuffix("T18:00")
                        && LocalDate(String($0.localOpensAt.prefix(10)))?.weekday == .sunday
                })
            let monthly = byInstrument["tys-monthly"] ?? []
            #expect(!monthly.isEmpty && monthly.allSatisfy { $0.localOpensAt.hasSuffix("-01T18:00") })
            for (day, prompts) in Dictionary(
                grouping: byInstrument["tys-daily"] ?? [], by: { String($0.localOpensAt.prefix(10)) })
            {
                let weekday = try #require(LocalDate(day)?.weekday)
                #expect(prompts.count == (weekday == .saturday || weekday == .sunday ? 2 : 3), "\(day)")
            }
        }
    }

    // MARK: Endings

    @Test("closing a study takes back its future prompts; answered ones stay")
    func closingStudy() async throws {
        try await withTestApp { app in
            // setup: the baseline answered
            let accounts = try await create(.trackYourStress, app)
            let patient = try await signIn(.patient, of: accounts, app)
            let researcher = try await signIn(.researcher, of: accounts, app)
            let baseline = try #require(try await patient.send(.GET, "/me/prompts").decoded([Prompt].self).first)
            _ = try await answer(baseline, try await baselineAnswers(app), as: patient, at: app.clock.now)
            let study = try #require(
                try await StudyRecord.query(on: app.database).filter(\.$title == "Track Your Stress").first())
            let before = try await PromptRecord.query(on: app.database).filter(\.$study.$id == study.id!).count()

            // act
            let closed = try await researcher.send(
                .PUT, "/studies/\(study.id!)",
                json: [
                    "title": "Track Your Stress", "consentText": .string(study.consentText), "consentVersion": "1",
                    "joinMode": "open", "status": "closed",
                ])

            // verify
            #expect(before > 40)
            #expect(closed.status == .ok, "\(closed.text)")
            let left = try await PromptRecord.query(on: app.database).filter(\.$study.$id == study.id!).all()
            #expect(left.contains { $0.instrumentKey == "tys-baseline" && $0.status == PromptStatus.completed })
            #expect(left.allSatisfy { $0.opensAt <= app.clock.now })
        }
    }

    @Test("leaving a practice takes back its future prompts")
    func leavingPractice() async throws {
        try await withTestApp { app in
            // setup
            let accounts = try await create(.intersession, app)
            let patient = try await signIn(.patient, of: accounts, app)
            let patientID = try #require(
                UUID(uuidString: try await patient.send(.GET, "/me").decoded(Components.Schemas.User.self).id))
            let before = try await PromptRecord.query(on: app.database).filter(\.$patient.$id == patientID).count()
            let practice = try #require(
                try await EnrollmentRecord.query(on: app.database).filter(\.$patient.$id == patientID).first())

            // act
            let left = try await patient.send(.DELETE, "/studies/\(practice.$study.id)/enrollment")

            // verify
            #expect(before > 40)
            #expect(left.status == .noContent, "\(left.text)")
            let remaining = try await PromptRecord.query(on: app.database).filter(\.$patient.$id == patientID).all()
            #expect(remaining.allSatisfy { $0.opensAt <= app.clock.now })
        }
    }

    // MARK: TinnitusNavigator

    @Test(
        "tinnitus-navigator: a study collecting the three records, and a patient with events, two therapies and three audiograms whose 4 kHz dip deepens"
    )
    func tinnitusNavigator() async throws {
        try await withTestApp { app in
            // act
            let accounts = try await create(.tinnitusNavigator, app)

            // verify
            #expect(Set(accounts.map(\.role)) == [.therapist, .patient, .researcher])
            let patient = try await signIn(.patient, of: accounts, app)
            let me = try await patient.send(.GET, "/me").decoded(Components.Schemas.User.self)
            #expect(me.patient?.records?.collects == [.event, .therapy, .audiogram])
            #expect(me.patient?.records?.eventTypes == ["Hearing test"])
            let events = try await patient.send(.GET, "/me/events").decoded([Components.Schemas.HealthEvent].self)
            #expect(events.count == 5)
            #expect(events.map(\.occurredAt) == events.map(\.occurredAt).sorted(by: >))
            #expect(events.first?._type == "Hearing test")
            let therapies = try await patient.send(.GET, "/me/therapies").decoded([Components.Schemas.Therapy].self)
            #expect(therapies.map(\.ongoing) == [true, false])
            let audiograms = try await patient.send(.GET, "/me/audiograms").decoded([Components.Schemas.Audiogram].self)
            let dip = audiograms.reversed().map { audiogram in
                audiogram.points.first { $0.ear == .right && $0.frequencyHz == 4000 }?.thresholdDbHL
            }
            #expect(dip == [35, 45, 55])
            let open = try await patient.send(.GET, "/me/prompts").decoded([Prompt].self)
            #expect(open.map(\.instrumentKey).contains("tschq"))
            let therapist = try await signIn(.therapist, of: accounts, app)
            let seen = try await therapist.send(.GET, "/patients/\(me.id)/audiograms")
            #expect(seen.status == .ok)
            #expect(try seen.decoded([Components.Schemas.Audiogram].self).count == 3)
        }
    }

    @Test(
        "anima: a study asking for the eleven types with a reason each and a week's window, and a participant with a month of moods and samples"
    )
    func anima() async throws {
        try await withTestApp { app in
            // act
            let accounts = try await create(.anima, app)

            // verify
            let patient = try await signIn(.patient, of: accounts, app)
            let me = try await patient.send(.GET, "/me").decoded(Components.Schemas.User.self)
            #expect(me.patient?.records?.collects == [.mood])
            let types = try await patient.send(.GET, "/me/sample-types").decoded(
                [Components.Schemas.SampleTypeChoice].self)
            #expect(
                types.count == 11
                    && types.allSatisfy { $0.enabled && $0.count > 0 && $0.windowDays == 7 && $0.purposes.count == 1 })
            let moods = try await patient.send(.GET, "/me/moods").decoded([Components.Schemas.Mood].self)
            #expect(moods.count == 31)
            let days = try await patient.send(.GET, "/me/samples/daily?type=stepCount&days=30").decoded(
                [Components.Schemas.SampleDay].self)
            #expect(days.filter { $0.value != nil }.count >= 29 && days.filter { $0.mood != nil }.count >= 29)
            let chart = try await patient.send(.GET, "/me/samples/daily.svg?type=walkingSpeed")
            #expect(chart.text.hasPrefix("<svg") && chart.text.contains("Walking speed per day"))
            // On a phone, in German: drawn for its width, no text under 12 px, the unit in words, decimal commas,
            // mood on the 0 to 100 the mood page uses.
            let phone = try await patient.send(
                .GET, "/me/samples/daily.svg?type=stepCount&width=345", headers: ["Accept-Language": "de"])
            #expect(phone.text.contains(#"viewBox="0 0 345 270""#))
            let sizes = phone.text.matches(of: /<text[^>]*font-size="([0-9.]+)"/).compactMap { Double($0.output.1) }
            #expect(!sizes.isEmpty && sizes.allSatisfy { $0 >= 12 }, "\(sizes)")
            #expect(phone.text.contains(">Schritte<") && !phone.text.contains("{steps}"), "\(phone.text.prefix(600))")
            #expect(phone.text.contains(">100<") && !phone.text.contains(">0.25<") && !phone.text.contains(">0,25<"))
            let speed = try await patient.send(
                .GET, "/me/samples/daily.svg?type=walkingSpeed&days=30", headers: ["Accept-Language": "de"])
            #expect(
                speed.text.contains("Gehgeschwindigkeit") && speed.text.contains(/>[0-9]+,[0-9]+</),
                "German names and decimal commas")
            #expect(
                try await patient.send(.GET, "/me/samples/daily.svg?type=stepCount&width=5000").body.problemFields == [
                    "width"
                ])
            let support =
                try await patient.send(.GET, "/me/samples?type=walkingDoubleSupport").body["samples"][0]["value"].double
                ?? 0
            #expect((20...40).contains(support), "stored as a percentage")
        }
    }

    @Test(
        "iact: a practice keeping thoughts, a client with four weeks of them, the therapist's examples, messages they may reduce"
    )
    func iact() async throws {
        try await withTestApp { app in
            // act
            let accounts = try await create(.iact, app)

            // verify
            let patient = try await signIn(.patient, of: accounts, app)
            let therapist = try await signIn(.therapist, of: accounts, app)
            let me = try await patient.send(.GET, "/me").decoded(Components.Schemas.User.self)
            #expect(me.patient?.records?.collects == [.thought])
            let thoughts = try await patient.send(.GET, "/me/thoughts").decoded([Components.Schemas.Thought].self)
            #expect(thoughts.count == 7 && thoughts.filter { $0.origin == .therapist }.count == 2)
            let occurrences = thoughts.flatMap { $0.occurrences ?? [] }
            #expect(occurrences.count == 22 && occurrences.allSatisfy { $0.ratingAfter > $0.ratingBefore })
            #expect(
                occurrences.contains { $0.location != nil }
                    && thoughts.contains { $0.text == "I am not good enough." && $0.occurrences?.count == 7 })
            let plans = try await patient.send(.GET, "/me/message-plans").decoded(
                [Components.Schemas.MessagePlanOffer].self)
            #expect(
                plans.count == 1 && plans[0].perDay == 3 && plans[0].personChooses && plans[0].studyKind == .practice)
            let fewer = try await patient.send(
                .PUT, "/me/message-plans/\(plans[0].studyId)",
                json: ["perDay": 1, "windowStart": "19:00", "windowEnd": "20:00"])
            #expect(fewer.status == .ok)
            let found = try await therapist.send(.GET, "/patients/\(me.id)/thoughts?q=presentation").decoded(
                [Components.Schemas.Thought].self)
            #expect(
                found.map(\.text) == ["I will mess up the presentation."]
                    && found[0].occurrences?.contains { $0.note == "Before the team meeting." } == true)
            #expect(try await app.count("study_messages") == 8)
        }
    }

    // MARK: Intersession trial

    @Test(
        "intersession-trial: two clinics' admissions of a month alternate between the app and control arms by cycles of four weeks; only the app arm has the Daily"
    )
    func intersessionTrial() async throws {
        try await withTestApp { app in
            // act
            let accounts = try await create(.intersessionTrial, app)

            // verify
            #expect(accounts.map(\.role) == [.researcher, .therapist, .therapist, .patient])
            let study = try #require(
                try await StudyRecord.query(on: app.database).filter(\.$title == "Intersession trial").first())
            let studyID = try study.requireID()
            #expect(study.status == .running && study.allocation == .sequentialCycles)
            let design = try #require(StudyArms.design(of: study))
            #expect(design.arms.map(\.target) == [20, 20] && design.isControl("control"))
            let log = try await AllocationRecord.query(on: app.database).filter(\.$study.$id == studyID)
                .sort(\.$sequence).all()
            #expect(log.count == 2 * DemoSetup.trialAdmissions)
            // Each clinic: the first cycle's admissions share an arm, the second cycle's the other.
            let sites = Dictionary(grouping: log, by: \.site)
            #expect(sites.count == 2)
            for entries in sites.values {
                let cycles = Dictionary(grouping: entries) { $0.cycle ?? 0 }
                #expect(cycles.count == 2, "\(entries.map { ($0.cycle, $0.arm) })")
                #expect(cycles.values.allSatisfy { Set($0.map(\.arm)).count == 1 })
                #expect(Set(cycles.values.compactMap { $0.first?.arm }) == ["app", "control"])
            }
            // A month of answers: the Daily only in the app arm, the PHQ-9 in both.
            let enrollments = try await EnrollmentRecord.query(on: app.database).filter(\.$study.$id == studyID).all()
            for enrollment in enrollments {
                let prompts = try await PromptRecord.query(on: app.database)
                    .filter(\.$patient.$id == enrollment.$patient.id).filter(\.$study.$id == studyID).all()
                let daily = prompts.filter { $0.instrumentKey == "intersession-daily" }
                #expect(daily.isEmpty == (enrollment.arm == "control"), "\(enrollment.arm ?? "")")
                #expect(prompts.contains { $0.instrumentKey == "phq-9" })
            }
            let answered = try await ResponseRecord.query(on: app.database).filter(\.$studyID == studyID).count()
            #expect(answered > 50)
        }
    }
}
