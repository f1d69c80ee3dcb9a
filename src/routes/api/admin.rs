//! `/api/admin/*`: every handler takes [`RequireAdmin`] (401 signed out, 403 non-admin).
use std::collections::BTreeMap;

use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::Value;

use super::accounts::json_body;
use crate::auth::RequireAdmin;
use crate::error::{AppError, AppResult};
use crate::services::admin::{self, Integrity, UpdateError, UserList};
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/settings", get(settings).put(update_settings))
        .route("/admin/users", get(users))
        .route("/admin/data-integrity", get(integrity))
}

async fn settings(State(state): State<AppState>, _: RequireAdmin) -> AppResult<Json<BTreeMap<String, String>>> {
    Ok(Json(admin::masked(&*state.settings().await?)))
}

/// Body: an object of setting keys to new values (strings, numbers or booleans).
async fn update_settings(
    State(state): State<AppState>,
    RequireAdmin(me): RequireAdmin,
    body: Result<Json<BTreeMap<String, Value>>, JsonRejection>,
) -> AppResult<Json<BTreeMap<String, String>>> {
    let body = json_body(body)?;
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

async fn users(State(state): State<AppState>, _: RequireAdmin) -> AppResult<Json<UserList>> {
    Ok(Json(admin::list_users(&state.db, 500).await?))
}

async fn integrity(State(state): State<AppState>, _: RequireAdmin) -> AppResult<Json<Integrity>> {
    Ok(Json(admin::integrity(&state.db).await?))
}
