import Foundation

extension FHIR {
    public struct Quantity: Codable, Sendable, Equatable {
        public var value: Double
        public var unit: String
        public var system = "http://unitsofmeasure.org"
        public var code: String
    }

    public struct Annotation: Codable, Sendable {
        public var text: String
    }

    /// A FHIR R4 Observation with the parts health records use.
    public struct Observation: Codable, Sendable {
        public var resourceType = "Observation"
        public var id: String
        public var status = "final"
        public var category: [CodeableConcept]
        public var code: CodeableConcept
        public var subject: Reference
        public var effectiveDateTime: String?
        public var note: [Annotation]?
        public var component: [ObservationComponent]?
        public var effectivePeriod: Period?
        public var valueQuantity: Quantity?
        public var device: Reference?
        public var valueString: String?
        public var derivedFrom: [Reference]?
    }

    public struct ObservationComponent: Codable, Sendable {
        public var `extension`: [QuantityExtension]?
        public var code: CodeableConcept
        public var valueQuantity: Quantity?
        public var dataAbsentReason: CodeableConcept?
    }

    /// An extension carrying a quantity, a code or a flag.
    public struct QuantityExtension: Codable, Sendable {
        public var url: String
        public var valueQuantity: Quantity?
        public var valueCode: String?
        public var valueBoolean: Bool?
    }

    /// A FHIR R4 Procedure: a treatment over a period.
    public struct Procedure: Codable, Sendable {
        public var resourceType = "Procedure"
        public var id: String
        public var status: String
        public var category: CodeableConcept
        public var code: CodeableConcept
        public var subject: Reference
        public var performedPeriod: Period
        public var note: [Annotation]?
    }
}

extension FHIR.CodeableConcept {
    public init(coding: [FHIR.Coding]?, text: String?) {
        self.init(coding: coding)
        self.text = text
    }

    /// The observation category of what the person reports about themselves.
    static let surveyCategory = FHIR.CodeableConcept(coding: [
        FHIR.Coding(
            system: "http://terminology.hl7.org/CodeSystem/observation-category", code: "survey", display: "Survey")
    ])
}

// MARK: - Audiograms

extension Audiogram {
    /// LOINC's pure tone threshold audiometry panel.
    public static let loincPanel = FHIR.Coding(
        system: "http://loinc.org", code: "89015-2", display: "Pure tone threshold audiometry panel")

    /// LOINC's per-ear hearing threshold codes, by ear and frequency; other frequencies have none.
    public static let loincThresholds: [Ear: [Int: String]] = [
        .left: [
            500: "89024-4", 1000: "89016-0", 2000: "89018-6", 3000: "89020-2", 4000: "89022-8", 6000: "89026-9",
            8000: "89028-5",
        ],
        .right: [
            500: "89025-1", 1000: "89017-8", 2000: "89019-4", 3000: "89021-0", 4000: "89023-6", 6000: "89027-7",
            8000: "89029-3",
        ],
    ]

    /// Where Interlude's audiometry extensions are named.
    public static let fhirFrequencyURL = "urn:interlude:fhir:audiometry:frequency"
    public static let fhirConductionURL = "urn:interlude:fhir:audiometry:conduction"
    public static let fhirMaskedURL = "urn:interlude:fhir:audiometry:masked"

    /// The measurement as one Observation coded with the LOINC panel: a component per point, LOINC-coded where
    /// LOINC has the ear and frequency by air conduction, else named in text; every component carries its
    /// frequency as a quantity, and a point without response has a data-absent reason instead of a value.
    public func fhirObservation(id: UUID, subject: FHIR.Identifier) -> FHIR.Observation {
        FHIR.Observation(
            id: id.uuidString.lowercased(),
            category: [Self.examCategory],
            code: FHIR.CodeableConcept(coding: [Self.loincPanel], text: "Audiogram"),
            subject: FHIR.Reference(identifier: subject, display: nil),
            effectiveDateTime: ISO8601DateFormatter().string(from: measuredAt),
            component: points.map(Self.component))
    }

    private static let examCategory = FHIR.CodeableConcept(coding: [
        FHIR.Coding(system: "http://terminology.hl7.org/CodeSystem/observation-category", code: "exam", display: "Exam")
    ])

    private static func component(_ point: Point) -> FHIR.ObservationComponent {
        let name = "Hearing threshold Ear - \(point.ear.rawValue) --\(point.frequencyHz) Hz"
        let loinc = point.conduction == .air ? loincThresholds[point.ear]?[point.frequencyHz] : nil
        let label = point.conduction == .air ? name : "\(name) (bone conduction)"
        var extensions = [
            FHIR.QuantityExtension(
                url: fhirFrequencyURL,
                valueQuantity: FHIR.Quantity(value: Double(point.frequencyHz), unit: "Hz", code: "Hz")),
            FHIR.QuantityExtension(url: fhirConductionURL, valueCode: point.conduction.rawValue),
        ]
        if point.masked { extensions.append(FHIR.QuantityExtension(url: fhirMaskedURL, valueBoolean: true)) }
        var component = FHIR.ObservationComponent(
            extension: extensions,
            code: FHIR.CodeableConcept(
                coding: loinc.map { [FHIR.Coding(system: "http://loinc.org", code: $0, display: name)] }, text: label))
        if let threshold = point.thresholdDbHL {
            component.valueQuantity = FHIR.Quantity(value: Double(threshold), unit: "dB HL", code: "dB")
        } else {
            var absent = FHIR.CodeableConcept(coding: [
                FHIR.Coding(
                    system: "http://terminology.hl7.org/CodeSystem/data-absent-reason", code: "unknown",
                    display: "Unknown")
            ])
            absent.text = "No response at the loudest level tested"
            component.dataAbsentReason = absent
        }
        return component
    }
}

