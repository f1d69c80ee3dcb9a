//! One error type for every handler. It renders as JSON `{"error": ...}` (plus any extra
//! fields) for `/api`, and the HTML error layer (`routes::html_errors`) turns the same value
//! into a full page for browser routes.
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

pub type AppResult<T> = Result<T, AppError>;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("Not found")]
    NotFound,
    /// 404 with a message meant for the person, e.g. a shared link that is gone.
    #[error("{0}")]
    NotFoundMsg(String),
    #[error("{0}")]
    BadRequest(String),
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
    #[error("{0}")]
    Timeout(String),
    #[error("{0}")]
    ServiceUnavailable(String),
    /// Any status with a JSON body of our choosing (e.g. 403 `{requiresAuth: true}`).
    #[error("{message}")]
    WithBody { status: StatusCode, message: String, extra: Map<String, Value> },
    #[error("internal error")]
    Internal(#[from] anyhow::Error),
}

impl AppError {
    pub fn status(&self) -> StatusCode {
        match self {
            Self::NotFound | Self::NotFoundMsg(_) => StatusCode::NOT_FOUND,
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            Self::Timeout(_) => StatusCode::GATEWAY_TIMEOUT,
            Self::ServiceUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::WithBody { status, .. } => *status,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The text a person sees. Internal errors never leak their detail.
    pub fn public_message(&self) -> String {
        match self {
            Self::Internal(_) => "Something went wrong on our side. Please try again in a moment.".into(),
            other => other.to_string(),
        }
    }

    pub fn with_body(status: StatusCode, message: impl Into<String>, extra: Value) -> Self {
        let extra = match extra {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        Self::WithBody { status, message: message.into(), extra }
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
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = self.status();
        if let Self::Internal(e) = &self {
            tracing::error!(error = ?e, "request failed");
        }
        let message = self.public_message();
        let mut body = match &self {
            Self::WithBody { extra, .. } => extra.clone(),
            _ => Map::new(),
        };
        body.insert("error".into(), json!(message));
        body.entry("message").or_insert_with(|| json!(message));
        let mut res = (status, Json(Value::Object(body))).into_response();
        res.extensions_mut().insert(ErrorMarker { status, message });
        res
    }
}
