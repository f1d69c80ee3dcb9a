//! Frame fingerprints: a 256-bit DCT hash in the manner of PDQ, written from the published
//! description (luminance, area-downsample to 64x64, 2D DCT, the 16x16 lowest non-DC
//! coefficients, median threshold, gradient-based quality), plus flat-border removal.
//!
//! Why this shape: dropping the DC term and thresholding at the median makes the hash blind
//! to brightness and contrast shifts; the low frequencies survive JPEG, rescaling and subtitle
//! text; and a horizontal mirror only flips the sign of odd horizontal frequencies, so the
//! mirrored query costs one extra threshold, not a second decode.

/// 256 bits as four words, compared with `popcount(a ^ b)`.
pub type Hash = [u64; 4];

/// Side of the square luminance buffer the DCT runs on.
const N: usize = 64;
/// [`N`] for other modules: the side of the buffer [`downsample`] fills.
pub const HASH_SIDE: usize = N;
/// Number of DCT frequencies kept per axis (DC skipped).
const K: usize = 16;

/// Hamming distance of two hashes (0..=256).
#[inline]
pub fn hamming(a: &Hash, b: &Hash) -> u32 {
    (a[0] ^ b[0]).count_ones() + (a[1] ^ b[1]).count_ones() + (a[2] ^ b[2]).count_ones() + (a[3] ^ b[3]).count_ones()
}

pub use crate::library::picture::{GrayView, Rect};

/// The hash of one picture with its mirror twin and a quality score.
#[derive(Clone, Copy, Debug)]
pub struct FrameHash {
    pub hash: Hash,
    /// The hash the horizontally mirrored picture would have.
    pub mirror: Hash,
    /// 0..=100; below [`MIN_QUALITY`] the picture is too flat to say anything.
    pub quality: u8,
}

/// Pictures with less texture than this are not hashed reliably (black frames, fades).
pub const MIN_QUALITY: u8 = 25;

/// Detects letterbox, pillarbox and other flat borders: from each edge inwards, a line
/// belongs to the border while nearly all its pixels stay close to the edge's own colour.
/// At most 35% of a side is removed, so a dark scene is never eaten whole.
pub fn active_area(img: GrayView<'_>) -> Rect {
    active_area_in(img, Rect { x0: 0, y0: 0, x1: img.width, y1: img.height })
}

/// [`active_area`] of the part `within` of the picture, as if that part were the whole frame.
/// A query whose bars were found another way is cut again by this rule, because the indexed
/// frame went through it: a dark film's flat dark edge was cut at indexing, and a query in
/// grey bars must lose that edge too, not only its bars.
pub fn active_area_in(img: GrayView<'_>, within: Rect) -> Rect {
    active_area_of(img, within, within)
}

/// [`active_area`] judged on the part `within` of `frame`: lines of `within` are cut from its
/// sides, but no further than 35% of `frame`'s side from `frame`'s side. A square whose
/// outermost lines are left out of the judgement (see [`light`](super::light)) is still cut
/// no deeper than the index cut the whole frame.
pub fn active_area_of(img: GrayView<'_>, within: Rect, frame: Rect) -> Rect {
    let (w, h) = (within.width(), within.height());
    if w < 8 || h < 8 {
        return within;
    }
    let reach = |n: usize| n * 35 / 100;
    let max_top = (frame.y0 + reach(frame.height())).saturating_sub(within.y0).min(h);
    let max_bottom = within.y1.saturating_sub(frame.y1 - reach(frame.height())).min(h);
    let max_left = (frame.x0 + reach(frame.width())).saturating_sub(within.x0).min(w);
    let max_right = within.x1.saturating_sub(frame.x1 - reach(frame.width())).min(w);
    let (ox, oy) = (within.x0, within.y0);
    let px = |x: usize, y: usize| img.pixels[(oy + y) * img.width + ox + x] as i32;
    let flat = |vals: &mut dyn Iterator<Item = i32>, reference: i32, len: usize| {
        let close = vals.filter(|v| (v - reference).abs() <= 12).count();
        close * 100 >= len * 96
    };
    let median_of = |mut v: Vec<i32>| {
        let mid = v.len() / 2;
        *v.select_nth_unstable(mid).1
    };
    let top_ref = median_of((0..w).map(|x| px(x, 0)).collect());
    let bottom_ref = median_of((0..w).map(|x| px(x, h - 1)).collect());
    let mut y0 = 0;
    while y0 < max_top && flat(&mut (0..w).map(|x| px(x, y0)), top_ref, w) {
        y0 += 1;
    }
    let mut y1 = h;
    while h - y1 < max_bottom && flat(&mut (0..w).map(|x| px(x, y1 - 1)), bottom_ref, w) {
        y1 -= 1;
    }
    if y1 <= y0 + 8 {
        return within;
    }
    let rows = y1 - y0;
    let left_ref = median_of((y0..y1).map(|y| px(0, y)).collect());
    let right_ref = median_of((y0..y1).map(|y| px(w - 1, y)).collect());
    let mut x0 = 0;
    while x0 < max_left && flat(&mut (y0..y1).map(|y| px(x0, y)), left_ref, rows) {
        x0 += 1;
    }
    let mut x1 = w;
    while w - x1 < max_right && flat(&mut (y0..y1).map(|y| px(x1 - 1, y)), right_ref, rows) {
        x1 -= 1;
    }
    if x1 <= x0 + 8 {
        return within;
    }
    Rect { x0: ox + x0, y0: oy + y0, x1: ox + x1, y1: oy + y1 }
}

