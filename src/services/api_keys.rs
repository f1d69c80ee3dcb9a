//! API keys: what a developer's program presents as `Authorization: Bearer rf_...`.
//!
//! A key is `rf_` and 40 random letters and digits (about 238 bits). It is shown once, when
//! it is made; the table keeps its sha256 (a slow password hash buys nothing for a secret
//! this long and random, and a fast one keeps the per-request lookup cheap) and its first
//! characters as a visible prefix. Every keyed request looks the key up in the database,
//! so a key revoked on one node is refused by every node on the next request.
use chrono::{DateTime, Duration, Utc};
use rand::Rng;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, Set,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::entities::{api_key, user};
use crate::services::users::CurrentUser;

/// What every key starts with (lets secret scanners and people recognise one).
pub const KEY_PREFIX: &str = "rf_";
/// Random characters after [`KEY_PREFIX`].
const KEY_RANDOM_LEN: usize = 40;
/// Characters of the random part shown as the key's visible prefix.
const VISIBLE_LEN: usize = 8;
/// Active keys one person may hold: enough for every program they run, few enough that
/// nobody keeps hundreds of forgotten credentials.
pub const MAX_KEYS: u64 = 20;
pub const MAX_NAME_CHARS: usize = 80;
/// `last_used_at` is written at most this often per key, not on every request.
const TOUCH_EVERY: Duration = Duration::minutes(1);

/// The message of the 401 for a key that is unknown, malformed or revoked (one text for all,
/// so an answer does not tell which keys once existed).
pub const INVALID_KEY: &str = "Invalid or revoked API key";

/// A fresh key.
pub fn generate() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    let random: String = (0..KEY_RANDOM_LEN).map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char).collect();
    format!("{KEY_PREFIX}{random}")
}

/// Whether `token` has the shape of a key (checked before any database lookup).
pub fn well_formed(token: &str) -> bool {
    token.len() == KEY_PREFIX.len() + KEY_RANDOM_LEN
        && token.starts_with(KEY_PREFIX)
        && token[KEY_PREFIX.len()..].bytes().all(|b| b.is_ascii_alphanumeric())
}

/// The visible prefix of a key: `rf_` and its first 8 random characters.
pub fn visible_prefix(key: &str) -> String {
    key.chars().take(KEY_PREFIX.len() + VISIBLE_LEN).collect()
}

/// sha256 of a key, hex: what the table stores.
pub fn hash_key(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// One key as its owner sees it (never the secret).
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyView {
    pub id: i64,
    pub name: String,
    /// `rf_` and the first characters of the key.
    pub prefix: String,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
}

impl From<&api_key::Model> for KeyView {
    fn from(k: &api_key::Model) -> Self {
        Self {
            id: k.id,
            name: k.name.clone(),
            prefix: k.prefix.clone(),
            created_at: k.created_at,
            last_used_at: k.last_used_at,
        }
    }
}

/// A key just made: the only answer that carries the secret.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedKey {
    #[serde(flatten)]
    pub info: KeyView,
    /// The whole key. Shown once; it cannot be read again.
    pub key: String,
}

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("Give the key a name (at most 80 characters)")]
    BadName,
    #[error("You already have 20 API keys. Revoke one you no longer use first.")]
    TooMany,
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
}

/// A clean key name: trimmed, 1-80 characters, no control characters.
pub fn clean_name(raw: &str) -> Result<String, KeyError> {
    let name = raw.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(KeyError::BadName);
    }
    Ok(name.to_owned())
}

/// How many keys of `user_id` still work.
pub async fn live_count(db: &impl ConnectionTrait, user_id: i64) -> Result<u64, sea_orm::DbErr> {
    api_key::Entity::find()
        .filter(api_key::Column::UserId.eq(user_id))
        .filter(api_key::Column::RevokedAt.is_null())
        .count(db)
        .await
}

/// Makes a key for `user_id`, unless they already have [`MAX_KEYS`] live ones. The count and
/// the insert run in one write transaction after the person's row lock, so parallel requests
/// take turns and the cap holds on SQLite and PostgreSQL alike.
pub async fn create(db: &sea_orm::DatabaseConnection, user_id: i64, name: &str) -> Result<CreatedKey, KeyError> {
    let name = clean_name(name)?;
    let txn = crate::db::begin_write(db).await?;
    crate::services::users::lock(&txn, user_id).await?;
    if live_count(&txn, user_id).await? >= MAX_KEYS {
        return Err(KeyError::TooMany);
    }
    let key = generate();
    let row = api_key::ActiveModel {
        user_id: Set(user_id),
        name: Set(name),
        prefix: Set(visible_prefix(&key)),
        key_hash: Set(hash_key(&key)),
        created_at: Set(Utc::now()),
        last_used_at: Set(None),
        revoked_at: Set(None),
        per_minute: Set(None),
        per_day: Set(None),
        concurrent: Set(None),
        ..Default::default()
    }
    .insert(&txn)
    .await?;
    txn.commit().await?;
    Ok(CreatedKey { info: KeyView::from(&row), key })
}

