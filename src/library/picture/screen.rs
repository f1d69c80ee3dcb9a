//! A phone photo of a screen: the screen's four edges are found in the photo, and the
//! quadrilateral between them is warped back to a rectangle and hashed as more query
//! hypotheses. A global DCT hash of the photo as taken is cut from a picture that is tilted,
//! keystoned and framed by a bezel, a wall or smeared edges; the warped picture is the frame.
//!
//! An edge of the screen is a straight line, nearly parallel to a side of the photo, with
//! the picture's detail on its inner side and one of two things on its outer side: nothing
//! that changes across the line (a bezel, a wall, or the smeared edge pixels a camera app's
//! perspective correction leaves), or a darker band the picture is brighter than (a screen
//! is lit; its bezel is not). Each line of pixels across a side votes for the positions that
//! look like that; the straight line (any slope up to [`MAX_SLOPE`]) with the most votes is the
//! edge, and the outermost one when several come close (a picture's own flat areas make edges
//! further in).
//!
//! Like [`borders`](super::borders), the index never uses it: it only adds hypotheses to a
//! still that found nothing close the ordinary way, so the ordinary query is unchanged.
use image::GrayImage;

use crate::library::picture::hash::{self, GrayView, Rect};
use crate::library::picture::warp::look_size;

/// The photo is looked at and warped from copies with at most these many pixels a side: the
/// coarse one sees the start of a picture's detail through blur and noise, the fine one a
/// thin bezel's two edges apart.
const LOOK_SIDES: [u32; 2] = [256, 512];
/// Two screens found whose corners differ by at most this share of the photo's sides are one.
const SAME_QUAD: f32 = 0.01;
/// An edge is looked for in at most this share of the photo from each side.
const MAX_SHARE: f32 = 0.35;
/// Largest slope of an edge: its ends differ by at most this share of its length.
const MAX_SLOPE: f32 = 0.15;
/// Pixels left out on each side of a candidate line (the line itself may be blurred).
const GAP: usize = 1;
/// Pixels of the outer band next to the line.
const OUTER: usize = 3;
/// Pixels of the inner band; its detail is its third-smallest step, so a step or two of the
/// line's own (a thin bezel's two edges) do not pass for the picture's detail.
const INNER: usize = 6;
/// The inner band has detail when it exceeds `RATIO` times the outer band's plus `FLOOR`.
const RATIO: f32 = 1.6;
const FLOOR: f32 = 1.5;
/// A step across a line (gray levels) larger than this counts as "outer side changes" when
/// the outer region is judged quiet.
const QUIET: f32 = 6.0;
/// A brighter picture than its border by this many gray levels is an edge by itself...
const STEP: f32 = 24.0;
/// ... when the border band next to it is this flat (median step).
const FLAT: f32 = 3.0;
/// An edge needs the votes of at least this share of the lines across its side.
const MIN_VOTES: f32 = 0.3;
/// Among candidates with at least this share of the best one's votes, the outermost wins.
const OUTER_SHARE: f32 = 0.8;
/// The kinds of a line's vote: detail starts behind a quiet outside, or a lit picture starts
/// behind a dark, flat border.
const TEXTURED: u8 = 1;
const LIT: u8 = 2;
/// ... or a dark, flat band starts behind a brighter outside (a bezel's outer edge).
const DARK_BAND: u8 = 4;
/// A band no brighter than this (gray level) is dark.
const DARK: f32 = 48.0;
/// The screen must cover at least this share of the photo.
const MIN_AREA: f32 = 0.25;

/// One side's edge: the line's distance from the photo's side at the first and the last line
/// across it (pixels), and the share of lines that voted for it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Edge {
    a: f32,
    b: f32,
    votes: f32,
}

const NONE: Edge = Edge { a: 0.0, b: 0.0, votes: 0.0 };

/// The pixels of a side, as `n` lines of `len` pixels running from the photo's side inwards.
struct Profile {
    n: usize,
    len: usize,
    /// The pixels smoothed along each line (see [`profile`]).
    level: Vec<f32>,
    /// The steps of `level`.
    smooth_step: Vec<f32>,
    /// `|pixel[j + 1] - pixel[j]|` along each line (0 at the end).
    step: Vec<f32>,
}

#[derive(Clone, Copy)]
enum Side {
    Top,
    Bottom,
    Left,
    Right,
}

fn profile(img: GrayView<'_>, side: Side) -> Profile {
    let (w, h) = (img.width, img.height);
    let (n, len) = match side {
        Side::Top | Side::Bottom => (w, h),
        Side::Left | Side::Right => (h, w),
    };
    let mut level = vec![0f32; n * len];
    for i in 0..n {
        for j in 0..len {
            let (x, y) = match side {
                Side::Top => (i, j),
                Side::Bottom => (i, h - 1 - j),
                Side::Left => (j, i),
                Side::Right => (w - 1 - j, i),
            };
            level[i * len + j] = img.pixels[y * w + x] as f32;
        }
    }
    let steps = |level: &[f32]| {
        let mut step = vec![0f32; n * len];
        for i in 0..n {
            for j in 0..len - 1 {
                step[i * len + j] = (level[i * len + j + 1] - level[i * len + j]).abs();
            }
        }
        step
    };
    // The same lines smoothed by a 3-pixel box along them: fine periodic texture (the moire a
    // camera makes of a screen's pixel grid, laid over bezel and wall alike) averages out,
    // and a step of the light stays a step, one pixel wider.
    let mut smooth = level.clone();
    for i in 0..n {
        for j in 1..len.saturating_sub(1) {
            let k = i * len + j;
            smooth[k] = (level[k - 1] + level[k] + level[k + 1]) / 3.0;
        }
    }
    let (step, smooth_step) = (steps(&level), steps(&smooth));
    Profile { n, len, level: smooth, step, smooth_step }
}