/// Per output cell, the source pixels it covers and their overlap weights (area averaging).
fn area_weights(src_start: usize, src_len: usize, out: usize) -> Vec<Vec<(usize, f32)>> {
    let scale = src_len as f32 / out as f32;
    (0..out)
        .map(|i| {
            let a = i as f32 * scale;
            let b = (i + 1) as f32 * scale;
            let mut cell = Vec::with_capacity(scale.ceil() as usize + 1);
            let mut s = a.floor() as usize;
            while (s as f32) < b && s < src_len {
                let lo = a.max(s as f32);
                let hi = b.min(s as f32 + 1.0);
                if hi > lo {
                    cell.push((src_start + s, (hi - lo) / scale));
                }
                s += 1;
            }
            cell
        })
        .collect()
}

/// Area-averages `rect` of the picture into a 64x64 float buffer.
pub fn downsample(img: GrayView<'_>, rect: Rect) -> Vec<f32> {
    let wx = area_weights(rect.x0, rect.width(), N);
    let wy = area_weights(rect.y0, rect.height(), N);
    // Horizontal pass over the rows the rectangle spans.
    let mut rows = vec![0f32; rect.height() * N];
    for (ry, y) in (rect.y0..rect.y1).enumerate() {
        let line = &img.pixels[y * img.width..(y + 1) * img.width];
        for (i, cell) in wx.iter().enumerate() {
            rows[ry * N + i] = cell.iter().map(|&(x, w)| line[x] as f32 * w).sum();
        }
    }
    let mut out = vec![0f32; N * N];
    for (j, cell) in wy.iter().enumerate() {
        for &(y, w) in cell {
            let ry = y - rect.y0;
            for i in 0..N {
                out[j * N + i] += rows[ry * N + i] * w;
            }
        }
    }
    out
}

/// Means of the `cell`-pixel squares of a square picture `side` pixels wide (`side` a multiple
/// of `cell`), row by row.
pub fn cell_means<T: Copy + Into<f32>>(pixels: &[T], side: usize, cell: usize) -> Vec<f32> {
    let cells = side / cell;
    let mut out = vec![0f32; cells * cells];
    for (i, &v) in pixels.iter().enumerate() {
        out[(i / side / cell) * cells + (i % side) / cell] += v.into();
    }
    let area = (cell * cell) as f32;
    out.iter_mut().for_each(|v| *v /= area);
    out
}

/// The 16x64 DCT-II basis without the DC row.
fn dct_matrix() -> &'static [f32; K * N] {
    static M: std::sync::OnceLock<[f32; K * N]> = std::sync::OnceLock::new();
    M.get_or_init(|| {
        let mut m = [0f32; K * N];
        let norm = (2.0 / N as f64).sqrt();
        for k in 0..K {
            for j in 0..N {
                let angle = std::f64::consts::PI * (k + 1) as f64 * (2 * j + 1) as f64 / (2 * N) as f64;
                m[k * N + j] = (norm * angle.cos()) as f32;
            }
        }
        m
    })
}

