//! What the admin dashboard reads and changes: validated settings, the user list, and
//! health counts of the account tables.
use std::collections::BTreeMap;

use chrono::Utc;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect};
use serde::Serialize;

use crate::entities::{oauth_state, session, setting, user};
use crate::services::settings::{SettingsStore, is_secret_key, registry};
use crate::services::single_use_tokens::{self, Purpose};

/// Engines an admin can allow (SPEC section 1, plus the offline Library engine).
pub const ENGINES: &[&str] = &crate::services::engine_names::ENGINES;

/// Checks one setting and returns the value to store.
pub fn validate_setting(key: &str, value: &str) -> Result<String, String> {
    let v = value.trim();
    // Engine keys and model overrides the identify feature reads from settings.
    let credential = ["openai", "anthropic", "google", "xai", "tmdb", "omdb"]
        .iter()
        .any(|p| key == format!("{p}_api_key") || key == format!("{p}_model"));
    if credential {
        if v.len() > 500 || v.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!("{key} must be a single line without spaces"));
        }
        return Ok(v.to_owned());
    }
    if crate::services::seo::is_seo_key(key) {
        return crate::services::seo::validate(key, value);
    }
    if key.starts_with("analytics_tag_") {
        return crate::services::analytics_tag::validate(key, value);
    }
    registry::setting(key).ok_or_else(|| format!("Unknown setting: {key}"))?.check(value)
}

/// Validates every pair first, then stores them all; nothing is written if one is bad.
pub async fn update_settings(
    db: &impl ConnectionTrait,
    store: &SettingsStore,
    changes: &BTreeMap<String, String>,
) -> Result<(), UpdateError> {
    let mut clean = Vec::with_capacity(changes.len());
    for (k, v) in changes {
        // A masked secret sent back unchanged keeps its stored value.
        if is_secret_key(k) && v == MASK {
            continue;
        }
        clean.push((k.as_str(), validate_setting(k, v).map_err(UpdateError::Invalid)?));
    }
    check_analytics_tag(db, &clean).await?;
    for (k, v) in clean {
        store.set(db, k, &v).await?;
    }
    Ok(())
}

/// The analytics tag's three settings only mean something together (a provider needs its kind
/// of id, Matomo a host): when a change touches one, the three as they would be are checked.
async fn check_analytics_tag(db: &impl ConnectionTrait, clean: &[(&str, String)]) -> Result<(), UpdateError> {
    use crate::services::analytics_tag::{HOST_KEY, ID_KEY, PROVIDER_KEY, validate_together};
    if !clean.iter().any(|(k, _)| k.starts_with("analytics_tag_")) {
        return Ok(());
    }
    let mut values = [String::new(), String::new(), String::new()];
    for (slot, key) in values.iter_mut().zip([PROVIDER_KEY, ID_KEY, HOST_KEY]) {
        *slot = match clean.iter().find(|(k, _)| *k == key) {
            Some((_, v)) => v.clone(),
            None => setting::Entity::find_by_id(key).one(db).await?.map(|s| s.value).unwrap_or_default(),
        };
    }
    validate_together(&values[0], &values[1], &values[2]).map(|_| ()).map_err(UpdateError::Invalid)
}

#[derive(Debug, thiserror::Error)]
pub enum UpdateError {
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
}

const MASK: &str = "********";

