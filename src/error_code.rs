//! The stable error codes of the API and the "Not authenticated" text: plain data with no
//! HTTP in it, so `services/` can name them without depending on the HTTP error layer
//! (`error.rs`, which maps them to statuses and bodies).

/// What a signed-out request to a signed-in route is told (SPEC: `{error: "Not authenticated"}`).
pub const NOT_AUTHENTICATED: &str = "Not authenticated";

/// The stable, machine-readable `code` of an error answer. Clients branch on this, never on
/// the human text (which may be reworded). Every variant is listed in the OpenAPI document
/// and in `src/routes/README.md` (Errors); renaming one is a breaking change of the public API.
///
/// The islands read it as the union type `islands/src/generated/ErrorCode.ts`, generated
/// from this enum (`routes::island_types`), so a new code is one they must classify.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, utoipa::ToSchema, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    // 400 / 422: the request itself
    InvalidRequest,
    InvalidBody,
    ValidationFailed,
    UnsupportedMediaType,
    MethodNotAllowed,
    FileMissing,
    TooManyFiles,
    UploadInterrupted,
    InvalidFileFormat,
    UnknownEngine,
    PasswordMismatch,
    WeakPassword,
    NoPassword,
    ResetLinkInvalid,
    // 401 / 403: who is asking
    NotAuthenticated,
    InvalidCredentials,
    WrongPassword,
    EmailNotVerified,
    SignInRequired,
    Forbidden,
    AdminRequired,
    CrossOriginRefused,
    ReauthRequired,
    EngineDisabled,
    // 404 / 409 / 413
    NotFound,
    NoMatch,
    Conflict,
    AlreadyRegistered,
    LastAdmin,
    EditConflict,
    FileTooLarge,
    PayloadTooLarge,
    // 408 / 429 / 5xx: try again later
    UploadTimeout,
    RateLimited,
    QuotaPerMinute,
    QuotaPerDay,
    QuotaConcurrent,
    ServerBusy,
    ShuttingDown,
    Timeout,
    ServiceUnavailable,
    EngineUnavailable,
    EngineBusy,
    EngineFailed,
    LibraryUnavailable,
    DeliveryFailed,
    InternalError,
}

