//! Analytics events (SPEC "Analytics event"): what browsers report (page views, clicks on
//! streaming links, trailers) and what the server records itself (every identification,
//! every engine run inside it, every sign-up).
//!
//! Stored bounded and without raw IP addresses: only known metadata keys are kept, as short
//! strings; a page view keeps its path with ids and tokens replaced by placeholders and the
//! referring site's host only; anything that looks like an IPv4 or IPv6 address is masked;
//! the client's address is never written. Events are kept for the setting
//! `analytics_retention_days` (default 90): [`sweep`] deletes older ones, hourly on every
//! node and at once when an admin changes the setting, so no restart is needed.
use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use regex::Regex;
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, Set};
use serde_json::{Map, Value};

use crate::entities::analytics_event;
use crate::services::settings::SettingsMap;

/// The setting that bounds how long events are kept, in days.
pub const RETENTION_KEY: &str = "analytics_retention_days";
pub const DEFAULT_RETENTION_DAYS: i64 = 90;
/// Accepted range of the retention setting.
pub const RETENTION_RANGE: std::ops::RangeInclusive<i64> = 1..=3650;

/// Actions only the server records; a browser may not send them.
pub const SERVER_ACTIONS: &[&str] = &["identify", "engine_run", "sign_up", "memory_hit"];

/// Metadata keys a browser may send that are kept (SPEC: userAgent, url path, timestamp,
/// plus the extras of each event). `path`, `url` and `referrer` go to their own columns.
const METADATA_KEYS: &[&str] = &["title", "platform", "source", "userAgent", "timestamp", "loadMs"];
const MAX_VALUE: usize = 200;

/// One event to store. `metadata` holds only what [`client_event`] or the server put there.
#[derive(Debug, Default, Clone)]
pub struct NewEvent {
    pub action: String,
    pub resource_type: Option<String>,
    pub resource_id: Option<String>,
    pub metadata: Map<String, Value>,
    pub user_id: Option<i64>,
    pub path: Option<String>,
    pub referrer: Option<String>,
    pub engine: Option<String>,
    pub outcome: Option<String>,
    pub duration_ms: Option<i64>,
}

/// What a successful identification tells the analytics (a response extension set by the
/// identify handler).
#[derive(Debug, Clone)]
pub struct Identified {
    pub id: String,
    /// The engine whose answer won, or `ensemble`.
    pub engine: String,
    /// Reused from an earlier identification of the same file (no engine ran).
    pub cached: bool,
    /// Answered from the answer memory: the engine whose remembered answer it was (the call
    /// the memory saved; a `memory_hit` event records it).
    pub saved_engine: Option<String>,
}

/// The outcome name of a refused or failed identification, from its HTTP status code.
pub fn failure_outcome(status: u16, guest_limit: bool) -> &'static str {
    match status {
        403 if guest_limit => "guest_limit",
        404 => "no_match",
        408 | 504 => "timeout",
        429 => "rate_limited",
        400 | 403 | 413 | 415 | 422 => "rejected",
        503 => "unavailable",
        _ => "failed",
    }
}

/// One engine call inside an identification: which engine, how it ended, how long it took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineRun {
    /// The engine's name (`google`, `library`...).
    pub engine: &'static str,
    /// `identified` (at least one candidate), `no_match`, `timeout` or `failed`.
    pub outcome: &'static str,
    pub ms: u64,
}

