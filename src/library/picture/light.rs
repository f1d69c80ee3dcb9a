//! A photo's light taken off a picture before its flat edges are judged.
//!
//! The index cuts each frame's flat edges ([`active_area`](super::hash::active_area): lines
//! whose pixels nearly all stay within 12 gray levels of the edge's colour, up to 35% of a
//! side): a dark film's black sides, a plain grey band above an interface. The hash is taken
//! of what is left, so a query must lose the same edges or it hashes another rectangle and
//! lands as far as chance. A phone photo of a screen keeps the edges but not their
//! flatness: a glare spot lifts one end of a black side by 70 levels, noise and a screen's
//! moiré spread every line. Measured from the true corners of the benchmark's room photos
//! (src/library/README.md, "Screen tier"), the rectangle was the loss in most misses: hashed over the
//! frame's own cut, 37 of 40 photos land within 40 bits, over the cut the photo itself
//! gives, 24.
//!
//! So the light is taken off first. The light under a picture is its **opening** by a
//! paraboloid (of a 3x3 mean, so that noise does not make the floor): the picture eroded,
//! each pixel taking the smallest of its neighbours lifted by a bowl, then dilated by the same
//! bowl. Any surface that bends no more than the bowl survives it unchanged (a glare spot, a
//! ramp, a vignette), while the picture's texture, which bends far more, is cut off above it;
//! on a flat edge the opening is the glare itself, on the picture it is the picture's dark
//! floor. With a flat window instead of a bowl, a glare spot's top is cut flat and 9 levels
//! of it stay (and a running minimum alone lags a ramp by the window's half width). The
//! photo less its light is the picture's detail on a level floor, where the flat edges are
//! flat again and the index's own rule finds them.
//!
//! That floor dips toward every dark thing near it, wide or thin: beside a strip of bezel that
//! a screen found 1-3% outside brings in, beside a word on a white title card, around a faint
//! rule across it, the floor sinks and the lines next to them are lifted out of the flat band
//! (a 128-square card's word 2 pixels off on each side moves its small rectangle's hash by
//! 40-70 bits). So the rule is also judged over a second floor: the **closing** by the same
//! bowl first (dilated, then eroded), which fills in whatever dark is narrower than the bowl
//! (a bezel strip, a stroke, a rule; not a film's black side or a dark scene), then its opening.
//! That floor lies over the picture's fine detail rather than under it, so the picture less it
//! is put at mid grey ([`MID`]), not clamped at black. Each floor gives its own rectangle; both
//! are searched where they differ (src/library/README.md, "Screen tier").
//!
//! It only chooses a rectangle: the hash is taken of the photo's picture as it is.
use crate::library::picture::hash::{GrayView, Rect, active_area_of};

/// Half width of the opening's window, in pixels of the 128 square: wider than the texture of
/// a picture seen through a screen (so that the floor is not the texture itself), narrower
/// than a glare spot (which the opening must follow). The benchmark's glare is a Gaussian of
/// about 23 pixels' deviation on the square; of 6, 8 and 12 (with a flat window), 12 found
/// the most rectangles (src/library/README.md, "Screen tier").
const OPEN_RADIUS: usize = 12;
/// Pixels at each side of a square left out of the judgement (and given back when the side is
/// not cut): a warped screen's outermost lines blend the picture with the bezel, and a screen
/// found a little outside its true corners (1-3% of a side is common) brings a few lines of
/// bezel or wall in; a line of either as the rule's reference matches neither. 2 pixels
/// found the rectangle from the true corners but not from the corners found (src/library/README.md,
/// "Screen tier": room photos 68.3 -> 85.0% on seed 7 with 5).
const EDGE: usize = 5;
/// The level the floor is put at: dark, as a black edge is, and clear of 0.
const FLOOR: f32 = 16.0;
/// The level the floor under the closed picture is put at: that floor lies over the picture's
/// fine detail as often as under it, and detail clamped at 0 would read as flat.
const MID: f32 = 128.0;
/// Curvature (gray levels per pixel², on the 128 square) of the paraboloid the opening rolls
/// under the picture: the light it follows may bend this much. The benchmark's glare bends
/// 0.13 at its top, where this bowl leaves about 2 levels of it and a flat window 9 (which
/// the ±12 of the flat rule cannot also spend on noise); a picture's texture bends 1 to 4
/// and stays above.
const CURVATURE: f32 = 0.1;
/// A side cut by fewer pixels than this is given back: the rule finds a line or two of any
/// plain picture flat once its light is off, and a cut that small moves few bits anyway.
const MIN_CUT: usize = 6;

