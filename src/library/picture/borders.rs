//! Borders that are not flat: a blurred copy of the picture behind it (as phones and editors
//! make for a picture of another shape), a player's frame and control bar, bars whose colour
//! runs into the picture. Flat bars of one colour are cut by [`active_area`](super::hash::active_area);
//! this finds the picture by its edges instead: a side of the picture is a straight line where
//! most rows (or columns) jump in brightness, with little detail on its outer side (flat,
//! blurred or a plain UI) and the picture's detail on its inner side.
//!
//! The index never uses it (indexed frames are whole pictures): it only adds a query
//! hypothesis, so a wrong guess costs a scan, not a miss.
use crate::library::picture::{GrayView, Rect};

/// A row (column) belongs to a side when at least this share of its pixels jump by [`JUMP`]
/// gray levels across it.
const LINE_SHARE: f32 = 0.5;
const JUMP: i32 = 8;
/// The outer side's detail must be at most this share of the inner side's.
const DETAIL_RATIO: f32 = 0.5;
/// How deep into the picture the inner side's detail is measured (pixels of the 128 square).
const INNER: usize = 12;
/// At most this share of a side is taken for a border (as for flat bars).
const MAX_SHARE: usize = 35;

/// The picture inside borders found by their edges; the whole picture when none is found.
pub fn framed_area(img: GrayView<'_>) -> Rect {
    let (w, h) = (img.width, img.height);
    let full = Rect { x0: 0, y0: 0, x1: w, y1: h };
    if w < 32 || h < 32 {
        return full;
    }
    let px = |x: usize, y: usize| img.pixels[y * w + x] as i32;
    // Detail along each row (horizontal steps; columns below: vertical steps): flat and
    // blurred borders have little of it, and the boundary itself does not count towards it.
    let row_detail: Vec<f32> =
        (0..h).map(|y| (1..w).map(|x| (px(x, y) - px(x - 1, y)).abs()).sum::<i32>() as f32 / (w - 1) as f32).collect();
    let mean = |v: &[f32]| if v.is_empty() { 0.0 } else { v.iter().sum::<f32>() / v.len() as f32 };
    // Share of columns x0..x1 whose pixel jumps between rows y - 1 and y.
    let row_jump = |y: usize, x0: usize, x1: usize| {
        (x0..x1).filter(|&x| (px(x, y) - px(x, y - 1)).abs() >= JUMP).count() as f32 / (x1 - x0).max(1) as f32
    };
    let col_jump = |x: usize, y0: usize, y1: usize| {
        (y0..y1).filter(|&y| (px(x, y) - px(x - 1, y)).abs() >= JUMP).count() as f32 / (y1 - y0).max(1) as f32
    };
    // The best boundary among `candidates`: (position, jump share, outer detail, inner detail).
    let pick = |candidates: Vec<(usize, f32, f32, f32)>| {
        candidates
            .into_iter()
            .filter(|&(_, jump, outer, inner)| jump >= LINE_SHARE && outer <= DETAIL_RATIO * inner)
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|c| c.0)
    };
    let max_rows = h * MAX_SHARE / 100;
    // The outer side's detail: its typical line (the median: a player's progress line and
    // time, a repost's caption are a few busy lines in a plain band), and the lines next to
    // the boundary (a boundary inside the picture has picture right outside it).
    let median = |v: &[f32]| {
        let mut v = v.to_vec();
        let mid = v.len() / 2;
        if v.is_empty() { 0.0 } else { *v.select_nth_unstable_by(mid, |a, b| a.total_cmp(b)).1 }
    };
    let outer = |v: &[f32], near: &[f32]| median(v).max(mean(near));
    let top = pick(
        (2..max_rows)
            .map(|y| {
                (y, row_jump(y, 0, w), outer(&row_detail[..y], &row_detail[y - 2..y]), mean(&row_detail[y..y + INNER]))
            })
            .collect(),
    )
    .unwrap_or(0);
    let bottom = pick(
        (h - max_rows..h - 2)
            .map(|y| {
                (y, row_jump(y, 0, w), outer(&row_detail[y..], &row_detail[y..y + 2]), mean(&row_detail[y - INNER..y]))
            })
            .collect(),
    )
    .unwrap_or(h);
    if bottom <= top + 16 {
        return full;
    }
    let max_cols = w * MAX_SHARE / 100;
    // Columns are judged over the rows of the picture only (bars above and below are no
    // evidence either way), their detail too.
    let col_detail_in = |x: usize| {
        (top + 1..bottom).map(|y| (px(x, y) - px(x, y - 1)).abs()).sum::<i32>() as f32 / (bottom - top - 1) as f32
    };
    let cols: Vec<f32> = (0..w).map(col_detail_in).collect();
    let left = pick(
        (2..max_cols)
            .map(|x| (x, col_jump(x, top, bottom), outer(&cols[..x], &cols[x - 2..x]), mean(&cols[x..x + INNER])))
            .collect(),
    )
    .unwrap_or(0);
    let right = pick(
        (w - max_cols..w - 2)
            .map(|x| (x, col_jump(x, top, bottom), outer(&cols[x..], &cols[x..x + 2]), mean(&cols[x - INNER..x])))
            .collect(),
    )
    .unwrap_or(w);
    if right <= left + 16 {
        return full;
    }
    Rect { x0: left, y0: top, x1: right, y1: bottom }
}

