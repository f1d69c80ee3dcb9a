//! What the admin's Insight tab shows: counts over the stored analytics events and
//! identifications of the last 7, 30 or 90 days (UTC days, today included). Grouping runs in
//! the database on plain columns, so it is the same on SQLite and PostgreSQL; only engine
//! latencies are computed here (percentiles), from at most [`MAX_RUNS`] engine runs.
use std::collections::BTreeMap;

use chrono::{Duration, NaiveDate, Utc};
use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, Order, QueryFilter, QueryOrder, QuerySelect};
use serde::Serialize;
use ts_rs::TS;

use crate::entities::{analytics_event, identification};

/// The periods the tab offers.
pub const PERIODS: [i64; 3] = [7, 30, 90];
/// Engine runs read for latency percentiles (newest first).
pub const MAX_RUNS: u64 = 200_000;
const TOP: u64 = 10;

#[derive(Serialize, Debug, Default, Clone, PartialEq, utoipa::ToSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct Day {
    /// `YYYY-MM-DD` (UTC).
    pub day: String,
    pub page_views: u64,
    /// Identifications that found a title.
    pub identified: u64,
    /// Identifications that ran but found nothing, failed or timed out.
    pub not_identified: u64,
}

#[derive(Serialize, Debug, Default, Clone, PartialEq, utoipa::ToSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct EngineStats {
    pub engine: String,
    pub runs: u64,
    pub identified: u64,
    pub no_match: u64,
    /// Failed or timed out.
    pub failed: u64,
    /// `identified / runs`, 0..=1.
    pub success_rate: f64,
    pub median_ms: u64,
    pub p95_ms: u64,
}

#[derive(Serialize, Debug, Default, Clone, PartialEq, utoipa::ToSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct Conversion {
    /// Guests' identifications that found a title (each guest has one free try).
    pub guest_identifications: u64,
    /// Guests stopped at the free limit and asked to sign in.
    pub guest_limit_reached: u64,
    pub sign_ups: u64,
    /// Sign-ups from a browser that had identified as a guest.
    pub sign_ups_after_guest: u64,
    /// `sign_ups_after_guest / guest_identifications` (0 when there were none), at most 1.
    pub rate: f64,
}

#[derive(Serialize, Debug, Default, Clone, PartialEq, utoipa::ToSchema, TS)]
pub struct Count {
    pub label: String,
    pub count: u64,
}

#[derive(Serialize, Debug, Default, Clone, PartialEq, utoipa::ToSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    pub page_views: u64,
    pub identified: u64,
    pub not_identified: u64,
    /// Refused before any engine ran: guest limit, rate limit, bad file, no engine.
    pub refused: u64,
    pub sign_ups: u64,
}

#[derive(Serialize, Debug, Default, Clone, PartialEq, utoipa::ToSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct Insight {
    pub days: i64,
    pub from: String,
    pub to: String,
    /// The retention setting: events older than this many days are gone.
    pub retention_days: i64,
    pub totals: Totals,
    pub daily: Vec<Day>,
    pub engines: Vec<EngineStats>,
    pub conversion: Conversion,
    pub top_titles: Vec<Count>,
    pub top_pages: Vec<Count>,
    pub top_referrers: Vec<Count>,
    /// Page views with no referring site (typed, bookmarked, or from within this site).
    pub direct_page_views: u64,
    /// What people said of each engine's answers ("Was this right?").
    pub feedback: Vec<EngineFeedback>,
    /// The answer memory: answers given from it, and the engine calls it saved.
    pub memory: MemoryInsight,
}

/// "Was this right?" per engine.
#[derive(Serialize, Debug, Default, Clone, PartialEq, utoipa::ToSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct EngineFeedback {
    pub engine: String,
    pub confirmed: u64,
    pub corrected: u64,
    /// `confirmed / (confirmed + corrected)`, 0..=1.
    pub confirmed_rate: f64,
    /// `corrected / (confirmed + corrected)`, 0..=1.
    pub corrected_rate: f64,
}

/// The answer memory over the period.
#[derive(Serialize, Debug, Default, Clone, PartialEq, utoipa::ToSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct MemoryInsight {
    /// Identifications answered from memory.
    pub answered: u64,
    /// `answered / identified`, 0..=1.
    pub hit_rate: f64,
    /// Engine calls saved (one per answer from memory: the engine that first gave it).
    pub calls_saved: u64,
    /// Their estimated price, US dollars ([`ENGINE_CALL_USD`]).
    pub saved_usd: f64,
    /// Answers remembered in all (not only this period).
    pub remembered: u64,
    pub daily: Vec<MemoryDay>,
}

#[derive(Serialize, Debug, Default, Clone, PartialEq, utoipa::ToSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct MemoryDay {
    pub day: String,
    pub answered: u64,
    pub identified: u64,
    pub saved_usd: f64,
}

