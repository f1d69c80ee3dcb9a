//! A picture inside a picture: a video in a window of a web page or a desktop, or shown small
//! over another video (picture-in-picture). What is around it is neither flat nor a blurred
//! copy of it (see [`borders`](super::borders)) and need not be centred, so the bars and shape
//! tiers miss it, and it is not tilted as a phone photo's screen is (see
//! [`screen`](super::screen)): its edges are two rows and two columns of the picture where
//! the content steps abruptly along most of their length.
//!
//! Every pixel of a row (column) says whether the picture steps across it clearly more than
//! just beside it; the columns (rows) holding such steps along a stretch become candidate
//! lines; every rectangle of four candidate lines (or of two or three and the canvas's own
//! sides: a film beside another picture, in a corner) is scored by the share of its sides
//! that hold their step on the line or one beside it, and the best few are cut out and
//! squeezed to the frame square as more query hypotheses. Like the screen tier, it only adds hypotheses to a still that found
//! nothing close the ordinary way.
//!
//! A picture over a fine texture (a reaction video's scene over a pattern of single-pixel
//! cells, a screen recording over noise) has no edge sharper than what is beside it: the
//! texture steps as much from pixel to pixel. Its edge is where the texture stops. When no
//! window has sharp edges, the lines are looked for again where the detail on one side of a
//! pixel is [`TEXTURE_RATIO`] times the detail on the other.
use image::{DynamicImage, RgbImage};

/// The picture is looked at from a copy with at most this many pixels a side.
pub(in crate::library) const LOOK_SIDE: u32 = 512;
/// A pixel is on an edge when the picture steps across it (from one neighbour to the other)
/// by at least this many gray levels...
const MIN_STEP: i32 = 10;
/// ... and by at least `RATIO_NUM / RATIO_DEN` times the step over the two pixels on either
/// side of it: a window's edge is sharper than the texture of the content on both sides.
const RATIO_NUM: i32 = 3;
const RATIO_DEN: i32 = 2;
/// A pixel is where a texture ends when the mean detail (the larger step across it either
/// way) over the [`TEXTURE_DEPTH`] pixels beyond its neighbour on one side is at least
/// [`TEXTURE_DETAIL`] gray levels and [`TEXTURE_RATIO`] times that on the other side.
const TEXTURE_DEPTH: usize = 4;
/// See [`TEXTURE_DEPTH`].
const TEXTURE_DETAIL: u32 = 20;
/// See [`TEXTURE_DEPTH`]. At 3, a dark film's scene over a reaction video's cells holds
/// 81-100% of its sides where no sharp edge held any, and 3 of 19 pictures with no window in
/// them (frames of six films, the cells alone, a fractal) showed one; at 2, 9 of the 19 did.
const TEXTURE_RATIO: u32 = 3;
/// A candidate line holds its edge along at least this share of a stretch of
/// [`STRETCH`] of the picture's height (width).
const LINE_SHARE: f32 = 0.6;
/// See [`LINE_SHARE`].
const STRETCH: f32 = 0.12;
/// At most this many candidate lines each way (the best ones; two within [`NEAR`] pixels are one).
const MAX_LINES: usize = 24;
/// Lines (and windows' corners) this close, in pixels of the look copy, are one.
const NEAR: usize = 3;
/// Three sides of a window hold their edge along at least this share of their length...
const MIN_SIDE: f32 = 0.5;
/// ... the fourth along at least this share (what is around a window may be as busy as the
/// picture along one side)...
const MIN_WEAKEST: f32 = 0.25;
/// ... and the four sides this share on average.
const MIN_MEAN: f32 = 0.7;
/// A window covers at least this share of the picture, and at most [`MAX_AREA`] (a picture
/// barely larger than its window is a frame with bars, for the borders).
const MIN_AREA: f32 = 0.04;
const MAX_AREA: f32 = 0.85;
/// Width over height of a window: a phone's portrait video to a wide film.
const ASPECT: (f32, f32) = (0.5, 2.8);
/// At most this many windows are tried (best first).
const MAX_WINDOWS: usize = 3;
/// A window may end where the picture does, on one or two of its sides (a film beside
/// another picture under a caption, a picture in a corner): such a side counts this share
/// in the window's score, so a window with an edge all round is tried first.
const CANVAS_SIDE: f32 = 0.7;
/// The picture's first column (row) as `left` (`top`) of a window that starts where the
/// picture does (its inside starts one pixel in, as for an edge; candidate lines lie 3 pixels
/// in or more), and its width (height) as `right` (`bottom`) of one that ends where it does.
const CANVAS_START: usize = 0;

