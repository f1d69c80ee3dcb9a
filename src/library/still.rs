//! Searching one still picture: whole frames first; when nothing is close, the fallback
//! tiers: crop, upper (the top of a picture covered below), screen (a phone photo's screen,
//! rectified), window (a picture inside a picture), shape (a picture centred in a canvas of
//! another shape) and corner (a picture with a logo in a corner). When the hash finds several
//! moments about as close, the source decides between them (see `verify`).
use std::collections::HashMap;
use std::time::Instant;

use image::DynamicImage;
use rayon::prelude::*;
use tokio_util::sync::CancellationToken;

use super::answer::similarity;
use super::hash::{self, FrameHash, Hash, MIN_QUALITY};
use super::query::{Cut, ScreenAim, StillQuery, hash_cuts};
use super::scan::{Hit, Section};
use super::shot::{Shot, shared_with, shot_around};
use super::store::{Segment, VideoRecord};
use super::verify::{self, Candidate, Look, Pooled};
use super::{LibraryIndex, SearchAnswer, scan};

/// A still is a match when its best hash is at most this many bits (of 256) away.
pub const STILL_ACCEPT: u32 = 70;
/// A still whose best whole-frame hit is further than this also tries the fallback tiers
/// (crop, upper, screen, shape): a slightly cropped or covered picture can still pass for the
/// whole frame of a similar moment.
const CLOSE: u32 = 40;
/// A crop-tier hit is a match at most this many bits away. Stricter than [`STILL_ACCEPT`]:
/// a cropped query is tried under dozens of offsets, and each is a chance for a false accept.
pub const CROP_ACCEPT: u32 = 62;
/// An upper-tier hit is a match at most this many bits away: as strict as the crop tier (the
/// top of a picture carries less of it than the whole).
pub const UPPER_ACCEPT: u32 = 62;
/// A shape-tier hit is a match at most this many bits away: as strict as the crop tier (each
/// film shape is one more guess at where the picture lies).
pub const SHAPE_ACCEPT: u32 = 62;
/// A corner-tier hit is a match at most this many bits away: as strict as the crop tier (each
/// corner is one more guess at where a logo lies).
pub const CORNER_ACCEPT: u32 = 62;
/// A screen or window hit further than this stands only when it looks alike both as a whole
/// and by blocks (see [`can_stand`]): a photo's screens are few guesses, but past the
/// many-guess tiers' threshold one look was not enough (README, "Seventeenth round").
const FEW_GUESSES_ONE_LOOK: u32 = 62;
/// Hits a still's scan keeps (best first): every entry of a scene shared by dozens of videos.
const HIT_CAP: usize = 512;
/// Runs of entries whose best hit is at most this many bits further than the best are
/// candidates the source decides between: two frames of an animation loop or of a shot where
/// little moves are as close as that to a query of either.
const VERIFY_SLACK: u32 = 10;
/// Seconds around a decision's span whose whole-frame entries stand for it (an entry stands
/// for the frames after it, up to the next).
const SPAN_MARGIN: f64 = 0.5;
/// At most this many candidate runs are looked at again (one short decode each, in parallel).
const MAX_RUNS: usize = 4;
/// At most this many tiers (each screen or window found counts as one) get their turn to be
/// looked at, when the more similar ones' frames do not look like the query.
const MAX_TIERS: usize = 4;

/// A fallback tier's cuts of the query, made when the tier is tried: in groups searched (and
/// given their turn to be looked at) one by one.
type Guesses<'q> = &'q dyn Fn() -> Vec<Vec<Cut>>;

/// One tier a still was searched in: its cuts, its query hashes (even indexes as given, odd
/// ones mirrored: query `q` is cut `q / 2`) and its hits, best first.
struct Tried {
    tier: Tier,
    cuts: Vec<Cut>,
    queries: Vec<Hash>,
    hits: Vec<Hit>,
}

/// Which of a still's query sets found the match.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tier {
    /// The picture's own hypotheses against whole frames.
    Frame,
    /// Windows of a cropped picture against the indexed centre windows.
    Crop,
    /// The top of a picture whose lower part is covered against the indexed tops.
    Upper,
    /// The rectified screen of a phone photo against whole frames.
    Screen,
    /// A window inside the picture (a video in a web page, a picture-in-picture) against
    /// whole frames.
    Window,
    /// The picture where a film's shape would lie centred in the canvas, against whole frames.
    Shape,
    /// The picture with one corner painted out (a broadcaster's logo), against whole frames.
    Corner,
}