/// The person's keys that still work, newest first.
pub async fn list(db: &impl ConnectionTrait, user_id: i64) -> Result<Vec<KeyView>, sea_orm::DbErr> {
    let rows = api_key::Entity::find()
        .filter(api_key::Column::UserId.eq(user_id))
        .filter(api_key::Column::RevokedAt.is_null())
        .order_by_desc(api_key::Column::CreatedAt)
        .order_by_desc(api_key::Column::Id)
        .all(db)
        .await?;
    Ok(rows.iter().map(KeyView::from).collect())
}

/// Revokes one of the person's keys; false when they have no such live key. The row stays
/// (with `revoked_at`) so the admin can still see what existed; it never authenticates again.
pub async fn revoke(db: &impl ConnectionTrait, user_id: i64, key_id: i64) -> Result<bool, sea_orm::DbErr> {
    let res = api_key::Entity::update_many()
        .col_expr(api_key::Column::RevokedAt, sea_orm::sea_query::Expr::value(Utc::now()))
        .filter(api_key::Column::Id.eq(key_id))
        .filter(api_key::Column::UserId.eq(user_id))
        .filter(api_key::Column::RevokedAt.is_null())
        .exec(db)
        .await?;
    Ok(res.rows_affected > 0)
}

/// A live key and the person it belongs to.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub key: api_key::Model,
    pub user: CurrentUser,
}

/// The live key behind `token`, if any. One indexed lookup per request, no cache: a
/// revocation (on any node) is seen by the very next request.
pub async fn resolve(db: &impl ConnectionTrait, token: &str) -> Result<Option<Resolved>, sea_orm::DbErr> {
    if !well_formed(token) {
        return Ok(None);
    }
    let found = api_key::Entity::find()
        .filter(api_key::Column::KeyHash.eq(hash_key(token)))
        .filter(api_key::Column::RevokedAt.is_null())
        .find_also_related(user::Entity)
        .one(db)
        .await?;
    let Some((key, Some(u))) = found else { return Ok(None) };
    let now = Utc::now();
    let key = if key.last_used_at.is_none_or(|t| now - t >= TOUCH_EVERY) {
        let mut active: api_key::ActiveModel = key.into();
        active.last_used_at = Set(Some(now));
        active.update(db).await?
    } else {
        key
    };
    Ok(Some(Resolved { user: crate::services::sessions::current_user(&u), key }))
}

/// Checks the `api_cors_origins` setting: comma-separated `scheme://host[:port]` origins.
pub fn clean_origins(v: &str) -> Result<String, String> {
    let mut out = Vec::new();
    for raw in v.split([',', '\n']).map(str::trim).filter(|s| !s.is_empty()) {
        let origin = url::Url::parse(raw)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
            .filter(|u| u.path() == "/" && u.query().is_none() && u.fragment().is_none() && u.username().is_empty())
            .map(|u| u.origin().ascii_serialization())
            .ok_or_else(|| {
                format!(
                    "\"{}\" is not an origin like https://app.example.com",
                    raw.chars().take(80).collect::<String>()
                )
            })?;
        if !out.contains(&origin) {
            out.push(origin);
        }
    }
    if out.len() > 50 {
        return Err("List at most 50 allowed origins".into());
    }
    Ok(out.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_have_a_recognisable_shape() {
        let k = generate();
        assert!(well_formed(&k), "{k}");
        assert_eq!(visible_prefix(&k).len(), 11);
        assert!(visible_prefix(&k).starts_with("rf_"));
        assert_ne!(generate(), k);
        assert!(!well_formed("rf_short"));
        assert!(!well_formed(&format!("xx_{}", &k[3..])));
        assert!(!well_formed(&format!("{}!", &k[..k.len() - 1])));
        assert_eq!(hash_key(&k).len(), 64);
    }

    #[test]
    fn names_are_bounded() {
        assert_eq!(clean_name("  CI bot ").unwrap(), "CI bot");
        assert!(clean_name("   ").is_err());
        assert!(clean_name(&"x".repeat(81)).is_err());
        assert!(clean_name("a\u{0}b").is_err());
    }

    #[test]
    fn origins_are_normalised() {
        assert_eq!(
            clean_origins("https://app.example.com, http://localhost:5173/ ,https://app.example.com").unwrap(),
            "https://app.example.com,http://localhost:5173"
        );
        assert_eq!(clean_origins("").unwrap(), "");
        assert!(clean_origins("app.example.com").is_err());
        assert!(clean_origins("https://app.example.com/path").is_err());
        assert!(clean_origins("ftp://x.example").is_err());
    }
}
