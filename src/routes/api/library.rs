//! `GET /api/library/preview/{token}`: the picture of a library match, behind a signed link
//! that expires (see `library::preview`). Each client may open a limited number a minute
//! (counted in the database, so on every node together); a picture is cut once and then
//! served from the preview cache; at most two cuts run at once on a node.
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::IntoResponse;

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{AppError, AppResult, ErrorBody};
use crate::library::preview::PreviewError;
use crate::middleware::auth::ClientAddr;
use crate::services::throttle::{Limit, address_subject};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(preview))
}

/// Previews a client may open: 60 a minute (a result page shows one; this is replay abuse).
pub const PREVIEWS: Limit = Limit::new("preview", 60, std::time::Duration::from_secs(60));

/// A still of a Library match (the token comes from an identification result).
#[utoipa::path(get, path = "/library/preview/{token}", tag = "identify",
    params(("token" = String, Path, description = "A signed preview token from a Library result")),
    responses((status = 200, description = "The frame as JPEG", content_type = "image/jpeg", body = Vec<u8>),
        (status = 404, description = "Unknown or expired token", body = ErrorBody),
        (status = 429, description = "Too many previews", body = ErrorBody)))]
async fn preview(
    State(state): State<AppState>,
    ClientAddr(addr): ClientAddr,
    Path(token): Path<String>,
) -> AppResult<impl IntoResponse> {
    let d = PREVIEWS.consume(&state.db, &address_subject(addr)).await?;
    if !d.allowed {
        return Err(AppError::throttled(crate::identify::guard::TOO_MANY, &d));
    }
    let not_found = |e: PreviewError| match e {
        PreviewError::Invalid | PreviewError::Expired | PreviewError::Gone => AppError::NotFoundMsg(e.to_string()),
    };
    let library = state.library.clone();
    let t = token.clone();
    let cached = tokio::task::spawn_blocking(move || library.preview_cached(&t))
        .await
        .map_err(|e| AppError::Internal(e.into()))?
        .map_err(not_found)?;
    let jpeg = match cached {
        Some(jpeg) => jpeg,
        None => {
            // The slot goes with the cut: held until ffmpeg is done, even if the client is not.
            let slot = state.admission.preview().await?;
            let library = state.library.clone();
            tokio::task::spawn_blocking(move || {
                let _held = slot;
                library.preview(&token)
            })
            .await
            .map_err(|e| AppError::Internal(e.into()))?
            .map_err(not_found)?
        }
    };
    Ok((
        [
            (header::CONTENT_TYPE, "image/jpeg"),
            // The link itself expires; the picture may be kept by the browser that asked for it.
            (header::CACHE_CONTROL, "private, max-age=3600"),
        ],
        jpeg,
    ))
}
