//! One error type for every handler. It renders as JSON `{"error", "message", "code"}` (plus
//! any extra fields) for `/api`, and the HTML error layer (`routes::html_errors`) turns the
//! same value into a full page for browser routes.
//!
//! The `code` comes from here only: each variant has a default ([`AppError::code`]) and a
//! handler that knows more says so with [`AppError::with_code`]. Nothing downstream looks at
//! the message to find out what happened.
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

pub type AppResult<T> = Result<T, AppError>;

pub use crate::error_code::{ErrorCode, NOT_AUTHENTICATED};

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("Not found")]
    NotFound,
    /// 404 with a message meant for the person, e.g. a shared link that is gone.
    #[error("{0}")]
    NotFoundMsg(String),
    #[error("{0}")]
    BadRequest(String),
    /// 401 for a route that needs a signed-in session (or an API key) and has none: the one
    /// "Not authenticated" answer.
    #[error("{}", NOT_AUTHENTICATED)]
    NotAuthenticated,
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    PayloadTooLarge(String),
    #[error("{0}")]
    Unprocessable(String),
    #[error("{0}")]
    TooManyRequests(String),
    /// 429 with `Retry-After` (and `RateLimit-*` when a limit decided it): see `services::throttle`.
    #[error("{message}")]
    Throttled { message: String, retry_after: u64, headers: Vec<(&'static str, String)> },
    #[error("{0}")]
    Timeout(String),
    #[error("{0}")]
    ServiceUnavailable(String),
    /// A status (503 busy or shutting down, 429) with `Retry-After: secs`.
    #[error("{message}")]
    RetryLater { status: StatusCode, message: String, secs: u64 },
    /// 408: the upload did not arrive within the site's limit.
    #[error("{0}")]
    UploadTimeout(String),
    /// 502: a service we called (an AI engine, a push service) failed; the detail is logged
    /// where it happened, the message says what the person can do.
    #[error("{0}")]
    BadGateway(String),
    /// 403 `{requiresAuth: true}`: a guest used up the free identifications.
    #[error("{0}")]
    SignInRequired(String),
    /// 404 `{noMatch: true}`: the identification ran and found nothing.
    #[error(
        "We could not identify this scene. Try a clearer image, a frame with recognizable actors or scenery, or a different frame."
    )]
    NoMatch,
    /// 403 `{emailVerificationRequired: true, email}`: the password was right but the
    /// address is not verified yet; `email` is where the verification link went.
    #[error("Please verify your email address before signing in. Check your inbox for the verification link.")]
    EmailNotVerified { email: String },
    /// 409 `{updatedBy, updatedAt, currentVersion}`: someone saved a newer version of the
    /// item since the editor loaded it.
    #[error("{message}")]
    EditConflict { message: String, updated_by: String, updated_at: String, current_version: i32 },
    #[error("internal error")]
    Internal(#[from] anyhow::Error),
    /// Any of the above with a more precise machine code than its variant's default.
    #[error("{inner}")]
    Coded { code: ErrorCode, inner: Box<AppError> },
}

impl AppError {
    pub fn status(&self) -> StatusCode {
        match self {
            Self::NotFound | Self::NotFoundMsg(_) => StatusCode::NOT_FOUND,
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::NotAuthenticated | Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) | Self::SignInRequired(_) | Self::EmailNotVerified { .. } => StatusCode::FORBIDDEN,
            Self::Conflict(_) | Self::EditConflict { .. } => StatusCode::CONFLICT,
            Self::UploadTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            Self::BadGateway(_) => StatusCode::BAD_GATEWAY,
            Self::NoMatch => StatusCode::NOT_FOUND,
            Self::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::TooManyRequests(_) | Self::Throttled { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Timeout(_) => StatusCode::GATEWAY_TIMEOUT,
            Self::ServiceUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::RetryLater { status, .. } => *status,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Coded { inner, .. } => inner.status(),
        }
    }