/// The flat edges of `img` (a screen or window warped to a square) as the index's rule finds
/// them once the photo's light and noise are taken off, under each of the two floors (see the
/// module docs; the picture's opening first, then its closing's), the second only where it
/// differs; the whole picture where none are found. The rule is judged from [`EDGE`] pixels
/// in, and cuts no deeper than the index's 35% of the square's side.
pub fn flat_areas_under_light(img: GrayView<'_>) -> Vec<Rect> {
    let (w, h) = (img.width, img.height);
    let full = Rect { x0: 0, y0: 0, x1: w, y1: h };
    if w <= 2 * EDGE + 16 || h <= 2 * EDGE + 16 {
        return vec![full];
    }
    let pixels: Vec<f32> = img.pixels.iter().map(|&v| v as f32).collect();
    let smooth = box_mean(&pixels, w, h, 1);
    let r = (OPEN_RADIUS * w.min(h)).div_ceil(128).max(1);
    let open = |p: &[f32]| parabolic(&parabolic(p, w, h, r, Pass::Erode), w, h, r, Pass::Dilate);
    let closed = parabolic(&parabolic(&smooth, w, h, r, Pass::Dilate), w, h, r, Pass::Erode);
    let within = Rect { x0: EDGE, y0: EDGE, x1: w - EDGE, y1: h - EDGE };
    let mut out = Vec::new();
    for (under, at) in [(open(&smooth), FLOOR), (open(&closed), MID)] {
        let floor = box_mean(&under, w, h, 2);
        let level: Vec<u8> =
            pixels.iter().zip(&floor).map(|(v, f)| (v - f + at).round().clamp(0.0, 255.0) as u8).collect();
        let level = GrayView { width: w, height: h, pixels: &level };
        let cut = active_area_of(level, within, full);
        Rect {
            x0: if cut.x0 < MIN_CUT { 0 } else { cut.x0 },
            y0: if cut.y0 < MIN_CUT { 0 } else { cut.y0 },
            x1: if w - cut.x1 < MIN_CUT { w } else { cut.x1 },
            y1: if h - cut.y1 < MIN_CUT { h } else { cut.y1 },
        }
        .add_to(&mut out);
    }
    out
}

/// Which half of an opening (erode, then dilate) or a closing (dilate, then erode) a
/// [`parabolic`] pass is.
#[derive(Clone, Copy)]
enum Pass {
    Erode,
    Dilate,
}

/// Erosion (or dilation) by a paraboloid of curvature [`CURVATURE`] over a (2r+1)² window:
/// each pixel takes the smallest of `p(x + d) + CURVATURE * |d|² / 2` (the largest of
/// `p(x + d) - ...`). The paraboloid is a sum of a function of `dx` and one of `dy`, so the
/// pass runs along rows and then along columns.
fn parabolic(p: &[f32], w: usize, h: usize, r: usize, pass: Pass) -> Vec<f32> {
    let cost = |d: usize| CURVATURE * d as f32 * d as f32 / 2.0;
    lines(p, (w, h), |values, out| {
        let n = values.len();
        out.copy_from_slice(values);
        // Distance by distance, so that the inner loop runs along the line (the smallest or
        // largest does not depend on the order it is taken in: the same values as pixel by
        // pixel; both floors' rule over a 128 square took 11.0 ms that way, 4.9 ms this way).
        for d in 1..=r.min(n - 1) {
            let c = cost(d);
            for at in 0..n - d {
                // The pixels `at` and `at + d` are each other's neighbours `d` away.
                let (ahead, behind) = (values[at + d], values[at]);
                match pass {
                    Pass::Erode => {
                        out[at] = out[at].min(ahead + c);
                        out[at + d] = out[at + d].min(behind + c);
                    }
                    Pass::Dilate => {
                        out[at] = out[at].max(ahead - c);
                        out[at + d] = out[at + d].max(behind - c);
                    }
                }
            }
        }
    })
}

