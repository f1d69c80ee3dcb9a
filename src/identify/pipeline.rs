//! One identification from prepared upload to stored result. The HTTP handler
//! (`routes::api::identify`) does the guards and the upload; everything after is here.
use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::admission::{Refused, Ticket};
use super::engine::{Engine, EngineError, EngineId, MediaKind, Mode};
use super::media::{MediaError, PrepOptions};
use super::metadata::{Cache, Omdb, Tmdb};
use super::public::PublicResult;
use super::registry::EngineSet;
use super::result::{AudioAnalysis, FromMemory, IdentificationResult};
use super::select::{self, PlanError};
use super::transcribe::Transcriber;
use super::upload::{Upload, WorkDir};
use super::{engines, enrich, media, memory, store};
use crate::config::IdentifyConfig;
use crate::services::settings::{SettingsExt, SettingsMap};

/// What the pipeline uses of the running server; the route lends it from its state.
#[derive(Clone, Copy)]
pub struct Deps<'a> {
    pub db: &'a sea_orm::DatabaseConnection,
    pub http: &'a reqwest::Client,
    pub config: &'a IdentifyConfig,
    /// Long-lived engines (the Library) that take precedence over the cloud ones.
    pub engines: &'a super::registry::EngineRegistry,
    pub admission: &'a super::admission::Admission,
    /// This node's copy of the answer memory.
    pub memory: &'a super::memory::store::Memory,
}

pub const NO_ENGINE: &str = "No identification engine is configured on this server. The operator must set at least one of \
GEMINI_API_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY or XAI_API_KEY (or index a library with `reelfind library add PATH`), \
and allow that engine in the admin settings (allowed_engines).";

/// The engines of this request: cloud engines built from config and current settings, with
/// registered engines (Library, fakes) taking precedence.
pub fn engine_set(deps: Deps<'_>, settings: &SettingsMap) -> EngineSet {
    let mut map: BTreeMap<EngineId, Arc<dyn Engine>> = engines::build(deps.config, settings, deps.http);
    for id in EngineId::ALL {
        if let Some(e) = deps.engines.registered(id) {
            map.insert(id, e);
        }
    }
    EngineSet::new(map, settings.text("allowed_engines"))
}

/// The request's deadline length: 120 s, 240 s for a clip with audio analysis (configurable).
pub fn deadline_secs(deps: Deps<'_>, kind: MediaKind, use_audio: bool) -> u64 {
    let base = deps.config.timeout_secs;
    if kind == MediaKind::Video && use_audio { base * 2 } else { base }
}

/// Why an identification did not produce a result. The route turns each case into its
/// status and the SPEC's words (`routes::api::identify_errors`).
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error("no engine can run: {0:?}")]
    Plan(PlanError),
    #[error(transparent)]
    Media(#[from] MediaError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Refused(#[from] Refused),
    /// Every engine answered, none recognised the scene.
    #[error("no engine recognised the scene")]
    NoMatch,
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
}

impl From<PlanError> for PipelineError {
    fn from(e: PlanError) -> Self {
        Self::Plan(e)
    }
}

pub struct Request<'a> {
    pub upload: &'a Upload,
    pub work: &'a WorkDir,
    pub mode: Mode,
    pub use_audio: bool,
    pub enhanced: bool,
    pub user_id: Option<i64>,
    pub user_default: Option<String>,
    pub started: Instant,
    pub deadline: Instant,
    pub upload_ms: u64,
    /// This request's place in the media queue (see `admission`).
    pub ticket: Ticket,
    /// Fires when nobody waits for the answer (deadline, client gone, shutdown).
    pub cancel: CancellationToken,
}

/// The engines' share of the request time: all but 15 % (at least 0.5 s, at most 15 s)
/// kept for enrichment and storing.
pub fn engines_deadline(started: Instant, deadline: Instant) -> Instant {
    let total = deadline.saturating_duration_since(started).as_secs_f64();
    let reserve = (total * 0.15).clamp(0.5, 15.0);
    deadline.checked_sub(std::time::Duration::from_secs_f64(reserve)).unwrap_or(deadline).max(Instant::now())
}