impl Tier {
    fn name(self) -> &'static str {
        match self {
            Tier::Frame => "frame",
            Tier::Crop => "crop",
            Tier::Upper => "upper",
            Tier::Screen => "screen",
            Tier::Window => "window",
            Tier::Shape => "shape",
            Tier::Corner => "corner",
        }
    }

    /// The distance a hit of this tier must be within.
    fn accept(self) -> u32 {
        match self {
            Tier::Frame | Tier::Screen | Tier::Window => STILL_ACCEPT,
            Tier::Crop => CROP_ACCEPT,
            Tier::Upper => UPPER_ACCEPT,
            Tier::Shape => SHAPE_ACCEPT,
            Tier::Corner => CORNER_ACCEPT,
        }
    }

    /// Whether the tier sends many guesses at once (offsets, tops, shapes, corners) rather
    /// than one picture or one screen.
    fn guesses_many(self) -> bool {
        matches!(self, Tier::Crop | Tier::Upper | Tier::Shape | Tier::Corner)
    }

    /// The first-stage bound of this tier's scan: stricter for the tiers that send dozens of
    /// query hashes (see [`scan::PREFILTER_MANY`]).
    fn prefilter(self) -> u32 {
        if self.guesses_many() { scan::PREFILTER_MANY } else { scan::PREFILTER }
    }

    /// Whether cuts too flat to say anything are left out (a covered or centred guess can
    /// land on a plain part of the picture; the picture's own cuts are judged as a whole).
    fn drops_flat(self) -> bool {
        matches!(self, Tier::Upper | Tier::Shape | Tier::Corner)
    }

    /// The index section this tier's queries are scanned against.
    fn section(self) -> Section {
        match self {
            Tier::Frame | Tier::Screen | Tier::Window | Tier::Shape | Tier::Corner => Section::Frames,
            Tier::Crop => Section::Crops,
            Tier::Upper => Section::Upper,
        }
    }
}

impl LibraryIndex {
    /// Searches one still picture (a screenshot or a photo of a screen).
    pub fn search_image(&self, image: &DynamicImage) -> SearchAnswer {
        self.search_image_within(image, None)
    }

