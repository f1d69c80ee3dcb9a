//! Searching one still picture: whole frames first; when nothing is close, the fallback
//! tiers: crop, upper (the top of a picture covered below), screen (a phone photo's screen,
//! rectified), window (a picture inside a picture), shape (a picture centred in a canvas of
//! another shape) and corner (a picture with a logo in a corner). When the hash finds several
//! moments about as close, the source decides between them (see `verify`).
pub mod query;
pub mod refine;
pub mod verify;

use std::collections::HashMap;
use std::time::Instant;

use image::DynamicImage;
use rayon::prelude::*;
use tokio_util::sync::CancellationToken;

use crate::library::answer::similarity;
use crate::library::index::entries::{COLUMNS, Hit, Probe, Section, Timelines};
use crate::library::index::store::VideoRecord;
use crate::library::picture::hash::{self, FrameHash, Hash, MIN_QUALITY};
use crate::library::policy::{self, CLOSE, Tier};
use crate::library::shot::{Shot, shared_with, shot_around, shot_within};
use crate::library::still::query::{Cut, ScreenAim, StillQuery, hash_cuts};
use crate::library::{LibraryIndex, SearchAnswer};
use verify::{Candidate, Look, Pooled};

/// Hits a still's scan keeps (best first): every entry of a scene shared by dozens of videos.
const HIT_CAP: usize = 512;
/// Runs of entries whose best hit is at most this many bits further than the best are
/// candidates the source decides between: two frames of an animation loop or of a shot where
/// little moves are as close as that to a query of either.
const VERIFY_SLACK: u32 = 10;
/// Seconds around a decision's span whose whole-frame entries stand for it (an entry stands
/// for the frames after it, up to the next).
const SPAN_MARGIN: f64 = 0.5;
/// How far (seconds) a column-tier answer's span reaches either side of its moment, unless
/// the whole picture held still there (see [`shot_within`]).
const COLUMN_RUN: f64 = 2.0;
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

impl Tried {
    /// The distance of its best hit.
    fn best(&self) -> Option<u32> {
        self.hits.first().map(|h| h.dist)
    }
}

impl LibraryIndex {
    /// Searches one still picture (a screenshot or a photo of a screen).
    pub fn search_image(&self, image: &DynamicImage) -> anyhow::Result<SearchAnswer> {
        self.search_image_within(image, None)
    }

    /// [`Self::search_image`]; `cancel` stops the decoding of candidate frames (see `verify`)
    /// when the request is gone.
    pub fn search_image_within(
        &self,
        image: &DynamicImage,
        cancel: Option<&CancellationToken>,
    ) -> anyhow::Result<SearchAnswer> {
        let started = Instant::now();
        let videos = self.videos();
        let entries = self.entries();
        if videos.is_empty() || entries.is_empty() {
            return Ok(SearchAnswer::none("The library is empty: no video has been indexed yet.", 0, 0, started));
        }
        let search = StillSearch {
            library: self,
            timelines: Timelines::new(entries),
            total: entries.len(),
            videos,
            cancel,
            query: StillQuery::new(image),
            started,
        };
        search.run()
    }
}

/// One still's search, stage by stage (see [`StillSearch::run`]).
struct StillSearch<'a> {
    library: &'a LibraryIndex,
    /// The index, and the timelines of it the stages have walked along.
    timelines: Timelines<'a>,
    /// Entries in the index when the search started.
    total: u64,
    videos: HashMap<u32, VideoRecord>,
    cancel: Option<&'a CancellationToken>,
    query: StillQuery<'a>,
    started: Instant,
}

