//! `/api/profiles/me` and `/api/profiles/preferences`: the signed-in person's own profile.
//! There is deliberately no route that takes a user id.
use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::routes::extract::JsonBody;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::entities::user;
use crate::error::{AppError, AppResult, ErrorBody};
use crate::middleware::auth::RequireUser;
use crate::services::achievements::{self, Earned, Locked};
use crate::services::profiles::{self, ProfileError};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(me, update_me))
        .routes(routes!(preferences, update_preferences))
        .routes(routes!(announce_achievements))
}

#[derive(Serialize, utoipa::ToSchema, ts_rs::TS)]
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

#[derive(Serialize, utoipa::ToSchema, ts_rs::TS)]
pub struct ProfileResponse {
    pub profile: Profile,
    /// The achievements this person holds, oldest first, each with the date it was earned.
    pub achievements: Vec<Earned>,
    /// The ones they can still earn, and what earns each.
    #[serde(rename = "toEarn")]
    pub to_earn: Vec<Locked>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ProfilePreferences)]
pub struct Preferences {
    pub default_ai_model: String,
}

impl From<ProfileError> for AppError {
    fn from(e: ProfileError) -> Self {
        match e {
            ProfileError::Invalid(m) => AppError::BadRequest(m),
            ProfileError::Gone => AppError::NotAuthenticated,
            ProfileError::Db(e) => e.into(),
        }
    }
}

/// The profile of `u`; the achievements whose rules now hold are awarded first.
pub async fn profile_response(state: &AppState, u: &user::Model) -> AppResult<ProfileResponse> {
    let achievements = achievements::award(&state.db, u.id).await?;
    Ok(ProfileResponse {
        to_earn: achievements::still_to_earn(&achievements),
        profile: Profile {
            display_name: u.display_name.clone(),
            bio: u.bio.clone().unwrap_or_else(|| profiles::DEFAULT_BIO.to_owned()),
            profile_picture: u.profile_picture.clone(),
            total_identifications: profiles::total_identifications(&state.db, u.id).await?,
            username: u.username.clone(),
            email: u.email.clone(),
            member_since: u.created_at,
        },
        achievements,
    })
}

#[utoipa::path(get, path = "/profiles/me", tag = "profile", security(("session" = [])),
    responses((status = 200, description = "Your profile", body = ProfileResponse), (status = 401, description = "Not signed in", body = ErrorBody)))]
async fn me(State(state): State<AppState>, RequireUser(me): RequireUser) -> AppResult<Json<ProfileResponse>> {
    let u = me.row(&state.db).await?.ok_or(AppError::NotAuthenticated)?;
    Ok(Json(profile_response(&state, &u).await?))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(default, rename_all = "camelCase")]
struct ProfileUpdate {
    display_name: Option<String>,
    bio: Option<String>,
    /// Optional: the Settings tab saves profile and default engine together, all or nothing.
    default_ai_model: Option<String>,
}

#[utoipa::path(put, path = "/profiles/me", tag = "profile", security(("session" = [])), request_body = ProfileUpdate,
    responses((status = 200, description = "Your profile after the change", body = ProfileResponse), (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 400, description = "A field is refused", body = ErrorBody)))]
async fn update_me(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    JsonBody(body): JsonBody<ProfileUpdate>,
) -> AppResult<Json<ProfileResponse>> {
    let u = profiles::update_profile(
        &state.db,
        me.id,
        body.display_name.as_deref(),
        body.bio.as_deref(),
        body.default_ai_model.as_deref(),
    )
    .await?;
    Ok(Json(profile_response(&state, &u).await?))
}

#[utoipa::path(get, path = "/profiles/preferences", tag = "profile", security(("session" = [])),
    responses((status = 200, description = "Your default engine", body = Preferences), (status = 401, description = "Not signed in", body = ErrorBody)))]
async fn preferences(State(state): State<AppState>, RequireUser(me): RequireUser) -> AppResult<Json<Preferences>> {
    let u = me.row(&state.db).await?.ok_or(AppError::NotAuthenticated)?;
    Ok(Json(Preferences { default_ai_model: u.default_ai_model.unwrap_or_else(|| "auto".into()) }))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(default, rename_all = "camelCase")]
struct PreferencesUpdate {
    default_ai_model: String,
}

#[utoipa::path(put, path = "/profiles/preferences", tag = "profile", security(("session" = [])), request_body = PreferencesUpdate,
    responses((status = 200, description = "Your default engine after the change", body = Preferences), (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 400, description = "Unknown engine", body = ErrorBody)))]
async fn update_preferences(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    JsonBody(body): JsonBody<PreferencesUpdate>,
) -> AppResult<Json<Preferences>> {
    let u = profiles::set_default_ai_model(&state.db, me.id, &body.default_ai_model).await?;
    Ok(Json(Preferences { default_ai_model: u.default_ai_model.unwrap_or_else(|| "auto".into()) }))
}

/// Check for new achievements
///
/// Awards every achievement whose rule now holds (read from your stored identifications,
/// collection and reviews) and answers the ones you have not been told about yet, once:
/// a second call answers only what was earned since. The browser calls it after an
/// identification, a saved title or a review, and shows each as a toast.
#[utoipa::path(post, path = "/profiles/me/achievements", tag = "profile", security(("session" = [])),
    responses((status = 200, description = "Achievements earned and not announced before", body = Vec<Earned>),
        (status = 401, description = "Not signed in", body = ErrorBody)))]
async fn announce_achievements(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
) -> AppResult<Json<Vec<Earned>>> {
    Ok(Json(achievements::announce(&state.db, me.id).await?))
}