    /// [`Self::search_image`]; `cancel` stops the decoding of candidate frames (see `verify`)
    /// when the request is gone.
    pub fn search_image_within(&self, image: &DynamicImage, cancel: Option<&CancellationToken>) -> SearchAnswer {
        let started = Instant::now();
        let (segments, videos) = self.snapshot();
        let total: u64 = segments.iter().map(|s| s.len() as u64).sum();
        if segments.is_empty() {
            return SearchAnswer::none("The library is empty: no video has been indexed yet.", 0, 0, started);
        }
        let query = StillQuery::new(image);
        let (frame_cuts, hypotheses) = hash_cuts(query.frame_cuts(), false);
        if hypotheses[0].quality < MIN_QUALITY {
            return SearchAnswer::none(
                "The picture is too dark or too flat to match against the library.",
                total,
                videos.len(),
                started,
            );
        }
        let refs: Vec<&Segment> = segments.iter().map(|s| s.as_ref()).collect();
        // Each tier tried: its cuts, its query hashes (even indexes as given, odd ones
        // mirrored: query `q` is cut `q / 2`) and its hits.
        let mut tried: Vec<Tried> = Vec::new();
        // Scans one tier.
        let search = |tried: &mut Vec<Tried>, tier: Tier, cuts: Vec<Cut>, found: Vec<FrameHash>| {
            let queries: Vec<Hash> = found.iter().flat_map(|f| [f.hash, f.mirror]).collect();
            let band = tier.accept() + verify::BAND;
            let reach = band + if cuts.iter().any(|c| c.painted) { verify::PAINTED_BAND } else { 0 };
            let mut hits = if queries.is_empty() {
                Vec::new()
            } else {
                // Room for every entry of a scene shared by a few dozen videos.
                scan::scan(&refs, tier.section(), &queries, reach, tier.prefilter(), HIT_CAP)
            };
            // Past the band, only the painted-out picture's hits.
            hits.retain(|h| h.dist as u32 <= band || cuts[h.query as usize / 2].painted);
            let best = hits.first().map(|h| h.dist as u32);
            tried.push(Tried { tier, cuts, queries, hits });
            best
        };
        // When the whole picture found nothing close, every fallback tier is tried (stopping at
        // the first one within [`CLOSE`] bits was faster but cost more answers' times than it
        // won; README, "Fifth round"):
        let fallbacks: [(Tier, Guesses<'_>); 6] = [
            // the picture may be a crop: the indexed centre windows inside it;
            (Tier::Crop, &|| vec![query.crop_cuts()]),
            // its lower part may be covered (big subtitles, a player's controls, a
            // broadcaster's lower third): its top against the indexed tops of key frames;
            (Tier::Upper, &|| vec![query.upper_cuts()]),
            // it may be a phone photo of a screen: the screen found and warped back to a
            // rectangle, against whole frames (the ordinary queries above are not touched);
            // each screen found is a guess of its own, with its own turn below;
            (Tier::Screen, &|| query.screen_cuts()),
            // it may show the picture in a window (a video in a web page, a picture over
            // another picture): each window found, cut out, against whole frames;
            (Tier::Window, &|| query.window_cuts()),
            // its bars may not show where they end (a dark film over its own blurred copy):
            // where a picture of each film shape would lie, centred, cut as the index cuts.
            (Tier::Shape, &|| vec![query.shape_cuts()]),
            // a broadcaster's logo may cover a corner: the picture with each corner painted out.
            (Tier::Corner, &|| vec![query.corner_cuts()]),
        ];
        if search(&mut tried, Tier::Frame, frame_cuts, hypotheses).is_none_or(|d| d > CLOSE) {
            for (tier, groups) in fallbacks {
                for cuts in groups() {
                    let (cuts, found) = hash_cuts(cuts, tier.drops_flat());
                    search(&mut tried, tier, cuts, found);
                }
            }
            // A screen found a little off its corners warps to a picture tens of bits further
            // from the frame than the true corners' picture. When no screen's best hit is
            // close, each screen whose best hit is about as close as the best screen's has its
            // corners moved toward that hit's frame, and what they warp to is searched as one
            // more screen (see `refine`; README, "Nineteenth round"). Screens further off are
            // left: each move of the corners is a warp and a hash.
            let screens: Vec<&Tried> = tried.iter().filter(|t| t.tier == Tier::Screen).collect();
            let nearest = screens.iter().filter_map(|t| t.hits.first()).map(|h| h.dist as u32).min();
            let aims: Vec<ScreenAim> = screens
                .iter()
                .enumerate()
                .filter_map(|(screen, t)| {
                    let hit = t.hits.first().filter(|h| {
                        let d = h.dist as u32;
                        nearest.is_some_and(|n| n > CLOSE && d <= n + VERIFY_SLACK)
                    })?;
                    let cut = &t.cuts[hit.query as usize / 2];
                    Some(ScreenAim {
                        screen,
                        rect: cut.rect,
                        mirrored: hit.query % 2 == 1,
                        target: refs[hit.segment as usize].hash(hit.entry as usize),
                        glare: cut.glare,
                    })
                })
                .collect();
            for cuts in query.refined_screen_cuts(&aims) {
                let (cuts, found) = hash_cuts(cuts, Tier::Screen.drops_flat());
                search(&mut tried, Tier::Screen, cuts, found);
            }
        }
        let none = || SearchAnswer::none("No match in the library.", total, videos.len(), started);
        // The tiers that found anything, the most similar best hit first. Each in turn: the
        // distinct runs of entries the hash found about as close as its best. When there are
        // several, or the best is not close, the frames of each are looked at again in the
        // source (see `verify`): the one most like the query wins, and a match that is not
        // close must look like the query there; when none does, the next tier gets its turn
        // (a wrong guess at a phone photo's screen must not hide the whole picture's match).
        let mut ranked: Vec<&Tried> = tried.iter().filter(|t| !t.hits.is_empty()).collect();
        let rank = |t: &Tried| similarity(t.hits[0].dist as u32, t.tier.accept());
        ranked.sort_by(|a, b| rank(b).total_cmp(&rank(a)));
        let decide = |tried| decide_tier(&refs, &videos, tried, cancel);
        let mut decided = None;
        let mut whole_failed = false;
        for tried in ranked.into_iter().take(MAX_TIERS) {
            decided = decide(tried);
            if decided.is_some() {
                break;
            }
            whole_failed |= tried.tier == Tier::Frame;
        }
        let Some(mut decided) = decided else { return none() };
        // The top of a picture found by the upper tier may be the top of another moment: a shot
        // that returns with something else below, or one whose top barely moves while its
        // lower part does. When the whole picture's own hits decide on a different moment that
        // is closer by the hash as a whole (by more than the slack between candidates) and
        // looks more alike as a whole with the same picture (the cover lies over both alike),
        // that moment is the answer (README, "Eighteenth round").
        if decided.tried.tier == Tier::Upper && !whole_failed {
            let whole = tried.iter().find(|t| t.tier == Tier::Frame && !t.hits.is_empty());
            if let Some(other) = whole.and_then(decide).filter(|o| !o.same_moment(&decided, &refs))
                && other.best.dist as u32 + VERIFY_SLACK < decided.whole_distance(&refs, &other.tried.queries)
                && other.looks_more_alike_whole(&decided, &refs, &videos, cancel)
            {
                decided = other;
            }
        }
        let Decision { tried, best, mut shot, runs, looked, winner } = decided;
        let (tier, accept) = (tried.tier, tried.tier.accept());
        let shot_of = |hit: &Hit, video: &VideoRecord| shot_for(&refs, tried, hit, video);
        let Some(video) = videos.get(&refs[best.segment as usize].video_id) else { return none() };
        shot.to = shot.to.min(video.duration);
        let mut m = self.make_match(
            video,
            shot.from,
            shot.at,
            shot.to,
            best.dist as u32,
            accept,
            tier.name(),
            best.query % 2 == 1,
        );
        m.looked = winner.map(|(_, l)| (l.score, l.blocks));
        // Other videos the scene is in: as close by the hash, and, where their frames were
        // looked at, as alike as the winner's (a recap or a trailer re-encodes the picture).
        let looks_apart = |video_id: u32| {
            let top = winner.map_or(f32::MIN, |(_, l)| l.score);
            let mut theirs =
                looked.iter().filter(|(run, _)| refs[runs[*run].0.segment as usize].video_id == video_id).peekable();
            theirs.peek().is_some() && theirs.all(|(_, l)| !l.alike() || l.score < top - verify::SHARED_LOOK)
        };
        m.also_in = shared_with(&refs, &tried.hits, &best, accept)
            .iter()
            .filter_map(|h| {
                let other = videos.get(&refs[h.segment as usize].video_id)?;
                (!looks_apart(other.id)).then(|| Self::appearance(other, shot_of(h, other), h.dist as u32, accept))
            })
            .collect();
        SearchAnswer {
            best: Some(m),
            reason: None,
            frames_searched: total,
            videos: videos.len(),
            elapsed_ms: started.elapsed().as_secs_f64() * 1e3,
        }
    }

    /// The nearest indexed whole-frame entry to a picture at any distance:
    /// `(video id, seconds, distance, word-0 distance)`. For calibration and the benchmark;
    /// answers never use it.
    #[doc(hidden)]
    pub fn nearest(&self, image: &DynamicImage) -> Option<(u32, f64, u32, u32)> {
        let (segments, _) = self.snapshot();
        let queries: Vec<Hash> = super::hash_image_hypotheses(image).iter().flat_map(|f| [f.hash, f.mirror]).collect();
        let refs: Vec<&Segment> = segments.iter().map(|s| s.as_ref()).collect();
        let (hit, d0) = *scan::scan_exhaustive(&refs, &queries, 1).first()?;
        let seg = refs[hit.segment as usize];
        Some((seg.video_id, seg.times()[hit.entry as usize] as f64 / 1000.0, hit.dist as u32, d0))
    }

    /// For each query hypothesis of `image` (labelled by its rectangle, `painted` for the
    /// subtitle-free picture's), the nearest whole-frame entry of video `video_id` within 0.6 s
    /// of `t` (either mirror): its distance and its first word's (the scan's first stage). For the
    /// benchmark's analysis of misses: which hypothesis came close, and how close.
    #[doc(hidden)]
    pub fn hypothesis_distances(&self, image: &DynamicImage, video_id: u32, t: f64) -> Vec<(String, (u32, u32))> {
        let query = StillQuery::new(image);
        let (frames_near, uppers_near) =
            (self.entries_near(video_id, t, Section::Frames), self.entries_near(video_id, t, Section::Upper));
        let label = |r: &hash::Rect| format!("[{},{},{},{}]", r.x0, r.y0, r.x1, r.y1);
        let own = query.rects().len();
        let mut out: Vec<(String, (u32, u32))> = query
            .frame_cuts()
            .iter()
            .enumerate()
            .map(|(k, c)| (if k < own { label(&c.rect) } else { "painted".into() }, closest(&frames_near, &c.hash())))
            .collect();
        let mut tier = |name: &str, cuts: Vec<Cut>, near: &[Hash]| {
            let (cuts, hashes) = hash_cuts(cuts, false);
            out.extend(cuts.iter().zip(&hashes).map(|(c, f)| (format!("{name} {}", label(&c.rect)), closest(near, f))));
        };
        tier("screen", query.screen_cuts().concat(), &frames_near);
        tier("window", query.window_cuts().concat(), &frames_near);
        tier("shape", query.shape_cuts(), &frames_near);
        tier("corner", query.corner_cuts(), &frames_near);
        tier("upper", query.upper_cuts(), &uppers_near);
        out
    }

    /// For the benchmark's analysis of phone photos: the screens found in `image` (corners in
    /// shares of its sides, as [`super::screen::screen_quads`]), and the distance to the
    /// nearest whole-frame entry of video `video_id` within 0.6 s of `t` of the picture warped
    /// as the screen tier warps it, but from the true corners `truth` (same order and units):
    /// whether a miss is the corners' fault or the picture's.
    #[doc(hidden)]
    pub fn screen_truth(
        &self,
        image: &DynamicImage,
        truth: [(f32, f32); 4],
        video_id: u32,
        t: f64,
    ) -> (Vec<[(f32, f32); 4]>, u32) {
        let gray = image.to_luma8();
        let square = super::screen::warp_shares(&gray, truth, super::frames::FRAME_SIDE);
        let near = self.entries_near(video_id, t, Section::Frames);
        let off = super::glare::without_glare(&square, super::frames::FRAME_SIDE).map(|(s, _)| s);
        let best = std::iter::once(&square)
            .chain(&off)
            .flat_map(|square| {
                let view = super::frames::frame_view(square);
                super::screen::still_square_rects(view).into_iter().map(move |r| super::hash::hash_rect(view, r))
            })
            .map(|f| closest(&near, &f).0)
            .min()
            .unwrap_or(256);
        (super::screen::screen_quads(&gray, true), best)
    }

    /// The hashes of the entries of `section` of video `video_id` within 0.6 s of `t` (for
    /// the benchmark's analysis of misses).
    fn entries_near(&self, video_id: u32, t: f64, section: Section) -> Vec<Hash> {
        let (segments, _) = self.snapshot();
        segments
            .iter()
            .filter(|s| s.video_id == video_id)
            .flat_map(|s| {
                s.range(section).filter(|&i| (s.times()[i] as f64 / 1000.0 - t).abs() <= 0.6).map(|i| s.hash(i))
            })
            .collect()
    }

    /// How many whole-frame entries pass the scan's first stage (word 0 within
    /// [`scan::PREFILTER`] of any query hash of `image`), and how many were looked at. For
    /// the benchmark: the second stage's cost depends on this share on real footage.
    #[doc(hidden)]
    pub fn first_stage_passes(&self, image: &DynamicImage) -> (u64, u64) {
        let (segments, _) = self.snapshot();
        let queries: Vec<u64> =
            super::hash_image_hypotheses(image).iter().flat_map(|f| [f.hash[0], f.mirror[0]]).collect();
        let (mut passed, mut scanned) = (0, 0);
        for seg in &segments {
            for &w in &seg.first_words()[..seg.n_frames] {
                scanned += 1;
                if queries.iter().any(|q| (w ^ q).count_ones() <= scan::PREFILTER) {
                    passed += 1;
                }
            }
        }
        (passed, scanned)
    }
}

/// The nearest of `near` to `f` (either mirror): its distance and its first word's (the
/// scan's first stage); `(256, 64)` when `near` is empty.
fn closest(near: &[Hash], f: &FrameHash) -> (u32, u32) {
    near.iter()
        .flat_map(|h| [(h, &f.hash), (h, &f.mirror)])
        .map(|(h, q)| (hash::hamming(h, q), (h[0] ^ q[0]).count_ones()))
        .min()
        .unwrap_or((256, 64))
}

/// Whether a hit `dist` bits away in a tier that accepts `accept` bits is a match: close ones
/// always, further ones when their look stands for them (see [`Look::stands_for`]), and a
/// guess among many only when it looks alike both as a whole and by blocks.
fn can_stand(tried: &Tried, hit: &Hit, look: &Look) -> bool {
    let (dist, accept) = (hit.dist as u32, tried.tier.accept());
    if dist <= CLOSE {
        return true;
    }
    // A guess among others that is not close enough must look alike as a whole and by blocks
    // even within its threshold: with dozens of guesses, one lands on an unrelated frame whose
    // coarse light agrees (README, "Seventeenth round": a frame of the diver taken for a flat
    // cartoon frame by the shape tier at 62 bits, and by a screen guess at 66, looked 0.83 as
    // a whole and 0.53 by blocks). For the many-guess tiers that is any hit not close; a
    // photo's screens and a picture's windows are few guesses whose true hits land far (a
    // phone photo), so only past [`FEW_GUESSES_ONE_LOOK`]. A screen with a glare taken off is
    // a guess at the light as well as the corners, and smoother than the photo: as strict as
    // the many (README, "Twenty-first round": a repost caption's white band taken for a spot,
    // what was left hit a flat cartoon at 62 bits, 0.68 alike as a whole, 0.12 by blocks).
    let cut = &tried.cuts[hit.query as usize / 2];
    let one_look_up_to = match tried.tier {
        t if t.guesses_many() => CLOSE,
        Tier::Screen | Tier::Window if cut.glare.is_some() => CLOSE,
        Tier::Screen | Tier::Window => FEW_GUESSES_ONE_LOOK,
        _ => accept,
    };
    if dist > one_look_up_to && !look.alike_both_ways() {
        return false;
    }
    if cut.painted { look.stands_for_painted(dist, accept) } else { look.stands_for(dist, accept) }
}

/// The run that wins among those looked at (`looked[0]` is the hash's own choice; `runs` are
/// the candidates they index): the hash's choice stands unless another looks more alike by
/// [`verify::SAME_LOOK`]. Among runs alike to within that, one whose detail correlates
/// [`verify::DETAIL_MARGIN`] better wins, failing that one more than twice as long (a
/// screenshot is taken at any moment, so the picture is likelier from a static shot than from
/// the instant the film passes through it again). A tie is broken only in favour of a run that
/// can stand for its hit, and only when the hash's choice can: it picks a moment, it never
/// turns "no match" into a match.
fn winner_of(looked: &[(usize, Look)], runs: &[(Hit, Shot)], tried: &Tried) -> Option<(usize, Look)> {
    let &(run, l) = looked.iter().max_by(|a, b| a.1.score.total_cmp(&b.1.score))?;
    let first = looked[0];
    let stands = |x: &(usize, Look)| can_stand(tried, &runs[x.0].0, &x.1);
    if first.1.score < l.score - verify::SAME_LOOK {
        return Some((run, l));
    }
    if !stands(&first) {
        return Some(first);
    }
    let tied = |x: &&(usize, Look)| x.1.score >= l.score - verify::SAME_LOOK && stands(x);
    let finer = looked.iter().filter(tied).max_by(|a, b| a.1.detail.total_cmp(&b.1.detail));
    if let Some(&f) = finer.filter(|f| f.1.detail > first.1.detail + verify::DETAIL_MARGIN) {
        return Some(f);
    }
    let length = |x: &(usize, Look)| runs[x.0].1.to - runs[x.0].1.from;
    let same = |x: &&(usize, Look)| tied(x) && x.1.detail >= first.1.detail - verify::DETAIL_MARGIN;
    let longest = looked.iter().filter(same).max_by(|a, b| length(a).total_cmp(&length(b)));
    Some(longest.copied().filter(|l| length(l) > 2.0 * length(&first)).unwrap_or(first))
}

/// What one tier decided: the hit and shot of its answer, the candidate runs it weighed, the
/// looks at them and the one that won.
struct Decision<'t> {
    tried: &'t Tried,
    best: Hit,
    shot: Shot,
    runs: Vec<(Hit, Shot)>,
    looked: Vec<(usize, Look)>,
    winner: Option<(usize, Look)>,
}

