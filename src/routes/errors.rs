//! The 404 page and the layer that turns API-style errors on page routes into HTML pages.
use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ErrorMarker;
use crate::services::users::CurrentUser;
use crate::state::AppState;
use crate::views::PageCtx;

#[derive(Template, WebTemplate)]
#[template(path = "errors/404.html")]
pub struct NotFoundPage {
    pub ctx: PageCtx,
}

#[derive(Template, WebTemplate)]
#[template(path = "errors/error.html")]
pub struct ErrorPage {
    pub ctx: PageCtx,
    pub status: u16,
    pub heading: String,
    pub message: String,
}

/// Any path nothing else answers.
pub async fn not_found(ctx: PageCtx) -> Response {
    let ctx = ctx.titled("404 Page Not Found", "The page you were looking for does not exist.").noindex();
    (StatusCode::NOT_FOUND, NotFoundPage { ctx }).into_response()
}

/// For page routes: an error response carrying [`ErrorMarker`] is re-rendered as a full
/// HTML page with the same status. `/api` keeps its JSON.
pub async fn html_errors(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let path = req.uri().path().to_owned();
    let user = req.extensions().get::<CurrentUser>().cloned();
    let nonce = req.extensions().get::<crate::middleware::csp::CspNonce>().map(|n| n.0.clone()).unwrap_or_default();
    let res = next.run(req).await;
    if path.starts_with("/api/") || path == "/api" {
        return res;
    }
    let Some(marker) = res.extensions().get::<ErrorMarker>().cloned() else {
        return res;
    };
    let Ok(settings) = state.settings().await else {
        return res;
    };
    let mut ctx = PageCtx::build(&state, &settings, user, &path);
    ctx.csp_nonce = nonce;
    if marker.status == StatusCode::NOT_FOUND {
        let ctx = ctx.titled("404 Page Not Found", "The page you were looking for does not exist.").noindex();
        return (StatusCode::NOT_FOUND, NotFoundPage { ctx }).into_response();
    }
    let heading = match marker.status.as_u16() {
        401 => "Sign in required",
        403 => "Access denied",
        429 => "Slow down a little",
        500..=599 => "Something went wrong",
        _ => "That did not work",
    };
    let ctx = ctx.titled(heading, "").noindex();
    (marker.status, ErrorPage { ctx, status: marker.status.as_u16(), heading: heading.into(), message: marker.message })
        .into_response()
}

/// For `/api`: an error answer that did not come from [`crate::error::AppError`] (the
/// framework's own refusals: a malformed path or query, a wrong Content-Type, an unknown
/// method, a body over a limit, a caught panic) gets the same `{error, message, code}` body
/// as every other error, so clients handle one shape.
pub async fn api_errors(req: Request, next: Next) -> Response {
    let is_api = req.uri().path() == "/api" || req.uri().path().starts_with("/api/");
    let res = next.run(req).await;
    if !is_api || res.status().as_u16() < 400 || res.extensions().get::<ErrorMarker>().is_some() {
        return res;
    }
    let (mut parts, body) = res.into_parts();
    // Framework refusals are short text; anything longer is not one of them.
    let text = match axum::body::to_bytes(body, 4096).await {
        Ok(b) => String::from_utf8_lossy(&b).trim().to_owned(),
        Err(_) => String::new(),
    };
    let code = crate::error::ErrorCode::for_status(parts.status);
    let message = if parts.status.is_server_error() {
        "Something went wrong on our side. Please try again in a moment.".to_owned()
    } else if text.is_empty() {
        parts.status.canonical_reason().unwrap_or("Request refused").to_owned()
    } else {
        text
    };
    let body = serde_json::json!({ "error": message, "message": message, "code": code });
    parts.headers.insert(axum::http::header::CONTENT_TYPE, axum::http::HeaderValue::from_static("application/json"));
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    parts.extensions.insert(ErrorMarker { status: parts.status, message, code });
    Response::from_parts(parts, axum::body::Body::from(body.to_string()))
}
