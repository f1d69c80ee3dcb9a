//! A phone photo's screen found a little off its true corners, moved onto them.
//!
//! [`screen`](crate::library::picture::screen) finds a screen's edges from the photo alone, and in a room photo
//! they land 1-7% of a side off the true ones (a bezel's inner edge blurred into a dark
//! picture, a glare spot over an edge). The picture warped from such corners keeps a strip
//! of bezel or loses a strip of picture, and its hash lands tens of bits further from the
//! frame than the true corners' picture does: far enough for a right hit not to be close, and
//! for the look at its frames to fail. Once the search has a hit for the screen, that hit's
//! frame is something to aim at: the corners are moved a step at a time, each move kept when
//! the warped picture hashes closer to the frame, coarse steps first. What the corners end at
//! is only one more screen to search: its hits are judged like any other screen's, by the
//! same thresholds and the same look at the source.
use image::GrayImage;
use rayon::prelude::*;

use crate::library::picture::warp::{self, Quad};

/// Steps the corners are moved by, in shares of the photo's sides, coarse to fine.
const STEPS: [f32; 3] = [0.02, 0.01, 0.005];
/// At most this many moves are kept at each step.
const PASSES: usize = 6;
/// No corner moves further than this share of the photo's sides from where it was found: a
/// screen found further off is another screen (and the frame aimed at might be any frame).
const REACH: f32 = 0.1;
/// The copy of the photo the corners are tried on has at most this many pixels a side (the
/// screen found is warped again from the fine copy once the corners are settled): a room
/// photo's screen is about 200 pixels wide there, more than the hash's 64 a side, and each
/// try costs a quarter of one from the copy of 512.
const TRY_SIDE: u32 = 256;

/// The copy of a photo [`refine_quad`] tries corners on: at most [`TRY_SIDE`] pixels a side.
/// Made once for all of a photo's screens.
pub(in crate::library) fn try_copy(gray: &GrayImage) -> GrayImage {
    warp::warp_copy_at(gray, TRY_SIDE)
}

/// The corners near `start` (shares of the photo's sides, as
/// [`screen_quads`](crate::library::picture::screen::screen_quads) gives them) whose picture, warped from `copy` (see
/// [`try_copy`]) to a `side`² square, `distance` finds closest, and that distance. Each pass
/// tries every move of one step (a corner along either axis, a side along its normal) and
/// keeps the best when it is closer; the corners found are `start` when no move is.
pub(in crate::library) fn refine_quad(
    copy: &GrayImage,
    start: Quad,
    side: usize,
    distance: &(dyn Fn(&[u8]) -> u32 + Sync),
) -> (Quad, u32) {
    let score = |q: &Quad| distance(&warp::warp_from(copy, *q, side));
    let mut best = (start, score(&start));
    for step in STEPS {
        for _ in 0..PASSES {
            let found = moves(&best.0, step)
                .into_par_iter()
                .filter(|q| within_reach(q, &start))
                .map(|q| (q, score(&q)))
                .min_by_key(|(_, d)| *d);
            match found {
                Some(f) if f.1 < best.1 => best = f,
                _ => break,
            }
        }
    }
    best
}

/// Every move of `quad` by `step`: each corner's x and y either way, and each side along its
/// normal either way (both its corners at once).
fn moves(quad: &Quad, step: f32) -> Vec<Quad> {
    let mut out = Vec::with_capacity(24);
    for sign in [-step, step] {
        for corner in 0..4 {
            let mut q = *quad;
            q[corner].0 += sign;
            out.push(q);
            let mut q = *quad;
            q[corner].1 += sign;
            out.push(q);
        }
        // Corners are top left, top right, bottom right, bottom left.
        for (a, b, along_x) in [(0, 1, false), (3, 2, false), (0, 3, true), (1, 2, true)] {
            let mut q = *quad;
            for c in [a, b] {
                if along_x { q[c].0 += sign } else { q[c].1 += sign }
            }
            out.push(q);
        }
    }
    out
}