fn median3(x: f32, y: f32, z: f32) -> f32 {
    x.max(y).min(x.min(y).max(z))
}

/// Every line's votes across one side: `bits[i * (max + 1) + q]` says what line `i` sees
/// start at pixel `q` (a set of [`TEXTURED`], [`LIT`], [`DARK_BAND`]), for `q` in
/// `min..=max`. Made once for every line of a side; each pass counts them over the lines it
/// judges.
struct Votes {
    n: usize,
    min: usize,
    max: usize,
    bits: Vec<u8>,
}

fn votes(p: &Profile) -> Option<Votes> {
    let (n, len) = (p.n, p.len);
    let max = ((len as f32 * MAX_SHARE) as usize).min(len.saturating_sub(GAP + INNER + 1));
    let min = GAP + OUTER;
    if max <= min || n < 2 {
        return None;
    }
    let mut bits = vec![0u8; n * (max + 1)];
    let mut busy = vec![0usize; len + 1];
    for i in 0..n {
        let d = &p.step[i * len..(i + 1) * len];
        let l = &p.level[i * len..(i + 1) * len];
        let ds = &p.smooth_step[i * len..(i + 1) * len];
        for j in 0..len {
            busy[j + 1] = busy[j] + usize::from(d[j] > QUIET);
        }
        for q in min..=max {
            // Quiet outside: hardly a step from the photo's side to the line.
            let quiet = busy[q - 1] <= 2 + q / 10;
            // Detail inside: the inner band's third-smallest step exceeds the outer band's
            // (median) by RATIO and FLOOR, that is at most two of its steps do not.
            let textured = quiet && {
                let outer = median3(d[q - GAP - 1], d[q - GAP - 2], d[q - GAP - 3]);
                let floor = RATIO * outer + FLOOR;
                d[q + GAP..q + GAP + INNER].iter().filter(|&&x| x <= floor).count() < INNER / 2
            };
            let lit = l[q + 1] - l[q - 2] >= STEP && median3(ds[q - GAP - 1], ds[q - GAP - 2], ds[q - GAP - 3]) <= FLAT;
            // A dark, flat band starts behind a brighter outside: the outer edge of a bezel
            // around a picture too dark at its own edge to show where it starts.
            let dark = l[q - 2] - l[q + 1] >= STEP
                && median3(ds[q + GAP], ds[q + GAP + 1], ds[q + GAP + 2]) <= FLAT
                && l[q + GAP + 1] <= DARK;
            bits[i * (max + 1) + q] =
                (u8::from(textured) * TEXTURED) | (u8::from(lit) * LIT) | (u8::from(dark) * DARK_BAND);
        }
    }
    Some(Votes { n, min, max, bits })
}

/// The kind sets a side's edge is chosen by (see [`Counted::edge`]): either detail or a lit
/// picture, a lit picture alone, a bezel's outer edge.
const SETS: [u8; 3] = [TEXTURED | LIT, LIT, DARK_BAND];

/// One side's candidate edges judged over some of its lines: for each kind set of [`SETS`],
/// the edge it chooses and the best line's share of votes.
#[derive(Clone, Copy)]
struct Counted {
    chosen: [(Edge, f32); 3],
}

/// Counts `v`'s votes along every straight line across lines `lines.0..lines.1` (every
/// other line), from `a` at line 0 to `b` at line `n - 1`, `|a - b|` at most [`MAX_SLOPE`] of
/// `n`; for each kind set, the outermost line it votes for nearly as well as its best.
fn count(v: &Votes, lines: (usize, usize)) -> Counted {
    let none = Counted { chosen: [(NONE, 0.0); 3] };
    let (n, min, max) = (v.n, v.min, v.max);
    if lines.1 <= lines.0 + 1 {
        return none;
    }
    let width = max + 1;
    let slope = (n as f32 * MAX_SLOPE) as isize;
    let span = (n - 1) as isize;
    let slopes = (2 * slope + 1) as usize;
    // The line from a to b = a + s - slope passes line i at a + shift, shift = (b - a) i / span
    // rounded half up, the same for every a: each line across the side adds its votes to a
    // whole row of candidate lines (one slope, every start) at once.
    let mut votes: [Vec<u16>; 3] = std::array::from_fn(|_| vec![0u16; slopes * width]);
    let mut row = vec![0u8; width];
    for i in (lines.0..lines.1).step_by(2) {
        let bits = &v.bits[i * width..(i + 1) * width];
        for (k, set) in SETS.iter().enumerate() {
            for (r, b) in row.iter_mut().zip(bits) {
                *r = u8::from(b & set != 0);
            }
            // Most lines vote for no position of a kind (a lit start is rare).
            if !row.contains(&1) {
                continue;
            }
            for s in 0..slopes {
                let d = s as isize - slope;
                let shift = (d * i as isize + span / 2).div_euclid(span);
                let Some((lo, hi)) = a_range(min, max, d) else { continue };
                let from = (lo as isize + shift) as usize;
                let dst = &mut votes[k][s * width + lo..=s * width + hi];
                for (c, r) in dst.iter_mut().zip(&row[from..=from + (hi - lo)]) {
                    *c += u16::from(*r);
                }
            }
        }
    }
    let counted = (lines.1 - lines.0).div_ceil(2) as f32;
    let mut chosen = none.chosen;
    for (k, votes) in votes.iter().enumerate() {
        let share = |s: usize, a: usize| votes[s * width + a] as f32 / counted;
        let candidates = || {
            (0..slopes).flat_map(move |s| {
                a_range(min, max, s as isize - slope)
                    .into_iter()
                    .flat_map(move |(lo, hi)| (lo..=hi).map(move |a| (s, a)))
            })
        };
        let top = candidates().map(|(s, a)| share(s, a)).fold(0.0, f32::max);
        if top < MIN_VOTES {
            chosen[k] = (NONE, top);
            continue;
        }
        // The outermost (smallest a + b; of equals, the smallest a).
        let edge = candidates()
            .filter(|&(s, a)| share(s, a) >= OUTER_SHARE * top)
            .min_by_key(|&(s, a)| (2 * a + s, a))
            .map_or(NONE, |(s, a)| {
                let b = (a as isize + s as isize - slope) as usize;
                Edge { a: a as f32, b: b as f32, votes: share(s, a) }
            });
        chosen[k] = (edge, top);
    }
    Counted { chosen }
}

