//! `GET /api/settings` and `GET /api/models`.
use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::AppResult;
use crate::services::settings::is_secret_key;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(settings)).routes(routes!(models))
}

/// The public settings map: every documented key with its value (secrets left out).
#[utoipa::path(get, path = "/settings", tag = "site",
    responses((status = 200, description = "Public settings by key", body = BTreeMap<String, String>)))]
async fn settings(State(state): State<AppState>) -> AppResult<Json<BTreeMap<String, String>>> {
    Ok(Json(public_settings(&*state.settings().await?)))
}

/// The settings anyone may read: every key but the secrets.
pub fn public_settings(all: &crate::services::settings::SettingsMap) -> BTreeMap<String, String> {
    all.iter().filter(|(k, _)| !is_secret_key(k)).map(|(k, v)| (k.clone(), v.clone())).collect()
}

#[derive(Serialize, Debug, Default, Clone, utoipa::ToSchema, ts_rs::TS)]
pub struct Availability {
    pub google: bool,
    pub openai: bool,
    pub xai: bool,
    pub anthropic: bool,
    pub ensemble: bool,
    pub library: bool,
}

impl Availability {
    /// Whether the engine or mode called `name` can answer (`auto` always can).
    pub fn has(&self, name: &str) -> bool {
        match name {
            "auto" => true,
            "google" => self.google,
            "openai" => self.openai,
            "xai" => self.xai,
            "anthropic" => self.anthropic,
            "ensemble" => self.ensemble,
            "library" => self.library,
            _ => false,
        }
    }
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema, ts_rs::TS)]
pub struct ModelsResponse {
    pub available: Availability,
    pub recommended: String,
}

/// Which engines can answer right now: a key (or index) is present and the admin allows
/// the engine (`allowed_engines`). Ensemble needs two usable engines. Built again whenever
/// the settings change, so an admin's change shows on every node within a second.
#[utoipa::path(get, path = "/models", tag = "site",
    responses((status = 200, description = "Engine availability", body = ModelsResponse)))]
async fn models(State(state): State<AppState>) -> AppResult<Json<ModelsResponse>> {
    let settings = state.settings().await?;
    Ok(Json(availability(&state, &settings)))
}

/// What `GET /api/models` answers, for pages that render the engine choice themselves.
pub fn availability(state: &AppState, settings: &crate::services::settings::SettingsMap) -> ModelsResponse {
    use crate::identify::EngineId;
    let set = crate::identify::pipeline::engine_set(state.identify_deps(), settings);
    let up = |id| set.usable(id).is_some();
    ModelsResponse {
        available: Availability {
            google: up(EngineId::Google),
            openai: up(EngineId::Openai),
            xai: up(EngineId::Xai),
            anthropic: up(EngineId::Anthropic),
            ensemble: set.ensemble_usable(),
            library: up(EngineId::Library),
        },
        recommended: crate::identify::select::recommended(&set),
    }
}
