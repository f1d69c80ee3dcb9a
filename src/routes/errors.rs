//! The 404 page and the layer that turns API-style errors on page routes into HTML pages.
use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::auth::CurrentUser;
use crate::error::ErrorMarker;
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
    let ctx = PageCtx::build(&state, &settings, user, &path);
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