/// One window: its edges' columns and rows in the look copy (`left < right`, `top < bottom`,
/// the edge pixels themselves), and the mean share of its sides that hold their edge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub left: usize,
    pub right: usize,
    pub top: usize,
    pub bottom: usize,
    pub score: f32,
}

/// The step across every pixel of `img` (from one neighbour to the other, the largest of the
/// three channels': a picture may meet what is around it at one brightness in another hue),
/// along rows (`along_rows`) or along columns; 0 on the outermost pixels. Row-major.
fn steps(img: &RgbImage, along_rows: bool) -> Vec<u8> {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let px = img.as_raw();
    // The two neighbours of a pixel are `(dx, dy)` before and after it.
    let (dx, dy) = if along_rows { (1, 0) } else { (0, 1) };
    let mut out = vec![0u8; w * h];
    for y in dy..h.saturating_sub(dy) {
        for x in dx..w.saturating_sub(dx) {
            let (a, b) = (((y - dy) * w + x - dx) * 3, ((y + dy) * w + x + dx) * 3);
            out[y * w + x] = (0..3).map(|c| px[a + c].abs_diff(px[b + c])).max().unwrap_or(0);
        }
    }
    out
}

/// Running counts of edge pixels along every line one way: `sums[line * (len + 1) + i]` is
/// the number of edge pixels among the first `i` of `line`; `pair` the same of pixels with an
/// edge on the line or on the next.
struct Lines {
    len: usize,
    sums: Vec<u32>,
    pair: Vec<u32>,
}

/// What makes a pixel part of a window's edge.
#[derive(Clone, Copy, Debug, PartialEq)]
enum EdgeKind {
    /// The picture steps across it more sharply than beside it.
    Sharp,
    /// A texture ends there (see [`TEXTURE_DEPTH`]).
    TextureEnd,
}

impl Lines {
    /// The columns and the rows of `img` (each column's pixels judged across their row, each
    /// row's across their column), their pixels on an edge of `kind`.
    fn both_ways(img: &RgbImage, kind: EdgeKind) -> (Lines, Lines) {
        let (w, h) = (img.width() as usize, img.height() as usize);
        let (columns, rows) = match kind {
            EdgeKind::Sharp => (sharp_edges(img, true), sharp_edges(img, false)),
            EdgeKind::TextureEnd => {
                let detail = detail(img);
                (texture_ends(&detail, w, true), texture_ends(&detail, w, false))
            }
        };
        (Lines::of(&columns, w, h), Lines::of(&rows, h, w))
    }

    /// `count` lines of `len` pixels from whether each pixel is on an edge
    /// (`edges[line * len + i]`).
    fn of(edges: &[bool], count: usize, len: usize) -> Lines {
        let mut sums = vec![0u32; count * (len + 1)];
        let mut pair = vec![0u32; count * (len + 1)];
        for line in 0..count {
            let base = line * (len + 1);
            let next = (line + 1).min(count - 1);
            for i in 0..len {
                let edge = edges[line * len + i];
                sums[base + i + 1] = sums[base + i] + u32::from(edge);
                pair[base + i + 1] = pair[base + i] + u32::from(edge || edges[next * len + i]);
            }
        }
        Lines { len, sums, pair }
    }

    /// The share of pixels `from..to` of `line` on an edge.
    fn share(&self, line: usize, from: usize, to: usize) -> f32 {
        Self::share_of(&self.sums, self.len, line, from, to)
    }