/// `D * A * D^T`: 16x16 coefficients, row = vertical frequency, column = horizontal.
fn dct16(buf: &[f32]) -> [f32; K * K] {
    let d = dct_matrix();
    // T = A * D^T (64 x 16)
    let mut t = [0f32; N * K];
    for r in 0..N {
        let row = &buf[r * N..(r + 1) * N];
        for k in 0..K {
            let basis = &d[k * N..(k + 1) * N];
            t[r * K + k] = row.iter().zip(basis).map(|(a, b)| a * b).sum();
        }
    }
    let mut out = [0f32; K * K];
    for k1 in 0..K {
        let basis = &d[k1 * N..(k1 + 1) * N];
        for k2 in 0..K {
            out[k1 * K + k2] = (0..N).map(|r| basis[r] * t[r * K + k2]).sum();
        }
    }
    out
}

/// Bit `b` of a hash is coefficient `BIT_ORDER[b]` (index `row * K + column`). The bits are
/// ordered from low to high frequency (by the larger of the two frequencies, then their sum),
/// so word 0 is the 8x8 block of the lowest frequencies: the bits that survive JPEG,
/// rescaling, crops and a camera best, which the scan's first stage compares on their own.
fn bit_order() -> &'static [u16; K * K] {
    static ORDER: std::sync::OnceLock<[u16; K * K]> = std::sync::OnceLock::new();
    ORDER.get_or_init(|| {
        let mut idx: Vec<u16> = (0..(K * K) as u16).collect();
        idx.sort_by_key(|&i| {
            let (r, c) = (i as usize / K, i as usize % K);
            (r.max(c), r + c, r)
        });
        let mut order = [0u16; K * K];
        order.copy_from_slice(&idx);
        order
    })
}

fn threshold(coeffs: &[f32; K * K]) -> Hash {
    let mut sorted = *coeffs;
    let median = *sorted.select_nth_unstable_by(K * K / 2 - 1, |a, b| a.total_cmp(b)).1;
    let mut hash = [0u64; 4];
    for (b, &i) in bit_order().iter().enumerate() {
        if coeffs[i as usize] > median {
            hash[b / 64] |= 1 << (b % 64);
        }
    }
    hash
}

/// Texture of the 64x64 buffer as 0..=100 (sum of neighbour differences, as in PDQ).
fn quality(buf: &[f32]) -> u8 {
    let mut sum = 0f32;
    for y in 0..N {
        for x in 0..N {
            let v = buf[y * N + x];
            if x + 1 < N {
                sum += (v - buf[y * N + x + 1]).abs();
            }
            if y + 1 < N {
                sum += (v - buf[(y + 1) * N + x]).abs();
            }
        }
    }
    let q = sum / 255.0 * 100.0 / 90.0;
    q.clamp(0.0, 100.0) as u8
}

/// Hashes `rect` of the picture.
pub fn hash_rect(img: GrayView<'_>, rect: Rect) -> FrameHash {
    let buf = downsample(img, rect);
    let coeffs = dct16(&buf);
    let mut mirrored = coeffs;
    // Mirroring x -> 63 - x multiplies horizontal frequency f by (-1)^f; f = column + 1.
    for k1 in 0..K {
        for k2 in (0..K).step_by(2) {
            mirrored[k1 * K + k2] = -mirrored[k1 * K + k2];
        }
    }
    FrameHash { hash: threshold(&coeffs), mirror: threshold(&mirrored), quality: quality(&buf) }
}

/// Removes flat borders, then hashes the active picture.
pub fn hash_frame(img: GrayView<'_>) -> FrameHash {
    hash_rect(img, active_area(img))
}

/// The rectangles a query is searched under, best guess first: the active picture (flat
/// borders cut as the index cuts them), then, when they differ, the whole picture (dark
/// content at an edge can pass for a bar on one side and not on the other, e.g. after a
/// contrast boost), the picture inside borders found by their edges
/// ([`framed_area`](super::borders::framed_area): a player, a blurred copy with a clear
/// edge) and inside bars found by their lack of detail
/// ([`detail_area`](super::borders::detail_area): bars of any colour, blurred copies); each
/// found picture is also cut again by the index's own flat rule ([`active_area_in`]), since
/// the indexed frame went through it.
pub fn query_rects(img: GrayView<'_>) -> Vec<Rect> {
    query_rects_with(img, crate::library::picture::borders::detail_area(img))
}

