//! `GET /api/library/preview/{token}`: the picture of a library match, behind a signed link
//! that expires (see `library::preview`).
use axum::Router;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

use crate::error::{AppError, AppResult};
use crate::library::preview::PreviewError;
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route("/library/preview/{token}", get(preview))
}

async fn preview(State(state): State<AppState>, Path(token): Path<String>) -> AppResult<impl IntoResponse> {
    let library = state.library.clone();
    let jpeg = tokio::task::spawn_blocking(move || library.preview(&token))
        .await
        .map_err(|e| AppError::Internal(e.into()))?
        .map_err(|e| match e {
            PreviewError::Invalid | PreviewError::Expired | PreviewError::Gone => AppError::NotFoundMsg(e.to_string()),
        })?;
    Ok((
        [
            (header::CONTENT_TYPE, "image/jpeg"),
            // The link itself expires; the picture may be kept by the browser that asked for it.
            (header::CACHE_CONTROL, "private, max-age=3600"),
        ],
        jpeg,
    ))
}