    /// The share of pixels `from..to` of `line` with an edge on it or on one line beside it
    /// (the same one along the whole side): a window's side, which a scaled-down picture
    /// spreads over two lines (an edge at 4.8 pixels steps across the 4th on some rows and the
    /// 5th on others, whichever the texture beside lets through).
    fn side_share(&self, line: usize, from: usize, to: usize) -> f32 {
        let after = Self::share_of(&self.pair, self.len, line, from, to);
        let before = if line == 0 { 0.0 } else { Self::share_of(&self.pair, self.len, line - 1, from, to) };
        after.max(before)
    }

    fn share_of(sums: &[u32], len: usize, line: usize, from: usize, to: usize) -> f32 {
        if to <= from {
            return 0.0;
        }
        let base = line * (len + 1);
        (sums[base + to] - sums[base + from]) as f32 / (to - from) as f32
    }

    /// The lines that hold an edge along a stretch (see [`LINE_SHARE`]), best first, at most
    /// [`MAX_LINES`], no two within [`NEAR`].
    fn candidates(&self) -> Vec<usize> {
        let count = self.sums.len() / (self.len + 1);
        let stretch = ((self.len as f32 * STRETCH) as usize).max(8).min(self.len);
        let mut best: Vec<(f32, usize)> = (0..count)
            .filter_map(|line| {
                let top = (0..=self.len - stretch)
                    .step_by(2)
                    .map(|i| self.share(line, i, i + stretch))
                    .fold(0.0f32, f32::max);
                (top >= LINE_SHARE).then_some((top, line))
            })
            .collect();
        best.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut kept: Vec<usize> = Vec::new();
        for (_, line) in best {
            if kept.iter().all(|&k| k.abs_diff(line) > NEAR) {
                kept.push(line);
                if kept.len() == MAX_LINES {
                    break;
                }
            }
        }
        kept
    }
}

/// Pixel `i` of line `line` (a column when `vertical`) of a `w`-wide picture, row-major.
fn pixel_at(vertical: bool, w: usize, line: usize, i: usize) -> usize {
    if vertical { i * w + line } else { line * w + i }
}

/// Whether each pixel of each line (`edges[line * len + i]`) is on a sharp edge: the step
/// across it is at least [`MIN_STEP`] and [`RATIO_NUM`]`/`[`RATIO_DEN`] times the steps
/// across the pixels two away on either side (the step over the two pixels beside it).
fn sharp_edges(img: &RgbImage, vertical: bool) -> Vec<bool> {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let step = steps(img, vertical);
    let (count, len) = if vertical { (w, h) } else { (h, w) };
    let at = |line: usize, i: usize| pixel_at(vertical, w, line, i);
    let mut edges = vec![false; count * len];
    for line in 3..count.saturating_sub(3) {
        for i in 0..len {
            let across = step[at(line, i)] as i32;
            let beside = step[at(line - 2, i)].max(step[at(line + 2, i)]) as i32;
            edges[line * len + i] = across >= MIN_STEP && across * RATIO_DEN >= RATIO_NUM * beside;
        }
    }
    edges
}

/// The detail at every pixel of `img`: the larger of the steps across it along its row and
/// along its column. Row-major.
fn detail(img: &RgbImage) -> Vec<u32> {
    steps(img, true).iter().zip(steps(img, false)).map(|(&a, b)| u32::from(a.max(b))).collect()
}

/// Whether each pixel of each line (columns when `vertical`) of a `w`-wide picture whose
/// [`detail`] is `detail` is where a texture ends (see [`TEXTURE_DEPTH`]): the detail of the
/// [`TEXTURE_DEPTH`] lines beyond the one before it against that of the same number beyond
/// the one after it.
fn texture_ends(detail: &[u32], w: usize, vertical: bool) -> Vec<bool> {
    let h = detail.len() / w;
    let (count, len) = if vertical { (w, h) } else { (h, w) };
    let at = |line: usize, i: usize| pixel_at(vertical, w, line, i);
    let mut edges = vec![false; count * len];
    for line in TEXTURE_DEPTH + 2..count.saturating_sub(TEXTURE_DEPTH + 2) {
        for i in 0..len {
            let before: u32 = (line - 1 - TEXTURE_DEPTH..line - 1).map(|l| detail[at(l, i)]).sum();
            let after: u32 = (line + 2..line + 2 + TEXTURE_DEPTH).map(|l| detail[at(l, i)]).sum();
            let (busy, quiet) = (before.max(after), before.min(after));
            edges[line * len + i] = busy >= TEXTURE_DETAIL * TEXTURE_DEPTH as u32 && busy >= TEXTURE_RATIO * quiet;
        }
    }
    edges
}