impl Decision<'_> {
    fn video_id(&self, refs: &[&Segment]) -> u32 {
        refs[self.best.segment as usize].video_id
    }

    /// Whether two decisions answer with one moment (one video, spans that meet).
    fn same_moment(&self, other: &Decision<'_>, refs: &[&Segment]) -> bool {
        self.video_id(refs) == other.video_id(refs)
            && self.shot.from <= other.shot.to
            && other.shot.from <= self.shot.to
    }

    /// The distance from `queries` to the nearest whole-frame entry of this decision's span.
    fn whole_distance(&self, refs: &[&Segment], queries: &[Hash]) -> u32 {
        let seg = refs[self.best.segment as usize];
        let within = |i: &usize| {
            let t = seg.times()[*i] as f64 / 1000.0;
            self.shot.from - SPAN_MARGIN <= t && t <= self.shot.to + SPAN_MARGIN
        };
        seg.range(Section::Frames)
            .filter(within)
            .flat_map(|i| queries.iter().map(move |q| hash::hamming(&seg.hash(i), q)))
            .min()
            .unwrap_or(256)
    }

    /// Whether this decision's frame looks more like the query than `other`'s frames do, both
    /// looked at with the picture and over the part of the frame this decision's look used: by
    /// more than [`verify::SAME_LOOK`]. False when this decision was not looked at or the other
    /// file cannot be read.
    fn looks_more_alike_whole(
        &self,
        other: &Decision<'_>,
        refs: &[&Segment],
        videos: &HashMap<u32, VideoRecord>,
        cancel: Option<&CancellationToken>,
    ) -> bool {
        let Some((run, mine)) = self.winner else { return false };
        let hit = self.runs[run].0;
        let Some(picture) = Pooled::of(&self.tried.cuts[hit.query as usize / 2].picture(hit.query % 2 == 1)) else {
            return false;
        };
        let Some(video) = videos.get(&other.video_id(refs)) else { return false };
        let theirs = verify::look(&Candidate {
            path: &video.path,
            section: self.tried.tier.section(),
            from: other.shot.from,
            to: other.shot.to,
            best: other.shot.at,
            query: &picture,
            cancel,
        });
        theirs.is_some_and(|t| mine.score > t.score + verify::SAME_LOOK)
    }
}

