//! Quotas of keyed API requests: per minute, per day, and at once (concurrent).
//!
//! The admin sets the defaults (settings `api_quota_per_minute`, `api_quota_per_day`,
//! `api_quota_concurrent`) and may override each per person (`api_quotas`) or per key
//! (columns of `api_keys`). For each of the three, the key's own value wins, then the
//! person's, then the default.
//!
//! Who is counted: a person's keys share one count (`user:{id}`), so making more keys gives
//! no more requests; a key with its own value for a limit is counted on its own
//! (`key:{id}`) for that limit. All counts live in the shared `rate_limits` table
//! (`services::throttle`): two nodes on one database enforce one quota.
//!
//! Concurrent requests are counted in the same table: a slot is taken before the request
//! runs and given back when its [`Slot`] drops, which happens on every way out (answer,
//! error, panic, the client going away and the request future being dropped). A node that
//! dies with slots taken leaks them only until their window ([`CONCURRENT_WINDOW`]) ends.
use std::time::Duration;

use sea_orm::{ConnectionTrait, DatabaseConnection, EntityTrait};
use serde::{Deserialize, Serialize};

use crate::entities::{api_key, api_quota};
use crate::services::settings::{SettingsExt, SettingsMap};
use crate::services::throttle::{Decision, Limit};

pub const PER_MINUTE_KEY: &str = "api_quota_per_minute";
pub const PER_DAY_KEY: &str = "api_quota_per_day";
pub const CONCURRENT_KEY: &str = "api_quota_concurrent";

pub const DEFAULT_PER_MINUTE: u32 = 30;
pub const DEFAULT_PER_DAY: u32 = 1000;
pub const DEFAULT_CONCURRENT: u32 = 2;

/// Upper bounds an admin may set (a typo of extra zeros should not disable the quota).
pub const MAX_PER_MINUTE: u32 = 100_000;
pub const MAX_PER_DAY: u32 = 10_000_000;
pub const MAX_CONCURRENT: u32 = 1000;

const MINUTE: Limit = Limit::new("api-minute", DEFAULT_PER_MINUTE, Duration::from_secs(60));
const DAY: Limit = Limit::new("api-day", DEFAULT_PER_DAY, Duration::from_secs(24 * 3600));
/// Longer than any request may run (identification deadlines are minutes), so a slot is
/// never forgotten while its request still runs, yet a crashed node's slots come back.
pub const CONCURRENT_WINDOW: Duration = Duration::from_secs(30 * 60);
const CONCURRENT: Limit = Limit::new("api-concurrent", DEFAULT_CONCURRENT, CONCURRENT_WINDOW);

/// One limit's value and whose count it uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub max: u32,
    /// `user:{id}` or `key:{id}`.
    pub subject: String,
    /// Where the value came from: `default`, `person` or `key`.
    pub source: &'static str,
}

/// The three limits in force for one caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quota {
    pub per_minute: Part,
    pub per_day: Part,
    pub concurrent: Part,
}

/// An override as the admin sends and reads it; `None` means "not overridden".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Overrides {
    pub per_minute: Option<u32>,
    pub per_day: Option<u32>,
    pub concurrent: Option<u32>,
}

impl Overrides {
    /// Checks the values against the same bounds as the defaults.
    pub fn validate(&self) -> Result<(), String> {
        for (v, max, what) in [
            (self.per_minute, MAX_PER_MINUTE, "Requests per minute"),
            (self.per_day, MAX_PER_DAY, "Requests per day"),
            (self.concurrent, MAX_CONCURRENT, "Concurrent requests"),
        ] {
            if let Some(v) = v
                && (v == 0 || v > max)
            {
                return Err(format!("{what} must be a whole number between 1 and {max}"));
            }
        }
        Ok(())
    }
}

fn setting(settings: &SettingsMap, key: &str, default: u32, max: u32) -> u32 {
    settings.text(key).trim().parse::<u32>().ok().filter(|n| (1..=max).contains(n)).unwrap_or(default)
}

