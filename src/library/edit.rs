//! The admin's corrections of a video's title, year, show, season and episode (from the
//! dashboard or `PATCH /api/admin/library/{id}`). An edit marks the metadata `admin`, so
//! re-indexing the file keeps it (see [`LibraryIndex::add_video`]).
use serde::Serialize;

use crate::library::LibraryIndex;
use crate::library::index::store::{VideoMeta, VideoRecord};

/// A partial edit: `None` keeps a field, `Some(None)` clears it (the title cannot be cleared).
#[derive(Clone, Debug, Default)]
pub struct MetaPatch {
    pub title: Option<String>,
    pub year: Option<Option<i32>>,
    pub show: Option<Option<String>>,
    pub season: Option<Option<u32>>,
    pub episode: Option<Option<u32>>,
}

pub const MAX_TEXT: usize = 300;
pub const YEARS: std::ops::RangeInclusive<i32> = 1870..=2100;
pub const MAX_SEASON: u32 = 9999;
pub const MAX_EPISODE: u32 = 99999;

#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error("No such video in the library.")]
    NotFound,
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Io(#[from] anyhow::Error),
}

fn text(field: &str, value: &str) -> Result<Option<String>, EditError> {
    let v = value.trim();
    if v.chars().count() > MAX_TEXT {
        return Err(EditError::Invalid(format!("{field} must be at most {MAX_TEXT} characters.")));
    }
    Ok((!v.is_empty()).then(|| v.to_owned()))
}

/// Checks the patch and applies it to `meta`.
pub fn apply(meta: &VideoMeta, patch: &MetaPatch) -> Result<VideoMeta, EditError> {
    let mut out = meta.clone();
    if let Some(t) = &patch.title {
        out.title = text("Title", t)?.ok_or_else(|| EditError::Invalid("Title cannot be empty.".into()))?;
    }
    if let Some(year) = patch.year {
        if year.is_some_and(|y| !YEARS.contains(&y)) {
            return Err(EditError::Invalid(format!("Year must be between {} and {}.", YEARS.start(), YEARS.end())));
        }
        out.year = year;
    }
    if let Some(show) = &patch.show {
        out.show = match show {
            Some(s) => text("Show", s)?,
            None => None,
        };
    }
    if let Some(season) = patch.season {
        if season.is_some_and(|s| s > MAX_SEASON) {
            return Err(EditError::Invalid(format!("Season must be between 0 and {MAX_SEASON}.")));
        }
        out.season = season;
    }
    if let Some(episode) = patch.episode {
        if episode.is_some_and(|e| e > MAX_EPISODE) {
            return Err(EditError::Invalid(format!("Episode must be between 0 and {MAX_EPISODE}.")));
        }
        out.episode = episode;
    }
    if out.episode.is_some() && out.season.is_none() {
        return Err(EditError::Invalid("An episode needs a season.".into()));
    }
    Ok(out)
}

/// One indexed video as the admin sees it.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdminVideo {
    pub id: u32,
    pub title: String,
    pub year: Option<i32>,
    pub show: Option<String>,
    pub season: Option<u32>,
    pub episode: Option<u32>,
    /// `movie` or `tv`.
    pub media_type: &'static str,
    /// Where the metadata came from: `nfo`, `filename` or `admin`.
    pub source: String,
    pub file: String,
    pub path: String,
    pub duration: f64,
    pub frames: u32,
    pub audio_landmarks: u32,
    pub indexed_at: String,
}

impl From<&VideoRecord> for AdminVideo {
    fn from(v: &VideoRecord) -> Self {
        let m = &v.meta;
        Self {
            id: v.id,
            title: m.title.clone(),
            year: m.year,
            show: m.show.clone(),
            season: m.season,
            episode: m.episode,
            media_type: if m.is_tv() { "tv" } else { "movie" },
            source: m.source.clone(),
            file: v.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            path: v.path.display().to_string(),
            duration: (v.duration * 100.0).round() / 100.0,
            frames: v.frames,
            audio_landmarks: v.audio_landmarks,
            indexed_at: v.indexed_at.clone(),
        }
    }
}

impl LibraryIndex {
    /// Applies an admin's edit to one video (blocking: takes the library's write lock).
    pub fn edit_meta(&self, id: u32, patch: &MetaPatch) -> Result<VideoRecord, EditError> {
        let video = self.get(id).ok_or(EditError::NotFound)?;
        let meta = apply(&video.meta, patch)?;
        self.set_meta(id, meta).map_err(|e| match self.get(id) {
            None => EditError::NotFound,
            Some(_) => EditError::Io(e),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn movie() -> VideoMeta {
        VideoMeta { title: "Big Buck Bunny".into(), year: Some(2008), source: "nfo".into(), ..Default::default() }
    }

    #[test]
    fn a_patch_keeps_what_it_does_not_name_and_clears_what_is_null() {
        let patch = MetaPatch {
            title: Some("  Bunny  ".into()),
            show: Some(Some("Shorts".into())),
            season: Some(Some(1)),
            episode: Some(Some(2)),
            ..Default::default()
        };
        let m = apply(&movie(), &patch).unwrap();
        assert_eq!(
            (m.title.as_str(), m.year, m.show.as_deref(), m.season, m.episode),
            ("Bunny", Some(2008), Some("Shorts"), Some(1), Some(2))
        );
        let cleared =
            apply(&m, &MetaPatch { year: Some(None), show: Some(Some(" ".into())), ..Default::default() }).unwrap();
        assert_eq!((cleared.year, cleared.show), (None, None));
    }

    #[test]
    fn bad_values_are_refused_in_words() {
        let bad = [
            MetaPatch { title: Some("   ".into()), ..Default::default() },
            MetaPatch { year: Some(Some(1200)), ..Default::default() },
            MetaPatch { season: Some(Some(100_000)), ..Default::default() },
            MetaPatch { episode: Some(Some(3)), ..Default::default() },
            MetaPatch { title: Some("x".repeat(301)), ..Default::default() },
        ];
        let msgs: Vec<String> = bad.iter().map(|p| apply(&movie(), p).unwrap_err().to_string()).collect();
        assert_eq!(
            msgs,
            [
                "Title cannot be empty.",
                "Year must be between 1870 and 2100.",
                "Season must be between 0 and 9999.",
                "An episode needs a season.",
                "Title must be at most 300 characters."
            ]
        );
    }
}
