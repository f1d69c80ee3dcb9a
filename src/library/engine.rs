//! The Library engine for `/api/identify`: the pipeline's [`Engine`] over [`LibraryIndex`].
//!
//! A still is matched from the prepared frame (EXIF-oriented JPEG); a clip from the original
//! upload, whose every sampled frame votes (see [`LibraryIndex::search_clip`]) and whose soundtrack
//! votes too (see [`LibraryIndex::search_clip_av`]). The engine's
//! confidence maps the library's calibrated similarity so that a match well inside the
//! threshold clears the pipeline's `LIBRARY_SHORTCUT` (0.85) and answers `auto` at once.
use std::sync::Arc;

use async_trait::async_trait;
use tokio::time::Instant;

use crate::identify::admission::Admission;
use crate::identify::engine::{
    Candidate, Engine, EngineAnswer, EngineError, EngineId, MediaKind, Sample, SceneAppearance, Timestamp, TitleKind,
};
use crate::library::index::entries::IndexError;
use crate::library::{Appearance, LibraryIndex, LibraryMatch, frames};

pub struct LibraryEngine {
    index: Arc<LibraryIndex>,
    /// This node's admission control: searches wait for a slot of their own.
    admission: Option<Arc<Admission>>,
}

impl LibraryEngine {
    pub fn new(index: Arc<LibraryIndex>) -> Self {
        Self { index, admission: None }
    }

    /// Searches run only when `admission` gives them a slot (see `Admission::library`).
    pub fn with_admission(mut self, admission: Arc<Admission>) -> Self {
        self.admission = Some(admission);
        self
    }
}

/// Similarity 0.5 (the acceptance threshold) maps to 0.70, 0.75 to 0.85, 1.0 to 0.99.
pub fn confidence(similarity: f32) -> f32 {
    (0.70 + 0.6 * (similarity - 0.5)).clamp(0.0, 0.99)
}

fn candidate(m: &LibraryMatch) -> Candidate {
    let what = match m.tier {
        "audio" => "The soundtrack matches",
        "clip+audio" => "The picture and the soundtrack match",
        _ => "The frame matches",
    };
    // The title, not the file: reasons are part of the result a share link shows.
    let mut reasons = vec![format!(
        "{what} {} at {:.1} s in the operator's library ({}, similarity {:.2}).",
        m.title, m.at, m.tier, m.similarity
    )];
    if !m.also_in.is_empty() {
        let names: Vec<String> = m.also_in.iter().map(appearance_name).collect();
        reasons.push(format!("The same scene is also in {}.", names.join(", ")));
    }
    if m.mirrored {
        reasons.push("The picture is mirrored left to right.".into());
    }
    Candidate {
        title: m.title.clone(),
        year: m.year,
        kind: if m.media_type == "tv" { TitleKind::Tv } else { TitleKind::Movie },
        season: m.season,
        episode: m.episode,
        confidence: confidence(m.similarity),
        reasons,
        fun_facts: vec![],
        tmdb_id: None,
        imdb_id: None,
        timestamp: Some(Timestamp { from: m.from, at: m.at, to: m.to }),
        preview_url: (!m.preview_url.is_empty()).then(|| m.preview_url.clone()),
        also_in: m
            .also_in
            .iter()
            .map(|a| SceneAppearance {
                title: a.title.clone(),
                year: a.year,
                media_type: a.media_type.to_owned(),
                season: a.season,
                episode: a.episode,
                timestamp: Some(Timestamp { from: a.from, at: a.at, to: a.to }),
            })
            .collect(),
    }
}

/// "Show S01E02", "Title (2008)" or the bare title.
fn appearance_name(a: &Appearance) -> String {
    match (a.season, a.episode, a.year) {
        (Some(s), Some(e), _) => format!("{} S{s:02}E{e:02}", a.title),
        (None, Some(e), _) => format!("{} episode {e}", a.title),
        (_, None, Some(y)) => format!("{} ({y})", a.title),
        _ => a.title.clone(),
    }
}

#[async_trait]
impl Engine for LibraryEngine {
    fn id(&self) -> EngineId {
        EngineId::Library
    }

    fn available(&self) -> bool {
        self.index.serves()
    }

    async fn identify(&self, sample: &Sample, deadline: Instant) -> Result<EngineAnswer, EngineError> {
        let index = self.index.clone();
        // A search takes every core for a while: one slot per search, waited for until the
        // deadline, and held by the blocking search itself until it has really stopped.
        let slot = match &self.admission {
            Some(a) => Some(a.library(deadline).await.ok_or(EngineError::Timeout)?),
            None => None,
        };
        // Stop the blocking search when this future is dropped (deadline, client gone) too.
        let cancel = sample.cancel.child_token();
        let _stop = cancel.clone().drop_guard();
        let work = match sample.kind {
            MediaKind::Video => {
                let path = sample.original.clone();
                // At most the measured length of the upload, read as its sniffed type.
                let seconds = sample.duration.unwrap_or(frames::MAX_QUERY_SECONDS) + 1.0;
                let budget = frames::Budget::upload(seconds, &sample.ext, cancel.clone());
                tokio::task::spawn_blocking(move || {
                    let _held = slot;
                    index.search_clip_av_within(&path, &budget)
                })
            }
            MediaKind::Image => {
                let frame = sample.frames.first().ok_or_else(|| EngineError::Unsupported("no picture".into()))?;
                // Decoding is CPU work too: off the async runtime with the search.
                let jpeg = frame.jpeg.clone();
                let cancel = cancel.clone();
                tokio::task::spawn_blocking(move || {
                    let _held = slot;
                    let img = image::load_from_memory(&jpeg).map_err(|e| anyhow::anyhow!("unreadable picture: {e}"))?;
                    index.search_image_within(&img, Some(&cancel))
                })
            }
        };
        let answer = tokio::time::timeout_at(deadline, work)
            .await
            .map_err(|_| EngineError::Timeout)?
            .map_err(|e| EngineError::Unavailable(format!("library search stopped: {e}")))?
            .map_err(|e| match e.downcast_ref::<IndexError>() {
                // The index could not answer (an external engine down): not the picture's fault.
                Some(IndexError::Unavailable(_)) => EngineError::IndexUnavailable(format!("{e:#}")),
                _ => EngineError::Unsupported(format!("{e:#}")),
            })?;
        Ok(EngineAnswer { candidates: answer.best.iter().map(candidate).collect(), model: "library".into() })
    }
}
