//! Searching one still picture: whole frames first; when nothing is close, the fallback
//! tiers: crop, upper (the top of a picture covered below), screen (a phone photo's screen,
//! rectified) and shape (a picture centred in a canvas of another shape).
use image::DynamicImage;

use super::answer::similarity;
use super::fingerprint::{hash_image_hypotheses, hash_image_hypotheses_and_view};
use std::time::Instant;

use super::hash::{self, FrameHash, GrayView, Hash, MIN_QUALITY};
use super::scan::{Hit, Section};
use super::shot::{shared_with, shot_around};
use super::store::{Segment, VideoRecord};
use super::{LibraryIndex, SearchAnswer, frames, scan, screen};

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
/// Hits a still's scan keeps (best first): every entry of a scene shared by dozens of videos.
const HIT_CAP: usize = 512;

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
    /// The picture where a film's shape would lie centred in the canvas, against whole frames.
    Shape,
}

impl Tier {
    fn name(self) -> &'static str {
        match self {
            Tier::Frame => "frame",
            Tier::Crop => "crop",
            Tier::Upper => "upper",
            Tier::Screen => "screen",
            Tier::Shape => "shape",
        }
    }

    /// The distance a hit of this tier must be within.
    fn accept(self) -> u32 {
        match self {
            Tier::Frame | Tier::Screen => STILL_ACCEPT,
            Tier::Crop => CROP_ACCEPT,
            Tier::Upper => UPPER_ACCEPT,
            Tier::Shape => SHAPE_ACCEPT,
        }
    }

    /// The first-stage bound of this tier's scan: stricter for the tiers that send dozens of
    /// query hashes (see [`scan::PREFILTER_MANY`]).
    fn prefilter(self) -> u32 {
        match self {
            Tier::Frame | Tier::Screen => scan::PREFILTER,
            Tier::Crop | Tier::Upper | Tier::Shape => scan::PREFILTER_MANY,
        }
    }

    /// The index section this tier's queries are scanned against.
    fn section(self) -> Section {
        match self {
            Tier::Frame | Tier::Screen | Tier::Shape => Section::Frames,
            Tier::Crop => Section::Crops,
            Tier::Upper => Section::Upper,
        }
    }
}

