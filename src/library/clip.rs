//! Searching a short clip by its picture ([`ClipSearch::run`]): every sampled frame's hits
//! vote for one offset between clip time and video time (see `vote`), whole frames first, the
//! crop tier when they agree on nothing, then the upper tier (a clip with big subtitles or a
//! player's controls), the shape tier, and last the screens and windows inside the frames
//! (see `insets`); the tiers and thresholds are `policy::CLIP_TIERS`. A clip searched by
//! picture and soundtrack fuses the two answers ([`fuse`]).
pub mod insets;
pub mod soundtrack;
pub mod vote;

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use crate::library::clip::vote::{ClipVote, clip_vote};
use crate::library::frames::Budget;
use crate::library::index::entries::Timelines;
use crate::library::index::store::VideoRecord;
use crate::library::picture::column;
use crate::library::picture::hash::{self, FrameHash, MIN_QUALITY};
use crate::library::policy::{CLIP_TIERS, ClipRule, ClipTier};
use crate::library::shot::Shot;
use crate::library::{LibraryIndex, LibraryMatch, SearchAnswer, frames};

/// Agreement of many frames is stronger evidence than one frame's distance: a vote all of
/// whose frames agree is reported this share closer than their mean distance.
const AGREEMENT_BONUS: f64 = 0.3;

impl LibraryIndex {
    /// Searches a short clip: every sampled frame looks for near hashes, and the hits vote
    /// for an offset between clip time and video time; the offset most frames agree on wins
    /// (see [`ClipSearch::run`]).
    pub fn search_clip(&self, path: &Path) -> anyhow::Result<SearchAnswer> {
        self.search_clip_within(path, &Budget::default())
    }

    /// [`Self::search_clip`] within a decode budget (an upload's measured length, its
    /// sniffed type, the request's cancel token).
    pub fn search_clip_within(&self, path: &Path, budget: &Budget) -> anyhow::Result<SearchAnswer> {
        let started = Instant::now();
        let videos = self.videos();
        let entries = self.entries();
        if videos.is_empty() || entries.is_empty() {
            return Ok(SearchAnswer::none("The library is empty: no video has been indexed yet.", 0, 0, started));
        }
        let probe = frames::probe_as(path, budget.format)?;
        let search = ClipSearch {
            library: self,
            timelines: Timelines::new(entries),
            total: entries.len(),
            videos,
            path,
            budget,
            seconds: budget.seconds(probe.duration),
            probe,
            started,
        };
        search.run()
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

/// One clip's search by its picture, stage by stage (see [`ClipSearch::run`]).
struct ClipSearch<'a> {
    library: &'a LibraryIndex,
    /// The index, and the timelines of it the votes have walked along.
    timelines: Timelines<'a>,
    /// Entries in the index when the search started.
    total: u64,
    videos: HashMap<u32, VideoRecord>,
    path: &'a Path,
    budget: &'a Budget,
    probe: frames::Probe,
    /// Seconds of the clip decoded at most.
    seconds: f64,
    started: Instant,
}

/// A clip's frames squeezed to the frame square, with their times (those not too flat).
struct Decoded {
    times: Vec<f64>,
    /// Each frame's own hypotheses (see [`hash::query_hashes`]).
    hypotheses: Vec<Vec<FrameHash>>,
    pictures: Vec<Vec<u8>>,
}

/// The vote that stood, the tier it stood in, and the times of the frames that voted.
struct Voted {
    vote: ClipVote,
    rule: ClipRule,
    times: Vec<f64>,
}

impl ClipSearch<'_> {
    /// The pipeline: the clip's frames decoded; their own cuts vote against whole frames;
    /// when they agree on nothing, the crop, upper and shape tiers' hypotheses of each frame
    /// vote in turn, then the screens and windows of frames decoded larger; the vote that
    /// stands is told with the other videos the footage is in.
    fn run(&self) -> anyhow::Result<SearchAnswer> {
        let Some(decoded) = self.decode()? else {
            return Ok(self.none("The clip is too dark or too flat to match against the library."));
        };
        let mut voted = self.vote_whole(&decoded)?;
        if voted.is_none() {
            voted = self.vote_fallbacks(&decoded)?;
        }
        if voted.is_none() {
            voted = self.vote_insets()?;
        }
        match voted {
            Some(voted) => Ok(self.report(voted)),
            None => Ok(self.none("No match in the library.")),
        }
    }