/// A line belongs to a bar while its detail is under this share of the picture's (the median
/// over the middle half of the lines): flat bars have none, a blurred copy little. Detail is
/// measured against the line's brightness (a step of 3 in a dark line is what a step of 15 is
/// in a bright one), so a dark film's edges are not taken for bars.
const BAR_DETAIL: f32 = 0.25;
/// Bars thinner than this share of a side (percent) are left alone: a line or two of low
/// detail at an edge is the picture's own.
const MIN_BAR_PERCENT: usize = 2;
/// A picture whose lines carry less detail than this (mean gray step) has nothing to tell
/// bars by.
const MIN_DETAIL: f32 = 0.6;
/// Added to a line's mean brightness before detail is divided by it (keeps black lines sane).
const DARK_FLOOR: f32 = 16.0;

/// The picture inside bars told apart by their detail, not their colour: bars of any flat
/// colour, and a blurred copy of the picture (the sharp picture has far more fine detail
/// than a blurred one). Columns are judged by their vertical steps and rows by their
/// horizontal steps, so the step at the boundary itself does not count as detail. Works at
/// any size (a still is judged at up to 384 pixels a side, where a blur is many pixels wide);
/// the whole picture when nothing is found.
pub fn detail_area(img: GrayView<'_>) -> Rect {
    let (w, h) = (img.width, img.height);
    let full = Rect { x0: 0, y0: 0, x1: w, y1: h };
    if w < 32 || h < 32 {
        return full;
    }
    let px = |x: usize, y: usize| img.pixels[y * w + x] as i32;
    // (detail, brightness) of a column over rows y0..y1, of a row over columns x0..x1.
    let col = |x: usize, y0: usize, y1: usize| {
        let steps: i32 = (y0 + 1..y1).map(|y| (px(x, y) - px(x, y - 1)).abs()).sum();
        let level: i32 = (y0..y1).map(|y| px(x, y)).sum();
        (steps as f32 / (y1 - y0 - 1).max(1) as f32, level as f32 / (y1 - y0).max(1) as f32)
    };
    let row = |y: usize, x0: usize, x1: usize| {
        let steps: i32 = (x0 + 1..x1).map(|x| (px(x, y) - px(x - 1, y)).abs()).sum();
        let level: i32 = (x0..x1).map(|x| px(x, y)).sum();
        (steps as f32 / (x1 - x0 - 1).max(1) as f32, level as f32 / (x1 - x0).max(1) as f32)
    };
    // The run of low-detail lines at each end of a profile: (first, end) of the picture.
    let sides = |profile: &[(f32, f32)]| -> Option<(usize, usize)> {
        let n = profile.len();
        let mut raw: Vec<f32> = profile[n / 4..n * 3 / 4].iter().map(|p| p.0).collect();
        let mid = raw.len() / 2;
        if *raw.select_nth_unstable_by(mid, |a, b| a.total_cmp(b)).1 < MIN_DETAIL {
            return None;
        }
        let detail: Vec<f32> = profile.iter().map(|&(d, level)| d / (level + DARK_FLOOR)).collect();
        let mut middle = detail[n / 4..n * 3 / 4].to_vec();
        let reference = *middle.select_nth_unstable_by(mid, |a, b| a.total_cmp(b)).1;
        let low = |i: usize| detail[i] < BAR_DETAIL * reference;
        let max = n * MAX_SHARE / 100;
        let min_bar = (n * MIN_BAR_PERCENT).div_ceil(100).max(2);
        let mut a = 0;
        while a < max && low(a) {
            a += 1;
        }
        let mut b = n;
        while n - b < max && low(b - 1) {
            b -= 1;
        }
        Some((if a >= min_bar { a } else { 0 }, if n - b >= min_bar { b } else { n }))
    };
    let cols = |y0: usize, y1: usize| (0..w).map(|x| col(x, y0, y1)).collect::<Vec<_>>();
    let Some((left, right)) = sides(&cols(0, h)) else { return full };
    let Some((top, bottom)) = sides(&(0..h).map(|y| row(y, left, right)).collect::<Vec<_>>()) else {
        return full;
    };
    // Columns again over the picture's rows only: bars above and below say nothing.
    let (left, right) =
        if (top, bottom) == (0, h) { (left, right) } else { sides(&cols(top, bottom)).unwrap_or((left, right)) };
    if right <= left + w / 8 || bottom <= top + h / 8 {
        return full;
    }
    Rect { x0: left, y0: top, x1: right, y1: bottom }
}