/// [`query_rects`] with the bars-by-detail rectangle found by the caller (a still finds it at
/// a finer resolution than the 128 square).
pub fn query_rects_with(img: GrayView<'_>, detail: Rect) -> Vec<Rect> {
    let full = Rect { x0: 0, y0: 0, x1: img.width, y1: img.height };
    let area = active_area(img);
    let mut out = vec![area];
    let mut push = |r: Rect| r.add_to(&mut out);
    if area != full {
        push(full);
        push(active_area_in(img, area));
    }
    // Bars by detail at the 128 square too: a still's finer look can miss what it sees.
    let coarse = crate::library::picture::borders::detail_area(img);
    let framed = crate::library::picture::borders::framed_area(img);
    for found in [framed, detail, coarse] {
        if found != full {
            push(found);
            push(active_area_in(img, found));
        }
    }
    for found in [detail, coarse] {
        if let Some(c) = crate::library::picture::borders::centred(found, img.width, img.height) {
            push(c);
        }
    }
    // Last, so that none of the rectangles above gives way to a near one: more flat cuts.
    for found in [area, framed, detail, coarse] {
        if found != full {
            flat_cuts(img, found, &mut out);
        }
    }
    out
}

/// Adds `r` cut by [`active_area_in`] once and again while the cut changes it (at most
/// [`FLAT_PASSES`] times). One pass removes one flat colour from each side; a picture framed
/// twice over — a player's grey frame around a dark film's black edge, or a frame found a
/// row or two too wide, so that the rule's reference is the frame's colour — needs a second
/// pass to lose the film's own flat edge as the index did.
///
/// The same again from `r` one pixel in on every side: a border found by its colour ends in a
/// line that blends it with the picture, and a blended line as the rule's reference matches
/// neither, so a dark film's own flat edge behind it would stay. Sides the rule did not cut
/// from there are given back their pixel.
fn flat_cuts(img: GrayView<'_>, r: Rect, out: &mut Vec<Rect>) {
    let inset = Rect { x0: r.x0 + 1, y0: r.y0 + 1, x1: r.x1.saturating_sub(1), y1: r.y1.saturating_sub(1) };
    let given_back = |c: Rect| Rect {
        x0: if c.x0 == inset.x0 { r.x0 } else { c.x0 },
        y0: if c.y0 == inset.y0 { r.y0 } else { c.y0 },
        x1: if c.x1 == inset.x1 { r.x1 } else { c.x1 },
        y1: if c.y1 == inset.y1 { r.y1 } else { c.y1 },
    };
    for (start, from_inset) in [(r, false), (inset, true)] {
        if start.x1 <= start.x0 + 8 || start.y1 <= start.y0 + 8 {
            continue;
        }
        let mut at = start;
        for _ in 0..FLAT_PASSES {
            let cut = active_area_in(img, at);
            if cut == at {
                break;
            }
            if from_inset { given_back(cut) } else { cut }.add_to(out);
            at = cut;
        }
    }
}

/// See [`flat_cuts`].
const FLAT_PASSES: usize = 3;

/// The hashes of [`query_rects`], in the same order.
pub fn query_hashes(img: GrayView<'_>) -> Vec<FrameHash> {
    query_rects(img).into_iter().map(|r| hash_rect(img, r)).collect()
}

/// The hashes of [`query_rects_with`], in the same order.
pub fn query_hashes_with(img: GrayView<'_>, detail: Rect) -> Vec<FrameHash> {
    query_rects_with(img, detail).into_iter().map(|r| hash_rect(img, r)).collect()
}

/// The crop tier indexes the centred window holding this share of each side of the active
/// picture. It lies wholly inside any crop that keeps at least 90% of each side, wherever the
/// crop sits, so a cropped screenshot can be matched by finding that window in it.
pub const CROP_SCALE: f32 = 0.8;

/// The deep-crop tier indexes the centred window holding this share of each side of the
/// active picture: it lies wholly inside any crop that keeps 75% of each side, wherever the
/// crop sits (a screenshot cut down to a face or a figure), where the crop tier's window
/// does not.
pub const DEEP_SCALE: f32 = 0.5;

