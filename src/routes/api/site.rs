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
    pub library: bool,
}

#[derive(Serialize, Debug)]
pub struct ModelsResponse {
    pub available: Availability,
    pub recommended: String,
}

/// Which engines can answer right now: a key (or index) is present and the admin allows
/// the engine (`allowed_engines`). Ensemble needs two usable engines. Rebuilt from the
/// settings on every call, so admin changes show within the settings cache's 5 s.
async fn models(State(state): State<AppState>) -> AppResult<Json<ModelsResponse>> {
    use crate::identify::EngineId;
    let settings = state.settings().await?;
    let set = crate::identify::pipeline::engine_set(&state, &settings);
    let up = |id| set.usable(id).is_some();
    Ok(Json(ModelsResponse {
        available: Availability {
            google: up(EngineId::Google),
            openai: up(EngineId::Openai),
            xai: up(EngineId::Xai),
            anthropic: up(EngineId::Anthropic),
            ensemble: set.ensemble_usable(),
            library: up(EngineId::Library),
        },
        recommended: crate::identify::select::recommended(&set),
    }))
}