/// `r` found in a picture of `from` (w, h) mapped onto one of `to` (w, h).
pub fn rescale(r: Rect, from: (usize, usize), to: (usize, usize)) -> Rect {
    let x = |v: usize| (v * to.0 + from.0 / 2) / from.0;
    let y = |v: usize| (v * to.1 + from.1 / 2) / from.1;
    Rect { x0: x(r.x0), y0: y(r.y0), x1: x(r.x1), y1: y(r.y1) }
}

/// When bars were found on one side of an axis only, the same bars on the other side too:
/// most pictures in bars are centred, and the bar on the far side may have been missed
/// (the picture's own edge there is dark or plain).
pub fn centred(r: Rect, w: usize, h: usize) -> Option<Rect> {
    let mut c = r;
    if (r.x0 == 0) != (r.x1 == w) {
        let bar = r.x0.max(w - r.x1);
        (c.x0, c.x1) = (bar, w - bar);
    }
    if (r.y0 == 0) != (r.y1 == h) {
        let bar = r.y0.max(h - r.y1);
        (c.y0, c.y1) = (bar, h - bar);
    }
    (c != r && c.x1 > c.x0 + w / 8 && c.y1 > c.y0 + h / 8).then_some(c)
}

/// Sides (pixels) a still's bars are looked for at: a blur that is one pixel wide in the
/// 128 square is three here, and the sharp picture's finest detail survives.
const FINE_SIDE: u32 = 384;