impl LibraryIndex {
    /// Searches one still picture (a screenshot or a photo of a screen).
    pub fn search_image(&self, image: &DynamicImage) -> SearchAnswer {
        let started = Instant::now();
        let (segments, videos) = self.snapshot();
        let total: u64 = segments.iter().map(|s| s.len() as u64).sum();
        if segments.is_empty() {
            return SearchAnswer::none("The library is empty: no video has been indexed yet.", 0, 0, started);
        }
        let (hypotheses, view, rects) = hash_image_hypotheses_and_view(image);
        if hypotheses[0].quality < MIN_QUALITY {
            return SearchAnswer::none(
                "The picture is too dark or too flat to match against the library.",
                total,
                videos.len(),
                started,
            );
        }
        let refs: Vec<&Segment> = segments.iter().map(|s| s.as_ref()).collect();
        // Each tier tried: its query hashes (even indexes as given, odd ones mirrored) and hits.
        let mut tried: Vec<(Tier, Vec<Hash>, Vec<Hit>)> = Vec::new();
        let mut chosen: Option<(Tier, Hit)> = None;
        // Scans one tier; its best hit is chosen when it is more similar than the one so far.
        let mut search = |tier: Tier, found: &[FrameHash]| {
            let queries: Vec<Hash> = found.iter().flat_map(|f| [f.hash, f.mirror]).collect();
            let hits = if queries.is_empty() {
                Vec::new()
            } else {
                // Room for every entry of a scene shared by a few dozen videos.
                scan::scan(&refs, tier.section(), &queries, tier.accept(), tier.prefilter(), HIT_CAP)
            };
            if let Some(h) = hits.first()
                && chosen.is_none_or(|(t, b)| {
                    similarity(h.dist as u32, tier.accept()) > similarity(b.dist as u32, t.accept())
                })
            {
                chosen = Some((tier, *h));
            }
            tried.push((tier, queries, hits));
            chosen
        };
        let side = frames::FRAME_SIDE;
        let view = GrayView { width: side, height: side, pixels: &view };
        // When the whole picture found nothing close, every fallback tier is tried (stopping at
        // the first one within [`CLOSE`] bits was faster but cost more answers' times than it
        // won; README, "Fifth round"):
        let fallbacks: [(Tier, &dyn Fn() -> Vec<FrameHash>); 4] = [
            // the picture may be a crop: the indexed centre windows inside it;
            (Tier::Crop, &|| hash::crop_query_hashes(view)),
            // its lower part may be covered (big subtitles, a player's controls, a
            // broadcaster's lower third): its top against the indexed tops of key frames;
            (Tier::Upper, &|| hash::upper_query_hashes(view, &rects)),
            // it may be a phone photo of a screen: the screen found and warped back to a
            // rectangle, against whole frames (the ordinary queries above are not touched);
            (Tier::Screen, &|| screen::screen_hypotheses(&image.to_luma8(), side)),
            // its bars may not show where they end (a dark film over its own blurred copy):
            // where a picture of each film shape would lie, centred, cut as the index cuts.
            (Tier::Shape, &|| hash::shape_query_hashes(view, (image.width(), image.height()))),
        ];
        if search(Tier::Frame, &hypotheses).is_none_or(|(_, b)| b.dist as u32 > CLOSE) {
            for (tier, queries) in fallbacks {
                search(tier, &queries());
            }
        }
        let Some((tier, best)) = chosen else {
            return SearchAnswer::none("No match in the library.", total, videos.len(), started);
        };
        let (section, accept) = (tier.section(), tier.accept());
        let Some((_, queries, hits)) = tried.iter().find(|(t, _, _)| *t == tier) else {
            return SearchAnswer::none("No match in the library.", total, videos.len(), started);
        };
        let shot_of = |hit: &Hit, video: &VideoRecord| {
            let seg = refs[hit.segment as usize];
            shot_around(seg, section, &queries[hit.query as usize], hit.entry as usize, accept, video.duration)
        };
        let Some(video) = videos.get(&refs[best.segment as usize].video_id) else {
            return SearchAnswer::none("No match in the library.", total, videos.len(), started);
        };
        let shot = shot_of(&best, video);
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
        m.also_in = shared_with(&refs, hits, &best, accept)
            .iter()
            .filter_map(|h| {
                let other = videos.get(&refs[h.segment as usize].video_id)?;
                Some(Self::appearance(other, shot_of(h, other), h.dist as u32, accept))
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
        let queries: Vec<Hash> = hash_image_hypotheses(image).iter().flat_map(|f| [f.hash, f.mirror]).collect();
        let refs: Vec<&Segment> = segments.iter().map(|s| s.as_ref()).collect();
        let (hit, d0) = *scan::scan_exhaustive(&refs, &queries, 1).first()?;
        let seg = refs[hit.segment as usize];
        Some((seg.video_id, seg.times()[hit.entry as usize] as f64 / 1000.0, hit.dist as u32, d0))
    }

    /// For each query hypothesis of `image` (labelled by its rectangle, `painted` for the
    /// subtitle-free picture's), the nearest whole-frame entry of video `video_id` within 0.6 s
    /// of `t` (either mirror). For the benchmark's analysis of misses: which hypothesis came
    /// close, and how close.
    #[doc(hidden)]
    pub fn hypothesis_distances(&self, image: &DynamicImage, video_id: u32, t: f64) -> Vec<(String, u32)> {
        let (segments, _) = self.snapshot();
        let (hypotheses, view, rects) = hash_image_hypotheses_and_view(image);
        let side = frames::FRAME_SIDE;
        let gray = image.to_luma8();
        // Entries of `section` of the video within 0.6 s of `t`.
        let near = |section: Section| -> Vec<Hash> {
            segments
                .iter()
                .filter(|s| s.video_id == video_id)
                .flat_map(|s| {
                    s.range(section).filter(|&i| (s.times()[i] as f64 / 1000.0 - t).abs() <= 0.6).map(|i| s.hash(i))
                })
                .collect()
        };
        let (frames_near, uppers_near) = (near(Section::Frames), near(Section::Upper));
        let closest = |near: &[Hash], f: &hash::FrameHash| {
            near.iter().map(|h| hash::hamming(h, &f.hash).min(hash::hamming(h, &f.mirror))).min().unwrap_or(256)
        };
        let label = |r: &hash::Rect| format!("[{},{},{},{}]", r.x0, r.y0, r.x1, r.y1);
        let mut out: Vec<(String, u32)> = hypotheses
            .iter()
            .enumerate()
            .map(|(k, f)| (rects.get(k).map_or("painted".into(), label), closest(&frames_near, f)))
            .collect();
        out.extend(screen::screen_hypotheses(&gray, side).iter().map(|f| ("screen".into(), closest(&frames_near, f))));
        let view = GrayView { width: side, height: side, pixels: &view };
        out.extend(
            hash::shape_query_hashes(view, (image.width(), image.height()))
                .iter()
                .map(|f| ("shape".into(), closest(&frames_near, f))),
        );
        out.extend(
            hash::upper_query_rects(view, &rects)
                .iter()
                .map(|r| (format!("upper {}", label(r)), closest(&uppers_near, &hash::hash_rect(view, *r)))),
        );
        out
    }

    /// How many whole-frame entries pass the scan's first stage (word 0 within
    /// [`scan::PREFILTER`] of any query hash of `image`), and how many were looked at. For
    /// the benchmark: the second stage's cost depends on this share on real footage.
    #[doc(hidden)]
    pub fn first_stage_passes(&self, image: &DynamicImage) -> (u64, u64) {
        let (segments, _) = self.snapshot();
        let queries: Vec<u64> = hash_image_hypotheses(image).iter().flat_map(|f| [f.hash[0], f.mirror[0]]).collect();
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
