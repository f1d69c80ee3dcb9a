//! The shape of the library's answers: a match (which video, where in it, how sure) or none
//! and why, and how a Hamming distance reads as a similarity.
use std::time::Instant;

use serde::Serialize;

use crate::library::LibraryIndex;
use crate::library::index::store::VideoRecord;
use crate::library::shot::Shot;

/// One answer of the library: where in which video the query comes from.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LibraryMatch {
    pub video_id: u32,
    pub title: String,
    pub year: Option<i32>,
    /// `movie` or `tv`.
    pub media_type: &'static str,
    pub show: Option<String>,
    pub season: Option<u32>,
    pub episode: Option<u32>,
    /// File name only; the server's folders are nobody's business.
    pub file: String,
    /// Seconds into the video: the span the query covers and the best single moment.
    pub from: f64,
    pub at: f64,
    pub to: f64,
    /// 0..1; 0.5 is the decision threshold, 1.0 an identical picture.
    pub similarity: f32,
    /// Hamming distance of the best frame (0..256).
    pub distance: u32,
    /// Which tier decided: `frame`, `crop`, `upper` (the top of a picture covered below),
    /// `screen` (a phone photo's rectified screen), `window` (a picture inside a picture),
    /// `shape` (a picture centred in a canvas of another shape), `corner` (a picture with a
    /// corner painted out: a broadcaster's logo), `clip`, `clip inset` (a
    /// clip's screens or windows, see [`insets`](crate::library::clip::insets)), `audio` or `clip+audio`.
    pub tier: &'static str,
    pub mirrored: bool,
    /// Relative URL of a preview picture cut at `at`; expires (see [`preview`](crate::library::preview)).
    /// Empty when this node cannot read the video's file (the hashes came from a shared
    /// index, the file lives on another machine): the answer says the preview is unavailable.
    pub preview_url: String,
    /// Other videos the same scene is in, about as close as this one (a series' opening, a
    /// recap, a trailer cut from the film), best first. Empty when the scene is only here.
    pub also_in: Vec<Appearance>,
    /// How alike the query and the answer's frame in the source looked (see
    /// [`verify`](crate::library::still::verify)): the correlation of the two pictures and the median of their
    /// blocks' correlations. `None` when they were not looked at again. For the benchmark; not
    /// part of the answer.
    #[serde(skip)]
    pub looked: Option<(f32, f32)>,
}

/// Another video a matched scene appears in, and where.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Appearance {
    pub video_id: u32,
    pub title: String,
    pub year: Option<i32>,
    /// `movie` or `tv`.
    pub media_type: &'static str,
    pub show: Option<String>,
    pub season: Option<u32>,
    pub episode: Option<u32>,
    /// File name only (operator-facing; the public result carries titles, never files).
    pub file: String,
    pub from: f64,
    pub at: f64,
    pub to: f64,
    pub similarity: f32,
}

/// The library's answer to one query: a match, or none and why.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchAnswer {
    #[serde(rename = "match")]
    pub best: Option<LibraryMatch>,
    /// Why there is no match, in words for a person.
    pub reason: Option<String>,
    pub frames_searched: u64,
    pub videos: usize,
    pub elapsed_ms: f64,
}

impl SearchAnswer {
    pub(super) fn none(reason: impl Into<String>, frames: u64, videos: usize, started: Instant) -> Self {
        Self {
            best: None,
            reason: Some(reason.into()),
            frames_searched: frames,
            videos,
            elapsed_ms: started.elapsed().as_secs_f64() * 1e3,
        }
    }
}

impl LibraryIndex {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn make_match(
        &self,
        video: &VideoRecord,
        from: f64,
        at: f64,
        to: f64,
        dist: u32,
        accept: u32,
        tier: &'static str,
        mirrored: bool,
    ) -> LibraryMatch {
        let m = &video.meta;
        LibraryMatch {
            video_id: video.id,
            title: m.display_title().to_owned(),
            year: m.year,
            media_type: if m.is_tv() { "tv" } else { "movie" },
            show: m.show.clone(),
            season: m.season,
            episode: m.episode,
            file: file_name(video),
            from: round(from),
            at: round(at),
            to: round(to),
            similarity: similarity(dist, accept),
            distance: dist,
            tier,
            mirrored,
            preview_url: preview_url(video, || self.signer.sign(video.id, (at * 1000.0) as u32)),
            also_in: Vec::new(),
            looked: None,
        }
    }

    /// `video` as another place a scene appears.
    pub(super) fn appearance(video: &VideoRecord, shot: Shot, dist: u32, accept: u32) -> Appearance {
        let m = &video.meta;
        Appearance {
            video_id: video.id,
            title: m.display_title().to_owned(),
            year: m.year,
            media_type: if m.is_tv() { "tv" } else { "movie" },
            show: m.show.clone(),
            season: m.season,
            episode: m.episode,
            file: file_name(video),
            from: round(shot.from),
            at: round(shot.at),
            to: round(shot.to),
            similarity: similarity(dist, accept),
        }
    }
}

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn file_name(video: &VideoRecord) -> String {
    video.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Maps a Hamming distance to 0..1: 1 for identical, 0.5 at the acceptance threshold, 0 at
/// 128 (what two unrelated pictures score on average).
pub fn similarity(dist: u32, accept: u32) -> f32 {
    let d = dist as f32;
    let a = accept as f32;
    let s = if d <= a { 1.0 - 0.5 * d / a } else { 0.5 * (128.0 - d).max(0.0) / (128.0 - a) };
    (s * 1000.0).round() / 1000.0
}

/// The preview link of `video`, or empty when its file is not on this node.
fn preview_url(video: &VideoRecord, token: impl FnOnce() -> String) -> String {
    if video.path.is_file() { format!("/api/library/preview/{}", token()) } else { String::new() }
}