/// Records one identification request (`identify`) and each engine run inside it
/// (`engine_run`). Failing to record is logged, never the request's failure.
pub async fn record_identification(
    db: &impl ConnectionTrait,
    user_id: Option<i64>,
    outcome: Result<Identified, &'static str>,
    runs: &[EngineRun],
    duration_ms: i64,
) {
    let saved = outcome.as_ref().ok().and_then(|d| d.saved_engine.clone());
    let main = match outcome {
        Ok(done) => NewEvent {
            action: "identify".into(),
            resource_type: Some("identification".into()),
            resource_id: Some(done.id),
            engine: Some(if done.cached { "cached".into() } else { done.engine }),
            outcome: Some("identified".into()),
            ..Default::default()
        },
        Err(outcome) => NewEvent {
            action: "identify".into(),
            // The engine that failed last, when one ran.
            engine: runs.last().map(|r| r.engine.to_owned()),
            outcome: Some(outcome.into()),
            ..Default::default()
        },
    };
    let memory_hit = saved.map(|engine| NewEvent {
        action: "memory_hit".into(),
        user_id,
        engine: Some(engine),
        outcome: Some("identified".into()),
        ..Default::default()
    });
    let events = std::iter::once(NewEvent { user_id, duration_ms: Some(duration_ms), ..main }).chain(memory_hit).chain(
        runs.iter().map(|r| NewEvent {
            action: "engine_run".into(),
            user_id,
            engine: Some(r.engine.to_owned()),
            outcome: Some(r.outcome.into()),
            duration_ms: Some(r.ms as i64),
            ..Default::default()
        }),
    );
    for e in events {
        if let Err(error) = record(db, e).await {
            tracing::warn!(%error, "could not record an identification event");
            return;
        }
    }
}

/// Records a new account (`sign_up`): how it was made, and whether this browser had
/// identified as a guest first (its signed guest cookie), which is the guest-to-account
/// conversion of the Insight tab.
pub async fn record_sign_up(db: &impl ConnectionTrait, user_id: i64, method: &str, was_guest: bool) {
    let mut metadata = Map::new();
    metadata.insert("method".into(), Value::String(method.into()));
    let e = NewEvent {
        action: "sign_up".into(),
        resource_type: Some("user".into()),
        user_id: Some(user_id),
        outcome: Some(if was_guest { "after_guest" } else { "direct" }.into()),
        metadata,
        ..Default::default()
    };
    if let Err(error) = record(db, e).await {
        tracing::warn!(%error, "could not record a sign-up event");
    }
}

/// The retention in days from the settings map (default when unset or unusable).
pub fn retention_days(settings: &SettingsMap) -> i64 {
    settings
        .get(RETENTION_KEY)
        .and_then(|v| v.trim().parse::<i64>().ok())
        .filter(|d| RETENTION_RANGE.contains(d))
        .unwrap_or(DEFAULT_RETENTION_DAYS)
}

pub async fn record(db: &impl ConnectionTrait, e: NewEvent) -> Result<(), sea_orm::DbErr> {
    record_at(db, e, Utc::now()).await
}

