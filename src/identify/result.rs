//! The identification result (SPEC section 3): what `POST /api/identify` and
//! `GET /api/identification/{id}` answer, and what is stored as JSON.
//!
//! Field names are camelCase. Optional facts are `null` (or empty lists) when no source
//! knows them; nothing is invented. `detailsUnavailable` + `notice` say when the catalog
//! (TMDB) could not be asked, so the result carries only what the engine said.
use serde::{Deserialize, Serialize};

use super::engine::{SceneAppearance, Timestamp};

/// Why a result carries no catalog details.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum DetailsReason {
    /// The server has no catalog key (TMDB): set-up the operator can fix.
    NoCatalogKey,
    /// The catalog does not know the title.
    NotFound,
    /// The catalog failed or timed out.
    CatalogFailed,
}

/// What a visitor reads when the server has no catalog key: nothing about our set-up.
pub const NOTICE_NO_CATALOG: &str = "Movie details are unavailable right now. Showing what the AI engine recognised.";

impl IdentificationResult {
    /// A result stored before `detailsReason` existed said "the server has no TMDB key
    /// (TMDB_API_KEY or TMDB_READ_TOKEN)" in its notice; it reads as the visitor's sentence now.
    pub fn settle_legacy_notice(&mut self) {
        if self.details_reason.is_none() && self.notice.as_deref().is_some_and(|n| n.contains("TMDB_API_KEY")) {
            self.details_reason = Some(DetailsReason::NoCatalogKey);
            self.notice = Some(NOTICE_NO_CATALOG.into());
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct IdentificationResult {
    /// Our own identification id (128 random bits, base64url): the share link `/shared/{id}`.
    pub identification_id: String,
    /// The external movie-database id (TMDB), when resolved.
    pub id: Option<i64>,
    pub tmdb_id: Option<i64>,
    pub imdb_id: Option<String>,
    pub title: String,
    pub original_title: Option<String>,
    /// `"1999"`, or a range for TV: `"2010-Present"`, `"2008-2013"`.
    pub year: Option<String>,
    /// `"movie"` or `"tv"`.
    #[serde(rename = "type")]
    pub media_type: String,
    pub season: Option<u32>,
    pub episode: Option<u32>,
    pub episode_title: Option<String>,
    /// e.g. `"2h 19m"`; TV: the usual episode length.
    pub runtime: Option<String>,
    pub runtime_minutes: Option<u32>,
    /// Director(s), or the creators of a TV show.
    pub director: Option<String>,
    /// Out of 10 (TMDB vote average, else IMDb rating), one decimal.
    pub rating: Option<f64>,
    /// `0..=1`; `confidenceScore` is the same value under the history's name.
    pub confidence: f64,
    pub confidence_score: f64,
    pub genres: Vec<String>,
    pub description: Option<String>,
    pub tagline: Option<String>,
    pub poster_url: Option<String>,
    pub backdrop_url: Option<String>,
    pub trailer_url: Option<String>,
    pub trailers: Vec<Trailer>,
    pub cast: Vec<CastMember>,
    pub language: Option<String>,
    pub country: Option<String>,
    /// Age rating in the configured region, e.g. `"R"`, `"TV-MA"`.
    pub classification: Option<String>,
    pub streaming_platforms: StreamingPlatforms,
    pub fun_facts: Vec<String>,
    pub similar_movies: Vec<SimilarTitle>,
    pub box_office: Option<BoxOffice>,
    pub awards: Vec<Award>,
    pub audio_analysis_results: Option<AudioAnalysis>,
    /// Why the engine(s) chose this title.
    pub reasons: Vec<String>,
    /// The engine whose answer won (`openai`, `library`, ...), or `ensemble`.
    pub engine: String,
    /// The mode the person asked for (`auto`, `ensemble`, an engine).
    pub mode: String,
    /// The model or index that answered, e.g. `gpt-4.1-mini`.
    pub model: Option<String>,
    /// Ensemble: what each engine said.
    pub engine_votes: Vec<EngineVote>,
    /// The best few candidates with their scores, best first (the winner included). Listed
    /// only when the request asked for them (`candidates=N` on `POST /api/identify`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<RankedCandidate>,
    /// Library engine: where in the source video the scene is, and a preview frame.
    pub timestamp: Option<Timestamp>,
    pub preview_url: Option<String>,
    /// Library engine: other titles the matched scene also appears in (titles and times only,
    /// never file names), e.g. every episode that shares a series' opening.
    pub also_in: Vec<SceneAppearance>,
    pub media_kind: String,
    /// Milliseconds spent per step.
    pub timings: Timings,
    /// True when the answer was reused from the person's own earlier identification of the
    /// same file.
    pub cached: bool,
    /// The answer was reused, the person's own or another's public shape (no engine was
    /// paid). Never sent or stored: for the operator's counts only.
    #[serde(skip)]
    pub reused: bool,
    /// Answered from the answer memory: recognised from earlier identifications, with no
    /// engine asked (`engine` is `memory`).
    pub from_memory: Option<FromMemory>,
    /// The owner said the answer was wrong and picked this title, or the remembered answer
    /// was corrected by people or an administrator: what the engine had said.
    pub correction: Option<Correction>,
    /// True when catalog details (TMDB) could not be fetched; `notice` says so in words fit
    /// for anyone, `detailsReason` says why (an administrator's page names the set-up).
    pub details_unavailable: bool,
    pub notice: Option<String>,
    pub details_reason: Option<DetailsReason>,
    /// The catalog page, e.g. `https://www.themoviedb.org/movie/603`.
    pub tmdb_url: Option<String>,
    /// RFC 3339.
    pub created_at: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct Trailer {
    /// YouTube video key.
    pub key: String,
    pub name: String,
    pub embed_url: String,
    pub url: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct CastMember {
    /// TMDB person id.
    pub id: Option<i64>,
    pub name: String,
    pub character: Option<String>,
    pub profile_url: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct StreamingPlatforms {
    pub flatrate: Vec<Platform>,
    pub rent: Vec<Platform>,
    pub buy: Vec<Platform>,
    /// TMDB's "where to watch" page for the region (JustWatch data).
    pub link: Option<String>,
    pub region: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct Platform {
    pub name: String,
    /// TMDB gives no per-provider deep link; this is the region's watch page.
    pub url: Option<String>,
    pub logo_url: Option<String>,
    pub provider_id: Option<i64>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct SimilarTitle {
    pub id: Option<i64>,
    pub title: String,
    pub year: Option<String>,
    pub poster_url: Option<String>,
    #[serde(rename = "type")]
    pub media_type: String,
}

/// Money as display strings, e.g. `"$63,000,000"`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct BoxOffice {
    pub budget: Option<String>,
    pub worldwide: Option<String>,
    pub domestic: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct Award {
    pub name: String,
    pub year: Option<String>,
    pub organization: Option<String>,
    /// `"Won"` or `"Nominated"` (the view colours results containing "won" green).
    pub result: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct AudioAnalysis {
    /// Audio analysis was asked for.
    pub requested: bool,
    /// The clip has a sound track.
    pub has_audio: bool,
    /// Whether speech to text ran.
    pub transcribed: bool,
    /// What was heard (may be empty: music, silence).
    pub transcript: Option<String>,
    /// Which service transcribed, e.g. `openai:gpt-4o-mini-transcribe`.
    pub engine: Option<String>,
    /// One sentence for people: what happened with the sound.
    pub summary: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct EngineVote {
    pub engine: String,
    pub title: Option<String>,
    pub year: Option<i32>,
    pub confidence: Option<f32>,
    /// Set when the engine failed or timed out.
    pub error: Option<String>,
    pub ms: u64,
    /// Whether this engine agreed with the final answer.
    pub agreed: bool,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct Timings {
    pub upload_ms: u64,
    pub media_ms: u64,
    pub transcribe_ms: u64,
    pub engines_ms: u64,
    pub enrich_ms: u64,
    pub total_ms: u64,
}

/// One candidate of an identification, as the `candidates` list shows it.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct RankedCandidate {
    pub title: String,
    pub year: Option<i32>,
    /// `movie` or `tv`.
    #[serde(rename = "type")]
    pub media_type: String,
    pub season: Option<u32>,
    pub episode: Option<u32>,
    /// `0.0..=1.0` (for the ensemble: the group's combined score, as for the winner).
    pub confidence: f32,
    pub tmdb_id: Option<i64>,
    pub imdb_id: Option<String>,
    /// Library engine: where in the source video the scene is (`from`, `at`, `to`, seconds).
    pub timestamp: Option<Timestamp>,
}

impl From<&super::engine::Candidate> for RankedCandidate {
    fn from(c: &super::engine::Candidate) -> Self {
        Self {
            title: c.title.clone(),
            year: c.year,
            media_type: c.kind.as_str().into(),
            season: c.season,
            episode: c.episode,
            confidence: c.confidence,
            tmdb_id: c.tmdb_id,
            imdb_id: c.imdb_id.clone(),
            timestamp: c.timestamp,
        }
    }
}

/// How an answer from memory was known.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct FromMemory {
    /// People who confirmed this answer ("Was this right?" yes, or picked it).
    pub confirmations: u32,
    /// The engine that first gave it.
    pub engine: String,
}

/// A corrected answer: who corrected it and what was said before.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct Correction {
    /// `you` (the owner picked it), `people` (the corrections rule) or `admin`.
    pub by: String,
    /// The title the answer had before.
    pub previous_title: String,
    pub previous_year: Option<String>,
    /// RFC 3339.
    pub at: String,
}