/// The windows of `img`, best first, at most [`MAX_WINDOWS`], no two with every edge within
/// [`NEAR`] of each other's: those with sharp edges, else those where a texture ends.
pub fn find_windows(img: &RgbImage) -> Vec<Window> {
    let sharp = windows_by(img, EdgeKind::Sharp);
    if sharp.is_empty() { windows_by(img, EdgeKind::TextureEnd) } else { sharp }
}

/// The windows of `img` whose sides hold edges of `kind` (see [`find_windows`]).
fn windows_by(img: &RgbImage, kind: EdgeKind) -> Vec<Window> {
    let (w, h) = (img.width() as usize, img.height() as usize);
    if w < 64 || h < 64 {
        return Vec::new();
    }
    let (columns, rows) = Lines::both_ways(img, kind);
    // The canvas's own sides close a window too (see [`CANVAS_SIDE`]): its first pixel and
    // the one past its last.
    let with_canvas = |mut lines: Vec<usize>, len: usize| {
        lines.extend([CANVAS_START, len]);
        lines
    };
    let (xs, ys) = (with_canvas(columns.candidates(), w), with_canvas(rows.candidates(), h));
    let area = (w * h) as f32;
    let mut found: Vec<Window> = Vec::new();
    for &left in &xs {
        for &right in xs.iter().filter(|&&r| r > left + 16) {
            for &top in &ys {
                for &bottom in ys.iter().filter(|&&b| b > top + 16) {
                    let (ww, wh) = ((right - left) as f32, (bottom - top) as f32);
                    let share = ww * wh / area;
                    let aspect = ww / wh;
                    if !(MIN_AREA..=MAX_AREA).contains(&share) || !(ASPECT.0..=ASPECT.1).contains(&aspect) {
                        continue;
                    }
                    // Each side away from its corners, where the other edge blurs into it;
                    // `None` on the canvas's side.
                    let inside = |line: usize, len: usize| line != CANVAS_START && line != len;
                    let sides = [
                        inside(left, w).then(|| columns.side_share(left, top + 2, bottom - 1)),
                        inside(right, w).then(|| columns.side_share(right, top + 2, bottom - 1)),
                        inside(top, h).then(|| rows.side_share(top, left + 2, right - 1)),
                        inside(bottom, h).then(|| rows.side_share(bottom, left + 2, right - 1)),
                    ];
                    if let Some(score) = window_score(sides) {
                        found.push(Window { left, right, top, bottom, score });
                    }
                }
            }
        }
    }
    // The best first; of near-equal scores, the larger (a player's frame around its picture
    // is tried too, below).
    found.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(((b.right - b.left) * (b.bottom - b.top)).cmp(&((a.right - a.left) * (a.bottom - a.top))))
    });
    let mut kept: Vec<Window> = Vec::new();
    for c in found {
        let same = |k: &Window| {
            k.left.abs_diff(c.left) <= NEAR
                && k.right.abs_diff(c.right) <= NEAR
                && k.top.abs_diff(c.top) <= NEAR
                && k.bottom.abs_diff(c.bottom) <= NEAR
        };
        if !kept.iter().any(same) {
            kept.push(c);
            if kept.len() == MAX_WINDOWS {
                break;
            }
        }
    }
    kept
}

