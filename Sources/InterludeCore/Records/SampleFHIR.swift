import Foundation

extension SampleType {
    /// LOINC's code for the type, where LOINC has one that means the same measurement.
    public var loinc: FHIR.Coding? {
        switch self {
        case .heartRate: FHIR.Coding(system: "http://loinc.org", code: "8867-4", display: "Heart rate")
        case .restingHeartRate:
            FHIR.Coding(system: "http://loinc.org", code: "40443-4", display: "Heart rate --resting")
        case .bodyMass: FHIR.Coding(system: "http://loinc.org", code: "29463-7", display: "Body weight")
        case .stepCount:
            FHIR.Coding(
                system: "http://loinc.org", code: "55423-8", display: "Number of steps in unspecified time Pedometer")
        case .heartRateVariabilitySDNN:
            FHIR.Coding(
                system: "http://loinc.org", code: "80404-7",
                display: "R-R interval.standard deviation (Heart rate variability)")
        default: nil
        }
    }

    /// Where Apple Health's identifiers are named, for the source's own coding.
    public static let healthKitSystem = "http://developer.apple.com/documentation/healthkit"

    /// The Observation category: heart rates and weight are vital signs, the rest is activity.
    var fhirCategory: FHIR.Coding {
        switch self {
        case .heartRate, .restingHeartRate, .bodyMass:
            FHIR.Coding(
                system: "http://terminology.hl7.org/CodeSystem/observation-category", code: "vital-signs",
                display: "Vital Signs")
        default:
            FHIR.Coding(
                system: "http://terminology.hl7.org/CodeSystem/observation-category", code: "activity",
                display: "Activity")
        }
    }
}

extension Sample {
    /// The sample as an Observation: coded in LOINC where LOINC has the measurement, always also in Apple Health's
    /// identifier; the value in the type's UCUM unit over the time it covers; the device by its model only.
    public func fhirObservation(id: UUID, subject: FHIR.Identifier) -> FHIR.Observation {
        let formatter = ISO8601DateFormatter()
        let sourceCoding = FHIR.Coding(system: SampleType.healthKitSystem, code: type.healthKitIdentifier, display: nil)
        var observation = FHIR.Observation(
            id: id.uuidString.lowercased(),
            category: [FHIR.CodeableConcept(coding: [type.fhirCategory])],
            code: FHIR.CodeableConcept(coding: [type.loinc, sourceCoding].compactMap { $0 }, text: type.rawValue),
            subject: FHIR.Reference(identifier: subject, display: nil),
            valueQuantity: FHIR.Quantity(value: value, unit: type.unit, code: type.unit))
        if start == end {
            observation.effectiveDateTime = formatter.string(from: start)
        } else {
            observation.effectivePeriod = FHIR.Period(
                start: formatter.string(from: start), end: formatter.string(from: end))
        }
        if let model = source.deviceModel { observation.device = FHIR.Reference(identifier: nil, display: model) }
        return observation
    }
}
