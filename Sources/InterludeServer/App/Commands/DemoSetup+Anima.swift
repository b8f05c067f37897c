import Foundation
import InterludeCore

extension DemoSetup {
    /// Seed 003: a study relating mood to what a phone and watch measure, asking for the eleven types with a reason
    /// for each and keeping samples from a week before the first mood report, joined by `patient`;
    /// `recordAnimaMonth` gives them a month of moods and samples.
    func planAnima(researcher: UserRecord, patient: UserRecord) async throws {
        let draft = try StudyDraft.validate(
            title: [.en: "Anima", .de: "Anima"],
            description: [.en: Self.animaDescription, .de: Self.animaDescriptionGerman],
            consentText: [.en: Self.animaConsent, .de: Self.animaConsentGerman], consentVersion: "1",
            joinMode: JoinMode.open.rawValue, joinPassword: nil, status: StudyStatus.running.rawValue)
        let studies = StudyService(database: database, services: services)
        let study = try await studies.create(by: researcher, draft: draft)
        let studyID = try study.requireID()
        let access = StudyAccess(database: database, services: services)
        _ = try await studies.setRecordSettings(
            try RecordSettings.validate(
                collects: [RecordKind.mood.rawValue], eventTypes: [],
                sampleTypes: Self.animaPurposes.map { ($0.type.rawValue, $0.purpose.values) }, windowDays: 7),
            in: try await access.require(.configureRecords, in: studyID, by: researcher))
        _ = try await studies.join(patient: patient, studyID: studyID, consentVersion: "1", password: nil)
    }

    static let animaDescription = """
        Does how you feel go together with how you move, sleep and what you hear? You report your mood whenever you \
        like; your phone and watch send the measurements you allow. You choose every kind of measurement yourself \
        and can switch each off again, which deletes what was sent of it.
        """

    static let animaDescriptionGerman = """
        Hängt Ihr Befinden damit zusammen, wie Sie sich bewegen, schlafen und was Sie hören? Sie melden Ihre Stimmung, \
        wann immer Sie möchten; Ihr Telefon und Ihre Uhr senden die Messungen, die Sie erlauben. Jede Art von Messung \
        wählen Sie selbst und können sie wieder abschalten, wodurch gelöscht wird, was davon gesendet wurde.
        """

    static let animaConsentGerman = """
        Diese Studie erhebt sensible Daten über Sie: Messungen Ihres iPhones und Ihrer Apple Watch und die Stimmungen, \
        die Sie melden. Sie entscheiden einzeln, welche Arten von Messungen gesendet werden. Messungen werden nur von \
        einer Woche vor Ihrer ersten Stimmungsmeldung bis zu Ihrer letzten aufbewahrt. Ihren Namen, Ihre E-Mail-Adresse \
        und Ihren Ort erheben wir für die Studie nie; was wir aufbewahren, liegt unter einem Pseudonym auf unserem \
        Server und dient nur der Forschung. Sie können jederzeit jede Art von Messung abschalten, jede \
        Stimmungsmeldung oder alles löschen; bereits mit Ihren Daten gerechnete Auswertungen lassen sich nicht \
        zurücknehmen. Mit der Teilnahme stimmen Sie zu, dass Ihre Stimmungsmeldungen und die erlaubten Messungen an \
        unseren Server gesendet werden.
        """

    static let animaConsent = """
        This study collects sensitive data about you: measurements your iPhone and Apple Watch take, and the moods you \
        report. You decide which kinds of measurement are sent, one by one. Measurements are only kept from a week \
        before your first mood report up to your last one. We never collect your name, email address or location \
        for the study; what we keep is stored under a pseudonym on our server and used for research only. You can \
        switch off any kind of measurement, delete any mood report, or delete everything at any time; analyses \
        already made with your data cannot be undone. By joining you agree that your mood reports and the \
        measurements you allow are sent to our server.
        """

    /// Why the study asks for each type, as the participant reads it before enabling it.
    static let animaPurposes: [SampleSettings.Request] = [
        .init(
            type: .heartRate,
            purpose: LocalizedText(
                en:
                    "Your heart rate through the day shows how active or tense your body is; we look at whether it goes with how you feel.",
                de:
                    "Ihr Puls über den Tag zeigt, wie aktiv oder angespannt Ihr Körper ist; wir sehen nach, ob er damit zusammenhängt, wie Sie sich fühlen."
            )),
        .init(
            type: .exerciseTime,
            purpose: LocalizedText(
                en: "Minutes of brisk activity a day: being active is known to lift mood for many people.",
                de: "Minuten zügiger Bewegung am Tag: Aktivität hebt bei vielen Menschen die Stimmung.")),
        .init(
            type: .headphoneAudioExposure,
            purpose: LocalizedText(
                en: "How loud you listen through headphones, as a hint of how much time you spend with music or calls.",
                de:
                    "Wie laut Sie über Kopfhörer hören, als Hinweis darauf, wie viel Zeit Sie mit Musik oder Telefonaten verbringen."
            )),
        .init(
            type: .environmentalAudioExposure,
            purpose: LocalizedText(
                en: "How loud your surroundings are: noisy days may feel different from quiet ones.",
                de: "Wie laut Ihre Umgebung ist: laute Tage fühlen sich vielleicht anders an als ruhige.")),
        .init(
            type: .stairAscentSpeed,
            purpose: LocalizedText(
                en: "How fast you climb stairs, one of the signs of how much energy you have.",
                de: "Wie schnell Sie Treppen steigen, eines der Zeichen dafür, wie viel Energie Sie haben.")),
        .init(
            type: .stepCount,
            purpose: LocalizedText(
                en: "Your steps a day, the simplest measure of how much you move.",
                de: "Ihre Schritte am Tag, das einfachste Maß dafür, wie viel Sie sich bewegen.")),
        .init(
            type: .walkingDoubleSupport,
            purpose: LocalizedText(
                en:
                    "The share of each step with both feet on the ground: it changes with tiredness and how steady you walk.",
                de:
                    "Der Anteil jedes Schritts mit beiden Füßen am Boden: er ändert sich mit Müdigkeit und Trittsicherheit."
            )),
        .init(
            type: .walkingHeartRateAverage,
            purpose: LocalizedText(
                en: "Your heart rate while walking, which changes with fitness and strain.",
                de: "Ihr Puls beim Gehen, der sich mit Fitness und Belastung ändert.")),
        .init(
            type: .walkingSpeed,
            purpose: LocalizedText(
                en: "How fast you walk: people tend to walk slower when they feel low.",
                de: "Wie schnell Sie gehen: wer sich niedergeschlagen fühlt, geht oft langsamer.")),
        .init(
            type: .walkingStepLength,
            purpose: LocalizedText(
                en: "How long your steps are, another sign of energy and pace.",
                de: "Wie lang Ihre Schritte sind, ein weiteres Zeichen für Energie und Tempo.")),
        .init(
            type: .distanceWalkingRunning,
            purpose: LocalizedText(
                en: "How far you walk or run a day.",
                de: "Wie weit Sie am Tag gehen oder laufen.")),
    ]