/// Whether four sides (`None` on the canvas's side) make a window, and its score: the mean
/// share of the sides holding their edge, a canvas side counting [`CANVAS_SIDE`]. With every
/// side inside the picture, three hold [`MIN_SIDE`], the weakest [`MIN_WEAKEST`], all
/// [`MIN_MEAN`] on average; with one or two on the canvas, every other side holds
/// [`MIN_MEAN`] (an edge of the picture's own that ends where the canvas does, with nothing
/// across from it, is not enough).
fn window_score(sides: [Option<f32>; 4]) -> Option<f32> {
    let inner: Vec<f32> = sides.iter().flatten().copied().collect();
    let sum: f32 = inner.iter().sum();
    let mean = sum / inner.len().max(1) as f32;
    let fits = match inner.len() {
        4 => {
            let mut sorted = inner.clone();
            sorted.sort_by(f32::total_cmp);
            sorted[0] >= MIN_WEAKEST && sorted[1] >= MIN_SIDE
        }
        2 | 3 => inner.iter().all(|&s| s >= MIN_MEAN),
        _ => false,
    };
    let score = (sum + (4 - inner.len()) as f32 * CANVAS_SIDE) / 4.0;
    (fits && mean >= MIN_MEAN).then_some(score)
}

/// The windows of a picture, each cut out of `gray` (the picture in gray, inside the
/// window's edge pixels) and squeezed to a `side`² square; empty when there is none.
pub(in crate::library) fn window_squares(image: &DynamicImage, gray: &image::GrayImage, side: usize) -> Vec<Vec<u8>> {
    let (lw, lh) = crate::library::picture::warp::look_size(gray.dimensions(), LOOK_SIDE);
    let small = image.thumbnail_exact(lw, lh).to_rgb8();
    window_shares(&small).into_iter().filter_map(|share| cut_window(gray, share, side)).collect()
}

/// The windows of `small` (a picture at most [`LOOK_SIDE`] pixels a side) inside their edge
/// pixels (half blended with what is around), in shares of its sides: `[left, top, right,
/// bottom]`, to cut this or another picture of the same geometry by.
pub(in crate::library) fn window_shares(small: &RgbImage) -> Vec<[f32; 4]> {
    let (lw, lh) = (small.width() as f32, small.height() as f32);
    find_windows(small)
        .into_iter()
        .map(|win| {
            [(win.left as f32 + 1.0) / lw, (win.top as f32 + 1.0) / lh, win.right as f32 / lw, win.bottom as f32 / lh]
        })
        .collect()
}

