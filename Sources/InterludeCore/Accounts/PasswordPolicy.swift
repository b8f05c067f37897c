import Foundation

/// What makes a password acceptable: long enough, not absurdly long, and not the account's own email.
public enum PasswordPolicy {
    public static let minLength = 10
    public static let maxLength = 256

    /// Adds the field errors of `password` to `validator`; `email` is the address it may not equal.
    public static func check(
        _ password: String?, email: String?, field: String = "password", into validator: inout FieldValidator
    ) {
        guard let password, !password.isEmpty else {
            validator.add(field, .required)
            return
        }
        if password.count < minLength {
            validator.add(field, .tooShort, limit: minLength)
        } else if password.count > maxLength {
            validator.add(field, .tooLong, limit: maxLength)
        } else if let email,
            password.trimmingCharacters(in: .whitespaces).lowercased()
                == email.trimmingCharacters(in: .whitespaces).lowercased()
        {
            validator.add(field, .sameAsEmail)
        }
    }
}