impl StillSearch<'_> {
    /// The pipeline: the picture's own cuts against whole frames; when nothing is close, every
    /// fallback tier, and the screens found moved onto their hits; then the tiers that found
    /// anything decide in turn, and the answer is told with its shot and the other videos.
    fn run(&self) -> anyhow::Result<SearchAnswer> {
        let Some(whole) = self.scan_whole()? else {
            return Ok(self.none("The picture is too dark or too flat to match against the library."));
        };
        let mut tried = vec![whole];
        if tried[0].best().is_none_or(|d| d > CLOSE) {
            tried.extend(self.scan_fallbacks()?);
            let refined = self.refine_screens(&tried)?;
            tried.extend(refined);
        }
        match self.decide(&tried)? {
            Some(decided) => self.report(decided),
            None => Ok(self.none("No match in the library.")),
        }
    }

    fn none(&self, reason: &str) -> SearchAnswer {
        SearchAnswer::none(reason, self.total, self.videos.len(), self.started)
    }

    /// Stage 1: the picture's own cuts (see [`StillQuery::frame_cuts`]) against whole frames;
    /// `None` when the picture is too flat to say anything.
    fn scan_whole(&self) -> anyhow::Result<Option<Tried>> {
        let (cuts, hypotheses) = hash_cuts(self.query.frame_cuts(), false);
        if hypotheses[0].quality < MIN_QUALITY {
            return Ok(None);
        }
        Ok(Some(self.scan(Tier::Frame, cuts, hypotheses)?))
    }

    /// Stage 2: every fallback tier, in the order of the table below. When the whole picture
    /// found nothing close, all of them are tried (stopping at the first one within [`CLOSE`]
    /// bits was faster but cost more answers' times than it won; design: "Fallback tiers").
    fn scan_fallbacks(&self) -> anyhow::Result<Vec<Tried>> {
        let query = &self.query;
        let fallbacks: [(Tier, Guesses<'_>); 9] = [
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
            // it may be a vertical repost, a column of the frame: the indexed column windows
            // inside it.
            (Tier::Column, &|| vec![query.column_cuts()]),
            // it may be a photo held a little askew: its centre turned back by a few angles
            // either way, against the indexed centre windows.
            (Tier::Rotation, &|| vec![query.rotation_cuts()]),
            // it may be cut down to a face or a figure, a quarter of each side gone: the
            // indexed middles of frames inside it.
            (Tier::Deep, &|| vec![query.deep_cuts()]),
        ];
        let mut tried = Vec::new();
        for (tier, groups) in fallbacks {
            for cuts in groups() {
                let (cuts, found) = hash_cuts(cuts, tier.drops_flat());
                tried.push(self.scan(tier, cuts, found)?);
            }
        }
        Ok(tried)
    }

    /// Stage 3: a screen found a little off its corners warps to a picture tens of bits
    /// further from the frame than the true corners' picture. When no screen's best hit is
    /// close, each screen whose best hit is about as close as the best screen's has its
    /// corners moved toward that hit's frame, and what they warp to is searched as one more
    /// screen (see `refine`). Screens further off are left: each move of the corners is a
    /// warp and a hash.
    fn refine_screens(&self, tried: &[Tried]) -> anyhow::Result<Vec<Tried>> {
        let screens: Vec<&Tried> = tried.iter().filter(|t| t.tier == Tier::Screen).collect();
        let nearest = screens.iter().filter_map(|t| t.hits.first()).map(|h| h.dist).min();
        let mut aims = Vec::new();
        for (screen, t) in screens.iter().enumerate() {
            let Some(hit) = t.hits.first().filter(|h| nearest.is_some_and(|n| n > CLOSE && h.dist <= n + VERIFY_SLACK))
            else {
                continue;
            };
            let Some(timeline) = self.timelines.get(hit.video, Section::Frames)? else { continue };
            let cut = &t.cuts[hit.query / 2];
            aims.push(ScreenAim {
                screen,
                rect: cut.rect,
                mirrored: hit.query % 2 == 1,
                target: timeline.hash(hit.entry as usize),
                glare: cut.glare,
            });
        }
        let mut out = Vec::new();
        for cuts in self.query.refined_screen_cuts(&aims) {
            let (cuts, found) = hash_cuts(cuts, Tier::Screen.drops_flat());
            out.push(self.scan(Tier::Screen, cuts, found)?);
        }
        Ok(out)
    }

    /// Asks the index for one tier's cuts (as given and mirrored) within the tier's threshold
    /// and its band beyond (see `policy::BAND`; further for the painted-out picture).
    fn scan(&self, tier: Tier, cuts: Vec<Cut>, found: Vec<FrameHash>) -> anyhow::Result<Tried> {
        let queries: Vec<Hash> = found.iter().flat_map(|f| [f.hash, f.mirror]).collect();
        let band = tier.accept() + policy::BAND;
        let reach = band + if cuts.iter().any(|c| c.painted) { policy::PAINTED_BAND } else { 0 };
        let mut hits = if queries.is_empty() {
            Vec::new()
        } else {
            // Room for every entry of a scene shared by a few dozen videos.
            let probe = Probe {
                section: tier.section(),
                hashes: &queries,
                radius: reach,
                limit: HIT_CAP,
                many: tier.guesses_many(),
            };
            self.timelines.entries().near(&probe)?
        };
        // Past the band, only the painted-out picture's hits.
        hits.retain(|h| h.dist <= band || cuts[h.query / 2].painted);
        Ok(Tried { tier, cuts, queries, hits })
    }

    /// Stage 4: the tiers that found anything, the most similar best hit first, each in turn
    /// decides (see [`Self::decide_tier`]); when none of a tier's runs can stand, the next gets
    /// its turn (a wrong guess at a phone photo's screen must not hide the whole picture's
    /// match), at most [`MAX_TIERS`]. Then an upper-tier answer yields to the whole picture's
    /// (see [`Self::whole_over_upper`]).
    fn decide<'t>(&self, tried: &'t [Tried]) -> anyhow::Result<Option<Decision<'t>>> {
        let mut ranked: Vec<&Tried> = tried.iter().filter(|t| !t.hits.is_empty()).collect();
        let rank = |t: &Tried| similarity(t.hits[0].dist, t.tier.accept());
        ranked.sort_by(|a, b| rank(b).total_cmp(&rank(a)));
        let mut decided = None;
        let mut whole_failed = false;
        for tried in ranked.into_iter().take(MAX_TIERS) {
            decided = self.decide_tier(tried)?;
            if decided.is_some() {
                break;
            }
            whole_failed |= tried.tier == Tier::Frame;
        }
        let Some(decided) = decided else { return Ok(None) };
        if decided.tried.tier == Tier::Upper && !whole_failed {
            let whole = tried.iter().find(|t| t.tier == Tier::Frame && !t.hits.is_empty());
            if let Some(whole) = whole
                && let Some(other) = self.whole_over_upper(&decided, whole)?
            {
                return Ok(Some(other));
            }
        }
        Ok(Some(decided))
    }

    /// The top of a picture found by the upper tier may be the top of another moment: a shot
    /// that returns with something else below, or one whose top barely moves while its lower
    /// part does. When the whole picture's own hits decide on a different moment that is
    /// closer by the hash as a whole (by more than the slack between candidates) and looks
    /// more alike as a whole with the same picture (the cover lies over both alike), that
    /// moment is the answer.
    fn whole_over_upper<'t>(&self, upper: &Decision<'_>, whole: &'t Tried) -> anyhow::Result<Option<Decision<'t>>> {
        let Some(other) = self.decide_tier(whole)?.filter(|o| !o.same_moment(upper)) else { return Ok(None) };
        let closer = other.best.dist + VERIFY_SLACK < self.whole_distance(upper, &other.tried.queries)?;
        Ok((closer && self.looks_more_alike_whole(&other, upper)).then_some(other))
    }

    /// One tier's answer, or `None` when it has none that can stand. The distinct runs of
    /// entries the hash found about as close as its best; when there are several, or the best
    /// is not close, the frames of each are looked at again in the source (see `verify`): the
    /// one most like the query wins, and a match that is not close must look like the query
    /// there.
    fn decide_tier<'t>(&self, tried: &'t Tried) -> anyhow::Result<Option<Decision<'t>>> {
        let runs = self.candidate_runs(tried)?;
        if runs.is_empty() {
            return Ok(None);
        }
        let looked =
            if runs.len() > 1 || tried.hits[0].dist > CLOSE { self.look_again(tried, &runs) } else { Vec::new() };
        let winner = winner_of(&looked, &runs, tried);
        let (best, shot) = match winner {
            Some((run, l)) => {
                let (hit, mut shot) = runs[run];
                if !can_stand(tried, &hit, &l) {
                    return Ok(None);
                }
                shot.at = l.at;
                shot.from = shot.from.min(l.from);
                shot.to = shot.to.max(l.to);
                (hit, shot)
            }
            // Not looked at (close and alone, or the file could not be read): the hash decides,
            // within its threshold only (the band beyond needs the look).
            None if runs[0].0.dist <= tried.tier.accept() => runs[0],
            None => return Ok(None),
        };
        Ok(Some(Decision { tried, best, shot, runs, looked, winner }))
    }

    /// The whole shot around `hit` of one tier's scan (see [`shot_around`]); `None` when the
    /// video is gone from the catalog or the index.
    fn shot_of(&self, tried: &Tried, hit: &Hit) -> anyhow::Result<Option<Shot>> {
        let Some(video) = self.videos.get(&hit.video) else { return Ok(None) };
        let section = tried.tier.section();
        let Some(timeline) = self.timelines.get(hit.video, section)? else { return Ok(None) };
        let (query, entry) = (&tried.queries[hit.query], hit.entry as usize);
        if section != Section::Columns {
            return Ok(Some(shot_around(&timeline, query, entry, tried.tier.accept(), video.duration)));
        }
        // The column tier's windows are stored together, a moment's after another's: the shot
        // is walked along the hit's own window.
        let window = entry % COLUMNS;
        let own = timeline.window(window, COLUMNS);
        let mut shot = shot_within(&own, query, entry / COLUMNS, tried.tier.accept(), video.duration, COLUMN_RUN);
        shot.entries = (shot.entries.0 * COLUMNS + window, shot.entries.1 * COLUMNS + window);
        Ok(Some(shot))
    }

    /// The distinct runs of entries among `tried`'s hits within [`VERIFY_SLACK`] bits of its
    /// best, best first (the first is the best hit's), at most [`MAX_RUNS`].
    fn candidate_runs(&self, tried: &Tried) -> anyhow::Result<Vec<(Hit, Shot)>> {
        let best = tried.hits[0].dist;
        let mut runs: Vec<(Hit, Shot)> = Vec::new();
        for h in tried.hits.iter().take_while(|h| h.dist <= best + VERIFY_SLACK) {
            if runs.iter().any(|(r, s)| r.video == h.video && s.holds(h.entry as usize)) {
                continue;
            }
            let Some(shot) = self.shot_of(tried, h)? else { continue };
            runs.push((*h, shot));
            if runs.len() == MAX_RUNS {
                break;
            }
        }
        Ok(runs)
    }

    /// Each run's frames decoded from its file and compared with the query picture its hit
    /// came from (see [`verify`]): `(run, look)` for the runs that could be looked at, or
    /// nothing when the first run (the hash's own choice) could not be, so the hash's answer
    /// stands.
    fn look_again(&self, tried: &Tried, runs: &[(Hit, Shot)]) -> Vec<(usize, Look)> {
        let pictures: Vec<Option<Pooled>> =
            runs.iter().map(|(h, _)| Pooled::of(&tried.cuts[h.query / 2].picture(h.query % 2 == 1))).collect();
        let looks: Vec<Option<Look>> = runs
            .par_iter()
            .zip(&pictures)
            .map(|((h, shot), picture)| {
                let video = self.videos.get(&h.video)?;
                verify::look(&Candidate {
                    path: &video.path,
                    section: tried.tier.section(),
                    entry: h.entry,
                    from: shot.from,
                    to: shot.to,
                    best: h.ms as f64 / 1000.0,
                    query: picture.as_ref()?,
                    cancel: self.cancel,
                })
            })
            .collect();
        if looks.first().is_none_or(Option::is_none) {
            return Vec::new();
        }
        looks.into_iter().enumerate().filter_map(|(k, l)| Some((k, l?))).collect()
    }

    /// The distance from `queries` to the nearest whole-frame entry of `decision`'s span.
    fn whole_distance(&self, decision: &Decision<'_>, queries: &[Hash]) -> anyhow::Result<u32> {
        let Some(timeline) = self.timelines.get(decision.best.video, Section::Frames)? else { return Ok(256) };
        let timeline = timeline.as_ref();
        let shot = decision.shot;
        let within = |i: &usize| {
            let t = timeline.seconds(*i);
            shot.from - SPAN_MARGIN <= t && t <= shot.to + SPAN_MARGIN
        };
        Ok((0..timeline.len())
            .filter(within)
            .flat_map(|i| queries.iter().map(move |q| hash::hamming(&timeline.hash(i), q)))
            .min()
            .unwrap_or(256))
    }

    /// Whether `mine`'s frame looks more like the query than `other`'s frames do, both looked
    /// at with the picture and over the part of the frame `mine`'s look used: by more than
    /// [`verify::SAME_LOOK`]. False when `mine` was not looked at or the other file cannot be
    /// read.
    fn looks_more_alike_whole(&self, mine: &Decision<'_>, other: &Decision<'_>) -> bool {
        let Some((run, look)) = mine.winner else { return false };
        let hit = mine.runs[run].0;
        let Some(picture) = Pooled::of(&mine.tried.cuts[hit.query / 2].picture(hit.query % 2 == 1)) else {
            return false;
        };
        let Some(video) = self.videos.get(&other.best.video) else { return false };
        let theirs = verify::look(&Candidate {
            path: &video.path,
            section: mine.tried.tier.section(),
            entry: hit.entry,
            from: other.shot.from,
            to: other.shot.to,
            best: other.shot.at,
            query: &picture,
            cancel: self.cancel,
        });
        theirs.is_some_and(|t| look.score > t.score + verify::SAME_LOOK)
    }

    /// Stage 5: the decision as the answer: the winner's shot, how alike it looked, and the
    /// other videos the scene is in: as close by the hash, and, where their frames were looked
    /// at, as alike as the winner's (a recap or a trailer re-encodes the picture).
    fn report(&self, decided: Decision<'_>) -> anyhow::Result<SearchAnswer> {
        let Decision { tried, best, mut shot, runs, looked, winner } = decided;
        let (tier, accept) = (tried.tier, tried.tier.accept());
        let Some(video) = self.videos.get(&best.video) else { return Ok(self.none("No match in the library.")) };
        shot.to = shot.to.min(video.duration);
        let mirrored = best.query % 2 == 1;
        let mut m =
            self.library.make_match(video, shot.from, shot.at, shot.to, best.dist, accept, tier.name(), mirrored);
        m.looked = winner.map(|(_, l)| (l.score, l.blocks));
        let looks_apart = |video_id: u32| {
            let top = winner.map_or(f32::MIN, |(_, l)| l.score);
            let mut theirs = looked.iter().filter(|(run, _)| runs[*run].0.video == video_id).peekable();
            theirs.peek().is_some() && theirs.all(|(_, l)| !l.alike() || l.score < top - verify::SHARED_LOOK)
        };
        for h in shared_with(&tried.hits, &best, accept) {
            let Some(other) = self.videos.get(&h.video) else { continue };
            if looks_apart(other.id) {
                continue;
            }
            if let Some(shot) = self.shot_of(tried, &h)? {
                m.also_in.push(LibraryIndex::appearance(other, shot, h.dist, accept));
            }
        }
        Ok(SearchAnswer {
            best: Some(m),
            reason: None,
            frames_searched: self.total,
            videos: self.videos.len(),
            elapsed_ms: self.started.elapsed().as_secs_f64() * 1e3,
        })
    }
}