/// The upper tier indexes the top of the active picture, this share of its height: what a
/// picture keeps when big subtitles, a broadcaster's lower third or a player's controls cover
/// its bottom. Two lines of big subtitles start about 62% down; the share leaves a margin for
/// their outline and for a picture found a few pixels too tall.
pub const UPPER_SHARE: f32 = 0.55;

/// The rectangles a picture whose lower part is covered is searched under in the upper tier:
/// the top [`UPPER_SHARE`] of each of `rects` (the picture's own rectangles, see
/// [`query_rects_with`]), in their order; then, where they differ, the same tops with the
/// sides judged on the top alone. The index cut a dark film's flat dark sides; big subtitles,
/// a logo or a player's controls that reach into those sides keep the query's own rule from
/// cutting them, but above the cover the sides are as flat as the index saw them.
pub fn upper_query_rects(img: GrayView<'_>, rects: &[Rect]) -> Vec<Rect> {
    let mut out: Vec<Rect> = rects.iter().map(|r| r.upper(UPPER_SHARE)).collect();
    for r in rects {
        let top = active_area_in(img, r.upper(UPPER_SHARE));
        Rect { x0: top.x0, x1: top.x1, ..*r }.upper(UPPER_SHARE).add_to(&mut out);
    }
    out
}

/// The hashes of [`upper_query_rects`], in the same order; too flat ones are left out.
pub fn upper_query_hashes(img: GrayView<'_>, rects: &[Rect]) -> Vec<FrameHash> {
    upper_query_rects(img, rects).into_iter().map(|r| hash_rect(img, r)).filter(|f| f.quality >= MIN_QUALITY).collect()
}

/// The shapes (width / height) films and shows are made in, the most common first (of two
/// that land within a pixel of each other, the first is kept): 16:9, scope (2.39 and 2.35),
/// 1.85, 4:3, 2:1, 1.66, 3:2, Academy and 2.2.
const FILM_SHAPES: &[f32] = &[16.0 / 9.0, 2.39, 1.85, 4.0 / 3.0, 2.35, 2.0, 1.66, 1.5, 1.375, 2.2];

/// Where a picture of each film shape would lie, centred at full width or full height, in a
/// canvas of `canvas` (width, height) pixels, as rectangles of the `side`² square the hashes
/// are cut from; shapes that leave less than 2% of a side for bars are skipped. Phones and
/// editors centre a picture of another shape over a blurred copy of itself or a plain
/// colour; when nothing in the canvas tells where the picture ends (a dark film's edge over
/// its own blurred copy), its shape still does.
pub fn shape_rects(canvas: (u32, u32), side: usize) -> Vec<Rect> {
    let (w, h) = (canvas.0 as f32, canvas.1 as f32);
    if w < 1.0 || h < 1.0 {
        return Vec::new();
    }
    let mut out: Vec<Rect> = Vec::new();
    for &shape in FILM_SHAPES {
        // The picture's share of the canvas height (full width) or width (full height).
        let (share_w, share_h) = if shape > w / h { (1.0, w / shape / h) } else { (h * shape / w, 1.0) };
        if share_w.min(share_h) > 0.96 {
            continue;
        }
        let full = Rect { x0: 0, y0: 0, x1: side, y1: side };
        let r = Rect {
            x0: ((1.0 - share_w) / 2.0 * side as f32).round() as usize,
            y0: ((1.0 - share_h) / 2.0 * side as f32).round() as usize,
            ..full
        };
        let r = Rect { x1: side - r.x0, y1: side - r.y0, ..r };
        if r.width() >= side / 8 && r.height() >= side / 8 {
            r.add_to(&mut out);
        }
    }
    out
}

/// The hashes of [`shape_rects`] of a picture (`img` is the canvas squeezed to a square),
/// each also cut by the index's flat rule where that differs; too flat ones are left out.
pub fn shape_query_hashes(img: GrayView<'_>, canvas: (u32, u32)) -> Vec<FrameHash> {
    shape_query_rects(img, canvas).into_iter().map(|r| hash_rect(img, r)).filter(|f| f.quality >= MIN_QUALITY).collect()
}