impl ErrorCode {
    /// Every code, in the order the documentation lists them.
    pub const ALL: &'static [ErrorCode] = &[
        Self::InvalidRequest,
        Self::InvalidBody,
        Self::ValidationFailed,
        Self::UnsupportedMediaType,
        Self::MethodNotAllowed,
        Self::FileMissing,
        Self::TooManyFiles,
        Self::UploadInterrupted,
        Self::InvalidFileFormat,
        Self::UnknownEngine,
        Self::PasswordMismatch,
        Self::WeakPassword,
        Self::NoPassword,
        Self::ResetLinkInvalid,
        Self::NotAuthenticated,
        Self::InvalidCredentials,
        Self::WrongPassword,
        Self::EmailNotVerified,
        Self::SignInRequired,
        Self::Forbidden,
        Self::AdminRequired,
        Self::CrossOriginRefused,
        Self::ReauthRequired,
        Self::EngineDisabled,
        Self::NotFound,
        Self::NoMatch,
        Self::Conflict,
        Self::AlreadyRegistered,
        Self::LastAdmin,
        Self::EditConflict,
        Self::FileTooLarge,
        Self::PayloadTooLarge,
        Self::UploadTimeout,
        Self::RateLimited,
        Self::QuotaPerMinute,
        Self::QuotaPerDay,
        Self::QuotaConcurrent,
        Self::ServerBusy,
        Self::ShuttingDown,
        Self::Timeout,
        Self::ServiceUnavailable,
        Self::EngineUnavailable,
        Self::EngineBusy,
        Self::EngineFailed,
        Self::LibraryUnavailable,
        Self::DeliveryFailed,
        Self::InternalError,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::InvalidBody => "invalid_body",
            Self::ValidationFailed => "validation_failed",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::FileMissing => "file_missing",
            Self::TooManyFiles => "too_many_files",
            Self::UploadInterrupted => "upload_interrupted",
            Self::InvalidFileFormat => "invalid_file_format",
            Self::UnknownEngine => "unknown_engine",
            Self::PasswordMismatch => "password_mismatch",
            Self::WeakPassword => "weak_password",
            Self::NoPassword => "no_password",
            Self::ResetLinkInvalid => "reset_link_invalid",
            Self::NotAuthenticated => "not_authenticated",
            Self::InvalidCredentials => "invalid_credentials",
            Self::WrongPassword => "wrong_password",
            Self::EmailNotVerified => "email_not_verified",
            Self::SignInRequired => "sign_in_required",
            Self::Forbidden => "forbidden",
            Self::AdminRequired => "admin_required",
            Self::CrossOriginRefused => "cross_origin_refused",
            Self::ReauthRequired => "reauth_required",
            Self::EngineDisabled => "engine_disabled",
            Self::NotFound => "not_found",
            Self::NoMatch => "no_match",
            Self::Conflict => "conflict",
            Self::AlreadyRegistered => "already_registered",
            Self::LastAdmin => "last_admin",
            Self::EditConflict => "edit_conflict",
            Self::FileTooLarge => "file_too_large",
            Self::PayloadTooLarge => "payload_too_large",
            Self::UploadTimeout => "upload_timeout",
            Self::RateLimited => "rate_limited",
            Self::QuotaPerMinute => "quota_per_minute",
            Self::QuotaPerDay => "quota_per_day",
            Self::QuotaConcurrent => "quota_concurrent",
            Self::ServerBusy => "server_busy",
            Self::ShuttingDown => "shutting_down",
            Self::Timeout => "timeout",
            Self::ServiceUnavailable => "service_unavailable",
            Self::EngineUnavailable => "engine_unavailable",
            Self::EngineBusy => "engine_busy",
            Self::EngineFailed => "engine_failed",
            Self::LibraryUnavailable => "library_unavailable",
            Self::DeliveryFailed => "delivery_failed",
            Self::InternalError => "internal_error",
        }
    }

    /// One line for the documentation (`src/routes/README.md`, `/docs/api`).
    pub fn describe(self) -> &'static str {
        match self {
            Self::InvalidRequest => "The request is malformed (a path or query parameter of the wrong type).",
            Self::InvalidBody => "The JSON body cannot be read or misses a required field.",
            Self::ValidationFailed => "A field's value is refused; the message says which and why.",
            Self::UnsupportedMediaType => "The body has a Content-Type this route does not take.",
            Self::MethodNotAllowed => "The path exists but not with this HTTP method.",
            Self::FileMissing => "Identify was called without a `file` part.",
            Self::TooManyFiles => "More than one `file` part in one identify request.",
            Self::UploadInterrupted => "The multipart upload could not be read to its end.",
            Self::InvalidFileFormat => {
                "The upload is empty, not an image or video, or of a type the site does not accept."
            }
            Self::UnknownEngine => "The `mode` names no engine this server knows.",
            Self::PasswordMismatch => "The password and its confirmation differ.",
            Self::WeakPassword => "The new password is too short.",
            Self::NoPassword => "The account signs in with Google and has no password to check.",
            Self::ResetLinkInvalid => "The password-reset link is unknown, used or expired.",
            Self::NotAuthenticated => "The route needs a signed-in session (or an API key).",
            Self::InvalidCredentials => "Username or password is wrong.",
            Self::WrongPassword => "The current password given to confirm a change is wrong.",
            Self::EmailNotVerified => "The account must verify its email address before signing in.",
            Self::SignInRequired => "Guests have used their free identifications; sign in to continue.",
            Self::Forbidden => "Signed in, but this is not yours to see or change.",
            Self::AdminRequired => "The route is for administrators.",
            Self::CrossOriginRefused => "A cookie-authenticated write came from another origin (CSRF protection).",
            Self::ReauthRequired => "Sign in again (recently) before this sensitive change.",
            Self::EngineDisabled => "The administrator disabled the chosen engine.",
            Self::NotFound => "Nothing exists at this path or with this id (or it is not shared with you).",
            Self::NoMatch => "The scene could not be identified.",
            Self::Conflict => "The change conflicts with the current state.",
            Self::AlreadyRegistered => "The username or email is already registered.",
            Self::LastAdmin => "The only administrator cannot remove their own account.",
            Self::EditConflict => "Someone else saved this item since you loaded it.",
            Self::FileTooLarge => "The upload is over the site's file-size limit.",
            Self::PayloadTooLarge => "The request body is over this route's limit.",
            Self::UploadTimeout => "The upload took longer than the site allows.",
            Self::RateLimited => "Too many requests; wait for `Retry-After` seconds.",
            Self::QuotaPerMinute => "The API key's per-minute quota is used up; wait for `Retry-After` seconds.",
            Self::QuotaPerDay => "The API key's daily quota is used up; it refills after `Retry-After` seconds.",
            Self::QuotaConcurrent => {
                "The API key has as many requests running as its quota allows; retry when one ends."
            }
            Self::ServerBusy => "All analysis slots are taken; retry after `Retry-After` seconds.",
            Self::ShuttingDown => "The server is restarting; retry shortly.",
            Self::Timeout => "The work took longer than the site's deadline.",
            Self::ServiceUnavailable => "A service the route needs is not configured or reachable.",
            Self::EngineUnavailable => "No AI engine is configured for the chosen mode.",
            Self::EngineBusy => "The AI engine is rate limiting this server; try another engine or later.",
            Self::EngineFailed => "The AI engine failed or refused to answer.",
            Self::LibraryUnavailable => {
                "The Library's index (a Milvus server) does not answer; retry after `Retry-After` seconds."
            }
            Self::DeliveryFailed => "A notification could not be delivered to the push service.",
            Self::InternalError => "An unexpected failure on the server (logged with the request id).",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