/// [`record`] at a given time (tests and backfills).
pub async fn record_at(db: &impl ConnectionTrait, e: NewEvent, at: DateTime<Utc>) -> Result<(), sea_orm::DbErr> {
    let metadata = (!e.metadata.is_empty()).then(|| Value::Object(e.metadata).to_string());
    analytics_event::ActiveModel {
        action: Set(e.action),
        resource_type: Set(e.resource_type),
        resource_id: Set(e.resource_id),
        metadata: Set(metadata),
        user_id: Set(e.user_id),
        created_at: Set(at),
        day: Set(Some(at.format("%Y-%m-%d").to_string())),
        path: Set(e.path),
        referrer: Set(e.referrer),
        engine: Set(e.engine),
        outcome: Set(e.outcome),
        duration_ms: Set(e.duration_ms),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(())
}

/// Deletes events older than the retention; returns how many.
pub async fn sweep(db: &impl ConnectionTrait, retention_days: i64) -> Result<u64, sea_orm::DbErr> {
    let cutoff = Utc::now() - chrono::Duration::days(retention_days);
    Ok(analytics_event::Entity::delete_many()
        .filter(analytics_event::Column::CreatedAt.lt(cutoff))
        .exec(db)
        .await?
        .rows_affected)
}

/// How often each node applies the retention.
pub const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(3600);

/// Applies the retention now and then every [`SWEEP_EVERY`], reading the setting each time
/// (an admin's change is also applied at once by the Insight tab), until `shutdown`.
pub fn spawn_retention_sweeper(
    db: sea_orm::DatabaseConnection,
    shutdown: tokio_util::sync::CancellationToken,
) -> tokio::task::JoinHandle<()> {
    let settings = crate::services::settings::SettingsStore::default();
    tokio::spawn(async move {
        let sweeps = async {
            loop {
                match settings.all(&db).await {
                    Ok(settings) => match sweep(&db, retention_days(&settings)).await {
                        Ok(0) => {}
                        Ok(n) => tracing::info!(deleted = n, "old analytics events deleted"),
                        Err(error) => tracing::warn!(%error, "analytics retention sweep failed"),
                    },
                    Err(error) => tracing::warn!(%error, "analytics retention sweep: settings unreadable"),
                }
                tokio::time::sleep(SWEEP_EVERY).await;
            }
        };
        tokio::select! {
            () = shutdown.cancelled() => {}
            _ = sweeps => {}
        }
    })
}

/// An event sent by a browser (`POST /api/analytics/track`), reduced to what is kept.
/// `public_host` is this site's host: a referrer on it is an internal navigation, not a
/// referring site.
pub fn client_event(
    action: &str,
    resource_type: Option<String>,
    resource_id: Option<String>,
    metadata: Option<&Value>,
    user_id: Option<i64>,
    public_host: &str,
) -> NewEvent {
    let meta = metadata.and_then(Value::as_object);
    let text = |key: &str| -> Option<String> {
        match meta?.get(key)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    };
    let mut kept = Map::new();
    for key in METADATA_KEYS {
        if let Some(v) = text(key) {
            let v = bounded(&mask_ips(&v), MAX_VALUE);
            if !v.is_empty() {
                kept.insert((*key).to_owned(), Value::String(v));
            }
        }
    }
    let path = text("path").or_else(|| text("url")).and_then(|p| page_path(&p));
    let referrer = text("referrer").and_then(|r| referrer_host(&r, public_host));
    // A page view's resource is its page: the reduced path, never what the browser sent
    // (a raw path can hold a token).
    let resource_id =
        if action == "page_view" { path.clone() } else { resource_id.map(|s| bounded(&mask_ips(&s), 128)) };
    NewEvent {
        action: action.to_owned(),
        resource_type: resource_type.map(|s| bounded(&mask_ips(&s), 64)),
        resource_id,
        metadata: kept,
        user_id,
        path,
        referrer,
        ..Default::default()
    }
}

fn bounded(s: &str, max: usize) -> String {
    s.trim().chars().filter(|c| !c.is_control()).take(max).collect()
}

static IPV4: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(?:\d{1,3}\.){3}\d{1,3}\b").expect("valid IPv4 pattern"));
/// Eight groups of hex digits, or groups on both sides of a `::`, or `::` and groups. (Not
/// clock times such as `10:00:00`, which have no `::` and fewer than eight groups.)
static IPV6: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}\b",
        r"|\b[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*::[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*\b",
        r"|(?:^|[^0-9a-z:])::[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*\b",
    ))
    .expect("valid IPv6 pattern")
});

/// Replaces anything shaped like an IP address with `[ip]`.
pub fn mask_ips(s: &str) -> String {
    let s = IPV4.replace_all(s, "[ip]");
    IPV6.replace_all(&s, "[ip]").into_owned()
}

/// A page path as the Insight tab counts it: no query or fragment, at most 200 characters,
/// the secret or per-person part of known routes replaced (`/verify-email/{token}`,
/// `/shared/{id}`), and any long token-like segment replaced by `{id}`.
pub fn page_path(raw: &str) -> Option<String> {
    let raw = raw.trim();
    // A full URL: keep its path only.
    let path =
        if raw.starts_with('/') { raw.to_owned() } else { url::Url::parse(raw).ok().map(|u| u.path().to_owned())? };
    let path = path.split(['?', '#']).next().unwrap_or("/");
    if !path.starts_with('/') || path.starts_with("//") {
        return None;
    }
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let mut out = String::new();
    for (i, seg) in segments.iter().enumerate() {
        let prev = if i > 0 { segments[i - 1] } else { "" };
        let replaced = match prev {
            "verify-email" => "{token}",
            "shared" => "{id}",
            _ if seg.len() >= 20 && seg.bytes().any(|b| b.is_ascii_digit()) => "{id}",
            _ => seg,
        };
        out.push('/');
        out.push_str(replaced);
    }
    if out.is_empty() {
        out.push('/');
    }
    let out = bounded(&mask_ips(&out), MAX_VALUE);
    (!out.is_empty()).then_some(out)
}