/// The estimated price of one identification call, by engine (US dollars): the tokens a
/// still costs (the providers' usage of the README's benchmark prompt: about 1,100-1,700
/// tokens in, 30-60 out) at list prices. OpenAI gpt-4.1-mini 1,105 x $0.40/M + 48 x
/// $1.60/M; Anthropic claude-sonnet 1,700 x $3/M + 55 x $15/M; Gemini 2.5 Flash 1,290 x
/// $0.30/M + 28 x $2.50/M; xAI Grok 1,100 x $3/M + 50 x $15/M; the ensemble all four.
pub const ENGINE_CALL_USD: &[(&str, f64)] =
    &[("openai", 0.000_52), ("anthropic", 0.005_93), ("google", 0.000_46), ("xai", 0.004_05), ("ensemble", 0.010_96)];

/// [`ENGINE_CALL_USD`] of `engine` (0 for the Library and unknown names).
pub fn call_usd(engine: &str) -> f64 {
    ENGINE_CALL_USD.iter().find(|(e, _)| *e == engine).map_or(0.0, |(_, usd)| *usd)
}

/// `days` if it is one of [`PERIODS`], else 30.
pub fn period(days: Option<i64>) -> i64 {
    days.filter(|d| PERIODS.contains(d)).unwrap_or(30)
}

