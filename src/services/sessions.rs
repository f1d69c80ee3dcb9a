//! Server-side sessions. The browser holds a random 32-byte token; the table holds only its
//! sha256, so a leaked database does not leak live sessions.
//!
//! A session ends after [`SESSION_TTL`] without use (sliding), and in any case
//! [`SESSION_MAX_AGE`] after it began (absolute): a stolen cookie cannot be kept alive
//! forever by using it. People see their sessions and can end any of them.
use chrono::{DateTime, Duration, Utc};
use rand::RngCore;
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::entities::{session, user};
use crate::services::users::CurrentUser;

/// A session lives this long after the last request that refreshed it.
pub const SESSION_TTL: Duration = Duration::days(30);
/// ... and never longer than this after signing in.
pub const SESSION_MAX_AGE: Duration = Duration::days(90);
/// Characters of the stored hash shown as a session's id (never the token itself).
const PUBLIC_ID_LEN: usize = 16;
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
    pub expires_at: DateTime<Utc>,
    /// When this session began (re-authentication checks ask how recent a sign-in is).
    pub signed_in_at: DateTime<Utc>,
}

/// The idle expiry from `now`, capped by the absolute one.
fn next_expiry(created_at: DateTime<Utc>, now: DateTime<Utc>) -> DateTime<Utc> {
    (now + SESSION_TTL).min(created_at + SESSION_MAX_AGE)
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
    if row.expires_at <= now || row.created_at + SESSION_MAX_AGE <= now {
        session::Entity::delete_by_id(row.id).exec(db).await?;
        return Ok(None);
    }
    let refreshed = now - row.last_seen_at >= TOUCH_EVERY;
    let expires_at = if refreshed { next_expiry(row.created_at, now) } else { row.expires_at };
    let signed_in_at = row.created_at;
    if refreshed {
        let mut active: session::ActiveModel = row.into();
        active.last_seen_at = Set(now);
        active.expires_at = Set(expires_at);
        active.update(db).await?;
    }
    Ok(Some(Resolved { user: current_user(&u), refreshed, expires_at, signed_in_at }))
}

pub fn current_user(u: &user::Model) -> CurrentUser {
    CurrentUser::from(u)
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

/// One of a person's sessions, as they see it in their settings.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionView {
    /// A prefix of the stored hash: names the session, cannot be used to sign in.
    pub id: String,
    pub created_at: DateTime<Utc>,
    pub last_seen_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub user_agent: Option<String>,
    /// A short description such as "Firefox on Linux".
    pub device: String,
    /// The session of the request that asked.
    pub current: bool,
}

fn public_id(hash: &str) -> String {
    hash.chars().take(PUBLIC_ID_LEN).collect()
}

/// `user_id`'s live sessions, the most recently used first; `current_token` marks the asker's.
pub async fn list_for_user(
    db: &impl ConnectionTrait,
    user_id: i64,
    current_token: Option<&str>,
) -> Result<Vec<SessionView>, sea_orm::DbErr> {
    let now = Utc::now();
    let current = current_token.map(hash_token);
    let rows = session::Entity::find()
        .filter(session::Column::UserId.eq(user_id))
        .filter(session::Column::ExpiresAt.gt(now))
        .filter(session::Column::CreatedAt.gt(now - SESSION_MAX_AGE))
        .order_by_desc(session::Column::LastSeenAt)
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|r| SessionView {
            id: public_id(&r.id),
            current: current.as_deref() == Some(r.id.as_str()),
            device: describe_user_agent(r.user_agent.as_deref()),
            created_at: r.created_at,
            last_seen_at: r.last_seen_at,
            expires_at: r.expires_at,
            user_agent: r.user_agent,
        })
        .collect())
}

/// Ends `user_id`'s session named `id` (a [`SessionView::id`]); false when there is none.
pub async fn revoke(db: &impl ConnectionTrait, user_id: i64, id: &str) -> Result<bool, sea_orm::DbErr> {
    if id.len() != PUBLIC_ID_LEN || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(false);
    }
    let res = session::Entity::delete_many()
        .filter(session::Column::UserId.eq(user_id))
        .filter(session::Column::Id.starts_with(id.to_ascii_lowercase()))
        .exec(db)
        .await?;
    Ok(res.rows_affected > 0)
}

/// Ends every session of `user_id` except the one of `keep_token`; how many ended.
pub async fn delete_others(
    db: &impl ConnectionTrait,
    user_id: i64,
    keep_token: Option<&str>,
) -> Result<u64, sea_orm::DbErr> {
    let mut q = session::Entity::delete_many().filter(session::Column::UserId.eq(user_id));
    if let Some(t) = keep_token {
        q = q.filter(session::Column::Id.ne(hash_token(t)));
    }
    Ok(q.exec(db).await?.rows_affected)
}

/// "Firefox on Linux" from a User-Agent header; "Unknown device" when it says nothing useful.
pub fn describe_user_agent(ua: Option<&str>) -> String {
    let Some(ua) = ua.filter(|u| !u.trim().is_empty()) else { return "Unknown device".into() };
    let browser = [
        ("Edg/", "Edge"),
        ("OPR/", "Opera"),
        ("Firefox/", "Firefox"),
        ("Chrome/", "Chrome"),
        ("Safari/", "Safari"),
        ("curl/", "curl"),
    ]
    .iter()
    .find(|(needle, _)| ua.contains(needle))
    .map(|(_, name)| *name);
    let os = [
        ("Android", "Android"),
        ("iPhone", "iPhone"),
        ("iPad", "iPad"),
        ("Windows", "Windows"),
        ("Mac OS X", "macOS"),
        ("CrOS", "ChromeOS"),
        ("Linux", "Linux"),
    ]
    .iter()
    .find(|(needle, _)| ua.contains(needle))
    .map(|(_, name)| *name);
    match (browser, os) {
        (Some(b), Some(o)) => format!("{b} on {o}"),
        (Some(b), None) => b.to_owned(),
        (None, Some(o)) => format!("Browser on {o}"),
        (None, None) => "Unknown device".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_are_described_plainly() {
        let ff = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
        assert_eq!(describe_user_agent(Some(ff)), "Firefox on Linux");
        let chrome_android = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36";
        assert_eq!(describe_user_agent(Some(chrome_android)), "Chrome on Android");
        let safari = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
        assert_eq!(describe_user_agent(Some(safari)), "Safari on iPhone");
        assert_eq!(describe_user_agent(None), "Unknown device");
    }

    #[test]
    fn the_absolute_lifetime_caps_the_sliding_one() {
        let start = Utc::now();
        assert_eq!(next_expiry(start, start), start + SESSION_TTL);
        let late = start + Duration::days(80);
        assert_eq!(next_expiry(start, late), start + SESSION_MAX_AGE);
    }
}
