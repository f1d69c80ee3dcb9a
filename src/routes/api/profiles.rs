//! `/api/profiles/me` and `/api/profiles/preferences`: the signed-in person's own profile.
//! There is deliberately no route that takes a user id.
use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use sea_orm::EntityTrait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::accounts::json_body;
use crate::auth::RequireUser;
use crate::entities::user;
use crate::error::{AppError, AppResult};
use crate::services::profiles::{self, ProfileError};
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/profiles/me", get(me).put(update_me))
        .route("/profiles/preferences", get(preferences).put(update_preferences))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    pub display_name: Option<String>,
    pub bio: String,
    pub profile_picture: Option<String>,
    pub total_identifications: u64,
    pub username: String,
    pub email: String,
    pub member_since: DateTime<Utc>,
}

#[derive(Serialize)]
pub struct ProfileResponse {
    pub profile: Profile,
    /// No achievements are defined yet; the list keeps the SPEC's shape.
    pub achievements: Vec<Value>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preferences {
    pub default_ai_model: String,
}

impl From<ProfileError> for AppError {
    fn from(e: ProfileError) -> Self {
        match e {
            ProfileError::Invalid(m) => AppError::BadRequest(m),
            ProfileError::Gone => AppError::Unauthorized("Not authenticated".into()),
            ProfileError::Db(e) => e.into(),
        }
    }
}

pub async fn profile_response(state: &AppState, u: &user::Model) -> AppResult<ProfileResponse> {
    Ok(ProfileResponse {
        profile: Profile {
            display_name: u.display_name.clone(),
            bio: u.bio.clone().unwrap_or_else(|| profiles::DEFAULT_BIO.to_owned()),
            profile_picture: u.profile_picture.clone(),
            total_identifications: profiles::total_identifications(&state.db, u.id).await?,
            username: u.username.clone(),
            email: u.email.clone(),
            member_since: u.created_at,
        },
        achievements: Vec::new(),
    })
}

async fn load(state: &AppState, id: i64) -> AppResult<user::Model> {
    user::Entity::find_by_id(id).one(&state.db).await?.ok_or_else(|| AppError::Unauthorized("Not authenticated".into()))
}

async fn me(State(state): State<AppState>, RequireUser(me): RequireUser) -> AppResult<Json<ProfileResponse>> {
    let u = load(&state, me.id).await?;
    Ok(Json(profile_response(&state, &u).await?))
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct ProfileUpdate {
    display_name: Option<String>,
    bio: Option<String>,
}

async fn update_me(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    body: Result<Json<ProfileUpdate>, JsonRejection>,
) -> AppResult<Json<ProfileResponse>> {
    let body = json_body(body)?;
    let u = profiles::update_profile(&state.db, me.id, body.display_name.as_deref(), body.bio.as_deref()).await?;
    Ok(Json(profile_response(&state, &u).await?))
}

async fn preferences(State(state): State<AppState>, RequireUser(me): RequireUser) -> AppResult<Json<Preferences>> {
    let u = load(&state, me.id).await?;
    Ok(Json(Preferences { default_ai_model: u.default_ai_model.unwrap_or_else(|| "auto".into()) }))
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct PreferencesUpdate {
    default_ai_model: String,
}

async fn update_preferences(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    body: Result<Json<PreferencesUpdate>, JsonRejection>,
) -> AppResult<Json<Preferences>> {
    let body = json_body(body)?;
    let u = profiles::set_default_ai_model(&state.db, me.id, &body.default_ai_model).await?;
    Ok(Json(Preferences { default_ai_model: u.default_ai_model.unwrap_or_else(|| "auto".into()) }))
}