/// The first and last start `a` in `min..=max` whose line ends at `a + d` in `min..=max` too;
/// `None` when there is none.
fn a_range(min: usize, max: usize, d: isize) -> Option<(usize, usize)> {
    let lo = (min as isize).max(min as isize - d);
    let hi = (max as isize).min(max as isize - d);
    (lo <= hi).then_some((lo as usize, hi as usize))
}

impl Counted {
    /// The edge of the side; [`NONE`] when no line has [`MIN_VOTES`]. With `bezel_only`, only
    /// a bezel's outer edge.
    fn edge(&self, bezel_only: bool) -> Edge {
        // Indexes into SETS.
        let (either_kind, lit_kind, dark_kind) = (0, 1, 2);
        if bezel_only {
            return self.chosen[dark_kind].0;
        }
        // A lit picture against a dark, flat border is the surest sign of a screen (a thin
        // bezel's outer edge, blurred, can pass for the start of detail, never for a lit
        // picture), when it is about as well supported as the best line of either kind: a
        // bright patch of the picture's own against a dark one is lit too, along part of a side.
        let (any, any_top) = self.chosen[either_kind];
        let (lit, lit_top) = self.chosen[lit_kind];
        if lit != NONE && lit_top >= LIT_SHARE * any_top {
            return lit;
        }
        // The outer edge of a dark band is the last resort.
        if any != NONE { any } else { self.chosen[dark_kind].0 }
    }
}

/// A lit edge is taken before a textured one when it has at least this share of the votes of
/// the best line of either kind.
const LIT_SHARE: f32 = 0.6;
/// A screen found by its bezel's outer edges is taken this share of the way to its middle.
const BEZEL_INSET: f32 = 0.03;
/// A side whose edge is not seen is also guessed this share of the photo in from its side.
const UNSEEN_INSET: f32 = 0.04;

/// The screen's corners (top left, top right, bottom right, bottom left) in pixels of `img`;
/// `None` when no edge is found or the quadrilateral is too small to be the screen. The first
/// of [`screen_guesses`].
pub fn find_screen(img: GrayView<'_>) -> Option<[(f32, f32); 4]> {
    screen_guesses(img, false).into_iter().next()
}

/// Where the screen may be, best guess first: the edges every kind of vote chooses; with
/// `unseen`, the same with each side whose edge was not seen put [`UNSEEN_INSET`] in; then
/// the screen inside the bezel's outer edges, each where it differs from those before. A
/// picture dark at its sides (a tunnel, a night sky) starts where it is lit, well inside the
/// screen, and the lit edges cut that much of it off; the bezel's outer edge is the same on
/// any picture.
fn screen_guesses(img: GrayView<'_>, unseen: bool) -> Vec<[(f32, f32); 4]> {
    let (w, h) = (img.width, img.height);
    if w < 64 || h < 64 {
        return Vec::new();
    }
    let mut sides = Sides {
        votes: [Side::Top, Side::Bottom, Side::Left, Side::Right].map(|s| votes(&profile(img, s))),
        counted: Vec::new(),
    };
    let seen = sides.edges((w, h), false);
    let edges = enclosed(seen, (w, h));
    // A side whose edge is not seen (a picture flat where it meets the smear a perspective
    // correction leaves) is put at the photo's side by `find`; the screen is as likely to
    // start a little inside, so once more with those sides UNSEEN_INSET in (all four when
    // none was seen: a tight photo of a picture plain at every edge).
    let inset = |e: Edge, len: usize| {
        if e == NONE { Edge { a: UNSEEN_INSET * len as f32, b: UNSEEN_INSET * len as f32, votes: 0.0 } } else { e }
    };
    let [t, b, l, r] = seen;
    let unseen = (unseen && seen.contains(&NONE))
        .then(|| quad_of([inset(t, h), inset(b, h), inset(l, w), inset(r, w)], (w, h)))
        .flatten();
    // When the edges enclose no screen (the lit middle of a night scene is too small to be
    // one), the outer edges of the bezel alone. The screen lies a bezel's width inside them,
    // and the dark picture there is cut as the index cuts a dark frame's flat sides. Inside
    // the bezel's outer edges by a share of the screen: a line of the lit room around the
    // rectified picture would keep its dark sides from being cut.
    let bezel = enclosed(sides.edges((w, h), true), (w, h)).map(|quad| {
        let (cx, cy) = (quad.iter().map(|p| p.0).sum::<f32>() / 4.0, quad.iter().map(|p| p.1).sum::<f32>() / 4.0);
        quad.map(|(x, y)| (x + (cx - x) * BEZEL_INSET, y + (cy - y) * BEZEL_INSET))
    });
    let mut out: Vec<[(f32, f32); 4]> = edges.into_iter().collect();
    for q in [unseen, bezel].into_iter().flatten() {
        if !out.iter().any(|o| same_quad(o, &q, (w, h))) {
            out.push(q);
        }
    }
    out
}