/// The settings map for the admin: secrets show only whether they are set.
pub fn masked(all: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    all.iter()
        .map(|(k, v)| {
            let v = if is_secret_key(k) && !v.is_empty() { MASK.to_owned() } else { v.clone() };
            (k.clone(), v)
        })
        .collect()
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdminUser {
    pub id: i64,
    pub username: String,
    pub email: String,
    pub role: user::Role,
    pub is_admin: bool,
    pub email_verified: bool,
    pub google: bool,
    pub created_at: chrono::DateTime<Utc>,
    pub identifications: u64,
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserList {
    pub users: Vec<AdminUser>,
    pub total: u64,
    pub admins: u64,
    pub unverified: u64,
}

/// The newest users first (at most `limit`), with counts over all users.
pub async fn list_users(db: &impl ConnectionTrait, limit: u64) -> Result<UserList, sea_orm::DbErr> {
    let rows = user::Entity::find().order_by_desc(user::Column::CreatedAt).limit(limit).all(db).await?;
    let mut users = Vec::with_capacity(rows.len());
    for u in rows {
        users.push(AdminUser {
            identifications: crate::services::profiles::total_identifications(db, u.id).await?,
            id: u.id,
            is_admin: u.role.is_admin(),
            username: u.username,
            email: u.email,
            role: u.role,
            email_verified: u.email_verified,
            google: u.google_sub.is_some(),
            created_at: u.created_at,
        });
    }
    Ok(UserList {
        users,
        total: user::Entity::find().count(db).await?,
        admins: user::Entity::find().filter(user::Column::Role.eq(user::Role::Admin)).count(db).await?,
        unverified: user::Entity::find().filter(user::Column::EmailVerified.eq(false)).count(db).await?,
    })
}

/// Health of the account tables.
#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Integrity {
    pub users: u64,
    pub unverified_users: u64,
    pub users_without_login: u64,
    pub sessions: u64,
    pub expired_sessions: u64,
    pub verification_tokens: u64,
    pub expired_verification_tokens: u64,
    pub pending_google_sign_ins: u64,
    pub expired_google_sign_ins: u64,
}

pub async fn integrity(db: &impl ConnectionTrait) -> Result<Integrity, sea_orm::DbErr> {
    let now = Utc::now();
    let (verification_tokens, expired_verification_tokens) = single_use_tokens::count(db, Purpose::VerifyEmail).await?;
    Ok(Integrity {
        users: user::Entity::find().count(db).await?,
        unverified_users: user::Entity::find().filter(user::Column::EmailVerified.eq(false)).count(db).await?,
        users_without_login: user::Entity::find()
            .filter(user::Column::PasswordHash.is_null())
            .filter(user::Column::GoogleSub.is_null())
            .count(db)
            .await?,
        sessions: session::Entity::find().count(db).await?,
        expired_sessions: session::Entity::find().filter(session::Column::ExpiresAt.lte(now)).count(db).await?,
        verification_tokens,
        expired_verification_tokens,
        pending_google_sign_ins: oauth_state::Entity::find().count(db).await?,
        expired_google_sign_ins: oauth_state::Entity::find()
            .filter(oauth_state::Column::ExpiresAt.lte(now))
            .count(db)
            .await?,
    })
}

/// Deletes expired sessions, mailed links (verification and password reset) and abandoned
/// Google sign-ins.
pub async fn purge_expired(db: &impl ConnectionTrait) -> Result<u64, sea_orm::DbErr> {
    let now = Utc::now();
    let mut n = crate::services::sessions::purge_expired(db, now).await?;
    n += single_use_tokens::purge_expired(db, Purpose::VerifyEmail).await?;
    n += single_use_tokens::purge_expired(db, Purpose::ResetPassword).await?;
    n += oauth_state::Entity::delete_many()
        .filter(oauth_state::Column::ExpiresAt.lte(now))
        .exec(db)
        .await?
        .rows_affected;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::validate_setting;

    #[test]
    fn settings_are_checked() {
        assert_eq!(validate_setting("max_file_size", " 25 ").unwrap(), "25");
        assert!(validate_setting("max_file_size", "0").is_err());
        assert_eq!(validate_setting("allowed_file_types", "JPG, .png,mp4").unwrap(), "jpg,png,mp4");
        assert!(validate_setting("allowed_file_types", "exe;rm").is_err());
        assert!(validate_setting("ai_primary_model", "skynet").is_err());
        assert_eq!(validate_setting("allowed_engines", "google, library").unwrap(), "google,library");
        assert!(validate_setting("allowed_engines", "google,hal").is_err());
        assert!(validate_setting("github_url", "javascript:alert(1)").is_err());
        assert!(validate_setting("terms_url", "//evil.example").is_err());
        assert!(validate_setting("no_such_key", "x").is_err());
        assert_eq!(validate_setting("openai_api_key", " sk-abc ").unwrap(), "sk-abc");
        assert!(validate_setting("openai_api_key", "two words").is_err());
    }
}