/// Whether a hit `dist` bits away in a tier that accepts `accept` bits is a match: close ones
/// always, further ones when their look stands for them (see [`Look::stands_for`]), and past
/// the tier's one-look distance ([`policy::one_look_up_to`]) only when it looks alike both as
/// a whole and by blocks.
fn can_stand(tried: &Tried, hit: &Hit, look: &Look) -> bool {
    let (dist, accept) = (hit.dist, tried.tier.accept());
    if dist <= CLOSE {
        return true;
    }
    // Past the tier's one-look distance both correlations must agree (`policy::TIERS`).
    let cut = &tried.cuts[hit.query / 2];
    let one_look_up_to = policy::one_look_up_to(tried.tier, cut.glare.is_some());
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
    /// Whether two decisions answer with one moment (one video, spans that meet).
    fn same_moment(&self, other: &Decision<'_>) -> bool {
        self.best.video == other.best.video && self.shot.from <= other.shot.to && other.shot.from <= self.shot.to
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::library::frames::FRAME_SIDE;
    use crate::library::index::entries::{EntryIndex, VideoEntries};
    use crate::library::index::fake::{FakeIndex, flipped, missing_video, random_hash};
    use crate::library::picture::glare::Glare;
    use crate::library::picture::hash::Rect;
    use crate::library::policy::{GUESS_ACCEPT, STILL_ACCEPT};

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

    fn look(score: f32, detail: f32) -> Look {
        Look { score, blocks: score, detail, at: 0.0, from: 0.0, to: 0.0 }
    }

    /// A run of entries `from..to` seconds whose hit is `dist` bits away.
    fn run(video: u32, dist: u32, from: f64, to: f64) -> (Hit, Shot) {
        let hit = Hit { query: 0, video, entry: 0, ms: (from * 1000.0) as u32, dist };
        (hit, Shot { from, at: from, to, entries: (0, 0) })
    }

    #[test]
    fn the_hash_choice_stands_unless_another_run_looks_more_alike() {
        let runs = [run(1, 30, 10.0, 10.5), run(1, 33, 40.0, 40.5), run(2, 35, 3.0, 3.5)];
        let frame = tried(Tier::Frame);
        let winner = |looked: &[(usize, Look)]| winner_of(looked, &runs, &frame).map(|(run, _)| run);
        // Another run more alike by more than SAME_LOOK wins.
        assert_eq!(winner(&[(0, look(0.80, 0.5)), (1, look(0.81, 0.5)), (2, look(0.70, 0.5))]), Some(1));
        // Alike to within SAME_LOOK: the hash's choice (the closer hit).
        assert_eq!(winner(&[(0, look(0.80, 0.5)), (1, look(0.803, 0.5)), (2, look(0.70, 0.5))]), Some(0));
        // ... unless the other's detail correlates better by more than DETAIL_MARGIN.
        assert_eq!(winner(&[(0, look(0.80, 0.5)), (1, look(0.803, 0.65)), (2, look(0.70, 0.5))]), Some(1));
        // Only the runs that were looked at count.
        assert_eq!(winner(&[(0, look(0.80, 0.5)), (2, look(0.70, 0.5))]), Some(0));
        assert_eq!(winner(&[]), None);
    }

    #[test]
    fn among_runs_alike_the_one_more_than_twice_as_long_wins() {
        let frame = tried(Tier::Frame);
        let runs = [run(1, 30, 10.0, 10.5), run(1, 31, 20.0, 22.0)];
        let looked = [(0, look(0.80, 0.5)), (1, look(0.80, 0.5))];
        assert_eq!(winner_of(&looked, &runs, &frame).map(|(r, _)| r), Some(1));
        let runs = [run(1, 30, 10.0, 10.5), run(1, 31, 20.0, 20.9)];
        assert_eq!(winner_of(&looked, &runs, &frame).map(|(r, _)| r), Some(0));
    }

    #[test]
    fn a_tie_never_turns_a_hash_choice_that_cannot_stand_into_a_match() {
        // A shape guess 50 bits away alike as a whole only cannot stand; a longer run tied
        // with it does not replace it (the tier then has no answer).
        let shape = tried(Tier::Shape);
        let half = |score| Look { score, blocks: 0.3, detail: 0.5, at: 0.0, from: 0.0, to: 0.0 };
        let runs = [run(1, 50, 10.0, 10.5), run(2, 50, 20.0, 25.0)];
        let looked = [(0, half(0.80)), (1, look(0.80, 0.5))];
        assert_eq!(winner_of(&looked, &runs, &shape).map(|(r, _)| r), Some(0));
        assert!(!can_stand(&shape, &runs[0].0, &looked[0].1));
    }

    /// Two videos of 40 entries, one every half second, whole frames and crop tier; their
    /// files do not exist, so no run can be looked at and the hash decides.
    struct Library {
        _dir: tempfile::TempDir,
        library: LibraryIndex,
        index: FakeIndex,
        frames: HashMap<u32, Vec<(Hash, u32)>>,
        image: DynamicImage,
    }

    impl Library {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            let library = LibraryIndex::open(dir.path()).unwrap();
            let index = FakeIndex::default();
            let mut frames = HashMap::new();
            for video in [1u32, 2] {
                let seed = video as u64 * 1000;
                let whole: Vec<(Hash, u32)> = (0..40).map(|k| (random_hash(seed + k), k as u32 * 500)).collect();
                let crops: Vec<(Hash, u32)> = (0..40).map(|k| (random_hash(seed + 500 + k), k as u32 * 500)).collect();
                index.put(video, &VideoEntries { frames: &whole, crops: &crops, ..Default::default() }).unwrap();
                frames.insert(video, whole.into_iter().chain(crops).collect());
            }
            let image = DynamicImage::new_rgb8(64, 64);
            Self { _dir: dir, library, index, frames, image }
        }

        fn search(&self) -> StillSearch<'_> {
            let record = |id: u32| missing_video(self._dir.path(), id, 20.0, 40);
            StillSearch {
                library: &self.library,
                timelines: Timelines::new(&self.index),
                total: self.index.len(),
                videos: [(1, record(1)), (2, record(2))].into(),
                cancel: None,
                query: StillQuery::new(&self.image),
                started: Instant::now(),
            }
        }

        /// A tier's scan that found, for each `(video, entry, dist)`, the entry (of its
        /// section: crop entries follow the 40 whole frames) that many bits away.
        fn tried(&self, tier: Tier, found: &[(u32, u32, u32)]) -> Tried {
            let mut t = tried(tier);
            let section_start = if tier.section() == Section::Crops { 40 } else { 0 };
            for &(video, entry, dist) in found {
                let (hash, ms) = self.frames[&video][section_start + entry as usize];
                t.hits.push(Hit { query: t.queries.len(), video, entry, ms, dist });
                t.queries.push(flipped(hash, dist));
                t.queries.push(random_hash(ms as u64 + 77));
                t.cuts.push(t.cuts[0].clone());
            }
            t.hits.sort_by_key(|h| h.dist);
            t
        }
    }

    #[test]
    fn a_tier_decision_prefers_the_closer_whole_frame_hit() {
        let lib = Library::new();
        let search = lib.search();
        // Two runs within the slack: neither file can be looked at, so the closer hit decides.
        let whole = lib.tried(Tier::Frame, &[(1, 10, 20), (2, 30, 26)]);
        let d = search.decide_tier(&whole).unwrap().expect("a match");
        assert_eq!((d.best.video, d.best.entry, d.best.dist, d.runs.len()), (1, 10, 20, 2));
        assert!(d.shot.from == 5.0 && d.shot.to < 5.5, "{:?}", (d.shot.from, d.shot.to));
        let whole = lib.tried(Tier::Frame, &[(1, 10, 27), (2, 30, 21)]);
        let d = search.decide_tier(&whole).unwrap().expect("a match");
        assert_eq!((d.best.video, d.best.entry), (2, 30));
    }

    #[test]
    fn a_hit_in_the_band_that_could_not_be_looked_at_is_no_match() {
        let lib = Library::new();
        let search = lib.search();
        let within = lib.tried(Tier::Frame, &[(1, 10, STILL_ACCEPT)]);
        assert!(search.decide_tier(&within).unwrap().is_some());
        let band = lib.tried(Tier::Frame, &[(1, 10, STILL_ACCEPT + 1)]);
        assert!(search.decide_tier(&band).unwrap().is_none());
    }

    #[test]
    fn the_tiers_decide_in_the_order_of_their_best_hits_similarity() {
        let lib = Library::new();
        let search = lib.search();
        // A whole frame 20 bits away is more similar than a crop 20 bits away (its threshold
        // is wider); a crop 20 bits away more than a whole frame 30 bits away.
        let tried = [lib.tried(Tier::Frame, &[(1, 10, 20)]), lib.tried(Tier::Crop, &[(2, 5, 20)])];
        let d = search.decide(&tried).unwrap().unwrap();
        assert_eq!((d.tried.tier, d.best.video), (Tier::Frame, 1));
        let tried = [lib.tried(Tier::Frame, &[(1, 10, 30)]), lib.tried(Tier::Crop, &[(2, 5, 20)])];
        let d = search.decide(&tried).unwrap().unwrap();
        assert_eq!((d.tried.tier, d.best.video, d.best.entry), (Tier::Crop, 2, 5));
        assert!(search.decide(&[lib.tried(Tier::Frame, &[])]).unwrap().is_none());
    }

    #[test]
    fn a_many_guess_tier_needs_both_correlations_once_a_hit_is_not_close() {
        let look = |score, blocks| Look { score, blocks, detail: 0.0, at: 0.0, from: 0.0, to: 0.0 };
        let hit = |dist| Hit { query: 0, video: 1, entry: 0, ms: 0, dist };
        // The diver's frame taken for a flat cartoon frame: alike as a whole only.
        let smooth = look(0.83, 0.53);
        assert!(!can_stand(&tried(Tier::Shape), &hit(62), &smooth));
        assert!(!can_stand(&tried(Tier::Corner), &hit(50), &smooth));
        // A screen guess: one correlation is enough up to GUESS_ACCEPT only.
        assert!(can_stand(&tried(Tier::Screen), &hit(GUESS_ACCEPT), &smooth));
        assert!(!can_stand(&tried(Tier::Screen), &hit(66), &smooth));
        assert!(can_stand(&tried(Tier::Screen), &hit(66), &look(0.89, 0.83)));
        // A screen with a glare taken off is a guess at the light too: as strict as the many.
        let spot = crate::library::picture::glare::tests::a_glare_on_a_cartoon();
        assert!(!can_stand(&tried_with(Tier::Screen, Some(spot)), &hit(GUESS_ACCEPT), &smooth));
        assert!(can_stand(&tried_with(Tier::Screen, Some(spot)), &hit(66), &look(0.89, 0.83)));
        // The whole picture is its own best guess: within its threshold, one correlation is
        // enough.
        assert!(can_stand(&tried(Tier::Frame), &hit(66), &smooth));
        assert!(can_stand(&tried(Tier::Shape), &hit(62), &look(0.70, 0.68)));
        // A close hit needs no look.
        assert!(can_stand(&tried(Tier::Crop), &hit(CLOSE), &look(0.2, 0.2)));
    }
}