/// The referring site's host (without `www.`), or `None` for a direct visit, a link within
/// this site, or a referrer that is an IP address.
pub fn referrer_host(raw: &str, public_host: &str) -> Option<String> {
    let u = url::Url::parse(raw.trim()).ok()?;
    if !matches!(u.scheme(), "http" | "https") {
        return None;
    }
    let host = match u.host()? {
        url::Host::Domain(d) => d.to_ascii_lowercase(),
        url::Host::Ipv4(_) | url::Host::Ipv6(_) => return None,
    };
    if host.eq_ignore_ascii_case(public_host) {
        return None;
    }
    let host = host.strip_prefix("www.").unwrap_or(&host).to_owned();
    Some(bounded(&host, MAX_VALUE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_lose_queries_tokens_and_ids() {
        assert_eq!(page_path("/").as_deref(), Some("/"));
        assert_eq!(page_path("/blog/how-it-works?x=1#top").as_deref(), Some("/blog/how-it-works"));
        assert_eq!(page_path("/verify-email/abcdef").as_deref(), Some("/verify-email/{token}"));
        assert_eq!(page_path("/shared/AbCdEf0123456789xyzW").as_deref(), Some("/shared/{id}"));
        assert_eq!(page_path("/x/3f2a9c0e1d2b4a5f6e7d8c9b").as_deref(), Some("/x/{id}"));
        assert_eq!(page_path("https://reelfind.example/about?utm=1").as_deref(), Some("/about"));
        assert_eq!(page_path("/users/10.0.0.7").as_deref(), Some("/users/[ip]"));
        assert_eq!(page_path("//evil.example/"), None);
        assert_eq!(page_path("javascript:alert(1)"), None);
    }

    #[test]
    fn referrers_are_hosts_of_other_sites() {
        assert_eq!(
            referrer_host("https://www.google.com/search?q=secret", "reelfind.example").as_deref(),
            Some("google.com")
        );
        assert_eq!(referrer_host("https://reelfind.example/blog", "reelfind.example"), None);
        assert_eq!(referrer_host("http://192.168.1.20:8080/", "reelfind.example"), None);
        assert_eq!(referrer_host("http://[2001:db8::1]/", "reelfind.example"), None);
        assert_eq!(referrer_host("", "reelfind.example"), None);
        assert_eq!(referrer_host("android-app://com.google.android.gm/", "reelfind.example"), None);
    }

    #[test]
    fn ip_addresses_are_masked() {
        assert_eq!(mask_ips("from 203.0.113.9 now"), "from [ip] now");
        assert_eq!(mask_ips("v6 2001:db8:85a3::8a2e:370:7334 end"), "v6 [ip] end");
        assert_eq!(mask_ips("fe80::1"), "[ip]");
        assert_eq!(mask_ips("12:30:45 on 2026-11-24T10:00:00Z"), "12:30:45 on 2026-11-24T10:00:00Z");
        assert_eq!(mask_ips("std::io"), "std::io");
        assert_eq!(mask_ips("1:2:3:4:5:6:7:8"), "[ip]");
        assert_eq!(mask_ips("Heat (1995)"), "Heat (1995)");
    }

    #[test]
    fn client_events_keep_known_keys_only() {
        let meta = serde_json::json!({
            "path": "/?id=AbCdEf0123456789xyzW", "title": "Home", "referrer": "https://news.example.org/a?b",
            "ip": "203.0.113.9", "userAgent": "Mozilla/5.0 (X11) 198.51.100.4", "x": "y".repeat(5000)
        });
        let e = client_event("page_view", Some("page".into()), None, Some(&meta), None, "reelfind.example");
        assert_eq!(e.path.as_deref(), Some("/"));
        assert_eq!(e.referrer.as_deref(), Some("news.example.org"));
        assert!(!e.metadata.contains_key("ip") && !e.metadata.contains_key("x"));
        assert_eq!(e.metadata["userAgent"], "Mozilla/5.0 (X11) [ip]");
        assert_eq!(e.metadata["title"], "Home");
    }

    #[test]
    fn retention_falls_back_to_the_default() {
        let mut s = SettingsMap::new();
        assert_eq!(retention_days(&s), 90);
        s.insert(RETENTION_KEY.into(), "30".into());
        assert_eq!(retention_days(&s), 30);
        s.insert(RETENTION_KEY.into(), "0".into());
        assert_eq!(retention_days(&s), 90);
    }
}
