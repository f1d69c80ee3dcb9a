//! A person's public-facing profile and preferences. Everything here acts on one user id
//! that the caller took from the session, never from the request.
use chrono::Utc;
use sea_orm::{ActiveModelTrait, ConnectionTrait, EntityTrait, Set};

use crate::entities::user;

pub const DISPLAY_NAME_MAX: usize = 50;
pub const BIO_MAX: usize = 500;
pub const DEFAULT_BIO: &str = "Movie enthusiast";
/// Engines a person may pick as their default (SPEC 4 "Engine mode", plus the Library engine).
/// What a person may choose as their default engine.
pub const AI_MODELS: &[&str] = &crate::services::engine_names::MODES;

/// How many identifications this user has made (their rows in `identifications`).
pub async fn total_identifications(db: &impl ConnectionTrait, user_id: i64) -> Result<u64, sea_orm::DbErr> {
    use sea_orm::{ColumnTrait, PaginatorTrait, QueryFilter};
    crate::entities::identification::Entity::find()
        .filter(crate::entities::identification::Column::UserId.eq(user_id))
        .count(db)
        .await
}

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("{0}")]
    Invalid(String),
    #[error("{}", crate::error_code::NOT_AUTHENTICATED)]
    Gone,
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
}

/// Trims, turns blank into `None`, and checks length and control characters.
fn clean(value: Option<&str>, max: usize, what: &str, multiline: bool) -> Result<Option<String>, ProfileError> {
    let Some(v) = value.map(str::trim).filter(|v| !v.is_empty()) else { return Ok(None) };
    if v.chars().count() > max {
        return Err(ProfileError::Invalid(format!("{what} must be at most {max} characters")));
    }
    if v.chars().any(|c| c.is_control() && !(multiline && (c == '\n' || c == '\r' || c == '\t'))) {
        return Err(ProfileError::Invalid(format!("{what} contains characters that are not allowed")));
    }
    Ok(Some(v.to_owned()))
}

/// Sets display name and bio (blank clears them) and, when given, the default engine: every
/// value is checked first and all are written by one statement, so a save is all or nothing.
pub async fn update_profile(
    db: &impl ConnectionTrait,
    user_id: i64,
    display_name: Option<&str>,
    bio: Option<&str>,
    default_ai_model: Option<&str>,
) -> Result<user::Model, ProfileError> {
    let display_name = clean(display_name, DISPLAY_NAME_MAX, "Display name", false)?;
    let bio = clean(bio, BIO_MAX, "Bio", true)?;
    let model = default_ai_model.map(check_model).transpose()?;
    let u = user::Entity::find_by_id(user_id).one(db).await?.ok_or(ProfileError::Gone)?;
    let renamed = u.display_name != display_name;
    let mut active: user::ActiveModel = u.into();
    active.display_name = Set(display_name);
    active.bio = Set(bio);
    if let Some(m) = model {
        active.default_ai_model = Set(Some(m));
    }
    active.updated_at = Set(Utc::now());
    let saved = active.update(db).await?;
    // The home page names the authors of featured reviews.
    if renamed && crate::services::testimonials::has_featured(db, user_id).await? {
        crate::services::content_version::bump(db).await?;
    }
    Ok(saved)
}

fn check_model(model: &str) -> Result<String, ProfileError> {
    let model = model.trim().to_ascii_lowercase();
    if !AI_MODELS.contains(&model.as_str()) {
        return Err(ProfileError::Invalid(format!("Default AI model must be one of: {}", AI_MODELS.join(", "))));
    }
    Ok(model)
}

pub async fn set_default_ai_model(
    db: &impl ConnectionTrait,
    user_id: i64,
    model: &str,
) -> Result<user::Model, ProfileError> {
    let model = check_model(model)?;
    let u = user::Entity::find_by_id(user_id).one(db).await?.ok_or(ProfileError::Gone)?;
    let mut active: user::ActiveModel = u.into();
    active.default_ai_model = Set(Some(model));
    active.updated_at = Set(Utc::now());
    Ok(active.update(db).await?)
}