    /// The stable machine code clients see in the body's `code`.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Coded { code, .. } => *code,
            Self::NotFound | Self::NotFoundMsg(_) => ErrorCode::NotFound,
            Self::BadRequest(_) | Self::Unprocessable(_) => ErrorCode::ValidationFailed,
            Self::NotAuthenticated | Self::Unauthorized(_) => ErrorCode::NotAuthenticated,
            Self::Forbidden(_) => ErrorCode::Forbidden,
            Self::Conflict(_) => ErrorCode::Conflict,
            Self::EditConflict { .. } => ErrorCode::EditConflict,
            Self::SignInRequired(_) => ErrorCode::SignInRequired,
            Self::EmailNotVerified { .. } => ErrorCode::EmailNotVerified,
            Self::NoMatch => ErrorCode::NoMatch,
            Self::UploadTimeout(_) => ErrorCode::UploadTimeout,
            Self::BadGateway(_) => ErrorCode::EngineFailed,
            Self::PayloadTooLarge(_) => ErrorCode::PayloadTooLarge,
            Self::TooManyRequests(_) | Self::Throttled { .. } => ErrorCode::RateLimited,
            Self::Timeout(_) => ErrorCode::Timeout,
            Self::ServiceUnavailable(_) => ErrorCode::ServiceUnavailable,
            Self::RetryLater { status, .. } if *status == StatusCode::SERVICE_UNAVAILABLE => ErrorCode::ServerBusy,
            Self::RetryLater { status, .. } => ErrorCode::for_status(*status),
            Self::Internal(_) => ErrorCode::InternalError,
        }
    }

    /// The same error with a more precise `code`.
    pub fn with_code(self, code: ErrorCode) -> Self {
        match self {
            Self::Coded { inner, .. } => Self::Coded { code, inner },
            other => Self::Coded { code, inner: Box::new(other) },
        }
    }

    /// The error without its [`AppError::with_code`] wrapper, to match on its variant.
    pub fn unwrapped(&self) -> &AppError {
        match self {
            Self::Coded { inner, .. } => inner.unwrapped(),
            other => other,
        }
    }

    /// The text a person sees. Internal errors never leak their detail.
    pub fn public_message(&self) -> String {
        match self {
            Self::Internal(_) => "Something went wrong on our side. Please try again in a moment.".into(),
            Self::Coded { inner, .. } => inner.public_message(),
            other => other.to_string(),
        }
    }

    /// 429 for a request a [`crate::services::throttle::Limit`] refused, with its headers.
    pub fn throttled(message: impl Into<String>, d: &crate::services::throttle::Decision) -> Self {
        Self::Throttled { message: message.into(), retry_after: d.reset_secs().max(1), headers: d.headers() }
    }

    /// 429 asking to come back in `secs` seconds.
    pub fn retry_later(message: impl Into<String>, secs: u64) -> Self {
        let secs = secs.max(1);
        Self::Throttled { message: message.into(), retry_after: secs, headers: vec![("retry-after", secs.to_string())] }
    }
}

impl From<sea_orm::DbErr> for AppError {
    fn from(e: sea_orm::DbErr) -> Self {
        Self::Internal(e.into())
    }
}

impl From<askama::Error> for AppError {
    fn from(e: askama::Error) -> Self {
        Self::Internal(e.into())
    }
}

/// Marker left on error responses so the HTML layer can re-render them as pages.
#[derive(Clone, Debug)]
pub struct ErrorMarker {
    pub status: StatusCode,
    pub message: String,
    pub code: ErrorCode,
}

/// PostgreSQL refuses text it cannot store (SQLSTATE 22021, e.g. a NUL byte, which SQLite
/// keeps). That is the client's input, not our failure: it becomes a 400 wherever it
/// surfaces, whichever route, extractor or service let the text through.
fn is_unstorable_text(e: &anyhow::Error) -> bool {
    use sea_orm::{DbErr, RuntimeErr};
    e.chain().any(|cause| match cause.downcast_ref::<DbErr>() {
        Some(DbErr::Exec(RuntimeErr::SqlxError(e)) | DbErr::Query(RuntimeErr::SqlxError(e))) => {
            matches!(&**e, sea_orm::sqlx::Error::Database(db) if db.code().as_deref() == Some("22021"))
        }
        _ => false,
    })
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let this = match self.unwrapped() {
            Self::Internal(e) if is_unstorable_text(e) => {
                Self::BadRequest("The request contains characters that cannot be stored (such as a NUL byte).".into())
            }
            _ => self,
        };
        this.render()
    }
}