fn ms_since(t: Instant) -> u64 {
    t.elapsed().as_millis() as u64
}

/// Checks, before the costly media step, that the mode can run at all.
pub fn precheck(set: &EngineSet, mode: Mode) -> Result<(), PlanError> {
    match mode {
        Mode::Engine(id) => {
            if !set.allows(id.as_str()) {
                return Err(PlanError::NotAllowed(id.as_str().into()));
            }
            if set.usable(id).is_none() {
                return Err(PlanError::NotAvailable(id));
            }
        }
        Mode::Ensemble if !set.allows("ensemble") => return Err(PlanError::NotAllowed("ensemble".into())),
        _ => {
            if set.all_usable().is_empty() {
                return Err(PlanError::NoneConfigured);
            }
        }
    }
    Ok(())
}

/// Runs media prep, engines and enrichment, and stores the result.
pub async fn run(
    deps: Deps<'_>,
    settings: &SettingsMap,
    req: Request<'_>,
) -> Result<IdentificationResult, PipelineError> {
    let set = engine_set(deps, settings);
    precheck(&set, req.mode)?;

    let t = Instant::now();
    let opts = PrepOptions {
        use_audio: req.use_audio,
        enhanced: req.enhanced,
        max_video_seconds: deps.config.max_video_seconds,
        budget_mb: deps.admission.memory_budget_mb(),
        cancel: req.cancel.clone(),
    };
    // Wait for a job slot and this file's share of decode memory, then prepare it; the work
    // itself holds the permit until it has really ended.
    let weight =
        media::weight_mb(req.upload, deps.admission.memory_budget_mb(), deps.config.max_video_seconds, &req.cancel)
            .await?;
    let permit = req.ticket.start(weight, &req.cancel).await?;
    let mut sample = media::prepare(req.upload, req.work, &opts, permit).await?;
    req.ticket.finish();
    let media_ms = ms_since(t);

    let t = Instant::now();
    let audio = if sample.kind == MediaKind::Video {
        Some(analyse_audio(deps, settings, &mut sample, req.use_audio, req.deadline).await)
    } else {
        None
    };
    let transcribe_ms = ms_since(t);

    let t = Instant::now();
    // Engines must finish early enough to leave time for the catalog and storing: a hung
    // provider then costs its own vote, not the whole request.
    let engine_deadline = engines_deadline(req.started, req.deadline);
    // The memory: what this sample is remembered and looked up by, and what it recalls. A
    // failure here costs the memory's answer, never the identification.
    let probe = {
        let frames = sample.frames.clone();
        let clip = sample.kind == MediaKind::Video;
        tokio::task::spawn_blocking(move || memory::hashes::probe(&frames, clip)).await.unwrap_or_default()
    };
    let recall = deps.memory.recall(deps.db, &probe).await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "the answer memory could not be read");
        Default::default()
    });
    let remembered = recall.answer.as_ref().filter(|_| req.mode == Mode::Auto).map(memory_outcome);
    let outcome = select::run(
        req.mode,
        &set,
        settings.text("ai_primary_model"),
        req.user_default.as_deref(),
        &sample,
        engine_deadline,
        remembered,
    )
    .await??;
    let engines_ms = ms_since(t);
    let Some(best) = outcome.best.clone() else {
        return Err(PipelineError::NoMatch);
    };

    let t = Instant::now();
    let cache = Cache::new(deps.db.clone());
    let tmdb = Tmdb::from_config(deps.config, settings, deps.http, cache.clone());
    let omdb = Omdb::from_config(deps.config, settings, deps.http, cache);
    let mut result = IdentificationResult::default();
    enrich::enrich(&mut result, &best, tmdb.as_ref(), omdb.as_ref(), req.deadline).await;
    let enrich_ms = ms_since(t);

    result.identification_id = store::new_id();
    result.engine = outcome.engine;
    result.mode = req.mode.as_str().into();
    result.model = outcome.model;
    result.engine_votes = outcome.votes;
    result.candidates = outcome.ranked.iter().map(Into::into).collect();
    result.audio_analysis_results = audio;
    result.media_kind = match sample.kind {
        MediaKind::Image => "image",
        MediaKind::Video => "video",
    }
    .into();
    result.timings.upload_ms = req.upload_ms;
    result.timings.media_ms = media_ms;
    result.timings.transcribe_ms = transcribe_ms;
    result.timings.engines_ms = engines_ms;
    result.timings.enrich_ms = enrich_ms;
    result.timings.total_ms = ms_since(req.started);
    result.created_at = chrono::Utc::now().to_rfc3339();
    let memory_id = if result.engine == MEMORY {
        let row = recall.answer.as_ref();
        result.from_memory =
            row.map(|r| FromMemory { confirmations: r.supporters.max(0) as u32, engine: r.engine.clone() });
        row.map(|r| r.id)
    } else {
        remember(deps, &probe, &recall, &result).await
    };
    store::insert(
        deps.db,
        store::NewRow {
            user_id: req.user_id,
            content_hash: &req.upload.sha256,
            mode: req.mode.as_str(),
            result: &result,
            memory_id,
        },
    )
    .await?;
    Ok(result)
}

