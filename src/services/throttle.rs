//! The one store of every throttle, cooldown, rate limit and quota in Reelfind.
//!
//! A [`Limit`] is "at most `max` units per `window`", counted per **bucket**
//! (`{limit name}:{subject}`, the subject being a username, an address, a user id, an API
//! key...) in a fixed window, in the `rate_limits` table. Because the count lives in the
//! database, every node of a deployment on one PostgreSQL sees the same count: two nodes
//! enforce one limit. Each operation is one SQL statement (an `INSERT .. ON CONFLICT DO
//! UPDATE .. RETURNING` upsert), so concurrent requests, on one node or several, can never
//! both take the last unit: PostgreSQL locks the row for the upsert, SQLite has one writer.
//!
//! ```ignore
//! use crate::services::throttle::Limit;
//! use std::time::Duration;
//!
//! /// Previews: 30 a minute per client address.
//! pub const PREVIEWS: Limit = Limit::new("preview", 30, Duration::from_secs(60));
//!
//! let d = PREVIEWS.consume(&state.db, &client_key).await?;
//! if !d.allowed {
//!     return Err(AppError::throttled("Too many previews. Please wait a moment.", &d));
//! }
//! // d.headers() -> RateLimit-Limit / RateLimit-Remaining / RateLimit-Reset values
//! ```
//!
//! The operations:
//! - [`Limit::consume`]: take one unit (or [`Limit::consume_n`]) **if it fits**. A refused
//!   request takes nothing. For rate limits, quotas (reserve before the work, then
//!   [`Limit::refund`] if the work failed) and cooldowns (`max` 1).
//! - [`Limit::hit`]: count one unit whatever the total, and say the total. For attempt
//!   counters such as failed logins, where the caller decides from the count (and where an
//!   attempt still in flight must already count).
//! - [`Limit::peek`]: the state of a bucket without taking anything.
//! - [`Limit::refund`]: give units back within the current window (never below zero).
//! - [`Limit::clear`]: forget a bucket.
//!
//! Windows are measured with the clock of the node that asks (Unix milliseconds): keep the
//! nodes' clocks in sync (NTP); a skew only shifts when a window ends. Expired rows are
//! swept now and then by the writes themselves.
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sea_orm::{ConnectionTrait, DatabaseBackend, DbErr, EntityTrait, Statement, Value};
use sha2::{Digest, Sha256};

use crate::entities::rate_limit;

/// Subjects longer than this are stored as their sha256, so a bucket fits its column.
const MAX_SUBJECT: usize = 160;

/// At most `max` units per `window`, counted per subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// Names the limit in bucket keys, e.g. `login-user`. Unique per limit.
    pub name: &'static str,
    pub max: u32,
    pub window: Duration,
}

/// The answer of [`Limit::consume`], [`Limit::peek`] and [`Limit::refund`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// The units asked for were taken (for `peek`: one more unit would fit).
    pub allowed: bool,
    /// The limit's `max`.
    pub limit: u32,
    /// Units used in the current window, after this call.
    pub used: u64,
    /// Units still free in the current window.
    pub remaining: u32,
    /// Time until the window ends and the count starts again (zero when nothing is counted).
    pub reset_after: Duration,
}

impl Decision {
    /// Whole seconds until the reset, rounded up (what `Retry-After` and `RateLimit-Reset` carry).
    pub fn reset_secs(&self) -> u64 {
        self.reset_after.as_millis().div_ceil(1000) as u64
    }

    /// Header values for the answer: `RateLimit-Limit`, `RateLimit-Remaining`,
    /// `RateLimit-Reset` (seconds), plus `Retry-After` when refused.
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        let mut h = vec![
            ("ratelimit-limit", self.limit.to_string()),
            ("ratelimit-remaining", self.remaining.to_string()),
            ("ratelimit-reset", self.reset_secs().to_string()),
        ];
        if !self.allowed {
            h.push(("retry-after", self.reset_secs().max(1).to_string()));
        }
        h
    }
}

/// The answer of [`Limit::hit`]: the count including this hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub count: u64,
    pub reset_after: Duration,
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// Writes `$n` placeholders as the backend wants them.
fn stmt(backend: DatabaseBackend, sql: &str, values: Vec<Value>) -> Statement {
    let sql = match backend {
        DatabaseBackend::Postgres => sql.to_owned(),
        _ => sql.replace('$', "?"),
    };
    Statement::from_sql_and_values(backend, sql, values)
}