// MARK: - Events and therapies

extension HealthEvent {
    /// The code system of event types, built-in and added by studies.
    public static let fhirTypeSystem = "urn:interlude:health-event-type"

    /// The event as an Observation of the person's history, typed in Interlude's event-type codes, its title the text.
    public func fhirObservation(id: UUID, subject: FHIR.Identifier) -> FHIR.Observation {
        FHIR.Observation(
            id: id.uuidString.lowercased(),
            category: [
                FHIR.CodeableConcept(coding: [
                    FHIR.Coding(
                        system: "http://terminology.hl7.org/CodeSystem/observation-category", code: "social-history",
                        display: "Social History")
                ])
            ],
            code: FHIR.CodeableConcept(
                coding: [FHIR.Coding(system: Self.fhirTypeSystem, code: type, display: nil)], text: title),
            subject: FHIR.Reference(identifier: subject, display: nil),
            effectiveDateTime: ISO8601DateFormatter().string(from: occurredAt),
            note: description.map { [FHIR.Annotation(text: $0)] })
    }
}

extension Therapy {
    public static let fhirKindSystem = "urn:interlude:therapy-type"

    /// The therapy as a Procedure over its dates: in progress while ongoing on `today`, completed once ended,
    /// preparation before it starts.
    public func fhirProcedure(id: UUID, subject: FHIR.Identifier, today: LocalDate) -> FHIR.Procedure {
        let status =
            if startDate > today { "preparation" } else if isOngoing(on: today) { "in-progress" } else { "completed" }
        return FHIR.Procedure(
            id: id.uuidString.lowercased(), status: status,
            category: FHIR.CodeableConcept(
                coding: [FHIR.Coding(system: Self.fhirKindSystem, code: kind.rawValue, display: nil)], text: nil),
            code: FHIR.CodeableConcept(coding: nil, text: name),
            subject: FHIR.Reference(identifier: subject, display: nil),
            performedPeriod: FHIR.Period(start: startDate.description, end: endDate?.description),
            note: note.map { [FHIR.Annotation(text: $0)] })
    }
}

// MARK: - Mood

extension Mood {
    public static let fhirCodeSystem = "urn:interlude:mood"

    /// The report as a survey Observation of the valence, 0 to 1 (UCUM's unity); the note stays with the person.
    public func fhirObservation(id: UUID, subject: FHIR.Identifier) -> FHIR.Observation {
        FHIR.Observation(
            id: id.uuidString.lowercased(),
            category: [.surveyCategory],
            code: FHIR.CodeableConcept(
                coding: [FHIR.Coding(system: Self.fhirCodeSystem, code: "valence", display: nil)],
                text: "Self-reported mood (valence)"),
            subject: FHIR.Reference(identifier: subject, display: nil),
            effectiveDateTime: ISO8601DateFormatter().string(from: recordedAt),
            valueQuantity: FHIR.Quantity(value: valence, unit: "1", code: "1"))
    }
}

// MARK: - Thoughts

extension Thought {
    public static let fhirCodeSystem = "urn:interlude:thought"

    /// The thought as a survey Observation whose value is the words the person wrote, dated when first added.
    public func fhirObservation(id: UUID, subject: FHIR.Identifier) -> FHIR.Observation {
        FHIR.Observation(
            id: id.uuidString.lowercased(),
            category: [.surveyCategory],
            code: FHIR.CodeableConcept(
                coding: [FHIR.Coding(system: Self.fhirCodeSystem, code: "thought", display: nil)],
                text: "Difficult thought"),
            subject: FHIR.Reference(identifier: subject, display: nil),
            effectiveDateTime: ISO8601DateFormatter().string(from: addedAt),
            valueString: text)
    }
}

extension ThoughtOccurrence {
    /// The occurrence as a survey Observation derived from its thought's: one component per rating, -1 to 1
    /// (UCUM's unity); where it happened and the note stay with the person.
    public func fhirObservation(id: UUID, subject: FHIR.Identifier) -> FHIR.Observation {
        func rating(_ code: String, _ text: String, _ value: Double) -> FHIR.ObservationComponent {
            FHIR.ObservationComponent(
                code: FHIR.CodeableConcept(
                    coding: [FHIR.Coding(system: Thought.fhirCodeSystem, code: code, display: nil)], text: text),
                valueQuantity: FHIR.Quantity(value: value, unit: "1", code: "1"))
        }
        return FHIR.Observation(
            id: id.uuidString.lowercased(),
            category: [.surveyCategory],
            code: FHIR.CodeableConcept(
                coding: [FHIR.Coding(system: Thought.fhirCodeSystem, code: "occurrence", display: nil)],
                text: "Difficult thought, rated"),
            subject: FHIR.Reference(identifier: subject, display: nil),
            effectiveDateTime: ISO8601DateFormatter().string(from: recordedAt),
            component: [
                rating("rating-before", "Rating before the defusion exercise", ratingBefore),
                rating("rating-after", "Rating after the defusion exercise", ratingAfter),
            ],
            derivedFrom: [
                FHIR.Reference(
                    identifier: nil, display: nil, reference: "Observation/\(thoughtID.uuidString.lowercased())")
            ])
    }
}
