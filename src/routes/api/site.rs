//! `GET /api/settings` and `GET /api/models`.
use std::collections::BTreeMap;

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;

use crate::error::AppResult;
use crate::services::settings::is_secret_key;
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route("/settings", get(settings)).route("/models", get(models))
}

/// The public settings map: every documented key with its value (secrets left out).
async fn settings(State(state): State<AppState>) -> AppResult<Json<BTreeMap<String, String>>> {
    let all = state.settings().await?;
    Ok(Json(all.iter().filter(|(k, _)| !is_secret_key(k)).map(|(k, v)| (k.clone(), v.clone())).collect()))
}

#[derive(Serialize, Debug, Default)]
pub struct Availability {
    pub google: bool,
    pub openai: bool,
    pub xai: bool,
    pub anthropic: bool,
    pub ensemble: bool,
}

#[derive(Serialize, Debug)]
pub struct ModelsResponse {
    pub available: Availability,
    pub recommended: String,
}

/// Which engines can answer right now. No engine is wired yet, so nothing is available and
/// the recommendation is `auto`.
async fn models() -> Json<ModelsResponse> {
    Json(ModelsResponse { available: Availability::default(), recommended: "auto".into() })
}