const UPSERT: &str = "INSERT INTO rate_limits (bucket, hits, reset_at) VALUES ($1, $2, $3) \
     ON CONFLICT (bucket) DO UPDATE SET \
     hits = CASE WHEN rate_limits.reset_at <= $4 THEN excluded.hits ELSE rate_limits.hits + excluded.hits END, \
     reset_at = CASE WHEN rate_limits.reset_at <= $4 THEN excluded.reset_at ELSE rate_limits.reset_at END";

impl Limit {
    pub const fn new(name: &'static str, max: u32, window: Duration) -> Self {
        Self { name, max, window }
    }

    /// The same limit with another maximum (limits whose size comes from configuration).
    pub const fn with_max(self, max: u32) -> Self {
        Self { max, ..self }
    }

    /// The row key for `subject`.
    pub fn bucket(&self, subject: &str) -> String {
        if subject.len() <= MAX_SUBJECT {
            format!("{}:{subject}", self.name)
        } else {
            format!("{}:#{}", self.name, hex::encode(Sha256::digest(subject.as_bytes())))
        }
    }

    fn window_ms(&self) -> i64 {
        i64::try_from(self.window.as_millis()).unwrap_or(i64::MAX / 4)
    }

    fn decision(&self, allowed: bool, used: i64, reset_at: i64, now: i64) -> Decision {
        let used = if reset_at <= now { 0 } else { used.max(0) as u64 };
        Decision {
            allowed,
            limit: self.max,
            used,
            remaining: u64::from(self.max).saturating_sub(used) as u32,
            reset_after: if used == 0 { Duration::ZERO } else { Duration::from_millis((reset_at - now).max(0) as u64) },
        }
    }

    /// Takes one unit for `subject` if it fits in the window.
    pub async fn consume(&self, db: &impl ConnectionTrait, subject: &str) -> Result<Decision, DbErr> {
        self.consume_n(db, subject, 1).await
    }

    /// Takes `n` units for `subject` if they all fit; otherwise takes nothing.
    pub async fn consume_n(&self, db: &impl ConnectionTrait, subject: &str, n: u32) -> Result<Decision, DbErr> {
        let now = now_ms();
        if n > self.max {
            let mut d = self.peek(db, subject).await?;
            d.allowed = false;
            return Ok(d);
        }
        let bucket = self.bucket(subject);
        let sql = format!(
            "{UPSERT} WHERE rate_limits.reset_at <= $4 OR rate_limits.hits + excluded.hits <= $5 RETURNING hits, reset_at"
        );
        let values = vec![
            bucket.clone().into(),
            i64::from(n).into(),
            (now + self.window_ms()).into(),
            now.into(),
            i64::from(self.max).into(),
        ];
        let row = db.query_one_raw(stmt(db.get_database_backend(), &sql, values)).await?;
        sweep_now_and_then(db, now).await;
        match row {
            Some(row) => {
                let hits: i64 = row.try_get("", "hits")?;
                let reset_at: i64 = row.try_get("", "reset_at")?;
                Ok(self.decision(true, hits, reset_at, now))
            }
            // The row exists and the units do not fit: nothing was written.
            None => {
                let mut d = self.peek(db, subject).await?;
                d.allowed = false;
                Ok(d)
            }
        }
    }

    /// Counts one unit for `subject` whatever the total, and returns the total.
    pub async fn hit(&self, db: &impl ConnectionTrait, subject: &str) -> Result<Tally, DbErr> {
        let now = now_ms();
        let sql = format!("{UPSERT} RETURNING hits, reset_at");
        let values = vec![self.bucket(subject).into(), 1i64.into(), (now + self.window_ms()).into(), now.into()];
        let row = db
            .query_one_raw(stmt(db.get_database_backend(), &sql, values))
            .await?
            .ok_or_else(|| DbErr::RecordNotFound("rate_limits upsert returned no row".into()))?;
        sweep_now_and_then(db, now).await;
        let hits: i64 = row.try_get("", "hits")?;
        let reset_at: i64 = row.try_get("", "reset_at")?;
        Ok(Tally { count: hits.max(0) as u64, reset_after: Duration::from_millis((reset_at - now).max(0) as u64) })
    }