/// Whether two quadrilaterals of a `w` x `h` picture differ by at most [`SAME_QUAD`] of its
/// sides at every corner.
fn same_quad(p: &[(f32, f32); 4], q: &[(f32, f32); 4], (w, h): (usize, usize)) -> bool {
    p.iter().zip(q).all(|(a, b)| (a.0 - b.0).abs() <= SAME_QUAD * w as f32 && (a.1 - b.1).abs() <= SAME_QUAD * h as f32)
}

/// The four sides' votes (top, bottom, left, right), and the counts already made over them:
/// both ways of choosing edges start from the same passes.
struct Sides {
    votes: [Option<Votes>; 4],
    counted: Vec<(usize, (usize, usize), Counted)>,
}

impl Sides {
    /// The edge of side `side` (an index into [`Sides::votes`]) judged over `lines`.
    fn edge(&mut self, side: usize, lines: (usize, usize), bezel_only: bool) -> Edge {
        let Some(votes) = &self.votes[side] else { return NONE };
        let counted = match self.counted.iter().find(|(s, l, _)| (*s, *l) == (side, lines)) {
            Some((_, _, c)) => *c,
            None => {
                let c = count(votes, lines);
                self.counted.push((side, lines, c));
                c
            }
        };
        counted.edge(bezel_only)
    }

    /// The edges (top, bottom, left, right) chosen by every kind of vote, or by the bezel's
    /// outer edge alone (see [`Counted::edge`]); [`NONE`] where a side has none.
    fn edges(&mut self, (w, h): (usize, usize), bezel_only: bool) -> [Edge; 4] {
        let (top, bottom, left, right) = (0, 1, 2, 3);
        // Top and bottom over every column, left and right over the rows between them, then
        // top and bottom again over the columns between those (a side is judged where the
        // screen is).
        let t = self.edge(top, (0, w), bezel_only);
        let b = self.edge(bottom, (0, w), bezel_only);
        let rows = (t.a.max(t.b) as usize, h - b.a.max(b.b) as usize);
        let l = self.edge(left, rows, bezel_only);
        let r = self.edge(right, rows, bezel_only);
        let cols = (l.a.max(l.b) as usize, w - r.a.max(r.b) as usize);
        let t = self.edge(top, cols, bezel_only);
        let b = self.edge(bottom, cols, bezel_only);
        [t, b, l, r]
    }
}

/// The screen `edges` (see [`Sides::edges`]) enclose; `None` when no side has an edge or
/// [`quad_of`] finds the screen too small.
fn enclosed(edges: [Edge; 4], size: (usize, usize)) -> Option<[(f32, f32); 4]> {
    if edges.iter().all(|e| *e == NONE) { None } else { quad_of(edges, size) }
}

/// The corners where the edges `[top, bottom, left, right]` of a `w` x `h` photo meet; `None`
/// when they enclose less than [`MIN_AREA`] of it.
fn quad_of([t, b, l, r]: [Edge; 4], (w, h): (usize, usize)) -> Option<[(f32, f32); 4]> {
    let (wf, hf) = ((w - 1) as f32, (h - 1) as f32);
    let top_y = |x: f32| t.a + (t.b - t.a) * x / wf;
    let bottom_y = |x: f32| hf - (b.a + (b.b - b.a) * x / wf);
    let left_x = |y: f32| l.a + (l.b - l.a) * y / hf;
    let right_x = |y: f32| wf - (r.a + (r.b - r.a) * y / hf);
    // Lines within MAX_SLOPE of the axes: iterating one onto the other converges fast.
    let meet = |fy: &dyn Fn(f32) -> f32, fx: &dyn Fn(f32) -> f32| {
        let (mut x, mut y) = (fx(0.0), 0.0);
        for _ in 0..16 {
            y = fy(x);
            x = fx(y);
        }
        (x, y)
    };
    let quad = [meet(&top_y, &left_x), meet(&top_y, &right_x), meet(&bottom_y, &right_x), meet(&bottom_y, &left_x)];
    // Shoelace area.
    let area = (0..4)
        .map(|k| {
            let (p, q) = (quad[k], quad[(k + 1) % 4]);
            p.0 * q.1 - q.0 * p.1
        })
        .sum::<f32>()
        .abs()
        / 2.0;
    (area >= MIN_AREA * (w * h) as f32).then_some(quad)
}