/// One tier's answer, or `None` when it has none that can stand. The distinct runs of entries
/// the hash found about as close as its best; when there are several, or the best is not
/// close, the frames of each are looked at again in the source (see `verify`): the one most
/// like the query wins, and a match that is not close must look like the query there.
fn decide_tier<'t>(
    refs: &[&Segment],
    videos: &HashMap<u32, VideoRecord>,
    tried: &'t Tried,
    cancel: Option<&CancellationToken>,
) -> Option<Decision<'t>> {
    let shot_of = |hit: &Hit, video: &VideoRecord| shot_for(refs, tried, hit, video);
    let runs = candidate_runs(refs, videos, tried, &tried.hits[0], &shot_of);
    let looked = if runs.len() > 1 || tried.hits[0].dist as u32 > CLOSE {
        look_again(refs, videos, tried, &runs, cancel)
    } else {
        Vec::new()
    };
    let winner = winner_of(&looked, &runs, tried);
    let (best, shot) = match winner {
        Some((run, l)) => {
            let (hit, mut shot) = runs[run];
            if !can_stand(tried, &hit, &l) {
                return None;
            }
            shot.at = l.at;
            shot.from = shot.from.min(l.from);
            shot.to = shot.to.max(l.to);
            (hit, shot)
        }
        // Not looked at (close and alone, or the file could not be read): the hash decides,
        // within its threshold only (the band beyond needs the look).
        None if runs[0].0.dist as u32 <= tried.tier.accept() => runs[0],
        None => return None,
    };
    Some(Decision { tried, best, shot, runs, looked, winner })
}

