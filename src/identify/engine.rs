//! The engine interface: what every identification engine receives and answers.
//!
//! An engine looks at a prepared [`Sample`] (never at the raw upload bytes of the HTTP
//! request) and answers with ranked [`Candidate`]s. Cloud engines (OpenAI, Anthropic,
//! Gemini, xAI) send the sample's frames and transcript to a vision model; the Library
//! engine matches the frames (or the original video) against the operator's own index.
//!
//! Rules every engine follows:
//! - **Deadline.** `identify` receives the instant by which it must have answered. It may
//!   stop early with [`EngineError::Timeout`]; the pipeline also cuts it off at the deadline,
//!   so an engine must be cancel-safe (dropping its future leaves nothing behind).
//! - **No guessing.** An engine that does not recognise the scene returns an
//!   [`EngineAnswer`] with no candidates; it never invents a title.
//! - **Confidence** is the engine's own calibrated estimate in `0.0..=1.0`. The ensemble
//!   combines confidences of engines that agree; the pipeline picks the best candidate.
//! - **Availability** ([`Engine::available`]) is cheap and synchronous: a key is present, an
//!   index is loaded. Whether the administrator allows an engine is decided outside the
//!   engine, by the registry ([`super::registry`]).
//! - **Files.** The sample's files (original upload, audio track) belong to the pipeline and
//!   are deleted after the request; an engine reads them during `identify` and keeps no
//!   handle or copy afterwards.
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use async_trait::async_trait;
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

/// Every engine that can answer. `ensemble` and `auto` are modes, not engines: see [`Mode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineId {
    Google,
    Openai,
    Xai,
    Anthropic,
    Library,
}

impl EngineId {
    /// All engines, in the order the product lists them.
    pub const ALL: [EngineId; 5] = [Self::Google, Self::Openai, Self::Xai, Self::Anthropic, Self::Library];
    /// The cloud vision engines (they need a provider key).
    pub const CLOUD: [EngineId; 4] = [Self::Google, Self::Openai, Self::Xai, Self::Anthropic];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Google => "google",
            Self::Openai => "openai",
            Self::Xai => "xai",
            Self::Anthropic => "anthropic",
            Self::Library => "library",
        }
    }
}

impl fmt::Display for EngineId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for EngineId {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "google" | "gemini" => Ok(Self::Google),
            "openai" => Ok(Self::Openai),
            "xai" | "grok" => Ok(Self::Xai),
            "anthropic" | "claude" => Ok(Self::Anthropic),
            "library" => Ok(Self::Library),
            _ => Err(UnknownMode(s.to_owned())),
        }
    }
}

/// What the person asked for in the `mode` field of `POST /api/identify` (SPEC section 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Admin primary model, then the user's default, then the recommended engine.
    Auto,
    /// Every available engine at once; answers vote.
    Ensemble,
    /// Exactly this engine.
    #[serde(untagged)]
    Engine(EngineId),
}

impl Mode {
    /// The engines a person can pick and an admin can allow (`services::engine_names`).
    pub const ENGINE_NAMES: [&'static str; 6] = crate::services::engine_names::ENGINES;
    /// Every mode that can be named: Auto, then [`Mode::ENGINE_NAMES`].
    pub const NAMES: [&'static str; 7] = crate::services::engine_names::MODES;

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Ensemble => "ensemble",
            Self::Engine(id) => id.as_str(),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("unknown engine or mode \"{0}\"")]
pub struct UnknownMode(pub String);

impl FromStr for Mode {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(Self::Auto),
            "ensemble" => Ok(Self::Ensemble),
            other => other.parse().map(Self::Engine),
        }
    }
}

/// Still image or video clip.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MediaKind {
    Image,
    Video,
}

/// One picture ready for an engine: JPEG, EXIF-oriented, long side at most
/// 1568 pixels (what every provider accepts without downscaling again).
#[derive(Clone, Debug)]
pub struct Frame {
    pub jpeg: Bytes,
    pub width: u32,
    pub height: u32,
    /// Seconds from the start of the clip; `None` for a still image.
    pub at: Option<f64>,
}

/// The prepared media of one identification request. Built by the pipeline's media step;
/// engines only read it.
#[derive(Clone, Debug)]
pub struct Sample {
    pub kind: MediaKind,
    /// A still gives one frame; a clip gives a handful taken at scene changes, in time order.
    pub frames: Vec<Frame>,
    /// The uploaded file itself (sniffed type in `mime`), for engines that work on the full
    /// media (the Library engine fingerprints video and audio). Deleted after the request.
    pub original: PathBuf,
    /// The real content type, sniffed from the bytes (e.g. `image/png`, `video/mp4`).
    pub mime: String,
    /// Canonical extension of the sniffed type (e.g. `mp4`): engines that run ffmpeg on
    /// `original` force its demuxer from this (see `crate::ffmpeg::Input::upload`).
    pub ext: String,
    /// Clip length in seconds (video only).
    pub duration: Option<f64>,
    /// Whether the clip has a sound track at all (false for stills).
    pub has_audio: bool,
    /// The sound track as 16 kHz mono WAV, when audio analysis was asked for and the clip
    /// has sound. Deleted after the request.
    pub audio: Option<PathBuf>,
    /// Dialogue heard in the clip (speech to text), when audio analysis ran.
    pub transcript: Option<String>,
    /// The `useEnhancedAnalysis` flag: engines may spend more (higher image detail).
    pub enhanced: bool,
    /// Cancelled when nobody waits for the answer any more (deadline, client gone, server
    /// shutting down): blocking work and child processes an engine starts must stop then.
    pub cancel: tokio_util::sync::CancellationToken,
}