    fn none(&self, reason: &str) -> SearchAnswer {
        SearchAnswer::none(reason, self.total, self.videos.len(), self.started)
    }

    /// Stage 1: the clip decoded at [`frames::CLIP_FPS`] to the frame square; `None` when
    /// every frame is too flat to say anything.
    fn decode(&self) -> anyhow::Result<Option<Decoded>> {
        let mut decoded = Decoded { times: Vec::new(), hypotheses: Vec::new(), pictures: Vec::new() };
        frames::decode_frames(self.path, frames::CLIP_FPS, self.seconds, self.budget, |t, px| {
            let hypotheses = hash::query_hashes(frames::frame_view(px));
            if hypotheses[0].quality >= MIN_QUALITY {
                decoded.times.push(t);
                decoded.hypotheses.push(hypotheses);
                decoded.pictures.push(px.to_vec());
            }
        })?;
        Ok((!decoded.times.is_empty()).then_some(decoded))
    }

    /// Stage 2: each frame's own cuts against whole frames.
    fn vote_whole(&self, decoded: &Decoded) -> anyhow::Result<Option<Voted>> {
        self.vote(CLIP_TIERS[0], &decoded.hypotheses, &decoded.times)
    }

    /// Stage 3: when the whole frames agree on nothing, each frame's hypotheses of the
    /// crop, upper and shape tiers vote in turn; the first vote that stands answers.
    fn vote_fallbacks(&self, decoded: &Decoded) -> anyhow::Result<Option<Voted>> {
        for rule in [CLIP_TIERS[1], CLIP_TIERS[2], CLIP_TIERS[3], CLIP_TIERS[5]] {
            let per_picture: Vec<Vec<FrameHash>> =
                decoded.pictures.iter().map(|px| self.fallback_hypotheses(rule.tier, px)).collect();
            if let Some(voted) = self.vote(rule, &per_picture, &decoded.times)? {
                return Ok(Some(voted));
            }
        }
        Ok(None)
    }

    /// A frame's hypotheses in a fallback tier: the indexed centre windows inside a cropped
    /// picture; the tops of its own rectangles (the lower part may be covered); where each
    /// film shape would lie, centred in a canvas of another shape.
    fn fallback_hypotheses(&self, tier: ClipTier, px: &[u8]) -> Vec<FrameHash> {
        let view = frames::frame_view(px);
        match tier {
            ClipTier::Crop => hash::crop_query_hashes(view),
            ClipTier::Upper => hash::upper_query_hashes(view, &hash::query_rects(view)),
            ClipTier::Shape => hash::shape_query_hashes(view, (self.probe.width, self.probe.height)),
            ClipTier::Column => {
                let rects =
                    column::column_query_rects_of(&hash::query_rects(view), (self.probe.width, self.probe.height));
                rects.into_iter().map(|r| hash::hash_rect(view, r)).filter(|f| f.quality >= MIN_QUALITY).collect()
            }
            ClipTier::Frame | ClipTier::Inset => hash::query_hashes(view),
        }
    }

    /// Stage 4: a phone's video of a screen, a video playing in a window: the screens and
    /// windows of the clip's frames, decoded larger (see `insets`), against whole frames.
    fn vote_insets(&self) -> anyhow::Result<Option<Voted>> {
        let size = (self.probe.width, self.probe.height);
        let (times, per_inset) = insets::inset_hypotheses(self.path, size, self.seconds, self.budget)?;
        if per_inset.iter().all(Vec::is_empty) {
            return Ok(None);
        }
        self.vote(CLIP_TIERS[4], &per_inset, &times)
    }

    /// One tier's vote (see [`clip_vote`]).
    fn vote(&self, rule: ClipRule, per_frame: &[Vec<FrameHash>], times: &[f64]) -> anyhow::Result<Option<Voted>> {
        let vote = clip_vote(&self.timelines, rule.section, per_frame, times, rule.candidate, rule.accept)?;
        Ok(vote.map(|vote| Voted { vote, rule, times: times.to_vec() }))
    }