/// The rectangles of [`shape_query_hashes`]: [`shape_rects`], each followed by its cut by the
/// index's flat rule where that differs.
pub fn shape_query_rects(img: GrayView<'_>, canvas: (u32, u32)) -> Vec<Rect> {
    let mut rects: Vec<Rect> = Vec::new();
    for r in shape_rects(canvas, img.width) {
        r.add_to(&mut rects);
        active_area_in(img, r).add_to(&mut rects);
    }
    rects
}

/// Query crops the crop tier is searched for: (share of each side kept, positions per axis).
/// Offsets are spaced so the window is never more than ~1/70 of the picture from a
/// hypothesis (about one pixel of the 64x64 buffer).
const CROP_QUERY_SCALES: &[(f32, usize)] = &[(0.9, 5), (0.95, 3)];

/// Hypotheses for a cropped picture: where the indexed centre window ([`CROP_SCALE`]) would
/// lie in it if the picture kept 90% or 95% of each side of the frame, at any offset.
pub fn crop_query_hashes(img: GrayView<'_>) -> Vec<FrameHash> {
    crop_query_rects(img).into_iter().map(|r| hash_rect(img, r)).collect()
}

/// The rectangles of [`crop_query_hashes`], in the same order.
pub fn crop_query_rects(img: GrayView<'_>) -> Vec<Rect> {
    window_placements(active_area(img), CROP_SCALE, CROP_QUERY_SCALES)
}

/// Query crops the deep-crop tier is searched for: (share of each side kept, positions per
/// axis). The window's place in the query is unknown over a third of its side: on the
/// benchmark's footage (75% crops, exact size) the nearest of 13 positions an axis lay 33 bits
/// from the window on average and 52 at most, of 9 positions 55 and 82; a crop 5% larger or
/// smaller than its hypothesis lay 25-40 bits further, so three sizes cover crops keeping
/// about 68-83% of each side.
const DEEP_QUERY_SCALES: &[(f32, usize)] = &[(0.7, 13), (0.75, 13), (0.8, 10)];

/// Hypotheses for a deep crop: where the indexed middle ([`DEEP_SCALE`]) would lie in the
/// picture if it kept 70-80% of each side of the frame, at any offset.
pub fn deep_query_rects(img: GrayView<'_>) -> Vec<Rect> {
    window_placements(active_area(img), DEEP_SCALE, DEEP_QUERY_SCALES)
}

