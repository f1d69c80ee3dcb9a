//! Who may identify: the rate limit and the guest's one free identification.
//!
//! **Rate limit.** A token bucket per signed-in user (`user:{id}`), else per client
//! address (`addr:{ip}`): `REELFIND_IDENTIFY_PER_MINUTE` a minute (default 10), in memory
//! per node (governor). Over it: 429.
//!
//! **Guest quota** (SPEC: one free identification, enforced on the server too). A guest is
//! recognised two ways, and either one being used up blocks:
//! - a guest cookie `rf_guest` holding a random 128-bit id and its HMAC-SHA256 under the
//!   server's secret key (`REELFIND_SECRET_KEY`, else `{data_dir}/secret.key`), so a client
//!   cannot mint ids of its choosing; the id may identify once;
//! - the client address, which may spend at most [`GUEST_ADDRESS_ALLOWANCE`] free
//!   identifications per 24 hours, so clearing cookies does not give unlimited use, while
//!   a few people behind one NAT still each get their try.
//!
//! Usage is counted only after a successful identification (a failed try is not spent),
//! in the `guest_usage` table so every node sees it. Signed-in users are unlimited.
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::path::Path;
use std::sync::OnceLock;

use axum::http::{HeaderMap, StatusCode, header};
use chrono::Utc;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use hmac::{Hmac, Mac};
use sea_orm::sea_query::{Expr, ExprTrait, OnConflict};
use sea_orm::{ConnectionTrait, EntityTrait, Set};
use serde_json::json;
use sha2::Sha256;

use crate::config::Config;
use crate::entities::guest_usage;
use crate::error::AppError;

pub const GUEST_COOKIE: &str = "rf_guest";
pub const GUEST_FREE: i32 = 1;
pub const GUEST_ADDRESS_ALLOWANCE: i32 = 3;
pub const GUEST_AUTH_MESSAGE: &str =
    "First trial complete! Please sign in or create a free account to keep identifying movies and TV shows.";
pub const TOO_MANY: &str = "Too many requests. Please wait a moment before trying again.";

/// Per-process identification state: the rate limiter and the cookie key.
pub struct IdentifyState {
    limiter: DefaultKeyedRateLimiter<String>,
    analytics: DefaultKeyedRateLimiter<String>,
    key: OnceLock<Vec<u8>>,
}

impl IdentifyState {
    pub fn new(config: &Config) -> Self {
        let per_minute = NonZeroU32::new(config.identify.per_minute).unwrap_or(NonZeroU32::MIN);
        Self {
            limiter: RateLimiter::keyed(Quota::per_minute(per_minute)),
            analytics: RateLimiter::keyed(Quota::per_minute(NonZeroU32::new(120).unwrap_or(NonZeroU32::MIN))),
            key: OnceLock::new(),
        }
    }

    /// Analytics events: 120 a minute per user or address.
    pub fn check_analytics_rate(&self, key: String) -> Result<(), AppError> {
        if self.analytics.len() > 100_000 {
            self.analytics.retain_recent();
        }
        self.analytics.check_key(&key).map_err(|_| AppError::TooManyRequests(TOO_MANY.into()))
    }

    /// Takes one request from the caller's bucket.
    pub fn check_rate(&self, key: String) -> Result<(), AppError> {
        if self.limiter.len() > 100_000 {
            self.limiter.retain_recent();
        }
        self.limiter.check_key(&key).map_err(|_| AppError::TooManyRequests(TOO_MANY.into()))
    }

    fn key(&self, config: &Config) -> &[u8] {
        self.key.get_or_init(|| match &config.identify.secret_key {
            Some(s) => s.expose().as_bytes().to_vec(),
            None => load_or_create_key(&config.data_dir),
        })
    }