/// The engine name of answers given from the answer memory.
pub const MEMORY: &str = "memory";

/// A remembered answer as the engines' outcome: the catalog id, type, season and episode,
/// at the confidence it was given with. Enrichment then builds the same full result.
fn memory_outcome(r: &crate::entities::remembered_answer::Model) -> select::Outcome {
    let best = super::engine::Candidate {
        title: r.title.clone(),
        year: r.year.as_deref().and_then(|y| y.get(..4)).and_then(|y| y.parse().ok()),
        kind: if r.media_type == "tv" { super::engine::TitleKind::Tv } else { super::engine::TitleKind::Movie },
        season: r.season.map(|s| s as u32),
        episode: r.episode.map(|e| e as u32),
        confidence: r.confidence as f32,
        tmdb_id: Some(r.tmdb_id),
        reasons: vec!["Recognised from earlier identifications of the same scene.".into()],
        ..Default::default()
    };
    select::Outcome {
        ranked: vec![best.clone()],
        best: Some(best),
        engine: MEMORY.into(),
        model: None,
        votes: Vec::new(),
    }
}

/// Remembers an engine's answer for the sample's pictures, when it is worth remembering:
/// a title the catalog knows, given with at least `memory::MIN_CONFIDENCE`, by a cloud engine
/// (the Library answers for free anyway). An upload close to a remembered answer is linked to
/// that one instead of being remembered twice. The memory's id, if any.
async fn remember(
    deps: Deps<'_>,
    probe: &memory::Probe,
    recall: &memory::store::Recall,
    result: &IdentificationResult,
) -> Option<i64> {
    if let Some(near) = recall.near {
        return Some(near);
    }
    let tmdb_id = result.tmdb_id?;
    if result.engine == "library" || result.details_unavailable || result.confidence < memory::MIN_CONFIDENCE {
        return None;
    }
    let answer = memory::store::NewAnswer {
        tmdb_id,
        media_type: result.media_type.clone(),
        season: result.season,
        episode: result.episode,
        title: result.title.clone(),
        year: result.year.clone(),
        engine: result.engine.clone(),
        confidence: result.confidence,
        media_kind: result.media_kind.clone(),
    };
    match deps.memory.remember(deps.db, probe, answer).await {
        Ok(id) => id,
        Err(e) => {
            tracing::warn!(error = %e, "the answer could not be remembered");
            None
        }
    }
}