    /// The bucket's state; `allowed` says whether one more unit would fit.
    pub async fn peek(&self, db: &impl ConnectionTrait, subject: &str) -> Result<Decision, DbErr> {
        let now = now_ms();
        let row = rate_limit::Entity::find_by_id(self.bucket(subject)).one(db).await?;
        let (hits, reset_at) = row.map_or((0, 0), |r| (r.hits, r.reset_at));
        let mut d = self.decision(true, hits, reset_at, now);
        d.allowed = d.remaining > 0;
        Ok(d)
    }

    /// Gives `n` units back to `subject` in the current window (a reserved job failed, or
    /// an attempt turned out well). Never goes below zero; a window that has ended is left alone.
    pub async fn refund(&self, db: &impl ConnectionTrait, subject: &str, n: u32) -> Result<(), DbErr> {
        let sql = "UPDATE rate_limits SET hits = CASE WHEN hits > $2 THEN hits - $2 ELSE 0 END \
                   WHERE bucket = $1 AND reset_at > $3";
        let values = vec![self.bucket(subject).into(), i64::from(n).into(), now_ms().into()];
        db.execute_raw(stmt(db.get_database_backend(), sql, values)).await?;
        Ok(())
    }

    /// Forgets `subject`'s bucket.
    pub async fn clear(&self, db: &impl ConnectionTrait, subject: &str) -> Result<(), DbErr> {
        rate_limit::Entity::delete_by_id(self.bucket(subject)).exec(db).await?;
        Ok(())
    }

    /// Forgets the buckets of every subject that starts with `prefix` (letters, digits and
    /// `|` only: subjects that short are never hashed, see [`Limit::bucket`]).
    pub async fn clear_prefix(&self, db: &impl ConnectionTrait, prefix: &str) -> Result<(), DbErr> {
        debug_assert!(prefix.chars().all(|c| c.is_ascii_alphanumeric() || c == '|'));
        let sql = "DELETE FROM rate_limits WHERE bucket LIKE $1";
        let pattern = format!("{}%", self.bucket(prefix));
        db.execute_raw(stmt(db.get_database_backend(), sql, vec![pattern.into()])).await?;
        Ok(())
    }
}

/// About one write in 256 also deletes rows whose window ended (failures are only logged:
/// a sweep is housekeeping, never a reason to fail a request).
async fn sweep_now_and_then(db: &impl ConnectionTrait, now: i64) {
    if rand::random::<u8>() != 0 {
        return;
    }
    let sql = "DELETE FROM rate_limits WHERE reset_at <= $1";
    if let Err(e) = db.execute_raw(stmt(db.get_database_backend(), sql, vec![now.into()])).await {
        tracing::warn!(error = %e, "sweeping expired rate limits failed");
    }
}

/// The address part of a throttle subject: an IPv4 address as is, an IPv6 address as its
/// /64 network (one subscriber usually holds a whole /64, so counting single IPv6
/// addresses would give each person 2^64 tries), and IPv4-mapped IPv6 as IPv4.
pub fn address_subject(ip: Option<std::net::IpAddr>) -> String {
    use std::net::IpAddr;
    match ip {
        None => "unknown".into(),
        Some(IpAddr::V4(v4)) => v4.to_string(),
        Some(IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_and_addresses() {
        let l = Limit::new("login-user", 8, Duration::from_secs(900));
        assert_eq!(l.bucket("alice"), "login-user:alice");
        let long = "x".repeat(500);
        assert!(l.bucket(&long).len() < 100);
        assert_eq!(address_subject("203.0.113.9".parse().ok()), "203.0.113.9");
        assert_eq!(address_subject("2001:db8:1:2:aaaa::1".parse().ok()), "2001:db8:1:2::/64");
        assert_eq!(address_subject("2001:db8:1:2:ffff::9".parse().ok()), "2001:db8:1:2::/64");
        assert_eq!(address_subject("::ffff:198.51.100.7".parse().ok()), "198.51.100.7");
        assert_eq!(address_subject(None), "unknown");
    }

    #[test]
    fn decisions_count_down_and_give_headers() {
        let l = Limit::new("t", 3, Duration::from_secs(60));
        let d = l.decision(false, 3, 10_500, 1_000);
        assert_eq!((d.remaining, d.reset_secs()), (0, 10));
        let h = d.headers();
        assert!(h.contains(&("retry-after", "10".into())), "{h:?}");
        let fresh = l.decision(true, 3, 500, 1_000);
        assert_eq!((fresh.used, fresh.remaining, fresh.reset_after), (0, 3, Duration::ZERO));
    }
}