/// The admin's defaults.
pub fn defaults(settings: &SettingsMap) -> (u32, u32, u32) {
    (
        setting(settings, PER_MINUTE_KEY, DEFAULT_PER_MINUTE, MAX_PER_MINUTE),
        setting(settings, PER_DAY_KEY, DEFAULT_PER_DAY, MAX_PER_DAY),
        setting(settings, CONCURRENT_KEY, DEFAULT_CONCURRENT, MAX_CONCURRENT),
    )
}

fn to_u32(v: Option<i32>) -> Option<u32> {
    v.and_then(|n| u32::try_from(n).ok()).filter(|n| *n > 0)
}

/// The quota of `user_id`, through `key` when the request is keyed.
pub async fn effective(
    db: &impl ConnectionTrait,
    settings: &SettingsMap,
    user_id: i64,
    key: Option<&api_key::Model>,
) -> Result<Quota, sea_orm::DbErr> {
    let person = api_quota::Entity::find_by_id(user_id).one(db).await?;
    let (d_min, d_day, d_conc) = defaults(settings);
    let user_subject = format!("user:{user_id}");
    let pick = |from_key: Option<i32>, from_person: Option<i32>, default: u32| -> Part {
        if let (Some(k), Some(v)) = (key, to_u32(from_key)) {
            return Part { max: v, subject: format!("key:{}", k.id), source: "key" };
        }
        if let Some(v) = to_u32(from_person) {
            return Part { max: v, subject: user_subject.clone(), source: "person" };
        }
        Part { max: default, subject: user_subject.clone(), source: "default" }
    };
    Ok(Quota {
        per_minute: pick(key.and_then(|k| k.per_minute), person.as_ref().and_then(|p| p.per_minute), d_min),
        per_day: pick(key.and_then(|k| k.per_day), person.as_ref().and_then(|p| p.per_day), d_day),
        concurrent: pick(key.and_then(|k| k.concurrent), person.as_ref().and_then(|p| p.concurrent), d_conc),
    })
}

/// Why a keyed request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    PerMinute,
    PerDay,
    Concurrent,
}

impl Refusal {
    pub fn message(self) -> &'static str {
        match self {
            Self::PerMinute => "Too many API requests this minute. Please wait before trying again.",
            Self::PerDay => "The daily API quota is used up. It starts again when the period resets.",
            Self::Concurrent => "Too many API requests at once. Wait for one to finish before sending another.",
        }
    }

    /// The machine `code` of the 429 this refusal answers with.
    pub fn code(self) -> crate::error_code::ErrorCode {
        use crate::error_code::ErrorCode;
        match self {
            Self::PerMinute => ErrorCode::QuotaPerMinute,
            Self::PerDay => ErrorCode::QuotaPerDay,
            Self::Concurrent => ErrorCode::QuotaConcurrent,
        }
    }
}

/// What admission of one keyed request decided.
pub struct Admitted {
    /// The decision the `RateLimit-*` headers describe: of the per-minute and per-day
    /// limits, the one with fewer units left (the one the client will hit first).
    pub headline: Decision,
    /// Held while the request runs; gives the concurrent slot back when dropped.
    pub slot: Slot,
}

/// Takes one unit of each limit, or none at all (a refused request costs nothing).
pub async fn admit(
    db: &DatabaseConnection,
    q: &Quota,
) -> Result<Result<Admitted, (Refusal, Decision)>, sea_orm::DbErr> {
    let minute = MINUTE.with_max(q.per_minute.max);
    let day = DAY.with_max(q.per_day.max);
    let conc = CONCURRENT.with_max(q.concurrent.max);
    let m = minute.consume(db, &q.per_minute.subject).await?;
    if !m.allowed {
        return Ok(Err((Refusal::PerMinute, m)));
    }
    let d = day.consume(db, &q.per_day.subject).await?;
    if !d.allowed {
        minute.refund(db, &q.per_minute.subject, 1).await?;
        return Ok(Err((Refusal::PerDay, d)));
    }
    let c = conc.consume(db, &q.concurrent.subject).await?;
    if !c.allowed {
        minute.refund(db, &q.per_minute.subject, 1).await?;
        day.refund(db, &q.per_day.subject, 1).await?;
        // The headers describe the minute limit; `Retry-After` is set by the caller (a
        // slot frees when another request ends, not when a window does).
        let shown = minute.peek(db, &q.per_minute.subject).await?;
        return Ok(Err((Refusal::Concurrent, shown)));
    }
    let headline = if d.remaining < m.remaining { d } else { m };
    Ok(Ok(Admitted {
        headline,
        slot: Slot { db: db.clone(), limit: conc, subject: q.concurrent.subject.clone(), held: true },
    }))
}

