import Fluent
import Foundation
import InterludeCore

/// The profile a therapist shows their patients: full name with degree, contact and emergency number.
struct TherapistProfiles: Sendable {
    static let fullNameMaxLength = 200
    static let officeAddressMaxLength = 500
    static let phoneMaxLength = 50

    let database: any Database

    func profile(of therapistID: UUID) async throws -> (TherapistProfileRecord, UserRecord) {
        guard
            let profile = try await TherapistProfileRecord.query(on: database)
                .filter(\.$user.$id == therapistID).with(\.$user).first()
        else { throw AppError.notFound }
        return (profile, profile.user)
    }

    /// What a patient sees of their therapist.
    struct Contact: Sendable {
        let therapistID: UUID
        let email: String
        let fullName: String
        let gender: String?
        let officeAddress: String?
        let phone: String?
        let emergencyNumber: String?

        init(_ profile: TherapistProfileRecord, user: UserRecord) throws {
            therapistID = try user.requireID()
            email = user.email
            fullName = profile.fullName
            gender = profile.gender
            officeAddress = profile.officeAddress
            phone = profile.phone
            emergencyNumber = profile.emergencyNumber
        }
    }

    /// The patient's therapist as the patient sees them, when the patient is paired.
    func contact(ofTherapistOf patientID: UUID) async throws -> Contact? {
        try await Statements.therapistContact(of: patientID, on: database)
    }

    func update(
        therapistID: UUID, fullName: String?, gender: String?, officeAddress: String?, phone: String?,
        emergencyNumber: String?
    ) async throws -> (TherapistProfileRecord, UserRecord) {
        var validator = FieldValidator()
        let name = validator.text(fullName, field: "fullName", maxLength: Self.fullNameMaxLength)
        var parsedGender: Gender?
        if let gender, !gender.isEmpty {
            parsedGender = Gender(rawValue: gender)
            if parsedGender == nil { validator.add("gender", .invalidValue) }
        }
        let address = validator.text(
            officeAddress, field: "officeAddress", required: false, maxLength: Self.officeAddressMaxLength,
            lines: .multiple)
        let cleanPhone = Self.phone(phone, field: "phone", into: &validator)
        let emergency = Self.phone(emergencyNumber, field: "emergencyNumber", into: &validator)
        try validator.check()
        let (profile, user) = try await profile(of: therapistID)
        profile.fullName = name!
        profile.gender = parsedGender?.rawValue
        profile.officeAddress = address
        profile.phone = cleanPhone
        profile.emergencyNumber = emergency
        try await profile.save(on: database)
        return (profile, user)
    }

    private static func phone(_ value: String?, field: String, into validator: inout FieldValidator) -> String? {
        guard let text = validator.text(value, field: field, required: false, maxLength: phoneMaxLength) else {
            return nil
        }
        let allowed = CharacterSet(charactersIn: "0123456789+-/() ")
        guard text.unicodeScalars.allSatisfy({ allowed.contains($0) }), text.contains(where: \.isNumber) else {
            validator.add(field, .invalidFormat)
            return nil
        }
        return text
    }
}
