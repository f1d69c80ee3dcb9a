//! The projective warp: a quadrilateral of a picture (a photographed screen's corners, as
//! [`screen`](super::screen) finds them) mapped back onto a square, from a
//! copy of the photo fine enough for the hash's detail.
use image::GrayImage;

use crate::library::picture::hash::GrayView;

/// The most samples a side [`rectify`] averages for one pixel of its square.
const MAX_SAMPLES: usize = 8;
/// A screen found is warped from a copy of the photo with at most this many pixels a side:
/// finer than the copies it is found in, whose fine detail the hash needs (a room photo's
/// screen is under 400 pixels wide at 512, and a grid of thin lines is lost there).
const WARP_SIDE: u32 = 1024;
/// The projective map of the unit square onto `quad` (corners as [`find_screen`](super::screen::find_screen) gives
/// them): `x = (m0 u + m1 v + m2) / (m6 u + m7 v + 1)`, `y = (m3 u + m4 v + m5) / (...)`.
/// Heckbert's closed form.
pub(in crate::library) fn square_to_quad(quad: [(f32, f32); 4]) -> [f32; 8] {
    let [(x0, y0), (x1, y1), (x2, y2), (x3, y3)] = quad;
    let (sx, sy) = (x0 - x1 + x2 - x3, y0 - y1 + y2 - y3);
    let (dx1, dx2, dy1, dy2) = (x1 - x2, x3 - x2, y1 - y2, y3 - y2);
    let den = dx1 * dy2 - dx2 * dy1;
    if (sx.abs() < 1e-4 && sy.abs() < 1e-4) || den.abs() < 1e-6 {
        // A parallelogram: affine.
        return [x1 - x0, x3 - x0, x0, y1 - y0, y3 - y0, y0, 0.0, 0.0];
    }
    let g = (sx * dy2 - dx2 * sy) / den;
    let k = (dx1 * sy - sx * dy1) / den;
    [x1 - x0 + g * x1, x3 - x0 + k * x3, x0, y1 - y0 + g * y1, y3 - y0 + k * y3, y0, g, k]
}

/// The point the unit square's `(u, v)` goes to under the map `m` of [`square_to_quad`].
#[inline]
fn project(m: &[f32; 8], u: f32, v: f32) -> (f32, f32) {
    let z = m[6] * u + m[7] * v + 1.0;
    ((m[0] * u + m[1] * v + m[2]) / z, (m[3] * u + m[4] * v + m[5]) / z)
}

/// The point of `quad` (corners as [`find_screen`](super::screen::find_screen) gives them) that the unit square's
/// `(u, v)` goes to: the map [`rectify`] warps by (the benchmark places a frame's corners in
/// a photo with it).
pub fn quad_point(quad: [(f32, f32); 4], u: f32, v: f32) -> (f32, f32) {
    project(&square_to_quad(quad), u, v)
}

/// The quadrilateral `quad` of `img` warped onto a `side`² square. Each square pixel is the
/// mean of an n x n grid of bilinear samples, n enough for the grid to be about as fine as
/// `img`'s pixels (2 to [`MAX_SAMPLES`]): the index's squares are area averages of the frame,
/// and a warp that skips pixels aliases fine detail (a grid of thin lines, pixel art) into
/// the low frequencies the hash is made of.
pub fn rectify(img: GrayView<'_>, quad: [(f32, f32); 4], side: usize) -> Vec<u8> {
    let m = square_to_quad(quad);
    let (w, h) = (img.width, img.height);
    let at = |x: usize, y: usize| img.pixels[y * w + x] as f32;
    let sample = |x: f32, y: f32| {
        let (x, y) = (x.clamp(0.0, (w - 1) as f32), y.clamp(0.0, (h - 1) as f32));
        let (x0, y0) = (x.floor() as usize, y.floor() as usize);
        let (x1, y1) = ((x0 + 1).min(w - 1), (y0 + 1).min(h - 1));
        let (fx, fy) = (x - x0 as f32, y - y0 as f32);
        (at(x0, y0) * (1.0 - fx) + at(x1, y0) * fx) * (1.0 - fy) + (at(x0, y1) * (1.0 - fx) + at(x1, y1) * fx) * fy
    };
    // The longest side of the quadrilateral, in pixels of `img`.
    let span = (0..4)
        .map(|k| {
            let (p, q) = (quad[k], quad[(k + 1) % 4]);
            (p.0 - q.0).hypot(p.1 - q.1)
        })
        .fold(0.0f32, f32::max);
    let n = ((span / side as f32).ceil() as usize).clamp(2, MAX_SAMPLES);
    let offsets: Vec<f32> = (0..n).map(|k| (k as f32 + 0.5) / n as f32).collect();
    let mut out = vec![0u8; side * side];
    for j in 0..side {
        for i in 0..side {
            let mut sum = 0.0;
            for dv in &offsets {
                let v = (j as f32 + dv) / side as f32;
                for du in &offsets {
                    let u = (i as f32 + du) / side as f32;
                    let (x, y) = project(&m, u, v);
                    sum += sample(x, y);
                }
            }
            out[j * side + i] = (sum / (n * n) as f32).round() as u8;
        }
    }
    out
}

/// The size of a `w` x `h` picture's copy with at most `look` pixels a side (the picture's
/// own size when it is that small already).
pub(in crate::library) fn look_size((w, h): (u32, u32), look: u32) -> (u32, u32) {
    let scale = (look as f32 / w.max(h) as f32).min(1.0);
    (((w as f32 * scale).round() as u32).max(1), ((h as f32 * scale).round() as u32).max(1))
}

/// A screen's corners (top left, top right, bottom right, bottom left), in shares of the
/// photo's sides or in pixels.
pub(in crate::library) type Quad = [(f32, f32); 4];

/// Each quadrilateral of `quads` (in shares of the photo's sides, as [`screen_quads`] finds a
/// still photo's screens) warped to a `side`² square from one copy of the photo at most
/// [`WARP_SIDE`] pixels a side.
pub(in crate::library) fn warp_quads(gray: &GrayImage, quads: Vec<Quad>, side: usize) -> Vec<Vec<u8>> {
    if quads.is_empty() {
        return Vec::new();
    }
    let fine = warp_copy(gray);
    quads.into_iter().map(|shares| warp_from(&fine, shares, side)).collect()
}

/// The copy of a photo its screens are warped from: at most [`WARP_SIDE`] pixels a side.
fn warp_copy(gray: &GrayImage) -> GrayImage {
    warp_copy_at(gray, WARP_SIDE)
}

/// A copy of a photo with at most `most` pixels a side.
pub(in crate::library) fn warp_copy_at(gray: &GrayImage, most: u32) -> GrayImage {
    let (w, h) = look_size(gray.dimensions(), most);
    if (w, h) == gray.dimensions() { gray.clone() } else { image::imageops::thumbnail(gray, w, h) }
}

/// The quadrilateral with corners `shares` (of the sides of `fine`) warped to a `side`² square.
pub(in crate::library) fn warp_from(fine: &GrayImage, shares: Quad, side: usize) -> Vec<u8> {
    let (w, h) = (fine.width() as usize, fine.height() as usize);
    let view = GrayView { width: w, height: h, pixels: fine.as_raw() };
    rectify(view, shares.map(|(x, y)| (x * w as f32, y * h as f32)), side)
}

/// The screen with corners `shares` of a photo, warped as a still's screens are warped (see
/// [`warp_quads`]; for the benchmark: the true corners' picture).
pub(in crate::library) fn warp_shares(gray: &GrayImage, shares: Quad, side: usize) -> Vec<u8> {
    warp_from(&warp_copy(gray), shares, side)
}
