//! Identifications rewritten to a corrected title: the owner's own pick at once, everyone
//! else's when the corrections rule or an administrator changes a remembered answer. The
//! rewritten result is the catalog's full result for the new title (details, cast, where to
//! watch), keeping what belongs to the identification itself (its id and date, the engines'
//! votes, the sound analysis, the timings) and saying what it said before (`correction`).
use sea_orm::{ActiveModelTrait, ConnectionTrait, Set};
use tokio::time::Instant;

use crate::entities::identification;
use crate::identify::engine::{Candidate, TitleKind};
use crate::identify::enrich;
use crate::identify::metadata::{Cache, Omdb, Tmdb};
use crate::identify::pipeline::Deps;
use crate::identify::result::{Correction, IdentificationResult};
use crate::services::feedback::Title;
use crate::services::settings::SettingsMap;

/// How long the catalog may take for one corrected result.
const CATALOG_SECS: u64 = 20;

/// The catalog's result for `title` (what an engine naming it exactly would give).
pub async fn catalog_result(deps: Deps<'_>, settings: &SettingsMap, title: &Title) -> IdentificationResult {
    let cache = Cache::new(deps.db.clone());
    let tmdb = Tmdb::from_config(deps.config, settings, deps.http, cache.clone());
    let omdb = Omdb::from_config(deps.config, settings, deps.http, cache);
    let candidate = Candidate {
        title: title.title.clone(),
        year: title.year.as_deref().and_then(|y| y.get(..4)).and_then(|y| y.parse().ok()),
        kind: if title.media_type == "tv" { TitleKind::Tv } else { TitleKind::Movie },
        confidence: 1.0,
        tmdb_id: Some(title.tmdb_id),
        ..Default::default()
    };
    let mut r = IdentificationResult::default();
    let deadline = Instant::now() + std::time::Duration::from_secs(CATALOG_SECS);
    enrich::enrich(&mut r, &candidate, tmdb.as_ref(), omdb.as_ref(), deadline).await;
    r
}

/// Rewrites `row` to the catalog facts of `fresh`, corrected `by` (`you`, `people`,
/// `admin`); `confidence` replaces the stored one when given. The new result.
pub async fn rewrite(
    db: &impl ConnectionTrait,
    row: identification::Model,
    fresh: &IdentificationResult,
    by: &str,
    confidence: Option<f64>,
) -> Result<IdentificationResult, sea_orm::DbErr> {
    let old: IdentificationResult = serde_json::from_str(&row.result).unwrap_or_default();
    let mut r = fresh.clone();
    r.identification_id = old.identification_id.clone();
    r.engine = old.engine.clone();
    r.mode = old.mode.clone();
    r.model = old.model.clone();
    r.engine_votes = old.engine_votes.clone();
    r.candidates = old.candidates.clone();
    r.audio_analysis_results = old.audio_analysis_results.clone();
    r.media_kind = old.media_kind.clone();
    r.timings = old.timings.clone();
    r.created_at = old.created_at.clone();
    r.from_memory = old.from_memory.clone();
    r.cached = old.cached;
    r.reasons = Vec::new();
    r.confidence = confidence.unwrap_or(old.confidence);
    r.confidence_score = r.confidence;
    // What it said first stays the "before" through later corrections.
    r.correction = Some(Correction {
        by: by.into(),
        previous_title: old.correction.as_ref().map(|c| c.previous_title.clone()).unwrap_or(old.title.clone()),
        previous_year: old.correction.as_ref().map(|c| c.previous_year.clone()).unwrap_or(old.year.clone()),
        at: chrono::Utc::now().to_rfc3339(),
    });
    let mut am: identification::ActiveModel = row.into();
    am.title = Set(r.title.chars().take(300).collect());
    am.year = Set(r.year.clone().map(|y| y.chars().take(32).collect()));
    am.media_type = Set(r.media_type.clone());
    am.poster_url = Set(r.poster_url.clone().filter(|u| u.len() <= 1000));
    am.rating = Set(r.rating);
    am.confidence = Set(r.confidence);
    am.result = Set(serde_json::to_string(&r).unwrap_or_else(|_| "{}".into()));
    am.update(db).await?;
    Ok(r)
}

/// After a remembered answer changed from `from` to `to` (`by` the rule or an
/// administrator): rewrites every linked identification that showed `from` and whose owner
/// did not say otherwise. How many were rewritten.
pub async fn apply(
    deps: Deps<'_>,
    settings: &SettingsMap,
    memory_id: i64,
    from: &Title,
    to: &Title,
    by: &str,
) -> Result<usize, sea_orm::DbErr> {
    let rows = crate::services::feedback::affected(deps.db, memory_id, from).await?;
    if rows.is_empty() {
        return Ok(0);
    }
    let fresh = catalog_result(deps, settings, to).await;
    let n = rows.len();
    for row in rows {
        rewrite(deps.db, row, &fresh, by, None).await?;
    }
    Ok(n)
}
