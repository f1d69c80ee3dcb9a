//! `/api/admin/*`: every handler takes [`RequireAdmin`] (401 signed out, 403 non-admin).
pub mod blog;
pub mod corrections;
pub mod insight;
pub mod library;
pub mod testimonials;
use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use serde_json::Value;

use crate::routes::extract::JsonBody;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{AppError, AppResult, ErrorBody};
use crate::middleware::auth::RequireAdmin;
use crate::services::admin::{self, Integrity, UpdateError, UserList};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(settings, update_settings)).routes(routes!(users)).routes(routes!(integrity))
}

#[utoipa::path(get, path = "/admin/settings", tag = "admin", security(("session" = [])),
    responses((status = 200, description = "Every setting, secrets masked", body = BTreeMap<String, String>), (status = 401, description = "Not signed in", body = ErrorBody), (status = 403, description = "Not an administrator", body = ErrorBody)))]
async fn settings(State(state): State<AppState>, _admin: RequireAdmin) -> AppResult<Json<BTreeMap<String, String>>> {
    Ok(Json(admin::masked(&*state.settings().await?)))
}

/// Body: an object of setting keys to new values (strings, numbers or booleans).
#[utoipa::path(put, path = "/admin/settings", tag = "admin", security(("session" = [])),
    request_body(content = BTreeMap<String, Object>, description = "Setting keys to new values (strings, numbers or booleans)"),
    responses((status = 200, description = "Every setting after the change, secrets masked", body = BTreeMap<String, String>),
        (status = 400, description = "A value is refused", body = ErrorBody), (status = 401, description = "Not signed in", body = ErrorBody), (status = 403, description = "Not an administrator", body = ErrorBody)))]
async fn update_settings(
    State(state): State<AppState>,
    RequireAdmin(me): RequireAdmin,
    JsonBody(body): JsonBody<BTreeMap<String, Value>>,
) -> AppResult<Json<BTreeMap<String, String>>> {
    let mut changes = BTreeMap::new();
    for (k, v) in body {
        let v = match v {
            Value::String(s) => s,
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => return Err(AppError::BadRequest(format!("{k} must be a string, number or boolean"))),
        };
        changes.insert(k, v);
    }
    admin::update_settings(&state.db, &state.settings, &changes).await.map_err(|e| match e {
        UpdateError::Invalid(m) => AppError::BadRequest(m),
        UpdateError::Db(e) => e.into(),
    })?;
    tracing::info!(admin = me.id, keys = ?changes.keys().collect::<Vec<_>>(), "settings changed");
    Ok(Json(admin::masked(&*state.settings().await?)))
}

#[utoipa::path(get, path = "/admin/users", tag = "admin", security(("session" = [])),
    responses((status = 200, description = "Accounts, newest first", body = UserList), (status = 401, description = "Not signed in", body = ErrorBody), (status = 403, description = "Not an administrator", body = ErrorBody)))]
async fn users(State(state): State<AppState>, _admin: RequireAdmin) -> AppResult<Json<UserList>> {
    Ok(Json(admin::list_users(&state.db, 500).await?))
}

#[utoipa::path(get, path = "/admin/data-integrity", tag = "admin", security(("session" = [])),
    responses((status = 200, description = "Consistency checks of the stored data", body = Integrity), (status = 401, description = "Not signed in", body = ErrorBody), (status = 403, description = "Not an administrator", body = ErrorBody)))]
async fn integrity(State(state): State<AppState>, _admin: RequireAdmin) -> AppResult<Json<Integrity>> {
    Ok(Json(admin::integrity(&state.db).await?))
}