    /// Stage 5: the vote as the answer: the clip's span in the video, the frame closest to
    /// its indexed twin as `at`, and the other videos the footage is in, placed the same way.
    fn report(&self, voted: Voted) -> SearchAnswer {
        let Voted { vote, rule, times } = voted;
        let Some(video) = self.videos.get(&vote.video) else { return self.none("No match in the library.") };
        let length = self.probe.duration.min(self.seconds);
        let placed = |offset: i64, duration: f64| {
            let from = (offset as f64 / frames::CLIP_FPS as f64).max(0.0);
            (from, (from + times[vote.best_frame]).min(duration), (from + length).min(duration))
        };
        let share = vote.support as f64 / times.len() as f64;
        let effective = |mean: f64| (mean * (1.0 - AGREEMENT_BONUS * share)).round() as u32;
        let (from, at, to) = placed(vote.offset, video.duration);
        let mut m =
            self.library.make_match(video, from, at, to, effective(vote.mean), rule.accept, rule.name, vote.mirrored);
        m.also_in = vote
            .also
            .iter()
            .filter_map(|&(other, offset, mean)| {
                let other = self.videos.get(&other)?;
                let (from, at, to) = placed(offset, other.duration);
                Some(LibraryIndex::appearance(
                    other,
                    Shot { from, at, to, entries: (0, 0) },
                    effective(mean),
                    rule.accept,
                ))
            })
            .collect();
        SearchAnswer {
            best: Some(m),
            reason: None,
            frames_searched: self.total,
            videos: self.videos.len(),
            elapsed_ms: self.started.elapsed().as_secs_f64() * 1e3,
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(video_id: u32, from: f64, similarity: f32, tier: &'static str) -> LibraryMatch {
        LibraryMatch {
            video_id,
            title: format!("video {video_id}"),
            year: None,
            media_type: "movie",
            show: None,
            season: None,
            episode: None,
            file: String::new(),
            from,
            at: from,
            to: from + 3.0,
            similarity,
            distance: 30,
            tier,
            mirrored: false,
            preview_url: String::new(),
            also_in: Vec::new(),
            looked: None,
        }
    }

    use crate::library::index::entries::{EntryIndex, VideoEntries};
    use crate::library::index::fake::{FakeIndex, flipped, missing_video, random_hash};
    use crate::library::picture::hash::Hash;

    /// A picture of its own for each `seed`: a 16x16 grid of cells of random grey levels
    /// (different pictures as the hash sees them), with a fine grain.
    fn texture(seed: u64) -> Vec<u8> {
        let side = frames::FRAME_SIDE;
        let level =
            |n: u64| (n.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407) >> 56) as f32;
        (0..side * side)
            .map(|i| {
                let cell = ((i / side) / 8 * 16 + (i % side) / 8) as u64;
                let grain = level(i as u64 ^ seed.rotate_left(17)) / 32.0;
                (level(seed * 1_000 + cell) + grain).clamp(0.0, 255.0) as u8
            })
            .collect()
    }

    /// Two videos indexed at the clip's own rate (entry `k` at `k / CLIP_FPS` s, 10 s each):
    /// whole frames of random hashes, and for video 1 crop entries made from the pictures of
    /// [`texture`] (so that a frame showing one of them finds it in the crop tier). Their
    /// files do not exist; nothing here decodes.
    struct Fixture {
        dir: tempfile::TempDir,
        library: LibraryIndex,
        index: FakeIndex,
        whole: HashMap<u32, Vec<(Hash, u32)>>,
        budget: Budget,
    }

    impl Fixture {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            let library = LibraryIndex::open(dir.path()).unwrap();
            let index = FakeIndex::default();
            let period = 1000 / frames::CLIP_FPS;
            let mut whole = HashMap::new();
            for video in [1u32, 2] {
                let frames: Vec<(Hash, u32)> =
                    (0..80).map(|k| (random_hash(video as u64 * 1000 + k), k as u32 * period)).collect();
                let crops: Vec<(Hash, u32)> = if video == 1 {
                    (0..80u32)
                        .map(|k| {
                            let px = texture(k as u64);
                            (hash::crop_query_hashes(frames::frame_view(&px))[0].hash, k * period)
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                index.put(video, &VideoEntries { frames: &frames, crops: &crops, ..Default::default() }).unwrap();
                whole.insert(video, frames);
            }
            Self { dir, library, index, whole, budget: Budget::default() }
        }

        fn search(&self) -> ClipSearch<'_> {
            let record = |id: u32| missing_video(self.dir.path(), id, 10.0, 80);
            ClipSearch {
                library: &self.library,
                timelines: Timelines::new(&self.index),
                total: self.index.len(),
                videos: [(1, record(1)), (2, record(2))].into(),
                path: self.dir.path(),
                budget: &self.budget,
                probe: frames::Probe { duration: 2.0, width: 1280, height: 720, has_audio: false },
                seconds: 2.0,
                started: Instant::now(),
            }
        }
    }

    fn clip_times(n: usize) -> Vec<f64> {
        (0..n).map(|k| k as f64 / frames::CLIP_FPS as f64).collect()
    }

    /// 16 decoded frames: `whole(k)` the hypothesis of frame `k` against whole frames, and
    /// the picture of [`texture`] `picture(k)`.
    fn decoded(whole: impl Fn(usize) -> Hash, picture: impl Fn(usize) -> u64) -> Decoded {
        Decoded {
            times: clip_times(16),
            hypotheses: (0..16)
                .map(|k| vec![FrameHash { hash: whole(k), mirror: random_hash(90_000 + k as u64), quality: 100 }])
                .collect(),
            pictures: (0..16).map(|k| texture(picture(k))).collect(),
        }
    }

    #[test]
    fn whole_frames_that_agree_answer_in_the_whole_frame_tier() {
        let f = Fixture::new();
        let search = f.search();
        // The frames are video 2's entries 40.. under 8 bits of change (5 s in).
        let d = decoded(|k| flipped(f.whole[&2][40 + k].0, 8), |k| 500 + k as u64);
        let voted = search.vote_whole(&d).unwrap().expect("16 frames agree");
        assert_eq!((voted.vote.video, voted.vote.offset, voted.rule.tier), (2, 40, ClipTier::Frame));
    }

    #[test]
    fn when_whole_frames_agree_on_nothing_the_crop_tier_answers() {
        let f = Fixture::new();
        let search = f.search();
        // Whole frames: nothing near. The pictures: video 1's crop entries 24.. (3 s in).
        let d = decoded(|k| random_hash(70_000 + k as u64), |k| 24 + k as u64);
        assert!(search.vote_whole(&d).unwrap().is_none());
        let voted = search.vote_fallbacks(&d).unwrap().expect("the crop tier agrees");
        assert_eq!((voted.vote.video, voted.vote.offset, voted.rule.tier), (1, 24, ClipTier::Crop));
        // Pictures of nothing indexed: no tier stands.
        let d = decoded(|k| random_hash(70_000 + k as u64), |k| 5_000 + k as u64);
        assert!(search.vote_fallbacks(&d).unwrap().is_none());
    }

    #[test]
    fn the_report_places_the_clip_at_its_offset_and_names_the_other_video() {
        let f = Fixture::new();
        let search = f.search();
        let vote = ClipVote {
            video: 1,
            mirrored: false,
            offset: 24,
            support: 16,
            mean: 6.0,
            best_frame: 3,
            also: vec![(2, 40, 8.0)],
        };
        let answer = search.report(Voted { vote, rule: CLIP_TIERS[0], times: clip_times(16) });
        let m = answer.best.expect("a match");
        // 24 periods of 1/8 s in; the best frame 3/8 s into the clip (to the hundredth); the
        // clip is 2 s long.
        assert_eq!((m.video_id, m.from, m.at, m.to, m.tier), (1, 3.0, 3.38, 5.0, "clip"));
        let also: Vec<(u32, f64, f64)> = m.also_in.iter().map(|a| (a.video_id, a.from, a.to)).collect();
        assert_eq!(also, vec![(2, 5.0, 7.0)]);
    }

    #[test]
    fn picture_and_sound_that_agree_make_one_stronger_answer() {
        let fused = fuse(answer(3, 12.25, 0.5, "clip"), answer(3, 12.0, 0.5, "audio"));
        assert_eq!((fused.video_id, fused.tier, fused.similarity), (3, "clip+audio", 0.75));
        // The soundtrack's start (to 32 ms), the picture's distance.
        assert_eq!((fused.from, fused.distance), (12.0, 30));
    }

    #[test]
    fn picture_and_sound_that_disagree_leave_the_stronger_one() {
        // Another video, or the same one more than a second apart.
        let fused = fuse(answer(3, 12.0, 0.8, "clip"), answer(4, 12.0, 0.6, "audio"));
        assert_eq!((fused.video_id, fused.tier), (3, "clip"));
        let fused = fuse(answer(3, 12.0, 0.6, "clip"), answer(3, 14.0, 0.7, "audio"));
        assert_eq!((fused.video_id, fused.tier, fused.from), (3, "audio", 14.0));
    }
}
