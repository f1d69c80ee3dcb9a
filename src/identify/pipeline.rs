//! One identification from prepared upload to stored result. The HTTP handler
//! (`routes::api::identify`) does the guards and the upload; everything after is here.
use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::time::Instant;

use super::engine::{Engine, EngineError, EngineId, MediaKind, Mode};
use super::engines::key_variable;
use super::media::{MediaError, PrepOptions};
use super::metadata::{Cache, Omdb, Tmdb};
use super::registry::EngineSet;
use super::result::{AudioAnalysis, IdentificationResult};
use super::select::{self, PlanError};
use super::transcribe::Transcriber;
use super::upload::{Upload, WorkDir};
use super::{engines, enrich, media, store};
use crate::error::AppError;
use crate::services::settings::{SettingsExt, SettingsMap};
use crate::state::AppState;

pub const NO_ENGINE: &str = "No identification engine is configured on this server. The operator must set at least one of \
GEMINI_API_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY or XAI_API_KEY (or index a library with `reelfind library add PATH`), \
and allow that engine in the admin settings (allowed_engines).";

/// The engines of this request: cloud engines built from config and current settings, with
/// registered engines (Library, fakes) taking precedence.
pub fn engine_set(state: &AppState, settings: &SettingsMap) -> EngineSet {
    let mut map: BTreeMap<EngineId, Arc<dyn Engine>> = engines::build(&state.config.identify, settings, &state.http);
    for id in EngineId::ALL {
        if let Some(e) = state.engines.registered(id) {
            map.insert(id, e);
        }
    }
    EngineSet::new(map, settings.text("allowed_engines"))
}

/// The request's deadline length: 120 s, 240 s for a clip with audio analysis (configurable).
pub fn deadline_secs(state: &AppState, kind: MediaKind, use_audio: bool) -> u64 {
    let base = state.config.identify.timeout_secs;
    if kind == MediaKind::Video && use_audio { base * 2 } else { base }
}

pub fn timeout_error(secs: u64) -> AppError {
    AppError::Timeout(format!(
        "Identification timed out after {secs} seconds. Please try again with a smaller file or a shorter clip."
    ))
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
}

fn plan_error(e: PlanError) -> AppError {
    match e {
        PlanError::NoneConfigured => AppError::ServiceUnavailable(NO_ENGINE.into()),
        PlanError::NotAvailable(id) => AppError::ServiceUnavailable(format!(
            "The {id} engine is not available on this server. The operator must set {} to enable it; \
             or choose Auto to use an available engine.",
            key_variable(id)
        )),
        PlanError::NotAllowed(name) => AppError::Forbidden(format!(
            "The {name} engine is disabled by the administrator. Please choose another engine."
        )),
    }
}

/// Checks, before the costly media step, that the mode can run at all.
pub fn precheck(set: &EngineSet, mode: Mode) -> Result<(), AppError> {
    match mode {
        Mode::Engine(id) => {
            if !set.allows(id.as_str()) {
                return Err(plan_error(PlanError::NotAllowed(id.as_str().into())));
            }
            if set.usable(id).is_none() {
                return Err(plan_error(PlanError::NotAvailable(id)));
            }
        }
        Mode::Ensemble if !set.allows("ensemble") => return Err(plan_error(PlanError::NotAllowed("ensemble".into()))),
        _ => {
            if set.all_usable().is_empty() {
                return Err(plan_error(PlanError::NoneConfigured));
            }
        }
    }
    Ok(())
}

fn engine_error(e: EngineError) -> AppError {
    use axum::http::StatusCode;
    match e {
        EngineError::NotConfigured(m) => AppError::ServiceUnavailable(m),
        EngineError::Timeout => {
            AppError::Timeout("The AI engine timed out before answering. Please try again in a moment.".into())
        }
        EngineError::RateLimited => AppError::ServiceUnavailable(
            "The AI engine is busy right now (rate limited). Please try again in a minute or choose another engine."
                .into(),
        ),
        EngineError::Provider { status, message } => {
            tracing::error!(status, %message, "engine rejected the request");
            AppError::with_body(
                StatusCode::BAD_GATEWAY,
                "The AI engine could not process this request. Please try again or choose another engine.",
                serde_json::json!({}),
            )
        }
        EngineError::Unavailable(m) | EngineError::BadAnswer(m) => {
            tracing::error!(%m, "engine failed");
            AppError::with_body(
                StatusCode::BAD_GATEWAY,
                "The AI engine is temporarily unavailable. Please try again in a moment.",
                serde_json::json!({}),
            )
        }
        EngineError::Refused(m) => {
            tracing::warn!(%m, "engine refused");
            AppError::with_body(
                StatusCode::BAD_GATEWAY,
                "The AI engine declined to analyse this media. Please try a different frame.",
                serde_json::json!({}),
            )
        }
        EngineError::Unsupported(m) => AppError::Unprocessable(m),
    }
}

