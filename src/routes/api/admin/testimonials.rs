//! `/api/admin/testimonials`: the review moderation queue (401 signed out, 403 non-admin).
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::Deserialize;

use crate::routes::extract::JsonBody;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{AppError, AppResult, ErrorBody};
use crate::middleware::auth::RequireAdmin;
use crate::services::testimonials::{self, ModerationError, ModerationList, STATUSES};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(index)).routes(routes!(update, destroy))
}

#[derive(Debug, Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(default)]
pub struct ListParams {
    /// `pending`, `featured`, `hidden`; absent or `all` for every review.
    pub status: Option<String>,
    pub offset: Option<u64>,
    pub limit: Option<u64>,
}

/// Parses the `status` filter; `all` or blank means no filter.
pub fn status_filter(s: Option<&str>) -> AppResult<Option<&'static str>> {
    match s.map(str::trim).filter(|s| !s.is_empty() && *s != "all") {
        None => Ok(None),
        Some(s) => STATUSES
            .iter()
            .find(|x| **x == s)
            .copied()
            .map(Some)
            .ok_or_else(|| AppError::BadRequest(ModerationError::BadStatus.to_string())),
    }
}

/// List reviews for moderation
///
/// Administrators only. Visitors' reviews, a page at a time (`offset`, `limit`, default 50),
/// optionally only those with one `status`: `pending` (waiting for a decision; oldest
/// first, the order to work through them), `featured` (shown on the home page) or `hidden`;
/// otherwise newest first.
#[utoipa::path(get, path = "/admin/testimonials", tag = "admin", security(("session" = [])), params(ListParams),
    responses((status = 200, description = "The moderation queue", body = ModerationList),
        (status = 400, description = "Unknown status", body = ErrorBody), (status = 401, description = "Not signed in", body = ErrorBody), (status = 403, description = "Not an administrator", body = ErrorBody)))]
async fn index(
    State(state): State<AppState>,
    _admin: RequireAdmin,
    Query(p): Query<ListParams>,
) -> AppResult<Json<ModerationList>> {
    let status = status_filter(p.status.as_deref())?;
    Ok(Json(testimonials::moderation_list(&state.db, status, p.offset.unwrap_or(0), p.limit.unwrap_or(50)).await?))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct ModerateBody {
    pub status: String,
}

/// Moderate a review
///
/// Administrators only. `{"status": "featured"}` approves the review (the home page may
/// show it), `"hidden"` hides it, `"pending"` puts it back in the queue. Answers 204; 404
/// when there is no such review.
#[utoipa::path(patch, path = "/admin/testimonials/{id}", tag = "admin", security(("session" = [])), params(("id" = i64, Path, description = "The review id")), request_body = ModerateBody,
    responses((status = 204, description = "Moderated"), (status = 400, description = "Unknown status", body = ErrorBody),
        (status = 404, description = "No such review", body = ErrorBody), (status = 401, description = "Not signed in", body = ErrorBody), (status = 403, description = "Not an administrator", body = ErrorBody)))]
async fn update(
    State(state): State<AppState>,
    RequireAdmin(me): RequireAdmin,
    Path(id): Path<i64>,
    JsonBody(body): JsonBody<ModerateBody>,
) -> AppResult<StatusCode> {
    testimonials::moderate(&state.db, id, &body.status, me.id).await.map_err(moderation_error)?;
    tracing::info!(admin = me.id, testimonial = id, status = %body.status, "review moderated");
    Ok(StatusCode::NO_CONTENT)
}

/// Delete a review
///
/// Administrators only. Deletes the review for good (to only take it off the home page,
/// hide it instead). Answers 204; 404 when there is no such review.
#[utoipa::path(delete, path = "/admin/testimonials/{id}", tag = "admin", security(("session" = [])), params(("id" = i64, Path, description = "The review id")),
    responses((status = 204, description = "Deleted"), (status = 404, description = "No such review", body = ErrorBody), (status = 401, description = "Not signed in", body = ErrorBody), (status = 403, description = "Not an administrator", body = ErrorBody)))]
async fn destroy(
    State(state): State<AppState>,
    RequireAdmin(me): RequireAdmin,
    Path(id): Path<i64>,
) -> AppResult<StatusCode> {
    testimonials::delete(&state.db, id).await.map_err(moderation_error)?;
    tracing::info!(admin = me.id, testimonial = id, "review deleted");
    Ok(StatusCode::NO_CONTENT)
}

pub fn moderation_error(e: ModerationError) -> AppError {
    match e {
        ModerationError::NotFound => AppError::NotFoundMsg(e.to_string()),
        ModerationError::BadStatus => AppError::BadRequest(e.to_string()),
        ModerationError::Db(e) => e.into(),
    }
}
