//! The public shape of an identification: what anyone holding a share link sees
//! (`GET /api/identification/{id}` for someone other than its owner, `/shared/{id}`).
//!
//! It is built field by field from the stored result, never by serialising the stored
//! record, so a field added to [`IdentificationResult`] stays private until someone decides
//! to list it here. What is in: the title and its catalog facts (year, poster, runtime,
//! director, rating, genres, plot, cast, trailer, fun facts, similar titles, box office,
//! awards), where to watch, and how well it matched. What is never in: the transcript of the
//! clip's sound, the engines' reasons and votes, which engine or model answered, the
//! operator's Library file and its preview, timings, and who made the identification. The
//! Library's `alsoIn` (the other titles of the operator's library a matched scene is in, with
//! their times) stays out like `timestamp`: it describes the operator's library, not the title.
use serde::Serialize;

use super::result::{
    Award, BoxOffice, CastMember, DetailsReason, IdentificationResult, SimilarTitle, StreamingPlatforms, Trailer,
};

/// Field names are those of [`IdentificationResult`], so the result view renders either.
#[derive(Clone, Debug, Serialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PublicResult {
    pub identification_id: String,
    pub id: Option<i64>,
    pub tmdb_id: Option<i64>,
    pub imdb_id: Option<String>,
    pub title: String,
    pub original_title: Option<String>,
    pub year: Option<String>,
    #[serde(rename = "type")]
    pub media_type: String,
    pub season: Option<u32>,
    pub episode: Option<u32>,
    pub episode_title: Option<String>,
    pub runtime: Option<String>,
    pub runtime_minutes: Option<u32>,
    pub director: Option<String>,
    pub rating: Option<f64>,
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
    pub classification: Option<String>,
    pub streaming_platforms: StreamingPlatforms,
    pub fun_facts: Vec<String>,
    pub similar_movies: Vec<SimilarTitle>,
    pub box_office: Option<BoxOffice>,
    pub awards: Vec<Award>,
    pub details_unavailable: bool,
    /// One of our own fixed sentences about missing catalog details.
    pub notice: Option<String>,
    pub details_reason: Option<DetailsReason>,
    pub tmdb_url: Option<String>,
    pub created_at: String,
}

impl From<IdentificationResult> for PublicResult {
    fn from(mut r: IdentificationResult) -> Self {
        r.settle_legacy_notice();
        Self {
            identification_id: r.identification_id,
            id: r.id,
            tmdb_id: r.tmdb_id,
            imdb_id: r.imdb_id,
            title: r.title,
            original_title: r.original_title,
            year: r.year,
            media_type: r.media_type,
            season: r.season,
            episode: r.episode,
            episode_title: r.episode_title,
            runtime: r.runtime,
            runtime_minutes: r.runtime_minutes,
            director: r.director,
            rating: r.rating,
            confidence: r.confidence,
            confidence_score: r.confidence_score,
            genres: r.genres,
            description: r.description,
            tagline: r.tagline,
            poster_url: r.poster_url,
            backdrop_url: r.backdrop_url,
            trailer_url: r.trailer_url,
            trailers: r.trailers,
            cast: r.cast,
            language: r.language,
            country: r.country,
            classification: r.classification,
            streaming_platforms: r.streaming_platforms,
            fun_facts: r.fun_facts,
            similar_movies: r.similar_movies,
            box_office: r.box_office,
            awards: r.awards,
            notice: r.notice.filter(|_| r.details_unavailable),
            details_reason: r.details_reason.filter(|_| r.details_unavailable),
            details_unavailable: r.details_unavailable,
            tmdb_url: r.tmdb_url,
            created_at: r.created_at,
        }
    }
}

/// A result made of the public fields only (everything else empty): what another person's
/// answer may give when it is reused for someone new.
impl From<PublicResult> for IdentificationResult {
    fn from(p: PublicResult) -> Self {
        Self {
            identification_id: p.identification_id,
            id: p.id,
            tmdb_id: p.tmdb_id,
            imdb_id: p.imdb_id,
            title: p.title,
            original_title: p.original_title,
            year: p.year,
            media_type: p.media_type,
            season: p.season,
            episode: p.episode,
            episode_title: p.episode_title,
            runtime: p.runtime,
            runtime_minutes: p.runtime_minutes,
            director: p.director,
            rating: p.rating,
            confidence: p.confidence,
            confidence_score: p.confidence_score,
            genres: p.genres,
            description: p.description,
            tagline: p.tagline,
            poster_url: p.poster_url,
            backdrop_url: p.backdrop_url,
            trailer_url: p.trailer_url,
            trailers: p.trailers,
            cast: p.cast,
            language: p.language,
            country: p.country,
            classification: p.classification,
            streaming_platforms: p.streaming_platforms,
            fun_facts: p.fun_facts,
            similar_movies: p.similar_movies,
            box_office: p.box_office,
            awards: p.awards,
            details_unavailable: p.details_unavailable,
            notice: p.notice,
            details_reason: p.details_reason,
            tmdb_url: p.tmdb_url,
            created_at: p.created_at,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identify::result::{AudioAnalysis, EngineVote};

    #[test]
    fn private_fields_never_reach_the_public_shape() {
        let r = IdentificationResult {
            identification_id: "abcdefghijklmnopqrstuv".into(),
            title: "Heat".into(),
            audio_analysis_results: Some(AudioAnalysis {
                transcript: Some("a secret conversation".into()),
                ..Default::default()
            }),
            reasons: vec!["heard: a secret conversation".into()],
            engine: "library".into(),
            model: Some("library".into()),
            engine_votes: vec![EngineVote { engine: "openai".into(), ..Default::default() }],
            preview_url: Some("/api/library/preview/token".into()),
            also_in: vec![Default::default()],
            notice: Some("only when details are unavailable".into()),
            ..Default::default()
        };
        let v = serde_json::to_value(PublicResult::from(r)).unwrap();
        let text = v.to_string();
        for hidden in [
            "secret conversation",
            "audioAnalysisResults",
            "reasons",
            "engineVotes",
            "engine",
            "model",
            "previewUrl",
            "timestamp",
            "alsoIn",
            "timings",
            "mode",
            "only when",
        ] {
            assert!(!text.contains(hidden), "{hidden} leaked: {text}");
        }
        assert_eq!(v["title"], "Heat");
    }
}
