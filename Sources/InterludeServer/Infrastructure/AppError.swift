import Foundation
import InterludeCore
import Vapor

/// Every way a request can fail that a client should hear about; mapped to problem+json for the API and to a
/// friendly page for the web by `ProblemMiddleware`.
enum AppError: Error, Equatable {
    case validation([FieldError])
    case unauthenticated
    case invalidCredentials
    case forbidden(Refusal)
    case notFound
    case conflict(Conflict)
    /// The data was erased at the person's request; a client drops its copy instead of sending it again.
    case erased
    case rateLimited(retryAfter: Int)
    case malformedRequest
    /// A timestamp that is not ISO 8601 with an offset; the decoder cannot say which field it was.
    case invalidDateTime

    enum Refusal: String {
        case notAllowed
        case emailNotVerified
        case accountDeactivated
        case passwordChangeRequired
        case csrfMismatch
        case twoFactorSetupRequired
        case twoFactorRequired
        /// The shipped library's instruments are read-only.
        case builtInInstrument
    }

    enum Conflict: String {
        case emailTaken
        case alreadyVerified
        case alreadyPaired
        case alreadyEnrolled
        case alreadyDecided
        case pairingCodeUsed
        case pairingCodeExpired
        case studyClosed
        /// Every arm of the study has reached its target.
        case studyFull
        /// The participant is in a control arm, which receives no interventions.
        case controlArm
        /// The study runs: what would tell its allocations to come is not shown yet.
        case studyRunning
        case notEnrolled
        case versionExists
        case alreadyPublished
        case promptCompleted
        case promptCancelled
        case promptInactive
        case responseIDTaken
        case oneTimeFirst
        case interventionIDTaken
        case interventionCompleted
        case alertAcknowledged
        case backupOutdated
        /// The instrument key belongs to another study.
        case instrumentKeyTaken
        case alreadyOnTeam
        /// The change would leave the study without an owner.
        case lastOwner
        /// The export is still being written, failed, or its file is gone.
        case exportNotReady
        /// The study has a new consent version the person must answer before it takes more data from them.
        case consentRequired
        /// A record id the client generated belongs to another record.
        case recordIDTaken
        /// The record was changed or deleted since the version the edit was based on.
        case recordChanged
        /// An upload's next part does not start where the server stopped, or the upload is complete.
        case uploadOffset
        /// The person's previous import is still waiting to be read.
        case importUnderWay
        /// The client's treatment has ended: its history is read, nothing more is done for them.
        case treatmentEnded
        /// The treatment goes on: what ends a former therapist's access does not apply to it.
        case treatmentOngoing
        /// The device receives another account's notifications, and the request proves no right to it.
        case deviceTaken
        /// A therapist's account still follows clients; their treatments end or move first.
        case hasClients
        /// The appointment was changed or deleted since the version the edit was based on.
        case appointmentChanged
        /// An appointment id the app generated belongs to another appointment.
        case appointmentIDTaken
        /// The therapist booked the session: the patient asks them to move or cancel it.
        case appointmentOfTherapist
        /// The patient's own appointment: they change it themselves instead of asking.
        case appointmentOwn
        /// The session is over: nothing is asked or decided about it any more.
        case appointmentOver
        /// The patient withdrew the request, or it was decided already.
        case appointmentNoRequest
        /// Appointments are kept with a therapist: the patient pairs with one first.
        case notPaired
    }

    static func field(_ field: String, _ code: FieldError.Code, limit: Int? = nil) -> AppError {
        .validation([FieldError(field: field, code: code, limit: limit)])
    }

    /// The same problem with its fields named inside `parent`: `title` becomes `record.title`.
    func prefixed(_ parent: String) -> AppError {
        guard case .validation(let errors) = self else { return self }
        return .validation(errors.map { FieldError(field: "\(parent).\($0.field)", code: $0.code, limit: $0.limit) })
    }

    var status: HTTPResponseStatus {
        switch self {
        case .validation, .invalidDateTime: return .unprocessableEntity
        case .unauthenticated, .invalidCredentials: return .unauthorized
        case .forbidden: return .forbidden
        case .notFound: return .notFound
        case .conflict: return .conflict
        case .erased: return .gone
        case .rateLimited: return .tooManyRequests
        case .malformedRequest: return .badRequest
        }
    }

    /// The stable identifier of the kind of problem, also the key of its localised message.
    var slug: String {
        switch self {
        case .validation: return "validation-failed"
        case .unauthenticated: return "unauthenticated"
        case .invalidCredentials: return "invalid-credentials"
        case .forbidden(let refusal): return refusal.rawValue.kebabCased
        case .notFound: return "not-found"
        case .conflict(let conflict): return conflict.rawValue.kebabCased
        case .erased: return "erased"
        case .rateLimited: return "rate-limited"
        case .malformedRequest: return "malformed-request"
        case .invalidDateTime: return "invalid-date-time"
        }
    }
}

extension ValidationFailure {
    var appError: AppError { .validation(errors) }
}

extension String {
    /// `emailTaken` → `email-taken`; a run of capitals is one word: `responseIDTaken` → `response-id-taken`.
    var kebabCased: String {
        let characters = Array(self)
        var result = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                if previous.isLowercase || (previous.isUppercase && next?.isLowercase == true) { result.append("-") }
            }
            result.append(contentsOf: character.lowercased())
        }
        return result
    }
}