/// Where a centred window holding `scale` of each side of the frame lies in `area`, for each
/// `(kept, steps)`: `area` holding `kept` of each side of the frame, cut anywhere, with the
/// window's possible places sampled `steps` times along each axis.
fn window_placements(area: Rect, scale: f32, scales: &[(f32, usize)]) -> Vec<Rect> {
    let margin = (1.0 - scale) / 2.0;
    let mut out = Vec::new();
    for &(kept, steps) in scales {
        // The window's share of the query's side, and the range of its left (top) edge.
        let share = scale / kept;
        let (lo, hi) = ((margin - (1.0 - kept)).max(0.0) / kept, margin / kept);
        let room = 1.0 - share;
        let positions: Vec<f32> = (0..steps)
            .map(|k| {
                let u = if steps == 1 { (lo + hi) / 2.0 } else { lo + (hi - lo) * k as f32 / (steps - 1) as f32 };
                (u / room).clamp(0.0, 1.0)
            })
            .collect();
        for &fy in &positions {
            for &fx in &positions {
                out.push(area.window(share, fx, fy));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_judged_inside_a_frame_cuts_no_deeper_than_the_frames_own() {
        // A 128 square, flat white but for a textured band across rows 60..70: the index cuts
        // the top and the bottom down to its 35% (44 rows each).
        let px: Vec<u8> = (0..128 * 128)
            .map(|i| if (60..70).contains(&(i / 128)) { (40 + (i * 37) % 170) as u8 } else { 240 })
            .collect();
        let view = GrayView { width: 128, height: 128, pixels: &px };
        let full = Rect { x0: 0, y0: 0, x1: 128, y1: 128 };
        let index = active_area(view);
        assert_eq!((index.y0, index.y1), (44, 84));
        // Judged from 5 pixels in: as if those 118 lines were the frame, 35% of them reaches 2
        // rows further; as part of the square, it stops where the index stopped.
        let within = Rect { x0: 5, y0: 5, x1: 123, y1: 123 };
        let alone = active_area_in(view, within);
        assert_eq!((alone.y0, alone.y1), (46, 82));
        let of = active_area_of(view, within, full);
        assert_eq!((of.y0, of.y1), (44, 84));
        assert_eq!(active_area_of(view, full, full), index);
    }

    /// A textured picture: a sum of a dozen plane waves (every DCT coefficient gets energy).
    fn pattern(w: usize, h: usize) -> Vec<u8> {
        let waves: Vec<(f32, f32, f32)> =
            (1..=12).map(|k| (0.7 * k as f32 % 5.3 + 0.2, 1.3 * k as f32 % 4.1 - 2.0, k as f32)).collect();
        (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as f32 / w as f32, (i / w) as f32 / h as f32);
                let v: f32 = waves.iter().map(|(fx, fy, p)| (6.3 * (fx * x + fy * y) + p).sin()).sum();
                (128.0 + 25.0 * v).clamp(0.0, 255.0) as u8
            })
            .collect()
    }

    #[test]
    fn word_zero_holds_the_lowest_frequencies() {
        let order = bit_order();
        assert!(order[..64].iter().all(|&i| (i as usize / K) < 8 && (i as usize % K) < 8));
        let mut seen = order.to_vec();
        seen.sort_unstable();
        assert_eq!(seen, (0..(K * K) as u16).collect::<Vec<_>>());
    }

    #[test]
    fn a_ten_percent_crop_contains_the_indexed_centre_window() {
        let (w, h) = (128, 128);
        let px = pattern(w, h);
        let view = GrayView { width: w, height: h, pixels: &px };
        let full = Rect { x0: 0, y0: 0, x1: w, y1: h };
        let indexed = hash_rect(view, full.centre(CROP_SCALE));
        // Keep 90% of each side, pushed to the right and top (x offset 10%, y offset 3%).
        let (x0, y0) = (13, 4);
        let side = 115;
        let crop: Vec<u8> = (0..side * side).map(|i| px[(y0 + i / side) * w + x0 + i % side]).collect();
        let crop_view = GrayView { width: side, height: side, pixels: &crop };
        let best = crop_query_hashes(crop_view).iter().map(|f| hamming(&f.hash, &indexed.hash)).min().unwrap();
        let whole = hamming(&hash_frame(crop_view).hash, &hash_frame(view).hash);
        assert!(best <= 30, "best crop hypothesis {best} bits away");
        assert!(best < whole, "crop hypothesis {best} vs whole picture {whole}");
    }

    #[test]
    fn film_shapes_are_placed_centred_in_a_canvas_of_another_shape() {
        // Scope (2.39) over a 640x768 canvas: 268 of 768 rows, centred; 16:9 there too.
        let rects = shape_rects((640, 768), 128);
        assert_eq!(rects[1], Rect { x0: 0, y0: 42, x1: 128, y1: 86 }, "{rects:?}");
        assert!(rects.contains(&Rect { x0: 0, y0: 28, x1: 128, y1: 100 }), "{rects:?}");
        assert!(rects.iter().all(|r| r.x0 == 0 && r.x1 == 128 && r.y0 + r.y1 == 128));
        // In a 16:9 canvas: 4:3 at full height with bars at the sides, scope at full width
        // with bars above and below; 16:9 itself and 1.85 (under 2% of a side) are left out.
        let rects = shape_rects((1280, 720), 128);
        assert!(rects.contains(&Rect { x0: 16, y0: 0, x1: 112, y1: 128 }), "{rects:?}");
        assert!(rects.contains(&Rect { x0: 0, y0: 16, x1: 128, y1: 112 }), "{rects:?}");
        assert!(rects.iter().all(|r| r.x0.max(r.y0) >= 3 && (r.x0 == 0 || r.y0 == 0)), "{rects:?}");
        assert!(shape_rects((0, 10), 128).is_empty());
    }

    #[test]
    fn mirror_hash_equals_hash_of_mirrored_picture() {
        let (w, h) = (128, 96);
        let px = pattern(w, h);
        let flipped: Vec<u8> = (0..w * h).map(|i| px[(i / w) * w + (w - 1 - i % w)]).collect();
        let a = hash_frame(GrayView { width: w, height: h, pixels: &px });
        let b = hash_frame(GrayView { width: w, height: h, pixels: &flipped });
        assert!(hamming(&a.mirror, &b.hash) <= 2, "{}", hamming(&a.mirror, &b.hash));
        assert!(hamming(&a.hash, &b.hash) > 40);
    }

    #[test]
    fn letterbox_is_removed_before_hashing() {
        let (w, h) = (128, 72);
        let px = pattern(w, h);
        let mut boxed = vec![0u8; w * 96];
        boxed[12 * w..(12 + h) * w].copy_from_slice(&px);
        let area = active_area(GrayView { width: w, height: 96, pixels: &boxed });
        assert_eq!(area, Rect { x0: 0, y0: 12, x1: w, y1: 84 });
        let a = hash_frame(GrayView { width: w, height: h, pixels: &px });
        let b = hash_frame(GrayView { width: w, height: 96, pixels: &boxed });
        assert!(hamming(&a.hash, &b.hash) <= 4);
    }

    #[test]
    fn a_dark_edge_inside_a_grey_frame_is_cut_by_a_second_pass() {
        // A film with black bands (14 rows) over and under its picture, shown in a player's
        // grey (17) frame; the frame was found two rows too tall, so the first pass's bottom
        // reference is the grey and it stops at the film's black.
        let (w, h) = (140, 150);
        let film = pattern(128, 100);
        let mut px = vec![17u8; w * h];
        for y in 8..136 {
            px[y * w + 6..y * w + 134].fill(0);
        }
        for y in 0..100 {
            px[(22 + y) * w + 6..(22 + y) * w + 134].copy_from_slice(&film[y * 128..(y + 1) * 128]);
        }
        let view = GrayView { width: w, height: h, pixels: &px };
        let found = Rect { x0: 6, y0: 8, x1: 134, y1: 138 };
        let once = active_area_in(view, found);
        assert_eq!(once, Rect { x0: 6, y0: 22, x1: 134, y1: 136 });
        let mut out = Vec::new();
        flat_cuts(view, found, &mut out);
        assert_eq!(out, vec![once, Rect { x0: 6, y0: 22, x1: 134, y1: 122 }]);
    }

    #[test]
    fn a_dark_edge_behind_a_blended_border_line_is_cut_from_one_pixel_in() {
        // Grey pillars (51), then a column that blends them with the film (JPEG and
        // resampling leave it uneven: 25 or 45), then the film's own black edge (11 columns)
        // on both sides of its picture.
        let (w, h) = (128, 128);
        let film = pattern(68, h);
        let mut px = vec![51u8; w * h];
        for y in 0..h {
            let row = &mut px[y * w..(y + 1) * w];
            let blend = if y % 3 == 0 { 45 } else { 25 };
            row[18] = blend;
            row[109] = blend;
            row[19..109].fill(0);
            row[30..98].copy_from_slice(&film[y * 68..(y + 1) * 68]);
        }
        let view = GrayView { width: w, height: h, pixels: &px };
        let found = Rect { x0: 18, y0: 0, x1: 110, y1: h };
        assert_eq!(active_area_in(view, found), found, "the blended line keeps the first pass from cutting");
        let mut out = Vec::new();
        flat_cuts(view, found, &mut out);
        assert_eq!(out, vec![Rect { x0: 30, y0: 0, x1: 98, y1: h }]);
    }

    #[test]
    fn brightness_shift_keeps_the_hash_and_flat_pictures_have_no_quality() {
        let (w, h) = (96, 96);
        let px = pattern(w, h);
        let brighter: Vec<u8> = px.iter().map(|&v| ((v as f32) * 0.8 + 30.0) as u8).collect();
        let a = hash_frame(GrayView { width: w, height: h, pixels: &px });
        let b = hash_frame(GrayView { width: w, height: h, pixels: &brighter });
        assert!(hamming(&a.hash, &b.hash) <= 8, "{}", hamming(&a.hash, &b.hash));
        assert!(a.quality >= MIN_QUALITY);
        let flat = vec![40u8; w * h];
        assert!(hash_frame(GrayView { width: w, height: h, pixels: &flat }).quality < MIN_QUALITY);
    }
}