/// A stored answer for the same bytes and mode, stored again as a new identification of
/// this caller (own id, own history row), with no engine paid.
///
/// The caller's own earlier answer comes back whole (marked `cached`). Someone else's comes
/// back only as its public shape ([`PublicResult`]: the title and its catalog facts, never
/// their transcript, the engines' reasons or votes), built afresh as this caller's result
/// and not marked: nothing in it tells that another person identified this file. A Library
/// answer of someone else's is not reused at all: answering it again costs nothing paid, and
/// gives this caller a preview link of their own.
pub async fn reuse(deps: Deps<'_>, req: &Request<'_>) -> Result<Option<IdentificationResult>, PipelineError> {
    let Some(stored) = store::find_reusable(deps.db, &req.upload.sha256, req.mode.as_str(), req.user_id).await? else {
        return Ok(None);
    };
    let stored_memory = stored.memory_id;
    let mut r = if stored.is_owner(req.user_id) {
        let mut own = stored.result;
        own.cached = true;
        own
    } else {
        // A Library answer costs nothing to give again; a result its owner corrected to a
        // title of their choosing is theirs alone (the memory's rule decides for others).
        if stored.result.engine == "library" || stored.result.correction.as_ref().is_some_and(|c| c.by == "you") {
            return Ok(None);
        }
        let engine = stored.result.engine.clone();
        let model = stored.result.model.clone();
        let media_kind = stored.result.media_kind.clone();
        // The ranked titles are the engine's answer about the film (title, year, score),
        // nothing of the person; the request's `candidates=N` decides how many are shown.
        let candidates = stored.result.candidates.clone();
        let correction = stored.result.correction.clone();
        let from_memory = stored.result.from_memory.clone();
        let mut fresh = IdentificationResult::from(PublicResult::from(stored.result));
        fresh.correction = correction;
        fresh.from_memory = from_memory;
        fresh.engine = engine;
        fresh.model = model;
        fresh.media_kind = media_kind;
        fresh.candidates = candidates;
        fresh
    };
    r.reused = true;
    r.identification_id = store::new_id();
    r.mode = req.mode.as_str().into();
    r.timings = Default::default();
    r.timings.upload_ms = req.upload_ms;
    r.timings.total_ms = ms_since(req.started);
    r.created_at = chrono::Utc::now().to_rfc3339();
    store::insert(
        deps.db,
        store::NewRow {
            user_id: req.user_id,
            content_hash: &req.upload.sha256,
            mode: req.mode.as_str(),
            result: &r,
            memory_id: stored_memory,
        },
    )
    .await?;
    Ok(Some(r))
}

/// Speech to text of the clip when asked for; the transcript goes into the sample.
async fn analyse_audio(
    deps: Deps<'_>,
    settings: &SettingsMap,
    sample: &mut super::engine::Sample,
    requested: bool,
    deadline: Instant,
) -> AudioAnalysis {
    let mut a = AudioAnalysis { requested, has_audio: sample.has_audio, ..Default::default() };
    if !requested {
        a.summary = "Audio analysis was not requested.".into();
        return a;
    }
    if !sample.has_audio {
        a.summary = "This clip has no sound track, so it was identified from its pictures only.".into();
        return a;
    }
    let Some(wav) = sample.audio.clone() else {
        a.summary = "The sound track could not be read, so the clip was identified from its pictures only.".into();
        return a;
    };
    let Some(t) = Transcriber::pick(deps.config, settings, deps.http) else {
        a.summary = "Speech to text is not configured on this server (OPENAI_API_KEY or GEMINI_API_KEY), so the \
                     clip was identified from its pictures only."
            .into();
        return a;
    };
    a.engine = Some(t.label());
    // Leave the engines most of the time: transcription gets at most half of what is left.
    let budget = deadline.saturating_duration_since(Instant::now()) / 2;
    match t.transcribe(&wav, Instant::now() + budget).await {
        Ok(text) => {
            a.transcribed = true;
            if text.is_empty() {
                a.summary = "No dialogue was heard in the clip (music or silence).".into();
            } else {
                let words = text.split_whitespace().count();
                a.summary = format!("Heard {words} words of dialogue; the transcript was given to the AI engine.");
                a.transcript = Some(text.chars().take(4000).collect());
                sample.transcript = a.transcript.clone();
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, "transcription failed");
            a.summary = "Speech to text failed, so the clip was identified from its pictures only.".into();
        }
    }
    a
}