impl AppError {
    fn render(self) -> Response {
        let status = self.status();
        if let Self::Internal(e) = self.unwrapped() {
            tracing::error!(error = ?e, "request failed");
        }
        let message = self.public_message();
        let code = self.code();
        let this = match self {
            Self::Coded { inner, .. } => *inner,
            other => other,
        };
        let mut body = match &this {
            Self::SignInRequired(_) => Map::from_iter([("requiresAuth".to_owned(), json!(true))]),
            Self::NoMatch => Map::from_iter([("noMatch".to_owned(), json!(true))]),
            Self::EmailNotVerified { email } => Map::from_iter([
                ("emailVerificationRequired".to_owned(), json!(true)),
                ("email".to_owned(), json!(email)),
            ]),
            Self::EditConflict { updated_by, updated_at, current_version, .. } => Map::from_iter([
                ("updatedBy".to_owned(), json!(updated_by)),
                ("updatedAt".to_owned(), json!(updated_at)),
                ("currentVersion".to_owned(), json!(current_version)),
            ]),
            Self::Throttled { retry_after, .. } => Map::from_iter([("retryAfter".to_owned(), json!(retry_after))]),
            Self::RetryLater { secs, .. } => Map::from_iter([("retryAfter".to_owned(), json!(secs))]),
            _ => Map::new(),
        };
        body.insert("error".into(), json!(message));
        body.insert("message".into(), json!(message));
        body.insert("code".into(), json!(code));
        let mut res = (status, Json(Value::Object(body))).into_response();
        if let Self::Throttled { headers, .. } = &this {
            for (name, value) in headers {
                if let Ok(v) = axum::http::HeaderValue::from_str(value) {
                    res.headers_mut().insert(*name, v);
                }
            }
        }
        if let Self::RetryLater { secs, .. } = &this {
            res.headers_mut().insert(axum::http::header::RETRY_AFTER, (*secs).into());
        }
        res.extensions_mut().insert(ErrorMarker { status, message, code });
        res
    }
}

impl ErrorCode {
    /// The code of a failure that did not say more than its status (framework rejections).
    pub fn for_status(status: StatusCode) -> Self {
        match status.as_u16() {
            400 => Self::InvalidRequest,
            401 => Self::NotAuthenticated,
            403 => Self::Forbidden,
            404 => Self::NotFound,
            405 => Self::MethodNotAllowed,
            408 => Self::UploadTimeout,
            409 => Self::Conflict,
            413 => Self::PayloadTooLarge,
            415 => Self::UnsupportedMediaType,
            422 => Self::InvalidBody,
            429 => Self::RateLimited,
            502 => Self::EngineFailed,
            503 => Self::ServiceUnavailable,
            504 => Self::Timeout,
            _ => Self::InternalError,
        }
    }
}

/// The body of every error answer under `/api`. Some answers add fields (`retryAfter` on
/// 429/503, `requiresAuth`, `noMatch`, `emailVerificationRequired`, an edit conflict's
/// `currentVersion`...), so the schema leaves the object open.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// The human-readable text (same as `message`; kept for older clients).
    pub error: String,
    /// The human-readable text, in English, meant to be shown to the person.
    pub message: String,
    /// The stable machine code of this case.
    pub code: ErrorCode,
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body(e: AppError) -> (StatusCode, Value) {
        let res = e.into_response();
        let status = res.status();
        let bytes = axum::body::to_bytes(res.into_body(), 64 * 1024).await.unwrap();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    #[tokio::test]
    async fn named_variants_carry_their_fields_and_codes() {
        let (s, b) = body(AppError::EmailNotVerified { email: "a@example.com".into() }).await;
        assert_eq!(
            (s, &b["code"], &b["emailVerificationRequired"], &b["email"]),
            (StatusCode::FORBIDDEN, &json!("email_not_verified"), &json!(true), &json!("a@example.com"))
        );
        let (s, b) = body(AppError::NoMatch).await;
        assert_eq!((s, &b["code"], &b["noMatch"]), (StatusCode::NOT_FOUND, &json!("no_match"), &json!(true)));
        let (s, b) = body(AppError::SignInRequired("Sign in".into())).await;
        assert_eq!(
            (s, &b["code"], &b["requiresAuth"]),
            (StatusCode::FORBIDDEN, &json!("sign_in_required"), &json!(true))
        );
        let conflict = AppError::EditConflict {
            message: "changed".into(),
            updated_by: "ann".into(),
            updated_at: "today".into(),
            current_version: 3,
        };
        let (s, b) = body(conflict).await;
        assert_eq!(
            (s, &b["code"], &b["currentVersion"], &b["updatedBy"]),
            (StatusCode::CONFLICT, &json!("edit_conflict"), &json!(3), &json!("ann"))
        );
        assert_eq!(b["message"], "changed");
        let (s, b) = body(AppError::BadGateway("later".into()).with_code(ErrorCode::DeliveryFailed)).await;
        assert_eq!((s, &b["code"]), (StatusCode::BAD_GATEWAY, &json!("delivery_failed")));
        let (s, b) = body(AppError::UploadTimeout("slow".into())).await;
        assert_eq!((s, &b["code"]), (StatusCode::REQUEST_TIMEOUT, &json!("upload_timeout")));
    }
}
