//! Server-side sessions. The browser holds a random 32-byte token; the table holds only its
//! sha256, so a leaked database does not leak live sessions.
use chrono::{DateTime, Duration, Utc};
use rand::RngCore;
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, Set};
use sha2::{Digest, Sha256};

use crate::auth::CurrentUser;
use crate::entities::{session, user};

/// A session lives this long after the last request that refreshed it.
pub const SESSION_TTL: Duration = Duration::days(30);
/// `last_seen_at` (and the expiry) is written at most this often, not on every request.
pub const TOUCH_EVERY: Duration = Duration::hours(1);

/// A fresh random token, URL-safe base64 (43 characters).
pub fn new_token() -> String {
    use base64::Engine;
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// sha256 of a token, hex: what the tables store.
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Creates a session for `user_id` and returns the token for the cookie.
pub async fn create(
    db: &impl ConnectionTrait,
    user_id: i64,
    user_agent: Option<&str>,
) -> Result<String, sea_orm::DbErr> {
    let token = new_token();
    let now = Utc::now();
    session::ActiveModel {
        id: Set(hash_token(&token)),
        user_id: Set(user_id),
        created_at: Set(now),
        expires_at: Set(now + SESSION_TTL),
        last_seen_at: Set(now),
        user_agent: Set(user_agent.map(|ua| ua.chars().take(255).collect())),
    }
    .insert(db)
    .await?;
    Ok(token)
}

/// What a valid token resolves to.
pub struct Resolved {
    pub user: CurrentUser,
    /// The expiry moved forward on this request: the cookie should be re-sent.
    pub refreshed: bool,
}

/// The user behind a token, if the session exists and has not expired. Expired sessions are
/// deleted on sight; live ones slide forward at most once per [`TOUCH_EVERY`].
pub async fn resolve(db: &impl ConnectionTrait, token: &str) -> Result<Option<Resolved>, sea_orm::DbErr> {
    let Some((row, Some(u))) =
        session::Entity::find_by_id(hash_token(token)).find_also_related(user::Entity).one(db).await?
    else {
        return Ok(None);
    };
    let now = Utc::now();
    if row.expires_at <= now {
        session::Entity::delete_by_id(row.id).exec(db).await?;
        return Ok(None);
    }
    let refreshed = now - row.last_seen_at >= TOUCH_EVERY;
    if refreshed {
        let mut active: session::ActiveModel = row.into();
        active.last_seen_at = Set(now);
        active.expires_at = Set(now + SESSION_TTL);
        active.update(db).await?;
    }
    Ok(Some(Resolved { user: current_user(&u), refreshed }))
}

pub fn current_user(u: &user::Model) -> CurrentUser {
    CurrentUser { id: u.id, username: u.username.clone(), email: u.email.clone(), role: u.role.clone() }
}

/// Ends the session of this token (logout, or the old session at login).
pub async fn delete(db: &impl ConnectionTrait, token: &str) -> Result<(), sea_orm::DbErr> {
    session::Entity::delete_by_id(hash_token(token)).exec(db).await?;
    Ok(())
}

/// Ends every session of a user (e.g. when an account is taken over by a verified owner).
pub async fn delete_all_for_user(db: &impl ConnectionTrait, user_id: i64) -> Result<u64, sea_orm::DbErr> {
    Ok(session::Entity::delete_many().filter(session::Column::UserId.eq(user_id)).exec(db).await?.rows_affected)
}

/// Removes expired sessions; returns how many went.
pub async fn purge_expired(db: &impl ConnectionTrait, now: DateTime<Utc>) -> Result<u64, sea_orm::DbErr> {
    Ok(session::Entity::delete_many().filter(session::Column::ExpiresAt.lte(now)).exec(db).await?.rows_affected)
}