/// A concurrent slot; dropping it gives the slot back (in a task of its own, since a drop
/// cannot wait, and a request being cancelled is exactly when it must still happen).
pub struct Slot {
    db: DatabaseConnection,
    limit: Limit,
    subject: String,
    held: bool,
}

impl Slot {
    /// Gives the slot back before the caller goes on: the answer leaves only once its slot is
    /// free, so a client that sends its next request at once is not refused for a slot its
    /// last request still seemed to hold (the give-back of [`Drop`] runs later, in a task).
    pub async fn release(mut self) {
        self.held = false;
        give_back(self.limit, &self.db, &self.subject).await;
    }
}

/// Refunds one concurrent slot of `limit` to `subject`; a failure is logged (the slot frees
/// when its window ends).
async fn give_back(limit: Limit, db: &DatabaseConnection, subject: &str) {
    if let Err(e) = limit.refund(db, subject, 1).await {
        tracing::warn!(error = %e, "giving back a concurrent API slot failed; it frees when its window ends");
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if !std::mem::take(&mut self.held) {
            return;
        }
        let (db, limit, subject) = (self.db.clone(), self.limit, std::mem::take(&mut self.subject));
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn(async move { give_back(limit, &db, &subject).await });
            }
            Err(_) => tracing::warn!("no runtime to give back a concurrent API slot; it frees when its window ends"),
        }
    }
}

/// One limit in `GET /api/me/quota`.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub limit: u32,
    pub used: u64,
    pub remaining: u32,
    /// Seconds until the count starts again (0 when nothing is counted).
    pub reset_secs: u64,
    /// When that is, or `null` when nothing is counted.
    pub reset_at: Option<chrono::DateTime<chrono::Utc>>,
    /// `default`, `person` or `key`: where the limit comes from.
    pub source: String,
}

/// The concurrent limit in `GET /api/me/quota`.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConcurrentUsage {
    pub limit: u32,
    pub in_use: u64,
    pub source: String,
}

/// `GET /api/me/quota`.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuotaReport {
    pub per_minute: Usage,
    pub per_day: Usage,
    pub concurrent: ConcurrentUsage,
}

fn usage(d: Decision, source: &str) -> Usage {
    let reset_secs = d.reset_secs();
    Usage {
        limit: d.limit,
        used: d.used,
        remaining: d.remaining,
        reset_secs,
        reset_at: (d.used > 0).then(|| chrono::Utc::now() + d.reset_after),
        source: source.to_owned(),
    }
}

/// Limits, usage and resets without taking anything.
pub async fn report(db: &impl ConnectionTrait, q: &Quota) -> Result<QuotaReport, sea_orm::DbErr> {
    let m = MINUTE.with_max(q.per_minute.max).peek(db, &q.per_minute.subject).await?;
    let d = DAY.with_max(q.per_day.max).peek(db, &q.per_day.subject).await?;
    let c = CONCURRENT.with_max(q.concurrent.max).peek(db, &q.concurrent.subject).await?;
    Ok(QuotaReport {
        per_minute: usage(m, q.per_minute.source),
        per_day: usage(d, q.per_day.source),
        concurrent: ConcurrentUsage { limit: c.limit, in_use: c.used, source: q.concurrent.source.to_owned() },
    })
}

/// The headline decision of [`report`] for the `RateLimit-*` headers of the quota answer.
pub fn headline_of(r: &QuotaReport) -> Decision {
    let pick = if r.per_day.remaining < r.per_minute.remaining { &r.per_day } else { &r.per_minute };
    Decision {
        allowed: pick.remaining > 0,
        limit: pick.limit,
        used: pick.used,
        remaining: pick.remaining,
        reset_after: Duration::from_secs(pick.reset_secs),
    }
}
