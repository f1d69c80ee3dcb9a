//! The audio tier's search over the library: the landmark files of the indexed videos (see
//! `audio` for the fingerprints and the vote) and a clip's soundtrack matched against them.
use std::path::Path;

use crate::library::audio::{
    AudioHit, AudioSegment, Landmark, QUERY_DENSITY, accepted, best_offset, fingerprint_file_within,
};
use crate::library::frames;
use crate::library::index::store::VideoRecord;
use crate::library::policy::STILL_ACCEPT;
use crate::library::{LibraryIndex, LibraryMatch};

impl LibraryIndex {
    /// The landmark files of every indexed video that has some (opened per query: an open
    /// and an mmap per video; the page cache keeps the bytes warm).
    pub fn audio_segments(&self) -> Vec<AudioSegment> {
        let videos = self.videos();
        let mut ids: Vec<u32> = videos.values().filter(|v| v.audio_landmarks > 0).map(|v| v.id).collect();
        ids.sort_unstable();
        ids.into_iter()
            .filter_map(|id| match AudioSegment::open(&self.landmarks_file(id)) {
                Ok(s) => Some(s),
                Err(e) => {
                    tracing::warn!("library: no audio tier for video {id}: {e:#}");
                    None
                }
            })
            .collect()
    }

    /// Bytes of all landmark files.
    pub fn audio_bytes(&self) -> u64 {
        self.audio_segments().iter().map(|s| s.bytes() as u64).sum()
    }

    /// Matches a clip by its soundtrack alone: `Ok(None)` when there is no indexed audio, the
    /// clip is silent or nothing clears the threshold.
    pub fn search_audio(&self, path: &Path) -> anyhow::Result<Option<(AudioHit, LibraryMatch)>> {
        self.search_audio_within(path, &frames::Budget::default())
    }

    /// [`Self::search_audio`] within a decode budget.
    pub fn search_audio_within(
        &self,
        path: &Path,
        budget: &frames::Budget,
    ) -> anyhow::Result<Option<(AudioHit, LibraryMatch)>> {
        let segments = self.audio_segments();
        if segments.is_empty() {
            return Ok(None);
        }
        let probe = frames::probe_as(path, budget.format).ok();
        // A clip without sound is the picture's alone (ffmpeg refuses to decode no stream).
        if probe.as_ref().is_some_and(|p| !p.has_audio) {
            return Ok(None);
        }
        let seconds = budget.seconds(probe.map_or(0.0, |p| p.duration));
        let (query, seconds) = fingerprint_file_within(path, QUERY_DENSITY, seconds, budget)?;
        Ok(self.match_audio(&segments, &query, seconds))
    }

    /// The decision on ready-made query landmarks (`seconds` of sound).
    pub fn match_audio(
        &self,
        segments: &[AudioSegment],
        query: &[Landmark],
        seconds: f64,
    ) -> Option<(AudioHit, LibraryMatch)> {
        let hit = best_offset(segments, query).filter(accepted)?;
        let videos = self.videos();
        let video = videos.get(&hit.video_id)?;
        let m = self.audio_match(video, &hit, seconds);
        Some((hit, m))
    }

    fn audio_match(&self, video: &VideoRecord, hit: &AudioHit, seconds: f64) -> LibraryMatch {
        let from = hit.offset.clamp(0.0, video.duration);
        let to = (hit.offset + seconds).clamp(from, video.duration);
        let at = (hit.offset + hit.centre).clamp(from, to);
        let similarity = hit.similarity();
        // The Hamming distance that maps to the same similarity, so both tiers read alike.
        let dist = (2.0 * (1.0 - similarity) * STILL_ACCEPT as f32).round() as u32;
        let mut m = self.make_match(video, from, at, to, dist, STILL_ACCEPT, "audio", false);
        m.similarity = similarity;
        m
    }
}