pub fn no_match() -> AppError {
    AppError::with_body(
        axum::http::StatusCode::NOT_FOUND,
        "We could not identify this scene. Try a clearer image, a frame with recognizable actors or scenery, or a different frame.",
        serde_json::json!({"noMatch": true}),
    )
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

/// Runs media prep, engines and enrichment, and stores the result.
pub async fn run(state: &AppState, settings: &SettingsMap, req: Request<'_>) -> Result<IdentificationResult, AppError> {
    let set = engine_set(state, settings);
    precheck(&set, req.mode)?;

    let t = Instant::now();
    let opts = PrepOptions {
        use_audio: req.use_audio,
        enhanced: req.enhanced,
        max_video_seconds: state.config.identify.max_video_seconds,
    };
    let mut sample = media::prepare(req.upload, req.work, &opts).await.map_err(|e| match e {
        MediaError::Invalid(m) | MediaError::Limit(m) => AppError::Unprocessable(m),
        MediaError::Internal(m) => AppError::Internal(anyhow::anyhow!(m)),
    })?;
    let media_ms = ms_since(t);

    let t = Instant::now();
    let audio = if sample.kind == MediaKind::Video {
        Some(analyse_audio(state, settings, &mut sample, req.use_audio, req.deadline).await)
    } else {
        None
    };
    let transcribe_ms = ms_since(t);

    let t = Instant::now();
    // Engines must finish early enough to leave time for the catalog and storing: a hung
    // provider then costs its own vote, not the whole request.
    let engine_deadline = engines_deadline(req.started, req.deadline);
    let outcome = select::run(
        req.mode,
        &set,
        settings.text("ai_primary_model"),
        req.user_default.as_deref(),
        &sample,
        engine_deadline,
    )
    .await
    .map_err(plan_error)?
    .map_err(engine_error)?;
    let engines_ms = ms_since(t);
    let Some(best) = outcome.best.clone() else {
        return Err(no_match());
    };

    let t = Instant::now();
    let cache = Cache::new(state.db.clone());
    let tmdb = Tmdb::from_config(&state.config.identify, settings, &state.http, cache.clone());
    let omdb = Omdb::from_config(&state.config.identify, settings, &state.http, cache);
    let mut result = IdentificationResult::default();
    enrich::enrich(&mut result, &best, tmdb.as_ref(), omdb.as_ref(), req.deadline).await;
    let enrich_ms = ms_since(t);

    result.identification_id = store::new_id();
    result.engine = outcome.engine;
    result.mode = req.mode.as_str().into();
    result.model = outcome.model;
    result.engine_votes = outcome.votes;
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
    store::insert(
        &state.db,
        store::NewRow {
            user_id: req.user_id,
            content_hash: &req.upload.sha256,
            mode: req.mode.as_str(),
            result: &result,
        },
    )
    .await?;
    Ok(result)
}

/// A stored answer for the same bytes and mode, stored again as a new identification of
/// this caller (own id, own history row), with no engine paid.
pub async fn reuse(state: &AppState, req: &Request<'_>) -> Result<Option<IdentificationResult>, AppError> {
    let Some(mut r) = store::find_reusable(&state.db, &req.upload.sha256, req.mode.as_str()).await? else {
        return Ok(None);
    };
    r.identification_id = store::new_id();
    r.cached = true;
    r.timings = Default::default();
    r.timings.upload_ms = req.upload_ms;
    r.timings.total_ms = ms_since(req.started);
    r.created_at = chrono::Utc::now().to_rfc3339();
    store::insert(
        &state.db,
        store::NewRow { user_id: req.user_id, content_hash: &req.upload.sha256, mode: req.mode.as_str(), result: &r },
    )
    .await?;
    Ok(Some(r))
}

/// Speech to text of the clip when asked for; the transcript goes into the sample.
async fn analyse_audio(
    state: &AppState,
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
    let Some(t) = Transcriber::pick(&state.config.identify, settings, &state.http) else {
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