/// Whether every corner of `quad` is within [`REACH`] of `start`'s and inside the photo.
fn within_reach(quad: &Quad, start: &Quad) -> bool {
    quad.iter().zip(start).all(|(p, s)| {
        (p.0 - s.0).abs() <= REACH + 1e-4
            && (p.1 - s.1).abs() <= REACH + 1e-4
            && (-1e-4..=1.0 + 1e-4).contains(&p.0)
            && (-1e-4..=1.0 + 1e-4).contains(&p.1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::frames::{FRAME_SIDE, frame_view};
    use crate::library::picture::hash::{self, Rect, hamming};

    /// A textured picture: a sum of plane waves.
    fn picture(w: u32, h: u32) -> GrayImage {
        GrayImage::from_fn(w, h, |x, y| {
            let (x, y) = (x as f32, y as f32);
            let v = 128.0 + 40.0 * (x * 0.031 + y * 0.017).sin() + 30.0 * (x * 0.007 - y * 0.043).cos()
                - 25.0 * (x * 0.052 + y * 0.029).sin();
            image::Luma([v.clamp(0.0, 255.0) as u8])
        })
    }

    #[test]
    fn corners_found_off_the_screen_move_back_onto_it() {
        // A photo: the picture in the middle 80% of a flat wall.
        let (w, h) = (640u32, 480u32);
        let inner = picture(512, 384);
        let mut photo = GrayImage::from_pixel(w, h, image::Luma([70]));
        image::imageops::replace(&mut photo, &inner, 64, 48);
        let truth: Quad = [(0.1, 0.1), (0.9, 0.1), (0.9, 0.9), (0.1, 0.9)];
        // Hashed whole, as a hit's rectangle is kept while the corners move.
        let whole = Rect { x0: 0, y0: 0, x1: FRAME_SIDE, y1: FRAME_SIDE };
        let hash_of = |sq: &[u8]| hash::hash_rect(frame_view(sq), whole).hash;
        let target = hash_of(&warp::warp_shares(&photo, truth, FRAME_SIDE));
        let distance = |sq: &[u8]| hamming(&hash_of(sq), &target);
        // Found 4% outside on the left and 3% inside at the top.
        let off: Quad = [(0.06, 0.13), (0.9, 0.13), (0.9, 0.9), (0.06, 0.9)];
        let before = distance(&warp::warp_shares(&photo, off, FRAME_SIDE));
        let (moved, after) = refine_quad(&try_copy(&photo), off, FRAME_SIDE, &distance);
        assert!(before > 60, "the screen found off its corners hashes {before} bits away");
        // Most of the way back by the hash (100 -> 24 bits here; the true corners: 0): the side
        // found outside moves back onto the picture's edge, and no corner ends further from its
        // true place than it started. The hash is a rugged surface, so a step that brings the
        // picture closer as a whole may leave a side a little off (the top stays 3% in here).
        assert!(after * 3 < before, "{before} -> {after}");
        assert!((moved[0].0 - 0.1).abs() <= 0.01 && (moved[3].0 - 0.1).abs() <= 0.01, "{moved:?}");
        let off_by =
            |q: &Quad| q.iter().zip(&truth).map(|(p, t)| (p.0 - t.0).abs().max((p.1 - t.1).abs())).collect::<Vec<_>>();
        for (m, o) in off_by(&moved).iter().zip(off_by(&off)) {
            assert!(*m <= o + 0.011, "{moved:?}");
        }
    }

    #[test]
    fn corners_never_leave_their_reach_or_the_photo() {
        // Brighter to the right: a distance that falls as the screen moves right pulls every
        // corner right, as far as it is let go.
        let photo = GrayImage::from_fn(400, 300, |x, _| image::Luma([(x * 255 / 399) as u8]));
        let darkness = |sq: &[u8]| {
            let mean = sq.iter().map(|&v| v as f32).sum::<f32>() / sq.len() as f32;
            ((255.0 - mean) * 100.0) as u32
        };
        let start: Quad = [(0.5, 0.2), (0.95, 0.2), (0.95, 0.8), (0.5, 0.8)];
        let (moved, _) = refine_quad(&try_copy(&photo), start, FRAME_SIDE, &darkness);
        for (m, s) in moved.iter().zip(&start) {
            assert!(m.0 <= 1.0 + 1e-3 && m.0 > s.0, "{moved:?}");
            assert!(m.0 - s.0 <= REACH + 1e-3, "{moved:?}");
        }
        assert!((moved[0].0 - 0.6).abs() < 1e-3 && (moved[1].0 - 1.0).abs() < 1e-3, "{moved:?}");
    }
}