/// [`detail_area`] of a picture judged at up to [`FINE_SIDE`]
/// pixels a side, mapped onto the `side`² square the hashes are cut from.
pub(in crate::library) fn fine_detail_area(gray: &image::GrayImage, side: usize) -> Rect {
    let (w, h) = (gray.width().min(FINE_SIDE), gray.height().min(FINE_SIDE));
    let fine = if (w, h) == gray.dimensions() { gray.clone() } else { image::imageops::thumbnail(gray, w, h) };
    let (w, h) = (w as usize, h as usize);
    let r = detail_area(GrayView { width: w, height: h, pixels: fine.as_raw() });
    rescale(r, (w, h), (side, side))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A textured picture (a sum of plane waves plus a fine checker).
    fn pattern(w: usize, h: usize) -> Vec<u8> {
        (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as f32, (i / w) as f32);
                let v = (x * 0.37).sin() * 30.0 + (y * 0.23 + x * 0.11).sin() * 30.0 + (x * 1.7 + y * 1.3).sin() * 20.0;
                (128.0 + v).clamp(0.0, 255.0) as u8
            })
            .collect()
    }

    /// Box-blurs a picture with radius `r` (what an editor puts behind a picture).
    fn blurred(px: &[u8], w: usize, h: usize, r: i32) -> Vec<u8> {
        (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as i32, (i / w) as i32);
                let (mut sum, mut n) = (0u32, 0u32);
                for dy in -r..=r {
                    for dx in -r..=r {
                        let (xx, yy) = (x + dx, y + dy);
                        if xx >= 0 && yy >= 0 && xx < w as i32 && yy < h as i32 {
                            sum += px[yy as usize * w + xx as usize] as u32;
                            n += 1;
                        }
                    }
                }
                (sum / n) as u8
            })
            .collect()
    }

    #[test]
    fn a_picture_over_its_blurred_copy_is_found_by_its_edges() {
        let (w, h) = (128, 128);
        let background = blurred(&pattern(w, h), w, h, 6);
        let picture = pattern(80, 128);
        let mut px = background.clone();
        for y in 0..h {
            px[y * w + 24..y * w + 104].copy_from_slice(&picture[y * 80..(y + 1) * 80]);
        }
        let area = framed_area(GrayView { width: w, height: h, pixels: &px });
        assert!(area.x0.abs_diff(24) <= 1 && area.x1.abs_diff(104) <= 1, "{area:?}");
        assert_eq!((area.y0, area.y1), (0, h), "{area:?}");
        // The flat rule sees no border there.
        assert_eq!(crate::library::picture::hash::active_area(GrayView { width: w, height: h, pixels: &px }).x0, 0);
    }

    #[test]
    fn a_player_frame_with_a_control_bar_is_cut() {
        let (w, h) = (128, 128);
        let picture = pattern(110, 96);
        let mut px = vec![17u8; w * h];
        for y in 0..96 {
            px[(y + 8) * w + 9..(y + 8) * w + 119].copy_from_slice(&picture[y * 110..(y + 1) * 110]);
        }
        // The control bar: a lighter band with a progress line and a little text.
        for y in 110..h {
            for x in 0..w {
                px[y * w + x] = if y == 114 && x > 6 && x < 80 {
                    200
                } else if y > 118 && x % 7 < 2 && x < 30 {
                    230
                } else {
                    32
                };
            }
        }
        let area = framed_area(GrayView { width: w, height: h, pixels: &px });
        assert!(area.y0.abs_diff(8) <= 1 && area.y1.abs_diff(104) <= 1, "{area:?}");
        assert!(area.x0.abs_diff(9) <= 1 && area.x1.abs_diff(119) <= 1, "{area:?}");
    }

    /// A repost: a white band above the picture with a caption in black, a few busy lines in a
    /// plain band; the band's typical line is plain, so the picture's top edge is found.
    #[test]
    fn a_caption_band_above_the_picture_is_cut() {
        let (w, h) = (128, 128);
        let picture = pattern(128, 94);
        let mut px = vec![255u8; w * h];
        px[34 * w..].copy_from_slice(&picture);
        // Two lines of caption: letters as short black strokes.
        for y in (10..16).chain(20..25) {
            for x in 14..114 {
                if x % 5 < 2 {
                    px[y * w + x] = 0;
                }
            }
        }
        let area = framed_area(GrayView { width: w, height: h, pixels: &px });
        assert!(area.y0.abs_diff(34) <= 1, "{area:?}");
    }

    /// A textured picture sampled at any size (the same scene squeezed to `w` x `h`), with
    /// `gain` and `base` setting its contrast and brightness.
    fn scene(w: usize, h: usize, gain: f32, base: f32) -> Vec<u8> {
        (0..w * h)
            .map(|i| {
                let (u, v) = ((i % w) as f32 / w as f32, (i / w) as f32 / h as f32);
                let s = (u * 47.0).sin()
                    + (v * 29.0 + u * 14.0).sin()
                    + 0.6 * (u * 217.0 + v * 166.0).sin()
                    + 0.5 * (v * 90.0).sin();
                (base + gain * s).clamp(0.0, 255.0) as u8
            })
            .collect()
    }

    /// `picture` (`pw` x `ph`) placed at (`x`, `y`) over `background` (128 x 128).
    fn placed(background: Vec<u8>, picture: &[u8], pw: usize, ph: usize, x: usize, y: usize) -> Vec<u8> {
        let mut px = background;
        for row in 0..ph {
            px[(y + row) * 128 + x..(y + row) * 128 + x + pw].copy_from_slice(&picture[row * pw..(row + 1) * pw]);
        }
        px
    }

    /// The query's best hypothesis against the indexed frame of the same scene.
    fn best_distance(query: &[u8], indexed: &[u8]) -> u32 {
        let view = |px| GrayView { width: 128, height: 128, pixels: px };
        let target = crate::library::picture::hash::hash_frame(view(indexed)).hash;
        crate::library::picture::hash::query_hashes(view(query))
            .iter()
            .map(|f| crate::library::picture::hash::hamming(&f.hash, &target))
            .min()
            .unwrap()
    }

    /// Pillarbox bars of every flat colour kind (black, dark grey, white, a saturated colour's
    /// gray) around a normal and a dark picture: some hypothesis is the picture itself.
    #[test]
    fn bars_of_any_flat_colour_are_removed() {
        for (colour, name) in [(0u8, "black"), (51, "dark grey"), (255, "white"), (80, "blue")] {
            for (gain, base) in [(30.0, 128.0), (8.0, 40.0)] {
                let indexed = scene(128, 128, gain, base);
                let picture = scene(92, 128, gain, base);
                let query = placed(vec![colour; 128 * 128], &picture, 92, 128, 18, 0);
                let area = detail_area(GrayView { width: 128, height: 128, pixels: &query });
                assert!(area.x0.abs_diff(18) <= 1 && area.x1.abs_diff(110) <= 1, "{name} {base}: {area:?}");
                let d = best_distance(&query, &indexed);
                assert!(d <= 24, "{name} bars over a picture at {base}: {d} bits");
            }
        }
    }

    /// Bars on two sides only (top and left), in a colour close to the picture's own.
    #[test]
    fn bars_on_two_sides_in_the_picture_s_colour_are_found_by_detail() {
        let picture = scene(104, 110, 10.0, 60.0);
        let query = placed(vec![60u8; 128 * 128], &picture, 104, 110, 24, 18);
        let area = detail_area(GrayView { width: 128, height: 128, pixels: &query });
        assert!(area.x0.abs_diff(24) <= 1 && area.y0.abs_diff(18) <= 1, "{area:?}");
        assert!(area.x1 >= 127 && area.y1 >= 127, "{area:?}");
        assert!(best_distance(&query, &scene(128, 128, 10.0, 60.0)) <= 24);
    }

    /// A dark, low-contrast picture over a blurred, enlarged copy of itself, on the sides and
    /// on top and bottom: the sharp picture has the detail.
    #[test]
    fn a_dark_picture_over_its_blurred_copy_is_found_by_its_detail() {
        let (gain, base) = (9.0, 35.0);
        let indexed = scene(128, 128, gain, base);
        let sides =
            placed(blurred(&scene(128, 128, gain, base), 128, 128, 8), &scene(86, 128, gain, base), 86, 128, 21, 0);
        let area = detail_area(GrayView { width: 128, height: 128, pixels: &sides });
        assert!(area.x0.abs_diff(21) <= 1 && area.x1.abs_diff(107) <= 1, "{area:?}");
        assert!(best_distance(&sides, &indexed) <= 24);
        let top_bottom =
            placed(blurred(&scene(128, 128, gain, base), 128, 128, 8), &scene(128, 96, gain, base), 128, 96, 0, 16);
        let area = detail_area(GrayView { width: 128, height: 128, pixels: &top_bottom });
        assert!(area.y0.abs_diff(16) <= 1 && area.y1.abs_diff(112) <= 1, "{area:?}");
        assert!(best_distance(&top_bottom, &indexed) <= 24);
    }

    /// A dark film whose edges sink to black: indexing cut those flat edges, so a query in
    /// grey bars must lose them too (the index's rule run again inside the bars).
    #[test]
    fn a_dark_edge_inside_grey_bars_is_cut_as_the_index_cut_it() {
        let vignetted = |w: usize| {
            let mut px = scene(w, 128, 12.0, 50.0);
            let edge = w * 8 / 100;
            for row in px.chunks_mut(w) {
                row[..edge].fill(6);
                row[w - edge..].fill(6);
            }
            px
        };
        let indexed = vignetted(128);
        let cut = crate::library::picture::hash::active_area(GrayView { width: 128, height: 128, pixels: &indexed });
        assert!(cut.x0 >= 9, "the index cuts the flat dark edge: {cut:?}");
        let query = placed(vec![51u8; 128 * 128], &vignetted(92), 92, 128, 18, 0);
        let d = best_distance(&query, &indexed);
        assert!(d <= 24, "{d} bits");
    }

    /// Ordinary pictures with detail up to their edges get no extra hypothesis from the
    /// detail rule.
    #[test]
    fn a_detailed_picture_has_no_bars_by_detail() {
        for (gain, base) in [(30.0, 128.0), (8.0, 40.0)] {
            let px = scene(128, 128, gain, base);
            assert_eq!(
                detail_area(GrayView { width: 128, height: 128, pixels: &px }),
                Rect { x0: 0, y0: 0, x1: 128, y1: 128 }
            );
        }
    }

    #[test]
    fn a_whole_picture_keeps_its_edges() {
        let px = pattern(128, 128);
        let area = framed_area(GrayView { width: 128, height: 128, pixels: &px });
        assert_eq!(area, Rect { x0: 0, y0: 0, x1: 128, y1: 128 });
    }
}
