//! How handlers read a request body, so every bad body gets our error shape (`AppError`)
//! instead of axum's plain-text rejection.
//!
//! * [`JsonBody`]: JSON only (the islands and scripts).
//! * [`JsonOrForm`]: JSON, or an HTML form (`application/x-www-form-urlencoded`) for the
//!   pages that also work without JavaScript; the same camelCase field names either way.
//!
//! What is left of a body that is refused before it was read: [`crate::middleware::drain`].
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, header};
use serde::de::DeserializeOwned;

use crate::error::{AppError, ErrorCode};

/// 400 `invalid_body` for a body that is not JSON (or a form) of the expected shape.
pub fn invalid_body(why: impl std::fmt::Display) -> AppError {
    AppError::BadRequest(format!("Invalid request body: {why}")).with_code(ErrorCode::InvalidBody)
}

/// What a body axum could not read becomes: 413 when it is over the route's limit (the
/// person must send less, not fix its shape), else 400 `invalid_body` with axum's reason.
fn unreadable_body(status: axum::http::StatusCode, why: String) -> AppError {
    if status == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        AppError::PayloadTooLarge("The request body is too large.".into())
    } else {
        invalid_body(why)
    }
}

/// Whether the request carries an HTML form.
pub fn is_form(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"))
}

/// A JSON body; 400 `invalid_body` with axum's reason when it is missing, not JSON or of
/// the wrong shape, 413 when it is over the route's body limit.
///
/// A handler that must check something before the body (who is asking, say) takes
/// `Result<JsonBody<T>, AppError>` and applies `?` when it is ready.
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = AppError;
    async fn from_request(req: Request, state: &S) -> Result<Self, AppError> {
        axum::Json::<T>::from_request(req, state)
            .await
            .map(|axum::Json(t)| Self(t))
            .map_err(|e| unreadable_body(e.status(), e.body_text()))
    }
}

/// A body that is an HTML form (then `form` is true, and the handler answers with a
/// redirect) or else JSON (whatever the `Content-Type`, as scripts often leave it out).
pub struct JsonOrForm<T> {
    pub body: T,
    pub form: bool,
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonOrForm<T> {
    type Rejection = AppError;
    async fn from_request(req: Request, state: &S) -> Result<Self, AppError> {
        if is_form(req.headers()) {
            let axum::Form(body) = axum::Form::<T>::from_request(req, state).await.map_err(|e| {
                if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                    return unreadable_body(e.status(), e.body_text());
                }
                AppError::BadRequest(format!("Invalid form: {}", e.body_text())).with_code(ErrorCode::InvalidBody)
            })?;
            return Ok(Self { body, form: true });
        }
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|e| unreadable_body(e.status(), e.body_text()))?;
        let body = serde_json::from_slice(&bytes).map_err(invalid_body)?;
        Ok(Self { body, form: false })
    }
}