/// The part of `gray` inside `share` (see [`window_shares`]) squeezed to a `side`² square;
/// `None` when it is under 9 pixels a side.
pub(in crate::library) fn cut_window(
    gray: &image::GrayImage,
    [left, top, right, bottom]: [f32; 4],
    side: usize,
) -> Option<Vec<u8>> {
    let (w, h) = (gray.width() as f32, gray.height() as f32);
    let (x0, x1) = ((left * w).round() as u32, (right * w).round().min(w) as u32);
    let (y0, y1) = ((top * h).round() as u32, (bottom * h).round().min(h) as u32);
    (x1 > x0 + 8 && y1 > y0 + 8).then(|| {
        let cut = image::imageops::crop_imm(gray, x0, y0, x1 - x0, y1 - y0).to_image();
        image::imageops::thumbnail(&cut, side as u32, side as u32).into_raw()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A textured picture: plane waves plus a fixed grain, offset by `seed`.
    fn texture(w: usize, h: usize, seed: f32) -> Vec<u8> {
        (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as f32, (i / w) as f32);
                let v = (x * 0.05 + seed).sin() + (y * 0.07 - seed).cos() + ((x + y) * 0.02 * seed).sin();
                let grain = ((i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed as u32) >> 28) as f32 - 8.0;
                (128.0 + 35.0 * v + grain).clamp(0.0, 255.0) as u8
            })
            .collect()
    }

    /// A `w` x `h` texture with a `iw` x `ih` picture of other content at `(x0, y0)`.
    fn texture_with_inset(w: usize, h: usize, (iw, ih): (usize, usize), (x0, y0): (usize, usize)) -> Vec<u8> {
        let mut px = texture(w, h, 3.0);
        let inner = texture(iw, ih, 11.0);
        for y in 0..ih {
            for x in 0..iw {
                px[(y0 + y) * w + x0 + x] = inner[y * iw + x].saturating_add(30);
            }
        }
        px
    }

    /// Gray pixels as an RGB image.
    fn rgb(w: usize, h: usize, px: &[u8]) -> RgbImage {
        RgbImage::from_fn(w as u32, h as u32, |x, y| image::Rgb([px[y as usize * w + x as usize]; 3]))
    }

    #[test]
    fn a_picture_over_another_is_found_where_it_lies() {
        let (w, h) = (480, 270);
        // A 192 x 108 picture at (250, 30), of other content.
        let px = texture_with_inset(w, h, (192, 108), (250, 30));
        let found = find_windows(&rgb(w, h, &px));
        let best = found.first().expect("the window is found");
        assert!(best.left.abs_diff(250) <= 2 && best.right.abs_diff(442) <= 2, "{best:?}");
        assert!(best.top.abs_diff(30) <= 2 && best.bottom.abs_diff(138) <= 2, "{best:?}");
    }

    #[test]
    fn a_picture_beside_another_is_found_where_it_meets_the_canvas() {
        // A 240 x 135 picture of other content in the bottom left corner, under a band and
        // beside a second picture: two of its sides are the canvas's.
        let (w, h) = (480, 200);
        let px = texture_with_inset(w, h, (240, 135), (0, 65));
        let found = find_windows(&rgb(w, h, &px));
        let best = found.first().expect("the window is found");
        assert_eq!((best.left, best.bottom), (CANVAS_START, h), "{best:?}");
        assert!(best.right.abs_diff(240) <= 2 && best.top.abs_diff(64) <= 2, "{best:?}");
        // The texture beside it, under no edge of its own, is not a window.
        assert!(found.iter().all(|w| w.left.abs_diff(240) > 2), "{found:?}");
        let shares = window_shares(&rgb(w, h, &px));
        assert!(shares[0][0] < 0.01 && shares[0][3] == 1.0, "{shares:?}");
    }

    #[test]
    fn a_side_on_the_canvas_needs_the_others_to_hold_their_edge() {
        assert!(window_score([None, Some(0.9), Some(0.8), None]).is_some());
        assert!(window_score([None, Some(0.9), Some(0.6), None]).is_none());
        assert!(window_score([None, None, Some(1.0), None]).is_none());
        // A window with an edge all round outranks one on the canvas.
        assert!(window_score([Some(0.9); 4]) > window_score([None, Some(0.9), Some(0.9), None]));
    }

    /// Cells of one pixel, each dark or bright at random (a reaction video's background).
    fn cells(w: usize, h: usize) -> Vec<u8> {
        (0..w * h).map(|i| if (i as u32).wrapping_mul(2_654_435_761) >> 31 == 1 { 200 } else { 40 }).collect()
    }

    #[test]
    fn a_smooth_picture_over_fine_cells_is_found_where_the_cells_stop() {
        // A dark, smooth 240 x 135 picture 5 pixels in from the top left corner: the cells step
        // across every pixel as much as the picture's edge does.
        let (w, h) = (480, 270);
        let mut px = cells(w, h);
        for y in 0..135 {
            for x in 0..240 {
                px[(5 + y) * w + 5 + x] = (50.0 + 30.0 * (x as f32 * 0.03).sin() + y as f32 * 0.2) as u8;
            }
        }
        let img = rgb(w, h, &px);
        assert!(windows_by(&img, EdgeKind::Sharp).is_empty());
        let found = find_windows(&img);
        let best = found.first().expect("the window is found");
        assert!(best.left.abs_diff(5) <= 2 && best.right.abs_diff(245) <= 2, "{best:?}");
        assert!(best.top.abs_diff(5) <= 2 && best.bottom.abs_diff(140) <= 2, "{best:?}");
        assert!(find_windows(&rgb(w, h, &cells(w, h))).is_empty());
    }

    #[test]
    fn a_picture_of_texture_alone_has_no_window() {
        let (w, h) = (480, 270);
        let px = texture(w, h, 5.0);
        assert!(find_windows(&rgb(w, h, &px)).is_empty());
    }
}
