//! `GET /api/me/quota` (the caller's API limits and usage) and the admin's per-person and
//! per-key quota overrides (`/api/admin/api-quotas`, ...).
use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{AppError, AppResult, ErrorBody};
use crate::middleware::api_keys::{MaybeApiKey, set_rate_headers};
use crate::middleware::auth::{RequireAdmin, RequireUser};
use crate::routes::extract::JsonBody;
use crate::services::api_quota::{self as quota, Overrides, QuotaReport};
use crate::services::quota_overrides::{self as overrides, QuotaOverview};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(my_quota))
        .routes(routes!(admin_overview))
        .routes(routes!(set_person))
        .routes(routes!(set_key))
}

/// Read your API quota
///
/// Your limits per minute, per day and at once, how much of each is used and when each
/// starts again. Asked with a key: that key's quota; with the website's session: the quota
/// your keys share. Reading it does not count against it.
#[utoipa::path(get, path = "/me/quota", tag = "profile", security(("apiKey" = []), ("session" = [])),
    responses((status = 200, description = "Limits, usage and reset times; reading them costs nothing", body = QuotaReport,
            headers(("ratelimit-limit" = u32, description = "The limit that runs out first"),
                ("ratelimit-remaining" = u32, description = "Requests left in its window"),
                ("ratelimit-reset" = u64, description = "Seconds until its window ends"))),
        (status = 401, description = "Not signed in, or an unknown or revoked key", body = ErrorBody)))]
async fn my_quota(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    MaybeApiKey(key): MaybeApiKey,
) -> AppResult<Response> {
    let settings = state.settings().await?;
    let q = quota::effective(&state.db, &settings, me.id, key.as_ref().map(|k| &k.key)).await?;
    let report = quota::report(&state.db, &q).await?;
    let headline = quota::headline_of(&report);
    let mut res = Json(report).into_response();
    let mut headers = headline.headers();
    headers.retain(|(n, _)| *n != "retry-after");
    set_rate_headers(res.headers_mut(), &headers);
    Ok(res)
}

/// List API quota overrides
///
/// The default quotas, every person with an override, and the live keys (at most 1000, most
/// recently used first) with their own values. Administrators only.
#[utoipa::path(get, path = "/admin/api-quotas", tag = "admin", security(("session" = [])),
    responses((status = 200, description = "Default quotas, per-person overrides and live keys with theirs", body = QuotaOverview),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 403, description = "Not an administrator, or asked with an API key", body = ErrorBody)))]
async fn admin_overview(State(state): State<AppState>, _: RequireAdmin) -> AppResult<Json<QuotaOverview>> {
    let settings = state.settings().await?;
    Ok(Json(overrides::overview(&state.db, &settings).await?))
}

/// Set a person's API quota
///
/// Each of `perMinute`, `perDay` and `concurrent` is a number, or `null` for the default;
/// all three `null` removes the override. The person's keys share it. Administrators only.
#[utoipa::path(put, path = "/admin/users/{id}/api-quota", tag = "admin", security(("session" = [])),
    params(("id" = i64, Path, description = "The user's id")), request_body = Overrides,
    responses((status = 200, description = "The override now in force", body = Overrides),
        (status = 400, description = "A value out of range", body = ErrorBody),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 403, description = "Not an administrator, or asked with an API key", body = ErrorBody),
        (status = 404, description = "No such user", body = ErrorBody)))]
async fn set_person(
    State(state): State<AppState>,
    RequireAdmin(admin): RequireAdmin,
    Path(id): Path<i64>,
    JsonBody(body): JsonBody<Overrides>,
) -> AppResult<Json<Overrides>> {
    let o = body;
    o.validate().map_err(AppError::BadRequest)?;
    if !overrides::set_person(&state.db, id, &o).await? {
        return Err(AppError::NotFoundMsg("No such user".into()));
    }
    tracing::info!(admin = admin.id, user_id = id, ?o, "API quota of a person changed");
    Ok(Json(o))
}

/// Set one key's API quota
///
/// Each of `perMinute`, `perDay` and `concurrent` is a number, or `null` for the person's
/// value (else the default). For a limit it has its own value for, the key is counted on
/// its own instead of with the person's other keys. Administrators only.
#[utoipa::path(put, path = "/admin/api-keys/{id}/quota", tag = "admin", security(("session" = [])),
    params(("id" = i64, Path, description = "The key's id")), request_body = Overrides,
    responses((status = 200, description = "The override now in force", body = Overrides),
        (status = 400, description = "A value out of range", body = ErrorBody),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 403, description = "Not an administrator, or asked with an API key", body = ErrorBody),
        (status = 404, description = "No such live key", body = ErrorBody)))]
async fn set_key(
    State(state): State<AppState>,
    RequireAdmin(admin): RequireAdmin,
    Path(id): Path<i64>,
    JsonBody(body): JsonBody<Overrides>,
) -> AppResult<Json<Overrides>> {
    let o = body;
    o.validate().map_err(AppError::BadRequest)?;
    if !overrides::set_key(&state.db, id, &o).await? {
        return Err(AppError::NotFoundMsg("No such API key".into()));
    }
    tracing::info!(admin = admin.id, key_id = id, ?o, "API quota of a key changed");
    Ok(Json(o))
}
