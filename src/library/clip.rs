//! Searching a short clip by its picture: every sampled frame's hits vote for one offset
//! between clip time and video time (see `vote`), whole frames first, the crop tier when they
//! agree on nothing, then the upper tier (a clip with big subtitles or a player's controls),
//! the shape tier, and last the screens and windows inside the frames (see `insets`).
use std::path::Path;
use std::time::Instant;

use super::frames::Budget;
use super::hash::{self, FrameHash, GrayView, MIN_QUALITY};
use super::shot::Shot;
use super::store::Segment;
use super::vote::clip_vote;
use super::{
    CROP_ACCEPT, LibraryIndex, LibraryMatch, SHAPE_ACCEPT, STILL_ACCEPT, SearchAnswer, UPPER_ACCEPT, frames, insets,
    scan,
};

/// How one fallback tier turns a clip frame (squeezed to the frame square) into hypotheses.
type FrameHypotheses<'a> = &'a dyn Fn(GrayView<'_>) -> Vec<FrameHash>;

/// Clip frames vote with hits up to this distance; the vote, not one frame, decides.
pub const CLIP_CANDIDATE: u32 = 72;

impl LibraryIndex {
    /// Searches a short clip: every sampled frame looks for near hashes, and the hits vote
    /// for an offset between clip time and video time; the offset most frames agree on wins.
    /// When the whole frames agree on nothing, the clip may be cropped: the crop tier is
    /// searched the same way with each frame's crop hypotheses.
    pub fn search_clip(&self, path: &Path) -> anyhow::Result<SearchAnswer> {
        self.search_clip_within(path, &Budget::default())
    }

    /// [`Self::search_clip`] within a decode budget (an upload's measured length, its
    /// sniffed type, the request's cancel token).
    pub fn search_clip_within(&self, path: &Path, budget: &Budget) -> anyhow::Result<SearchAnswer> {
        let started = Instant::now();
        let (segments, videos) = self.snapshot();
        let total: u64 = segments.iter().map(|s| s.len() as u64).sum();
        if segments.is_empty() {
            return Ok(SearchAnswer::none("The library is empty: no video has been indexed yet.", 0, 0, started));
        }
        let probe = frames::probe_as(path, budget.format)?;
        let mut query: Vec<(f64, Vec<FrameHash>)> = Vec::new();
        let mut pictures: Vec<Vec<u8>> = Vec::new();
        let seconds = budget.seconds(probe.duration);
        frames::decode_frames(path, frames::CLIP_FPS, seconds, budget, |t, px| {
            let view = frames::frame_view(px);
            let hypotheses = hash::query_hashes(view);
            if hypotheses[0].quality >= MIN_QUALITY {
                query.push((t, hypotheses));
                pictures.push(px.to_vec());
            }
        })?;
        if query.is_empty() {
            return Ok(SearchAnswer::none(
                "The clip is too dark or too flat to match against the library.",
                total,
                videos.len(),
                started,
            ));
        }
        let refs: Vec<&Segment> = segments.iter().map(|s| s.as_ref()).collect();
        let times: Vec<f64> = query.iter().map(|(t, _)| *t).collect();
        let per_frame: Vec<Vec<FrameHash>> = query.into_iter().map(|(_, h)| h).collect();
        let mut found = clip_vote(&refs, scan::Section::Frames, &per_frame, &times, CLIP_CANDIDATE, STILL_ACCEPT);
        let mut accept = STILL_ACCEPT;
        let mut tier = "clip";
        // When whole frames agree on nothing, each frame's fallback hypotheses vote in turn:
        let fallbacks: [(scan::Section, u32, FrameHypotheses); 3] = [
            // the indexed centre windows inside a cropped picture;
            (scan::Section::Crops, CROP_ACCEPT, &|view| hash::crop_query_hashes(view)),
            // the tops of each frame's own rectangles (the lower part may be covered);
            (scan::Section::Upper, UPPER_ACCEPT, &|view| hash::upper_query_hashes(view, &hash::query_rects(view))),
            // where each film shape would lie, centred in a canvas of another shape.
            (scan::Section::Frames, SHAPE_ACCEPT, &|view| hash::shape_query_hashes(view, (probe.width, probe.height))),
        ];
        for (section, tier_accept, hypotheses) in fallbacks {
            if found.is_some() {
                break;
            }
            let per_picture: Vec<Vec<FrameHash>> =
                pictures.iter().map(|px| hypotheses(frames::frame_view(px))).collect();
            found = clip_vote(&refs, section, &per_picture, &times, tier_accept, tier_accept);
            accept = tier_accept;
        }
        // A phone's video of a screen, a video playing in a window: the screens and windows
        // of the clip's frames, decoded larger (see `insets`), against whole frames.
        let mut times = times;
        if found.is_none() {
            let (inset_times, per_inset) =
                insets::inset_hypotheses(path, (probe.width, probe.height), seconds, budget)?;
            if per_inset.iter().any(|h| !h.is_empty()) {
                found = clip_vote(&refs, scan::Section::Frames, &per_inset, &inset_times, STILL_ACCEPT, STILL_ACCEPT);
                (accept, times, tier) = (STILL_ACCEPT, inset_times, "clip inset");
            }
        }
        let Some(vote) = found else {
            return Ok(SearchAnswer::none("No match in the library.", total, videos.len(), started));
        };
        let seg = refs[vote.segment];
        let Some(video) = videos.get(&seg.video_id) else {
            return Ok(SearchAnswer::none("No match in the library.", total, videos.len(), started));
        };
        let from = (vote.offset as f64 / frames::CLIP_FPS as f64).max(0.0);
        let to = (from + probe.duration.min(seconds)).min(video.duration);
        let at = (from + times[vote.best_frame]).min(video.duration);
        // Agreement of many frames is stronger evidence than one frame's distance.
        let share = vote.support as f64 / times.len() as f64;
        let effective = (vote.mean * (1.0 - 0.3 * share)).round() as u32;
        let mut m = self.make_match(video, from, at, to, effective, accept, tier, vote.mirrored);
        // Other videos the same footage is in, placed the same way.
        m.also_in = vote
            .also
            .iter()
            .filter_map(|&(segment, offset, mean)| {
                let other = videos.get(&refs[segment].video_id)?;
                let from = (offset as f64 / frames::CLIP_FPS as f64).max(0.0);
                let to = (from + probe.duration.min(seconds)).min(other.duration);
                let at = (from + times[vote.best_frame]).min(other.duration);
                let dist = (mean * (1.0 - 0.3 * share)).round() as u32;
                Some(Self::appearance(other, Shot { from, at, to, entries: (0, 0) }, dist, accept))
            })
            .collect();
        Ok(SearchAnswer {
            best: Some(m),
            reason: None,
            frames_searched: total,
            videos: videos.len(),
            elapsed_ms: started.elapsed().as_secs_f64() * 1e3,
        })
    }

    /// Searches a clip by picture and soundtrack and fuses the answers: when both tiers name
    /// the same video and moment, the match is stronger than either; when only one clears
    /// its threshold, that one answers (audio carries a dark, blurred or cropped picture);
    /// when neither does, there is no match. Clips without sound are the picture's alone.
    pub fn search_clip_av(&self, path: &Path) -> anyhow::Result<SearchAnswer> {
        self.search_clip_av_within(path, &Budget::default())
    }

    /// [`Self::search_clip_av`] within a decode budget.
    pub fn search_clip_av_within(&self, path: &Path, budget: &Budget) -> anyhow::Result<SearchAnswer> {
        let started = Instant::now();
        let (visual, audio) =
            rayon::join(|| self.search_clip_within(path, budget), || self.search_audio_within(path, budget));
        let audio = audio.unwrap_or_else(|e| {
            tracing::warn!("library: audio search of {} failed: {e:#}", path.display());
            None
        });
        let mut answer = match visual {
            Ok(a) => a,
            Err(e) => match &audio {
                // Not readable as a video (e.g. a sound file): the soundtrack may still answer.
                Some(_) => SearchAnswer::none(format!("{e:#}"), 0, self.list().len(), started),
                None => return Err(e),
            },
        };
        if let Some((_, am)) = audio {
            answer.best = Some(match answer.best.take() {
                None => am,
                Some(vm) => fuse(vm, am),
            });
            answer.reason = None;
        }
        answer.elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
        Ok(answer)
    }
}

/// Fuses a picture match and a sound match of the same clip.
pub fn fuse(visual: LibraryMatch, audio: LibraryMatch) -> LibraryMatch {
    let agree = visual.video_id == audio.video_id && (visual.from - audio.from).abs() <= 1.0;
    if agree {
        // Two independent pieces of evidence: at their thresholds (0.5 each) 0.75 together.
        let s = 1.0 - (1.0 - visual.similarity) * (1.0 - audio.similarity);
        let mut m = audio;
        m.similarity = ((s.min(0.999) * 1000.0).round() / 1000.0).max(visual.similarity);
        m.distance = visual.distance;
        m.mirrored = visual.mirrored;
        m.tier = "clip+audio";
        // The soundtrack is searched per video; the picture's vote names the others.
        m.also_in = visual.also_in;
        // The soundtrack's offset is to 32 ms; the picture's to a quarter second.
        m
    } else if audio.similarity > visual.similarity {
        audio
    } else {
        visual
    }
}
