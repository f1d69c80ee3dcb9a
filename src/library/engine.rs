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

use super::{LibraryIndex, LibraryMatch, SearchAnswer};
use crate::identify::engine::{
    Candidate, Engine, EngineAnswer, EngineError, EngineId, MediaKind, Sample, Timestamp, TitleKind,
};

pub struct LibraryEngine {
    index: Arc<LibraryIndex>,
}

impl LibraryEngine {
    pub fn new(index: Arc<LibraryIndex>) -> Self {
        Self { index }
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
    let mut reasons = vec![format!(
        "{what} {} at {:.1} s in the operator's library ({}, similarity {:.2}).",
        m.file, m.at, m.tier, m.similarity
    )];
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
        preview_url: Some(m.preview_url.clone()),
    }
}

#[async_trait]
impl Engine for LibraryEngine {
    fn id(&self) -> EngineId {
        EngineId::Library
    }

    fn available(&self) -> bool {
        self.index.frame_count() > 0
    }

    async fn identify(&self, sample: &Sample, deadline: Instant) -> Result<EngineAnswer, EngineError> {
        let index = self.index.clone();
        let work = match sample.kind {
            MediaKind::Video => {
                let path = sample.original.clone();
                tokio::task::spawn_blocking(move || index.search_clip_av(&path))
            }
            MediaKind::Image => {
                let frame = sample.frames.first().ok_or_else(|| EngineError::Unsupported("no picture".into()))?;
                // Decoding is CPU work too: off the async runtime with the search.
                let jpeg = frame.jpeg.clone();
                tokio::task::spawn_blocking(move || {
                    let img = image::load_from_memory(&jpeg).map_err(|e| anyhow::anyhow!("unreadable picture: {e}"))?;
                    Ok::<SearchAnswer, anyhow::Error>(index.search_image(&img))
                })
            }
        };
        let answer = tokio::time::timeout_at(deadline, work)
            .await
            .map_err(|_| EngineError::Timeout)?
            .map_err(|e| EngineError::Unavailable(format!("library search stopped: {e}")))?
            .map_err(|e| EngineError::Unsupported(format!("{e:#}")))?;
        Ok(EngineAnswer { candidates: answer.best.iter().map(candidate).collect(), model: "library".into() })
    }
}