/// The whole shot around `hit` of one tier's scan (see [`shot_around`]).
fn shot_for(refs: &[&Segment], tried: &Tried, hit: &Hit, video: &VideoRecord) -> Shot {
    let seg = refs[hit.segment as usize];
    let tier = tried.tier;
    shot_around(
        seg,
        tier.section(),
        &tried.queries[hit.query as usize],
        hit.entry as usize,
        tier.accept(),
        video.duration,
    )
}

/// The distinct runs of entries among `tried`'s hits within [`VERIFY_SLACK`] bits of `best`,
/// best first (the first is `best`'s), at most [`MAX_RUNS`].
fn candidate_runs(
    refs: &[&Segment],
    videos: &HashMap<u32, VideoRecord>,
    tried: &Tried,
    best: &Hit,
    shot_of: &dyn Fn(&Hit, &VideoRecord) -> Shot,
) -> Vec<(Hit, Shot)> {
    let mut runs: Vec<(Hit, Shot)> = Vec::new();
    for h in tried.hits.iter().take_while(|h| h.dist as u32 <= best.dist as u32 + VERIFY_SLACK) {
        if runs.iter().any(|(r, s)| r.segment == h.segment && s.holds(h.entry as usize)) {
            continue;
        }
        let Some(video) = videos.get(&refs[h.segment as usize].video_id) else { continue };
        runs.push((*h, shot_of(h, video)));
        if runs.len() == MAX_RUNS {
            break;
        }
    }
    runs
}