/// The screens a photo shows as quadrilaterals in shares of its sides (top left, top right,
/// bottom right, bottom left), to warp it or other pictures of the same geometry by (the
/// frames of a phone's video of a screen). The photo is looked at at each size of
/// [`LOOK_SIDES`], and each guess (see [`screen_guesses`]) not already found at the other size is kept.
/// `still`: a still's query, which also guesses at sides whose edge is not seen (a clip's
/// frames do not: each frame's extra guess was one more chance of a false accept).
pub(in crate::library) fn screen_quads(gray: &GrayImage, still: bool) -> Vec<[(f32, f32); 4]> {
    let (w, h) = gray.dimensions();
    let mut found: Vec<[(f32, f32); 4]> = Vec::new();
    for look in LOOK_SIDES {
        let (lw, lh) = look_size((w, h), look);
        let small = if (lw, lh) == (w, h) { gray.clone() } else { image::imageops::thumbnail(gray, lw, lh) };
        let view = GrayView { width: lw as usize, height: lh as usize, pixels: small.as_raw() };
        for quad in screen_guesses(view, still) {
            // In shares of the photo's sides, to compare the sizes' answers.
            let shares = quad.map(|(x, y)| (x / lw as f32, y / lh as f32));
            if !found.iter().any(|other| same_quad(&shares, other, (1, 1))) {
                found.push(shares);
            }
        }
        if (lw, lh) == (w, h) {
            break;
        }
    }
    found
}

/// The rectangles a square found in a clip's frames (a screen, a window) is hashed under: cut
/// as the index cuts, and whole when that differs.
pub(in crate::library) fn square_rects(view: GrayView<'_>) -> Vec<Rect> {
    let area = hash::active_area(view);
    let full = Rect { x0: 0, y0: 0, x1: view.width, y1: view.height };
    if area == full { vec![area] } else { vec![area, full] }
}

/// The rectangles a square found in a still (a phone photo's screen, a window) is hashed
/// under: [`square_rects`], and cut as the index cuts once the photo's light is taken off
/// (under either of the two floors of [`light`](super::light)) where that differs. Not for
/// clips: each frame of a clip would add its own, and over the benchmark's negative clips the
/// extra chances gave false accepts (src/library/README.md, "Screen tier").
pub(in crate::library) fn still_square_rects(view: GrayView<'_>) -> Vec<Rect> {
    let mut out = square_rects(view);
    for r in crate::library::picture::light::flat_areas_under_light(view) {
        r.add_to(&mut out);
    }
    out
}