fn nearest_rank(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn is_refusal(outcome: &str) -> bool {
    matches!(outcome, "guest_limit" | "rate_limited" | "rejected" | "unavailable")
}

pub async fn load(db: &impl ConnectionTrait, days: i64, retention_days: i64) -> Result<Insight, sea_orm::DbErr> {
    use analytics_event::Column as E;
    let today = Utc::now().date_naive();
    let first: NaiveDate = today - Duration::days(days - 1);
    let from = first.format("%Y-%m-%d").to_string();
    let since = first.and_hms_opt(0, 0, 0).map(|t| t.and_utc()).unwrap_or_else(Utc::now);
    let in_period = || analytics_event::Entity::find().filter(E::CreatedAt.gte(since));
    let count = || Expr::col(E::Id).count();

    // Page views and identifications per day and outcome.
    let rows: Vec<(Option<String>, String, Option<String>, i64)> = in_period()
        .filter(E::Action.is_in(["page_view", "identify"]))
        .select_only()
        .column(E::Day)
        .column(E::Action)
        .column(E::Outcome)
        .column_as(count(), "n")
        .group_by(E::Day)
        .group_by(E::Action)
        .group_by(E::Outcome)
        .into_tuple()
        .all(db)
        .await?;
    let mut by_day: BTreeMap<String, Day> = (0..days)
        .map(|i| {
            let d = (first + Duration::days(i)).format("%Y-%m-%d").to_string();
            (d.clone(), Day { day: d, ..Default::default() })
        })
        .collect();
    let mut totals = Totals::default();
    for (day, action, outcome, n) in rows {
        let n = u64::try_from(n).unwrap_or(0);
        let slot = day.and_then(|d| by_day.get_mut(&d));
        let outcome = outcome.unwrap_or_default();
        match (action.as_str(), outcome.as_str()) {
            ("page_view", _) => {
                totals.page_views += n;
                if let Some(s) = slot {
                    s.page_views += n;
                }
            }
            (_, "identified") => {
                totals.identified += n;
                if let Some(s) = slot {
                    s.identified += n;
                }
            }
            (_, o) if is_refusal(o) => totals.refused += n,
            _ => {
                totals.not_identified += n;
                if let Some(s) = slot {
                    s.not_identified += n;
                }
            }
        }
    }

    // Engine runs: counts by outcome and latency percentiles.
    let runs: Vec<(Option<String>, Option<String>, Option<i64>)> = in_period()
        .filter(E::Action.eq("engine_run"))
        .select_only()
        .column(E::Engine)
        .column(E::Outcome)
        .column(E::DurationMs)
        .order_by_desc(E::Id)
        .limit(MAX_RUNS)
        .into_tuple()
        .all(db)
        .await?;
    let mut engines: BTreeMap<String, (EngineStats, Vec<u64>)> = BTreeMap::new();
    for (engine, outcome, ms) in runs {
        let engine = engine.unwrap_or_else(|| "unknown".into());
        let (s, times) =
            engines.entry(engine.clone()).or_insert_with(|| (EngineStats { engine, ..Default::default() }, Vec::new()));
        s.runs += 1;
        match outcome.as_deref() {
            Some("identified") => s.identified += 1,
            Some("no_match") => s.no_match += 1,
            _ => s.failed += 1,
        }
        times.push(u64::try_from(ms.unwrap_or(0)).unwrap_or(0));
    }
    let mut engines: Vec<EngineStats> = engines
        .into_values()
        .map(|(mut s, mut times)| {
            times.sort_unstable();
            s.success_rate = if s.runs == 0 { 0.0 } else { s.identified as f64 / s.runs as f64 };
            s.median_ms = nearest_rank(&times, 0.5);
            s.p95_ms = nearest_rank(&times, 0.95);
            s
        })
        .collect();
    engines.sort_by(|a, b| b.runs.cmp(&a.runs).then_with(|| a.engine.cmp(&b.engine)));

    // Guest to account.
    let counted = |action: &'static str, outcome: &'static str| {
        in_period().filter(E::Action.eq(action)).filter(E::Outcome.eq(outcome))
    };
    use sea_orm::PaginatorTrait;
    let guest_identifications = counted("identify", "identified").filter(E::UserId.is_null()).count(db).await?;
    let guest_limit_reached = counted("identify", "guest_limit").count(db).await?;
    let sign_ups = in_period().filter(E::Action.eq("sign_up")).count(db).await?;
    let sign_ups_after_guest = counted("sign_up", "after_guest").count(db).await?;
    totals.sign_ups = sign_ups;
    let rate = if guest_identifications == 0 {
        0.0
    } else {
        (sign_ups_after_guest as f64 / guest_identifications as f64).min(1.0)
    };
    let conversion = Conversion { guest_identifications, guest_limit_reached, sign_ups, sign_ups_after_guest, rate };

    // Top pages and referrers.
    let top = |col: E| async move {
        let rows: Vec<(Option<String>, i64)> = in_period()
            .filter(E::Action.eq("page_view"))
            .filter(col.is_not_null())
            .select_only()
            .column(col)
            .column_as(count(), "n")
            .group_by(col)
            .order_by(count(), Order::Desc)
            .order_by(col, Order::Asc)
            .limit(TOP)
            .into_tuple()
            .all(db)
            .await?;
        Ok::<_, sea_orm::DbErr>(
            rows.into_iter()
                .map(|(l, n)| Count { label: l.unwrap_or_default(), count: u64::try_from(n).unwrap_or(0) })
                .collect(),
        )
    };
    let top_pages = top(E::Path).await?;
    let top_referrers = top(E::Referrer).await?;
    let direct_page_views =
        in_period().filter(E::Action.eq("page_view")).filter(E::Referrer.is_null()).count(db).await?;

    // Top identified titles, from the identifications themselves.
    use identification::Column as I;
    let titles: Vec<(String, Option<String>, i64)> = identification::Entity::find()
        .filter(I::CreatedAt.gte(since))
        .select_only()
        .column(I::Title)
        .column(I::Year)
        .column_as(Expr::col(I::Id).count(), "n")
        .group_by(I::Title)
        .group_by(I::Year)
        .order_by(Expr::col(I::Id).count(), Order::Desc)
        .order_by(I::Title, Order::Asc)
        .limit(TOP)
        .into_tuple()
        .all(db)
        .await?;
    let top_titles = titles
        .into_iter()
        .map(|(title, year, n)| Count {
            label: match year {
                Some(y) if !y.is_empty() => format!("{title} ({y})"),
                _ => title,
            },
            count: u64::try_from(n).unwrap_or(0),
        })
        .collect();

    // "Was this right?" per engine.
    let feedback = crate::services::feedback::by_engine(db, since)
        .await?
        .into_iter()
        .map(|(engine, confirmed, corrected)| {
            let n = Ord::max(confirmed + corrected, 1) as f64;
            EngineFeedback {
                engine,
                confirmed,
                corrected,
                confirmed_rate: confirmed as f64 / n,
                corrected_rate: corrected as f64 / n,
            }
        })
        .collect();

    // The answer memory: its answers per day and the engine calls they saved.
    let hits: Vec<(Option<String>, Option<String>, i64)> = in_period()
        .filter(E::Action.eq("memory_hit"))
        .select_only()
        .column(E::Day)
        .column(E::Engine)
        .column_as(count(), "n")
        .group_by(E::Day)
        .group_by(E::Engine)
        .into_tuple()
        .all(db)
        .await?;
    let mut memory = MemoryInsight {
        daily: by_day
            .values()
            .map(|d| MemoryDay { day: d.day.clone(), identified: d.identified, ..Default::default() })
            .collect(),
        ..Default::default()
    };
    for (day, engine, n) in hits {
        let n = u64::try_from(n).unwrap_or(0);
        let usd = call_usd(engine.as_deref().unwrap_or("")) * n as f64;
        memory.answered += n;
        memory.calls_saved += n;
        memory.saved_usd += usd;
        if let Some(d) = memory.daily.iter_mut().find(|d| Some(&d.day) == day.as_ref()) {
            d.answered += n;
            d.saved_usd += usd;
        }
    }
    memory.hit_rate =
        if totals.identified == 0 { 0.0 } else { (memory.answered as f64 / totals.identified as f64).min(1.0) };
    memory.remembered = crate::entities::remembered_answer::Entity::find().count(db).await?;

    Ok(Insight {
        feedback,
        memory,
        days,
        from,
        to: today.format("%Y-%m-%d").to_string(),
        retention_days,
        totals,
        daily: by_day.into_values().collect(),
        engines,
        conversion,
        top_titles,
        top_pages,
        top_referrers,
        direct_page_views,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        assert_eq!(nearest_rank(&[], 0.5), 0);
        assert_eq!(nearest_rank(&[7], 0.95), 7);
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(nearest_rank(&v, 0.5), 50);
        assert_eq!(nearest_rank(&v, 0.95), 95);
    }

    #[test]
    fn unknown_periods_become_30_days() {
        assert_eq!(period(Some(7)), 7);
        assert_eq!(period(Some(90)), 90);
        assert_eq!(period(Some(365)), 30);
        assert_eq!(period(None), 30);
    }
}
