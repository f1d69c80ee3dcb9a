//! Looking into the engine for the benchmark's analysis of misses (`bench_library
//! --verbose`): how far each hypothesis of a still came from the true moment, where the
//! nearest entry is at any distance, and whether a phone photo's miss is its corners' fault.
//! Answers never use any of it.
use image::DynamicImage;

use crate::library::LibraryIndex;
use crate::library::index::entries::Section;
use crate::library::picture::hash::{self, FrameHash, Hash};
use crate::library::still::query::{Cut, StillQuery, hash_cuts};
use crate::library::{frames, picture::glare, picture::screen, picture::warp};

impl LibraryIndex {
    /// The nearest indexed entry (any tier) to a picture's own hypotheses at any distance:
    /// `(video id, seconds, distance, word-0 distance)`.
    #[doc(hidden)]
    pub fn nearest(&self, image: &DynamicImage) -> Option<(u32, f64, u32, u32)> {
        let queries: Vec<Hash> =
            crate::library::hash_image_hypotheses(image).iter().flat_map(|f| [f.hash, f.mirror]).collect();
        let mut ids: Vec<u32> = self.videos().into_keys().collect();
        ids.sort_unstable();
        let mut best: Option<(u32, f64, u32, u32)> = None;
        for id in ids {
            for section in Section::ALL {
                let Ok(Some(timeline)) = self.entries().timeline(id, section) else { continue };
                for i in 0..timeline.len() {
                    let h = timeline.hash(i);
                    for q in &queries {
                        let (d, d0) = (hash::hamming(&h, q), (h[0] ^ q[0]).count_ones());
                        if best.is_none_or(|b| d < b.2) {
                            best = Some((id, timeline.seconds(i), d, d0));
                        }
                    }
                }
            }
        }
        best
    }

    /// For each query hypothesis of `image` (labelled by its rectangle, `painted` for the
    /// subtitle-free picture's), the nearest whole-frame entry of video `video_id` within 0.6 s
    /// of `t` (either mirror): its distance and its first word's (the scan's first stage):
    /// which hypothesis came close, and how close.
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
        let crops_near = self.entries_near(video_id, t, Section::Crops);
        tier("rotation", query.rotation_cuts(), &crops_near);
        // The column and deep-crop tiers' placements are dozens: only the nearest.
        for (name, section, cuts) in
            [("column", Section::Columns, query.column_cuts()), ("deep crop", Section::Deep, query.deep_cuts())]
        {
            let near = self.entries_near(video_id, t, section);
            let (cuts, hashes) = hash_cuts(cuts, false);
            let nearest = cuts.iter().zip(&hashes).map(|(c, f)| (closest(&near, f), c.rect)).min_by_key(|x| x.0);
            out.extend(nearest.map(|(d, r)| (format!("{name} {}", label(&r)), d)));
        }
        out
    }

    /// For a phone photo: the screens found in `image` (corners in shares of its sides, as
    /// [`screen::screen_quads`]), and the distance to the nearest whole-frame entry of video
    /// `video_id` within 0.6 s of `t` of the picture warped as the screen tier warps it, but
    /// from the true corners `truth` (same order and units): whether a miss is the corners'
    /// fault or the picture's.
    #[doc(hidden)]
    pub fn screen_truth(
        &self,
        image: &DynamicImage,
        truth: [(f32, f32); 4],
        video_id: u32,
        t: f64,
    ) -> (Vec<[(f32, f32); 4]>, u32) {
        let gray = image.to_luma8();
        let square = warp::warp_shares(&gray, truth, frames::FRAME_SIDE);
        let near = self.entries_near(video_id, t, Section::Frames);
        let off = glare::without_glare(&square, frames::FRAME_SIDE).map(|(s, _)| s);
        let best = std::iter::once(&square)
            .chain(&off)
            .flat_map(|square| {
                let view = frames::frame_view(square);
                screen::still_square_rects(view).into_iter().map(move |r| hash::hash_rect(view, r))
            })
            .map(|f| closest(&near, &f).0)
            .min()
            .unwrap_or(256);
        (screen::screen_quads(&gray, true), best)
    }

    /// The hashes of the entries of `section` of video `video_id` within 0.6 s of `t`.
    fn entries_near(&self, video_id: u32, t: f64, section: Section) -> Vec<Hash> {
        let Ok(Some(timeline)) = self.entries().timeline(video_id, section) else { return Vec::new() };
        (0..timeline.len()).filter(|&i| (timeline.seconds(i) - t).abs() <= 0.6).map(|i| timeline.hash(i)).collect()
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