/// The hashes of a square found in a clip's frames (a rectified screen, a window) under
/// [`square_rects`].
pub(in crate::library) fn square_hashes(view: GrayView<'_>) -> Vec<hash::FrameHash> {
    square_rects(view).into_iter().map(|r| hash::hash_rect(view, r)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::picture::warp::{rectify, square_to_quad, warp_quads};

    /// The screen hypotheses of a photo, as the still search makes them: the found screen
    /// warped to the `side`² square and hashed under [`square_rects`]; empty when no screen is
    /// found.
    fn screen_hypotheses(gray: &GrayImage, side: usize) -> Vec<hash::FrameHash> {
        hypotheses_of(gray, screen_quads(gray, true), side)
    }

    /// The hypotheses of the screens `quads` of a photo (see [`screen_hypotheses`]).
    fn hypotheses_of(gray: &GrayImage, quads: Vec<[(f32, f32); 4]>, side: usize) -> Vec<hash::FrameHash> {
        warp_quads(gray, quads, side)
            .iter()
            .flat_map(|square| square_hashes(GrayView { width: side, height: side, pixels: square }))
            .collect()
    }

    /// A textured picture, `w` x `h`: a sum of plane waves (the content) and a fixed
    /// pseudo-random grain of +-12 (the fine detail every real frame has).
    fn pattern(w: usize, h: usize) -> Vec<u8> {
        let waves: Vec<(f32, f32, f32)> =
            (1..=12).map(|k| (0.7 * k as f32 % 5.3 + 0.2, 1.3 * k as f32 % 4.1 - 2.0, k as f32)).collect();
        (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as f32 / w as f32, (i / w) as f32 / h as f32);
                let v: f32 = waves.iter().map(|(fx, fy, p)| (6.3 * (fx * x + fy * y) + p).sin()).sum();
                let grain = ((i as u32).wrapping_mul(2_654_435_761) >> 27) as f32 - 16.0;
                (128.0 + 20.0 * v + 0.75 * grain).clamp(0.0, 255.0) as u8
            })
            .collect()
    }

    /// `px` (`w` x `h`) photographed: drawn into the quadrilateral `quad` of a `pw` x `ph`
    /// photo whose other pixels are `outside(x, y)`.
    fn photograph(
        px: &[u8],
        (w, h): (usize, usize),
        quad: [(f32, f32); 4],
        (pw, ph): (usize, usize),
        outside: impl Fn(usize, usize) -> Option<u8>,
    ) -> Vec<u8> {
        // For each photo pixel, the (u, v) the square map sends there (a 2x2 linear solve).
        let m = square_to_quad(quad);
        let src = GrayView { width: w, height: h, pixels: px };
        let mut out = vec![0u8; pw * ph];
        for y in 0..ph {
            for x in 0..pw {
                let (fx, fy) = (x as f32 + 0.5, y as f32 + 0.5);
                // x (m6 u + m7 v + 1) = m0 u + m1 v + m2, likewise y: linear in u, v.
                let (a1, b1, c1) = (m[0] - fx * m[6], m[1] - fx * m[7], fx - m[2]);
                let (a2, b2, c2) = (m[3] - fy * m[6], m[4] - fy * m[7], fy - m[5]);
                let det = a1 * b2 - a2 * b1;
                let (u, v) = ((c1 * b2 - c2 * b1) / det, (a1 * c2 - a2 * c1) / det);
                let inside = (0.0..1.0).contains(&u) && (0.0..1.0).contains(&v);
                out[y * pw + x] = match (inside, outside(x, y)) {
                    (true, _) | (false, None) => {
                        let sx = ((u * w as f32) as usize).min(w - 1);
                        let sy = ((v * h as f32) as usize).min(h - 1);
                        src.pixels[sy * w + sx]
                    }
                    (false, Some(c)) => c,
                };
            }
        }
        out
    }

    fn frame_hash(px: &[u8], w: usize, h: usize) -> hash::FrameHash {
        let img = image::GrayImage::from_raw(w as u32, h as u32, px.to_vec()).unwrap();
        let small = image::imageops::thumbnail(&img, 128, 128);
        let view = GrayView { width: 128, height: 128, pixels: small.as_raw() };
        hash::hash_rect(view, hash::active_area(view))
    }

    const QUAD: [(f32, f32); 4] = [(30.0, 22.0), (300.0, 14.0), (286.0, 216.0), (22.0, 228.0)];

    #[test]
    fn a_screen_on_a_wall_is_found_and_rectified() {
        let (w, h) = (320, 180);
        let frame = pattern(w, h);
        // A lit screen (the pattern brightened) on a plain mid-grey wall.
        let lit: Vec<u8> = frame.iter().map(|&v| v / 2 + 110).collect();
        let photo = photograph(&lit, (w, h), QUAD, (320, 240), |_, _| Some(60));
        let quad = find_screen(GrayView { width: 320, height: 240, pixels: &photo }).expect("a screen");
        // Within 2% of the photo's side: the outermost of the lines that vote nearly as well.
        for (found, truth) in quad.iter().zip(QUAD) {
            assert!((found.0 - truth.0).abs() <= 6.0 && (found.1 - truth.1).abs() <= 6.0, "{quad:?}");
        }
        let gray = image::GrayImage::from_raw(320, 240, photo.clone()).unwrap();
        let truth = frame_hash(&frame, w, h);
        let best = screen_hypotheses(&gray, 128).iter().map(|f| hash::hamming(&f.hash, &truth.hash)).min().unwrap();
        let as_taken = hash::hamming(&frame_hash(&photo, 320, 240).hash, &truth.hash);
        // A match (the still threshold is 70 bits), where the photo as taken is not close.
        assert!(best <= 60 && best + 20 <= as_taken, "rectified {best} vs as taken {as_taken}");
    }

    /// `px` (`w` x `h`) inside a dark bezel `band` pixels wide (gray `bezel`).
    fn with_bezel(px: &[u8], (w, h): (usize, usize), band: usize, bezel: u8) -> (Vec<u8>, (usize, usize)) {
        let (bw, bh) = (w + 2 * band, h + 2 * band);
        let out = (0..bw * bh)
            .map(|i| {
                let (x, y) = (i % bw, i / bw);
                let inside = (band..band + w).contains(&x) && (band..band + h).contains(&y);
                if inside { px[(y - band) * w + x - band] } else { bezel }
            })
            .collect();
        (out, (bw, bh))
    }

    /// The best distance from the photo's screen hypotheses to the frame's hash, and the photo's
    /// own distance as taken.
    fn rectified_and_as_taken(
        photo: &[u8],
        (pw, ph): (usize, usize),
        frame: &[u8],
        (w, h): (usize, usize),
    ) -> (u32, u32) {
        let gray = image::GrayImage::from_raw(pw as u32, ph as u32, photo.to_vec()).unwrap();
        let truth = frame_hash(frame, w, h);
        let best =
            screen_hypotheses(&gray, 128).iter().map(|f| hash::hamming(&f.hash, &truth.hash)).min().unwrap_or(256);
        (best, hash::hamming(&frame_hash(photo, pw, ph).hash, &truth.hash))
    }

    #[test]
    fn a_thin_bezel_under_moire_is_cut_at_the_picture() {
        // A screen in a room: the lit picture in a bezel 2.5% of its width, on a wall, the whole
        // photo under a camera's moire (a fine diagonal ripple of +-8) that makes bezel and wall
        // as busy as picture detail, pixel to pixel.
        let (w, h) = (480, 270);
        let frame = pattern(w, h);
        let lit: Vec<u8> = frame.iter().map(|&v| v / 2 + 100).collect();
        let (screen, size) = with_bezel(&lit, (w, h), 12, 12);
        let quad = [(150.0, 120.0), (760.0, 100.0), (740.0, 500.0), (130.0, 520.0)];
        let (pw, ph) = (896, 620);
        let mut photo = photograph(&screen, size, quad, (pw, ph), |_, _| Some(100));
        for (i, v) in photo.iter_mut().enumerate() {
            let (x, y) = ((i % pw) as f32, (i / pw) as f32);
            *v = (*v as f32 + 8.0 * (0.9 * x + 0.35 * y).sin()).clamp(0.0, 255.0) as u8;
        }
        let (best, as_taken) = rectified_and_as_taken(&photo, (pw, ph), &frame, (w, h));
        assert!(best <= 50 && best + 20 <= as_taken, "rectified {best} vs as taken {as_taken}");
    }

    #[test]
    fn a_picture_dark_at_its_edges_is_found_by_its_bezel() {
        // A night scene: the picture is black around a lit middle, inside a black bezel on a
        // lit wall. Nothing shows where the picture starts; the bezel's outer edge does show
        // the screen, and the black inside it is cut as the index cuts a dark frame's sides.
        let (w, h) = (640, 360);
        let bright = pattern(w, h);
        let frame: Vec<u8> = bright
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let (x, y) = (i % w, i / w);
                if (140..500).contains(&x) && (60..300).contains(&y) { v } else { 8 }
            })
            .collect();
        let (screen, size) = with_bezel(&frame, (w, h), 16, 6);
        let quad = QUAD.map(|(x, y)| (2.0 * x, 2.0 * y));
        let photo = photograph(&screen, size, quad, (640, 480), |_, _| Some(120));
        let (best, as_taken) = rectified_and_as_taken(&photo, (640, 480), &frame, (w, h));
        // A match by the still threshold (70 bits); the photo as taken is nowhere near.
        assert!(best <= 70 && best + 40 <= as_taken, "rectified {best} vs as taken {as_taken}");
    }

    #[test]
    fn smeared_edges_of_a_perspective_correction_are_found() {
        // The photo's outside continues the picture's edge pixels (as a perspective warp with
        // clamped sampling leaves them): nothing changes across the edge, only detail starts.
        let (w, h) = (320, 180);
        let frame = pattern(w, h);
        let quad = [(18.0, 9.0), (310.0, 3.0), (298.0, 172.0), (6.0, 176.0)];
        let photo = photograph(&frame, (w, h), quad, (w, h), |_, _| None);
        let found = find_screen(GrayView { width: w, height: h, pixels: &photo }).expect("a screen");
        // An edge closer to the photo's side than the bands it is judged by lands a few pixels off.
        for (f, t) in found.iter().zip(quad) {
            assert!((f.0 - t.0).abs() <= 6.0 && (f.1 - t.1).abs() <= 6.0, "{found:?}");
        }
        let gray = image::GrayImage::from_raw(w as u32, h as u32, photo.clone()).unwrap();
        let truth = frame_hash(&frame, w, h);
        let best = screen_hypotheses(&gray, 128).iter().map(|f| hash::hamming(&f.hash, &truth.hash)).min().unwrap();
        let as_taken = hash::hamming(&frame_hash(&photo, w, h).hash, &truth.hash);
        assert!(best < as_taken, "rectified {best} vs as taken {as_taken}");
    }

    #[test]
    fn a_side_whose_edge_is_not_seen_is_also_guessed_a_little_inside() {
        // A picture without detail along two of its sides (a sky above, a wall on the left:
        // smooth ramps along the side, nothing across it), photographed as a perspective
        // correction leaves it: the smear continues those sides, so their edges cannot be seen.
        let (w, h) = (320, 180);
        let mut frame = pattern(w, h);
        // The plain areas reach in by 5 to 25% of the side, unevenly (clouds, a curtain): no
        // straight line is where detail starts either.
        let reach = |t: usize, n: usize| n * (5 + (t * 37 % 20)) / 100;
        for y in 0..h {
            for x in 0..w {
                if x < reach(y / 6, w) {
                    frame[y * w + x] = (40 + 80 * y / h) as u8;
                } else if y < reach(x / 6, h) {
                    frame[y * w + x] = (40 + 80 * x / w) as u8;
                }
            }
        }
        let quad = [(16.0, 11.0), (311.0, 4.0), (300.0, 171.0), (7.0, 175.0)];
        let photo = photograph(&frame, (w, h), quad, (w, h), |_, _| None);
        let gray = image::GrayImage::from_raw(w as u32, h as u32, photo.clone()).unwrap();
        let truth = frame_hash(&frame, w, h);
        let best = |quads| {
            hypotheses_of(&gray, quads, 128).iter().map(|f| hash::hamming(&f.hash, &truth.hash)).min().unwrap_or(256)
        };
        let (seen, with_unseen) = (best(screen_quads(&gray, false)), best(screen_quads(&gray, true)));
        let as_taken = hash::hamming(&frame_hash(&photo, w, h).hash, &truth.hash);
        // The edges seen alone leave the photo no match (the still threshold is 70 bits); the
        // guess at the unseen sides (0.04 of the photo in; truly 0.02 to 0.06) is close.
        assert!(
            seen > 70 && with_unseen <= 40 && as_taken > 70,
            "seen {seen}, with unseen {with_unseen}, as taken {as_taken}"
        );
    }

    #[test]
    fn a_picture_without_a_screen_finds_none_or_nearly_the_whole_picture() {
        let (w, h) = (256, 144);
        let px = pattern(w, h);
        if let Some(quad) = find_screen(GrayView { width: w, height: h, pixels: &px }) {
            let (xs, ys): (Vec<f32>, Vec<f32>) = quad.iter().copied().unzip();
            let span_x = xs.iter().cloned().fold(f32::MIN, f32::max) - xs.iter().cloned().fold(f32::MAX, f32::min);
            let span_y = ys.iter().cloned().fold(f32::MIN, f32::max) - ys.iter().cloned().fold(f32::MAX, f32::min);
            assert!(span_x >= 0.8 * w as f32 && span_y >= 0.8 * h as f32, "{quad:?}");
        }
        let flat = vec![90u8; w * h];
        assert!(find_screen(GrayView { width: w, height: h, pixels: &flat }).is_none());
    }

    #[test]
    fn rectifying_the_whole_picture_is_a_resize() {
        let (w, h) = (200, 100);
        let px = pattern(w, h);
        let view = GrayView { width: w, height: h, pixels: &px };
        let whole = [(0.0, 0.0), (w as f32, 0.0), (w as f32, h as f32), (0.0, h as f32)];
        let square = rectify(view, whole, 128);
        let a = hash::hash_rect(
            GrayView { width: 128, height: 128, pixels: &square },
            Rect { x0: 0, y0: 0, x1: 128, y1: 128 },
        );
        let b = hash::hash_rect(view, Rect { x0: 0, y0: 0, x1: w, y1: h });
        assert!(hash::hamming(&a.hash, &b.hash) <= 12, "{}", hash::hamming(&a.hash, &b.hash));
    }

    /// A screen much larger than the square (a grid of thin lines over a picture, warped
    /// from 900 pixels to 128) is averaged as the index's resize averages it, not sampled:
    /// sampling a few points a pixel turns the lines into a beat pattern the hash would see.
    #[test]
    fn a_fine_grid_is_averaged_not_aliased() {
        let side = 900;
        let mut px = pattern(side, side);
        for (i, p) in px.iter_mut().enumerate() {
            if (i % side) % 7 == 0 || (i / side) % 7 == 0 {
                *p = 235;
            }
        }
        let photo = GrayImage::from_raw(side as u32, side as u32, px).unwrap();
        let view = GrayView { width: side, height: side, pixels: photo.as_raw() };
        let s = side as f32;
        let square = rectify(view, [(0.0, 0.0), (s, 0.0), (s, s), (0.0, s)], 128);
        let resized = image::imageops::thumbnail(&photo, 128, 128);
        let diff =
            square.iter().zip(resized.as_raw()).map(|(a, b)| a.abs_diff(*b) as f32).sum::<f32>() / (128.0 * 128.0);
        assert!(diff < 2.0, "mean difference {diff}");
    }

    /// Every candidate line's votes counted one line of pixels at a time, as the definition
    /// says: `(a, b, votes of each kind set)`.
    fn count_plainly(v: &Votes, lines: (usize, usize)) -> Vec<(usize, usize, [usize; 3])> {
        let (n, min, max) = (v.n, v.min, v.max);
        let (slope, span) = ((n as f32 * MAX_SLOPE) as usize, n - 1);
        let mut out = Vec::new();
        for a in min..=max {
            for b in a.saturating_sub(slope).max(min)..=(a + slope).min(max) {
                let mut votes = [0usize; 3];
                for i in (lines.0..lines.1).step_by(2) {
                    let q = (a * span + b * i + span / 2 - a * i) / span;
                    for (k, set) in SETS.iter().enumerate() {
                        votes[k] += usize::from(v.bits[i * (max + 1) + q] & set != 0);
                    }
                }
                out.push((a, b, votes));
            }
        }
        out
    }

    #[test]
    fn lines_counted_a_row_at_a_time_choose_what_counting_pixel_by_pixel_chooses() {
        let mut seed = 0x9e37_79b9_u32;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        for (n, max) in [(97, 40), (160, 57), (64, 20)] {
            let min = GAP + OUTER;
            // Sparse random votes, and a slanted edge of each kind for the lines to find.
            let mut bits = vec![0u8; n * (max + 1)];
            for i in 0..n {
                for q in min..=max {
                    if next() % 9 == 0 {
                        bits[i * (max + 1) + q] = (next() % 8) as u8;
                    }
                }
                for (k, (a, b)) in
                    [(min + 3, min + 9), (max - 2, max - 8), (min + 12, min + 12)].into_iter().enumerate()
                {
                    if next() % 3 != 0 {
                        let q = a as isize + (b as isize - a as isize) * i as isize / n as isize;
                        bits[i * (max + 1) + q as usize] |= 1 << k;
                    }
                }
            }
            let v = Votes { n, min, max, bits };
            for lines in [(0, n), (5, n - 7), (n / 3, n / 3 + 1), (2, n / 2)] {
                let counted = count(&v, lines);
                let plain = count_plainly(&v, lines);
                let total = (lines.1 - lines.0).div_ceil(2) as f32;
                for k in 0..3 {
                    let share = |votes: &[usize; 3]| votes[k] as f32 / total;
                    let top = plain.iter().map(|(_, _, v)| share(v)).fold(0.0, f32::max);
                    // A single line across a side says nothing about a line's slope.
                    let top = if lines.1 <= lines.0 + 1 { 0.0 } else { top };
                    let expected = if top < MIN_VOTES {
                        NONE
                    } else {
                        plain
                            .iter()
                            .filter(|(_, _, v)| share(v) >= OUTER_SHARE * top)
                            .min_by_key(|(a, b, _)| a + b)
                            .map_or(NONE, |(a, b, v)| Edge { a: *a as f32, b: *b as f32, votes: share(v) })
                    };
                    assert_eq!(counted.chosen[k], (expected, top), "n {n}, lines {lines:?}, set {k}");
                }
            }
        }
    }
}