    /// A month of moods with a weekly rhythm, and the samples a watch and phone would have taken meanwhile, the same
    /// every time (a fixed seed), sent through the service the API uses.
    func recordAnimaMonth(of patient: UserRecord) async throws {
        let patientID = try patient.requireID()
        let zone = patient.zone
        let today = LocalDate(now, in: zone)
        let records = RecordService(database: database, services: services)
        let samples = SampleService(database: database, services: services)
        var random = SeededRandom(seed: 3)
        var moods: [Double] = []
        for day in 0..<30 {
            let date = today.adding(days: day - 30)
            let weekend = (date.daysSinceEpoch + 3) % 7 >= 5
            let valence = min(max((weekend ? 0.72 : 0.55) + random.next(in: -0.2...0.2), 0), 1)
            moods.append(valence)
            let at = LocalDateTime(date: date, time: LocalTime("20:30")!).instant(in: zone)
            _ = try await records.create(
                try Mood.validate(
                    valence: valence, recordedAt: at, note: day % 9 == 0 ? "Long walk with a friend." : nil, now: now),
                id: UUID(), by: patient)
        }
        _ = try await records.create(
            try Mood.validate(valence: 0.6, recordedAt: now.addingTimeInterval(-600), note: nil, now: now), id: UUID(),
            by: patient)
        for type in SampleType.allCases where Self.animaPurposes.contains(where: { $0.type == type }) {
            _ = try await samples.setEnabled(type, true, for: patientID)
        }
        var batch: [Sample.Raw] = []
        for day in 0..<30 {
            let date = today.adding(days: day - 30)
            let lift = moods[day] - 0.5
            for hour in 7...22 {
                let start = LocalDateTime(date: date, time: LocalTime(String(format: "%02d:15", hour))!).instant(
                    in: zone)
                func add(_ type: SampleType, _ value: Double, _ unit: String, minutes: Double = 1) {
                    batch.append(
                        Sample.Raw(
                            type: type.rawValue, value: value, unit: unit, start: start,
                            end: start.addingTimeInterval(minutes * 60),
                            sourceID: "demo-\(type.rawValue)-\(day)-\(hour)",
                            source: .init(
                                app: "Health", deviceName: "Demo Watch", deviceModel: "Watch6,1", osVersion: "10.1.0"),
                            motionContext: type == .heartRate ? 1 : nil))
                }
                add(.heartRate, (68 + random.next(in: -8...12)).rounded(), "count/min")
                let steps = max(0, (600 + 1400 * lift + random.next(in: -400...600)).rounded())
                add(.stepCount, steps, "count", minutes: 60)
                add(.distanceWalkingRunning, steps * 0.00072, "km", minutes: 60)
                if hour % 4 == 0 {
                    add(.walkingSpeed, 1.25 + 0.3 * lift + random.next(in: -0.1...0.1), "m/s", minutes: 5)
                    add(.walkingStepLength, 0.72 + random.next(in: -0.04...0.04), "m", minutes: 5)
                    add(.walkingDoubleSupport, 0.28 + random.next(in: -0.02...0.02), "1", minutes: 5)
                    add(.environmentalAudioExposure, 62 + random.next(in: -10...10), "dBASPL", minutes: 30)
                }
                if hour == 18 {
                    add(.exerciseTime, max(0, 20 + 30 * lift + random.next(in: -10...10)).rounded(), "min", minutes: 30)
                    add(.walkingHeartRateAverage, 98 + random.next(in: -6...6), "count/min", minutes: 30)
                    add(.headphoneAudioExposure, 68 + random.next(in: -6...6), "dBASPL", minutes: 45)
                    add(.stairAscentSpeed, 0.4 + random.next(in: -0.05...0.05), "m/s", minutes: 1)
                }
            }
            if batch.count > Sample.batchLimit - 100 {
                _ = try await samples.ingest(batch, for: patientID)
                batch = []
            }
        }
        _ = try await samples.ingest(batch, for: patientID)
    }
}