/// Each run's frames decoded from its file and compared with the query picture its hit came
/// from (see [`verify`]): `(run, look)` for the runs that could be looked at, or nothing when
/// the first run (the hash's own choice) could not be, so the hash's answer stands.
fn look_again(
    refs: &[&Segment],
    videos: &HashMap<u32, VideoRecord>,
    tried: &Tried,
    runs: &[(Hit, Shot)],
    cancel: Option<&CancellationToken>,
) -> Vec<(usize, Look)> {
    let pictures: Vec<Option<Pooled>> =
        runs.iter().map(|(h, _)| Pooled::of(&tried.cuts[h.query as usize / 2].picture(h.query % 2 == 1))).collect();
    let looks: Vec<Option<Look>> = runs
        .par_iter()
        .zip(&pictures)
        .map(|((h, shot), picture)| {
            let seg = refs[h.segment as usize];
            let video = videos.get(&seg.video_id)?;
            let best = seg.times()[h.entry as usize] as f64 / 1000.0;
            verify::look(&Candidate {
                path: &video.path,
                section: tried.tier.section(),
                from: shot.from,
                to: shot.to,
                best,
                query: picture.as_ref()?,
                cancel,
            })
        })
        .collect();
    if looks.first().is_none_or(Option::is_none) {
        return Vec::new();
    }
    looks.into_iter().enumerate().filter_map(|(k, l)| Some((k, l?))).collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::library::frames::FRAME_SIDE;
    use crate::library::glare::Glare;
    use crate::library::hash::Rect;

    fn tried(tier: Tier) -> Tried {
        tried_with(tier, None)
    }

    fn tried_with(tier: Tier, glare: Option<Glare>) -> Tried {
        let cut = Cut {
            square: Arc::from(vec![0u8; FRAME_SIDE * FRAME_SIDE]),
            rect: Rect { x0: 0, y0: 0, x1: FRAME_SIDE, y1: FRAME_SIDE },
            painted: false,
            glare,
        };
        Tried { tier, cuts: vec![cut], queries: Vec::new(), hits: Vec::new() }
    }

    #[test]
    fn a_many_guess_tier_needs_both_correlations_once_a_hit_is_not_close() {
        let look = |score, blocks| Look { score, blocks, detail: 0.0, at: 0.0, from: 0.0, to: 0.0 };
        let hit = |dist| Hit { query: 0, segment: 0, entry: 0, dist };
        // The diver's frame taken for a flat cartoon frame: alike as a whole only.
        let smooth = look(0.83, 0.53);
        assert!(!can_stand(&tried(Tier::Shape), &hit(62), &smooth));
        assert!(!can_stand(&tried(Tier::Corner), &hit(50), &smooth));
        // A screen guess: one correlation is enough up to FEW_GUESSES_ONE_LOOK only.
        assert!(can_stand(&tried(Tier::Screen), &hit(FEW_GUESSES_ONE_LOOK as u16), &smooth));
        assert!(!can_stand(&tried(Tier::Screen), &hit(66), &smooth));
        assert!(can_stand(&tried(Tier::Screen), &hit(66), &look(0.89, 0.83)));
        // A screen with a glare taken off is a guess at the light too: as strict as the many.
        let spot = crate::library::glare::tests::a_glare_on_a_cartoon();
        assert!(!can_stand(&tried_with(Tier::Screen, Some(spot)), &hit(FEW_GUESSES_ONE_LOOK as u16), &smooth));
        assert!(can_stand(&tried_with(Tier::Screen, Some(spot)), &hit(66), &look(0.89, 0.83)));
        // The whole picture is its own best guess: within its threshold, one correlation is
        // enough.
        assert!(can_stand(&tried(Tier::Frame), &hit(66), &smooth));
        assert!(can_stand(&tried(Tier::Shape), &hit(62), &look(0.70, 0.68)));
        // A close hit needs no look.
        assert!(can_stand(&tried(Tier::Crop), &hit(CLOSE as u16), &look(0.2, 0.2)));
    }
}