    /// The guest id from a valid signed cookie, if any.
    pub fn guest_from_cookie(&self, config: &Config, headers: &HeaderMap) -> Option<String> {
        let raw = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|kv| kv.trim().split_once('='))
            .find(|(k, _)| *k == GUEST_COOKIE)
            .map(|(_, v)| v.to_owned())?;
        let (id, sig) = raw.split_once('.')?;
        let expected = self.sign(config, id);
        let same: bool = subtle::ConstantTimeEq::ct_eq(expected.as_bytes(), sig.as_bytes()).into();
        same.then(|| id.to_owned())
    }

    fn sign(&self, config: &Config, id: &str) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(self.key(config)).expect("HMAC takes any key length");
        mac.update(b"guest:");
        mac.update(id.as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }

    /// A `Set-Cookie` value for a new guest id (one year, HttpOnly, SameSite=Lax).
    pub fn guest_cookie(&self, config: &Config, id: &str) -> String {
        format!(
            "{GUEST_COOKIE}={id}.{}; Path=/; Max-Age=31536000; HttpOnly; SameSite=Lax{}",
            self.sign(config, id),
            if config.secure_cookies() { "; Secure" } else { "" }
        )
    }
}

fn load_or_create_key(data_dir: &Path) -> Vec<u8> {
    let path = data_dir.join("secret.key");
    if let Ok(k) = std::fs::read(&path) {
        if k.len() >= 32 {
            return k;
        }
    }
    let key: [u8; 32] = rand::random();
    let _ = std::fs::create_dir_all(data_dir);
    let written = {
        use std::io::Write;
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        opts.open(&path).and_then(|mut f| f.write_all(&key))
    };
    match written {
        Ok(()) => key.to_vec(),
        // Another process made it first: use theirs.
        Err(_) => std::fs::read(&path).ok().filter(|k| k.len() >= 32).unwrap_or_else(|| key.to_vec()),
    }
}

fn requires_auth() -> AppError {
    AppError::with_body(StatusCode::FORBIDDEN, GUEST_AUTH_MESSAGE, json!({"requiresAuth": true}))
}

async fn count(db: &impl ConnectionTrait, key: &str, window_hours: Option<i64>) -> Result<i32, AppError> {
    let Some(row) = guest_usage::Entity::find_by_id(key.to_owned()).one(db).await? else { return Ok(0) };
    if let Some(h) = window_hours {
        if row.window_start < Utc::now() - chrono::Duration::hours(h) {
            return Ok(0);
        }
    }
    Ok(row.count)
}

/// 403 `{requiresAuth: true}` when this guest (cookie or address) has used the free try.
pub async fn check_guest(
    db: &impl ConnectionTrait,
    guest_id: Option<&str>,
    addr: Option<IpAddr>,
) -> Result<(), AppError> {
    if let Some(id) = guest_id {
        if count(db, &format!("guest:{id}"), None).await? >= GUEST_FREE {
            return Err(requires_auth());
        }
    }
    if let Some(ip) = addr {
        if count(db, &format!("addr:{ip}"), Some(24)).await? >= GUEST_ADDRESS_ALLOWANCE {
            return Err(requires_auth());
        }
    }
    Ok(())
}

/// Counts one successful guest identification against the cookie and the address.
pub async fn record_guest(
    db: &impl ConnectionTrait,
    guest_id: &str,
    addr: Option<IpAddr>,
) -> Result<(), sea_orm::DbErr> {
    bump(db, &format!("guest:{guest_id}"), None).await?;
    if let Some(ip) = addr {
        bump(db, &format!("addr:{ip}"), Some(24)).await?;
    }
    Ok(())
}

async fn bump(db: &impl ConnectionTrait, key: &str, window_hours: Option<i64>) -> Result<(), sea_orm::DbErr> {
    let now = Utc::now();
    if let Some(h) = window_hours {
        // An expired window starts over.
        if let Some(row) = guest_usage::Entity::find_by_id(key.to_owned()).one(db).await? {
            if row.window_start < now - chrono::Duration::hours(h) {
                guest_usage::Entity::delete_by_id(key.to_owned()).exec(db).await?;
            }
        }
    }
    guest_usage::Entity::insert(guest_usage::ActiveModel {
        key: Set(key.to_owned()),
        count: Set(1),
        window_start: Set(now),
        updated_at: Set(now),
    })
    .on_conflict(
        OnConflict::column(guest_usage::Column::Key)
            .value(
                guest_usage::Column::Count,
                Expr::col((guest_usage::Entity, guest_usage::Column::Count)).add(Expr::val(1)),
            )
            .value(guest_usage::Column::UpdatedAt, now)
            .to_owned(),
    )
    .exec(db)
    .await?;
    Ok(())
}