/// The mean over a (2r+1)² window.
fn box_mean(p: &[f32], w: usize, h: usize, r: usize) -> Vec<f32> {
    lines(p, (w, h), |values, out| {
        let n = values.len();
        for (at, o) in out.iter_mut().enumerate() {
            let window = &values[at.saturating_sub(r)..=(at + r).min(n - 1)];
            *o = window.iter().sum::<f32>() / window.len() as f32;
        }
    })
}

/// `pass` over each row and then over each column of the picture: it is given the line's
/// values and writes the line's result. Each line is copied out first, so that a column is a
/// slice too.
fn lines(p: &[f32], (w, h): (usize, usize), pass: impl Fn(&[f32], &mut [f32])) -> Vec<f32> {
    let along = |src: &[f32], rows: bool| {
        let (count, n) = if rows { (h, w) } else { (w, h) };
        let index = |line: usize, i: usize| if rows { line * w + i } else { i * w + line };
        let mut out = vec![0f32; src.len()];
        let (mut values, mut result) = (vec![0f32; n], vec![0f32; n]);
        for line in 0..count {
            for (i, v) in values.iter_mut().enumerate() {
                *v = src[index(line, i)];
            }
            pass(&values, &mut result);
            for (i, v) in result.iter().enumerate() {
                out[index(line, i)] = *v;
            }
        }
        out
    };
    along(&along(p, true), false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::picture::hash::active_area;

    /// A 128 square: black sides 30 pixels wide (and a black band of `top` lines above) around
    /// a textured middle, under a glare spot over the right side and a fixed pseudo-random
    /// noise of +-6.
    fn photographed(glare: f32, top: usize) -> Vec<u8> {
        let mut seed = 12345u32;
        (0..128 * 128)
            .map(|i| {
                let (x, y) = ((i % 128) as f32, (i / 128) as f32);
                let picture = if (30.0..98.0).contains(&x) && y >= top as f32 {
                    90.0 + 40.0 * (x * 0.31).sin() * (y * 0.17).cos() + 25.0 * (x * 0.05 + y * 0.09).sin()
                } else {
                    0.0
                };
                let d2 = (x - 110.0).powi(2) + (y - 40.0).powi(2);
                let spot = glare * (-d2 / (2.0 * 23.0f32.powi(2))).exp();
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                let noise = ((seed >> 16) % 13) as f32 - 6.0;
                (picture + spot + noise + 10.0).clamp(0.0, 255.0) as u8
            })
            .collect()
    }

    #[test]
    fn black_sides_under_a_glare_spot_are_cut_as_the_index_cut_them() {
        let clean = photographed(0.0, 0);
        let view = GrayView { width: 128, height: 128, pixels: &clean };
        let index = active_area(view);
        assert!((29..=31).contains(&index.x0) && (97..=99).contains(&index.x1), "{index:?}");
        let lit = photographed(70.0, 0);
        let view = GrayView { width: 128, height: 128, pixels: &lit };
        // The index's rule on the photo as it is keeps the lit side.
        assert_eq!(active_area(view).x1, 128);
        let found = flat_areas_under_light(view)[0];
        // Within two pixels: the floor follows the picture's edge a pixel or two out.
        assert!(found.x0.abs_diff(index.x0) <= 2 && found.x1.abs_diff(index.x1) <= 2, "{found:?} vs {index:?}");
        assert_eq!((found.y0, found.y1), (0, 128));
    }

    #[test]
    fn a_screen_found_a_little_outside_brings_no_wall_into_the_judgement() {
        // A black band above the picture, as the index cut it.
        let clean = photographed(0.0, 14);
        let index = active_area(GrayView { width: 128, height: 128, pixels: &clean });
        assert_eq!(index.y0, 14);
        // The photo: three lines of wall and one of bezel above the screen, as a screen found
        // 3% too high warps them in.
        let mut lit = photographed(70.0, 14);
        lit[..3 * 128].fill(120);
        lit[3 * 128..4 * 128].fill(40);
        let found = flat_areas_under_light(GrayView { width: 128, height: 128, pixels: &lit })[0];
        assert!(found.y0.abs_diff(14) <= 2, "{found:?}");
        assert!(found.x0.abs_diff(30) <= 2 && found.x1.abs_diff(98) <= 2, "{found:?}");
    }

    #[test]
    fn a_picture_with_no_flat_edge_is_left_whole() {
        let p: Vec<u8> = (0..128 * 128)
            .map(|i| {
                let (x, y) = ((i % 128) as f32, (i / 128) as f32);
                (120.0 + 50.0 * (x * 0.21).sin() * (y * 0.13 + 0.5).sin() + 0.3 * x).clamp(0.0, 255.0) as u8
            })
            .collect();
        let found = flat_areas_under_light(GrayView { width: 128, height: 128, pixels: &p });
        assert_eq!(found, vec![Rect { x0: 0, y0: 0, x1: 128, y1: 128 }]);
    }

    /// A white card (a title, a logo) 128 square with a dark word in the middle and, when
    /// `photographed`, a glare spot, noise and four columns of dark bezel down its left side
    /// (a screen found 3% outside its corners).
    fn card(photographed: bool) -> Vec<u8> {
        let mut seed = 7u32;
        (0..128 * 128)
            .map(|i| {
                let (x, y) = ((i % 128) as f32, (i / 128) as f32);
                let word = (32.0..96.0).contains(&x) && (56.0..70.0).contains(&y);
                let mut v = if word { 110.0 + 60.0 * (x * 0.9).sin() } else { 245.0 };
                if photographed {
                    let d2 = (x - 90.0).powi(2) + (y - 40.0).powi(2);
                    v = v * 0.85 + 40.0 * (-d2 / (2.0 * 23.0f32.powi(2))).exp();
                    seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    v += ((seed >> 16) % 9) as f32 - 4.0;
                    if x < 4.0 {
                        v = 12.0;
                    }
                }
                v.clamp(0.0, 255.0) as u8
            })
            .collect()
    }

    #[test]
    fn a_white_card_inside_a_strip_of_bezel_is_cut_at_its_word_as_the_index_cut_it() {
        let clean = card(false);
        let index = active_area(GrayView { width: 128, height: 128, pixels: &clean });
        assert_eq!(index, Rect { x0: 32, y0: 44, x1: 96, y1: 84 });
        let photo = card(true);
        let found = flat_areas_under_light(GrayView { width: 128, height: 128, pixels: &photo });
        assert_eq!(found.len(), 2, "{found:?}");
        // Under the floor of the picture as it is, the lines next to the bezel and next to the
        // word are lifted (the floor dips toward both): the cut is off by more than the hash
        // can bear.
        let near = |r: &Rect| {
            r.x0.abs_diff(index.x0) <= 2
                && r.x1.abs_diff(index.x1) <= 2
                && r.y0.abs_diff(index.y0) <= 2
                && r.y1.abs_diff(index.y1) <= 2
        };
        assert!(!near(&found[0]), "{found:?}");
        // Under the floor of the picture with its narrow dark parts filled in first, it is not.
        assert!(near(&found[1]), "{found:?} vs {index:?}");
    }
}