/// Movie or TV show.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum TitleKind {
    #[default]
    Movie,
    Tv,
}

impl TitleKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Movie => "movie",
            Self::Tv => "tv",
        }
    }
}

/// Where in the source video a Library match sits, in seconds: the matched span
/// `from..=to` and the best single moment `at`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Timestamp {
    pub from: f64,
    pub at: f64,
    pub to: f64,
}

/// Library engine: another title a matched scene appears in (a series' opening in several
/// episodes, a trailer cut from the film). Titles only, never the operator's file names: this
/// is part of the result anyone with the share link sees.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct SceneAppearance {
    pub title: String,
    pub year: Option<i32>,
    /// `"movie"` or `"tv"`.
    #[serde(rename = "type")]
    pub media_type: String,
    pub season: Option<u32>,
    pub episode: Option<u32>,
    /// Seconds into that title: the span of the scene and its best moment.
    pub timestamp: Option<Timestamp>,
}

/// One possible answer from one engine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    pub title: String,
    /// Release year (movies) or first-air year (TV).
    pub year: Option<i32>,
    pub kind: TitleKind,
    pub season: Option<u32>,
    pub episode: Option<u32>,
    /// `0.0..=1.0`.
    pub confidence: f32,
    /// Why the engine thinks so (visible clues, recognised actors, dialogue).
    pub reasons: Vec<String>,
    pub fun_facts: Vec<String>,
    /// TMDB id when the engine knows it (Library entries enriched from TMDB); lets the
    /// pipeline skip the search step and lets the ensemble match answers exactly.
    pub tmdb_id: Option<i64>,
    /// IMDb id (`tt...`) when known.
    pub imdb_id: Option<String>,
    /// Library engine: where in the source the scene is.
    pub timestamp: Option<Timestamp>,
    /// Library engine: a URL (on this server, expiring) of a thumbnail cut at `timestamp.at`.
    pub preview_url: Option<String>,
    /// Library engine: other titles the same scene is in, as close as this one.
    #[serde(default)]
    pub also_in: Vec<SceneAppearance>,
}

/// What an engine answered: its candidates, best first. Empty means "not recognised".
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EngineAnswer {
    pub candidates: Vec<Candidate>,
    /// The model or index version that answered, e.g. `gpt-4.1-mini` or `library`.
    pub model: String,
}

/// Why an engine could not answer. The ensemble treats every variant as "this engine
/// abstains"; a single-engine request maps it to an HTTP status.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The engine lacks its key or index. Message names what the operator must set.
    #[error("{0}")]
    NotConfigured(String),
    #[error("the engine did not answer before the deadline")]
    Timeout,
    /// The provider kept answering 429 after our retries.
    #[error("the provider is rate limiting us")]
    RateLimited,
    /// The provider answered with an error we do not retry (bad key, bad request, quota).
    #[error("provider error (HTTP {status}): {message}")]
    Provider { status: u16, message: String },
    /// The provider could not be reached, or kept failing with 5xx.
    #[error("provider unreachable: {0}")]
    Unavailable(String),
    /// The provider answered, but not in the shape we asked for.
    #[error("unusable answer: {0}")]
    BadAnswer(String),
    /// The model refused or a safety filter blocked the request.
    #[error("the model refused: {0}")]
    Refused(String),
    /// The sample is not something this engine can use (e.g. no frames for Library).
    #[error("{0}")]
    Unsupported(String),
    /// The engine's own index (the Library's, on an external server) cannot answer now: no
    /// answer rather than one from half an index; worth trying again shortly.
    #[error("the index is unavailable: {0}")]
    IndexUnavailable(String),
}

/// An identification engine. Implementations are cheap to share (`Arc<dyn Engine>`).
#[async_trait]
pub trait Engine: Send + Sync {
    fn id(&self) -> EngineId;

    /// Can this engine answer now (key present, index loaded)? Cheap; called per request.
    fn available(&self) -> bool;

    /// Identify the sample, answering by `deadline`.
    async fn identify(&self, sample: &Sample, deadline: Instant) -> Result<EngineAnswer, EngineError>;
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_lists_of_names_agree_and_every_name_parses() {
        assert_eq!(super::Mode::NAMES[0], "auto");
        assert_eq!(super::Mode::NAMES[1..], super::Mode::ENGINE_NAMES);
        for name in super::Mode::NAMES {
            let mode: super::Mode = serde_json::from_value(serde_json::json!(name)).expect(name);
            assert_eq!(mode.as_str(), name);
        }
        for id in super::EngineId::ALL {
            assert!(super::Mode::ENGINE_NAMES.contains(&id.as_str()), "{id}");
        }
    }

    use super::*;

    #[test]
    fn modes_parse() {
        assert_eq!("auto".parse::<Mode>().unwrap(), Mode::Auto);
        assert_eq!("".parse::<Mode>().unwrap(), Mode::Auto);
        assert_eq!("Ensemble".parse::<Mode>().unwrap(), Mode::Ensemble);
        assert_eq!("openai".parse::<Mode>().unwrap(), Mode::Engine(EngineId::Openai));
        assert_eq!("library".parse::<Mode>().unwrap(), Mode::Engine(EngineId::Library));
        assert!("bard".parse::<Mode>().is_err());
        assert_eq!(serde_json::to_string(&Mode::Engine(EngineId::Xai)).unwrap(), "\"xai\"");
        assert_eq!(serde_json::to_string(&Mode::Ensemble).unwrap(), "\"ensemble\"");
    }
}
