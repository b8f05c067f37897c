import Foundation

extension FHIR {
    /// A FHIR R4 Consent: one decision on one version of a study's consent or of the privacy policy, with the
    /// modules granted and declined as nested provisions.
    public struct Consent: Codable, Sendable {
        public var resourceType = "Consent"
        public var id: String
        public var status: String
        public var scope: CodeableConcept
        public var category: [CodeableConcept]
        public var patient: Reference
        public var dateTime: String
        public var policy: [Policy]
        public var provision: Provision
    }

    public struct Policy: Codable, Sendable {
        public var uri: String
    }

    public struct Period: Codable, Sendable {
        public var start: String?
        public var end: String?
    }

    public struct Provision: Codable, Sendable {
        public var type: String
        public var period: Period?
        public var code: [CodeableConcept]?
        public var provision: [Provision]?
    }
}

/// Which document a consent decision was on, as FHIR classifies it.
public enum ConsentDocumentKind: Sendable {
    case studyConsent(studyID: UUID)
    case privacyPolicy
}

extension FHIR.Consent {
    /// The module code system Interlude's optional consent parts are coded in.
    public static let moduleSystem = "urn:interlude:consent-module"

    /// A decision as a Consent resource. `ended` is when it was replaced or withdrawn; it is then inactive.
    public init(
        id: UUID, document: ConsentDocumentKind, version: String, subject: FHIR.Identifier, decidedAt: Date,
        ended: Date?,
        choices: ConsentChoices?
    ) {
        let iso = ISO8601DateFormatter()
        self.id = id.uuidString.lowercased()
        status = ended == nil ? "active" : "inactive"
        let scopeSystem = "http://terminology.hl7.org/CodeSystem/consentscope"
        switch document {
        case .studyConsent(let studyID):
            scope = FHIR.CodeableConcept(coding: [
                FHIR.Coding(system: scopeSystem, code: "research", display: "Research")
            ])
            category = [
                FHIR.CodeableConcept(coding: [
                    FHIR.Coding(system: "http://loinc.org", code: "59284-0", display: "Patient Consent")
                ])
            ]
            policy = [FHIR.Policy(uri: "urn:interlude:study:\(studyID.uuidString.lowercased()):consent:\(version)")]
        case .privacyPolicy:
            scope = FHIR.CodeableConcept(coding: [
                FHIR.Coding(system: scopeSystem, code: "patient-privacy", display: "Privacy Consent")
            ])
            category = [
                FHIR.CodeableConcept(coding: [
                    FHIR.Coding(
                        system: "http://loinc.org", code: "57016-8", display: "Privacy policy acknowledgement Document")
                ])
            ]
            policy = [FHIR.Policy(uri: "urn:interlude:privacy-policy:\(version)")]
        }
        patient = FHIR.Reference(identifier: subject, display: nil)
        dateTime = iso.string(from: decidedAt)
        let modules = (choices?.granted ?? [:]).filter { !$0.key.isRequired }.sorted { $0.key < $1.key }
        provision = FHIR.Provision(
            type: "permit", period: FHIR.Period(start: iso.string(from: decidedAt), end: ended.map(iso.string(from:))),
            code: nil,
            provision: modules.isEmpty
                ? nil
                : modules.map { module, granted in
                    FHIR.Provision(
                        type: granted ? "permit" : "deny", period: nil,
                        code: [
                            FHIR.CodeableConcept(coding: [
                                FHIR.Coding(system: Self.moduleSystem, code: module.rawValue, display: nil)
                            ])
                        ],
                        provision: nil)
                })
    }
}
