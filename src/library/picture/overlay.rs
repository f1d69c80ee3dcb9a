//! Burned-in subtitles and a corner's logo painted out of a query picture.
//!
//! Big, bold, outlined subtitles cover a fifth of a frame with the brightest and darkest
//! pixels in it; on a dark film they move dozens of the hash's low-frequency bits. The index
//! holds frames without them, so the query adds a hypothesis: the picture with the subtitle
//! block replaced by what is above and below it (a vertical blend, which is what the block's
//! low frequencies looked like before the text). Only the query changes, so a wrong guess
//! costs one more hash in the scan, never a miss. The blend is only a guess at what the text
//! hides, so this picture's hits may lie a little further out than others' when the frame
//! looks like the query ([`PAINTED_BAND`](crate::library::policy::PAINTED_BAND)).
//!
//! Subtitle text is found by its strokes: in the lower part of the picture, rows where many
//! short bright runs are each bordered by dark pixels on both sides (bright fill, dark
//! outline or dark scene) — letters, not a lamp or a sky.
//!
//! A broadcaster's logo (a channel's mark, a repost's watermark) is not looked for: its
//! shapes, colours and opacity are anyone's, and a still has no second frame to show it
//! standing while the picture moves. It sits in a corner, so the still tier's last fallback
//! tries each corner painted out in turn ([`paint_out_corners`]): four guesses, each hashed
//! under its first three rectangles and judged as strictly as the other many-guess tiers.
use image::GrayImage;

/// Width the text is looked for at: a subtitle's strokes and outline stay a few pixels wide.
const WORK_WIDTH: u32 = 384;
/// Stroke fill (yellow is ~225 in luma, white 255).
const BRIGHT: u8 = 170;
/// Outline (black) or the dark scene around a stroke.
const DARK: u8 = 70;
/// A stroke is a bright run at most this share of the width (letters, not a window).
const MAX_STROKE: u32 = 20;
/// A bright run's border must turn dark within this many pixels on each side.
const EDGE: u32 = 3;
/// A row is text when it holds at least this many strokes.
const MIN_STROKES: usize = 6;
/// Subtitles sit below this share of the height.
const BAND_TOP: f32 = 0.45;

/// The picture with its subtitle block painted out, or `None` when no text is found. Returned
/// at the working width ([`WORK_WIDTH`]), to be squeezed like any query.
pub fn paint_out_subtitles(gray: &GrayImage) -> Option<GrayImage> {
    let (w0, h0) = gray.dimensions();
    if w0 < 64 || h0 < 48 {
        return None;
    }
    let w = WORK_WIDTH.min(w0);
    let h = ((h0 as u64 * w as u64 / w0 as u64) as u32).max(48);
    let mut img = if (w, h) == (w0, h0) { gray.clone() } else { image::imageops::thumbnail(gray, w, h) };
    let px = |img: &GrayImage, x: u32, y: u32| img.as_raw()[(y * w + x) as usize];
    // Strokes of each row: (count, leftmost x, rightmost x).
    let strokes = |img: &GrayImage, y: u32| -> (usize, u32, u32) {
        let (mut n, mut lo, mut hi) = (0, w, 0);
        let mut x = 0;
        while x < w {
            if px(img, x, y) < BRIGHT {
                x += 1;
                continue;
            }
            let start = x;
            while x < w && px(img, x, y) >= BRIGHT {
                x += 1;
            }
            let len = x - start;
            let dark_before = (start.saturating_sub(EDGE)..start).any(|i| px(img, i, y) <= DARK);
            let dark_after = (x..(x + EDGE).min(w)).any(|i| px(img, i, y) <= DARK);
            if len <= w / MAX_STROKE && dark_before && dark_after {
                n += 1;
                lo = lo.min(start);
                hi = hi.max(x);
            }
        }
        (n, lo, hi)
    };
    let first = (h as f32 * BAND_TOP) as u32;
    let rows: Vec<(u32, u32, u32)> = (first..h)
        .filter_map(|y| {
            let (n, lo, hi) = strokes(&img, y);
            (n >= MIN_STROKES).then_some((y, lo, hi))
        })
        .collect();
    // The text block: text rows a few rows apart at most belong together (two lines of
    // subtitles count as one block); thin blocks are not text.
    let gap = (h / 40).max(2);
    let mut blocks: Vec<(u32, u32, u32, u32)> = Vec::new(); // (y0, y1, x0, x1)
    for &(y, lo, hi) in &rows {
        match blocks.last_mut() {
            Some(b) if y <= b.1 + gap => {
                b.1 = y + 1;
                b.2 = b.2.min(lo);
                b.3 = b.3.max(hi);
            }
            _ => blocks.push((y, y + 1, lo, hi)),
        }
    }
    let min_height = (h / 30).max(3);
    let blocks: Vec<_> = blocks.into_iter().filter(|b| b.1 - b.0 >= min_height).collect();
    if blocks.is_empty() {
        return None;
    }
    for (y0, y1, x0, x1) in blocks {
        // Outlines and glyph tops reach past the rows whose strokes were counted.
        let pad_y = (y1 - y0) / 6 + 2;
        let pad_x = w / 60 + 2;
        let (y0, y1) = (y0.saturating_sub(pad_y), (y1 + pad_y).min(h));
        let (x0, x1) = (x0.saturating_sub(pad_x), (x1 + pad_x).min(w));
        for x in x0..x1 {
            let above = if y0 > 0 { px(&img, x, y0 - 1) as f32 } else { px(&img, x, y1.min(h - 1)) as f32 };
            let below = if y1 < h { px(&img, x, y1) as f32 } else { above };
            for y in y0..y1 {
                let f = (y - y0 + 1) as f32 / (y1 - y0 + 1) as f32;
                img.put_pixel(x, y, image::Luma([(above * (1.0 - f) + below * f).round() as u8]));
            }
        }
    }
    Some(img)
}

/// Share of the width a corner cover is painted over: a broadcaster's logo sits in the
/// title-safe area, its far side 3-8% in from the frame's edge, and is at most about a sixth of
/// the width.
const CORNER_W: f32 = 0.26;
/// Share of the height a corner cover is painted over.
const CORNER_H: f32 = 0.22;

/// A `side`² square (the query squeezed like a frame) with one corner painted out, for each
/// corner in turn (top left, top right, bottom left, bottom right): where a broadcaster's logo
/// or a repost's watermark sits. A bright logo over a dark film moves the hash as much as big
/// subtitles do; nothing in a still tells a logo from the picture, so each corner is a guess.
/// The corner is filled from the picture beside it and below (or above) it, each weighted by
/// nearness, which keeps the low frequencies the hash reads close to the clean picture's.
pub fn paint_out_corners(square: &[u8], side: usize) -> Vec<Vec<u8>> {
    let (cw, ch) = ((side as f32 * CORNER_W).round() as usize, (side as f32 * CORNER_H).round() as usize);
    if cw < 2 || ch < 2 || cw >= side || ch >= side {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(4);
    for (right, bottom) in [(false, false), (true, false), (false, true), (true, true)] {
        let mut img = square.to_vec();
        let xs = if right { side - cw..side } else { 0..cw };
        let ys = if bottom { side - ch..side } else { 0..ch };
        // The column beside the corner and the row below (above) it.
        let beside = if right { side - cw - 1 } else { cw };
        let across = if bottom { side - ch - 1 } else { ch };
        for y in ys.clone() {
            for x in xs.clone() {
                let dx = x.abs_diff(beside) as f32;
                let dy = y.abs_diff(across) as f32;
                let (a, b) = (square[y * side + beside] as f32, square[across * side + x] as f32);
                let v = (a / dx + b / dy) / (1.0 / dx + 1.0 / dy);
                img[y * side + x] = v.round() as u8;
            }
        }
        out.push(img);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dark, textured scene.
    fn scene(w: u32, h: u32) -> GrayImage {
        GrayImage::from_fn(w, h, |x, y| {
            let (u, v) = (x as f32 / w as f32, y as f32 / h as f32);
            let s = (u * 31.0).sin() + (v * 23.0 + u * 9.0).sin() + 0.5 * (u * 120.0 + v * 70.0).sin();
            image::Luma([(40.0 + 10.0 * s).clamp(0.0, 255.0) as u8])
        })
    }

    /// Draws two lines of blocky "letters": bright strokes with a black outline.
    fn with_subtitles(mut img: GrayImage) -> GrayImage {
        let (w, h) = img.dimensions();
        for (line, top) in [(0, h * 62 / 100), (1, h * 76 / 100)] {
            let glyph_h = h / 11;
            for letter in 0..14 + line {
                let x0 = w / 6 + letter * (w * 2 / 3) / 15;
                // Each letter: two vertical strokes and a bar, outlined.
                for y in top..top + glyph_h {
                    for x in x0.saturating_sub(3)..x0 + w / 40 + 3 {
                        let inside_stroke = |sx: u32| x >= sx && x < sx + w / 120 + 2;
                        let stroke =
                            inside_stroke(x0) || inside_stroke(x0 + w / 40 - w / 120 - 2) || y == top + glyph_h / 2;
                        let v = if stroke && x >= x0 && x < x0 + w / 40 { 225 } else { 5 };
                        img.put_pixel(x, y, image::Luma([v]));
                    }
                }
            }
        }
        img
    }

    #[test]
    fn outlined_subtitles_are_painted_out() {
        let clean = scene(720, 404);
        let subbed = with_subtitles(clean.clone());
        let painted = paint_out_subtitles(&subbed).expect("text found");
        let small = |img: &GrayImage| image::imageops::thumbnail(img, 128, 128);
        let (c, s, p) = (small(&clean), small(&subbed), small(&painted));
        // Mean absolute difference to the clean picture over the lower part.
        let diff = |a: &GrayImage| {
            let lower = 128 * 55 / 100..128;
            let n = (lower.len() * 128) as f32;
            lower
                .flat_map(|y| (0..128).map(move |x| (x, y)))
                .map(|(x, y)| (a.get_pixel(x, y).0[0] as f32 - c.get_pixel(x, y).0[0] as f32).abs())
                .sum::<f32>()
                / n
        };
        assert!(diff(&p) < diff(&s) / 3.0, "painted {} vs with text {}", diff(&p), diff(&s));
    }

    #[test]
    fn a_logo_in_a_corner_is_painted_out_by_one_of_the_guesses() {
        let side = crate::library::frames::FRAME_SIDE;
        // A dark film frame: broad light and shade.
        let clean = GrayImage::from_fn(720, 404, |x, y| {
            let (u, v) = (x as f32 / 720.0, y as f32 / 404.0);
            let s = (u * 7.0).sin() + (v * 5.0 + u * 3.0).sin() + 0.5 * (u * 19.0 + v * 11.0).sin();
            image::Luma([(50.0 + 18.0 * s).clamp(0.0, 255.0) as u8])
        });
        // A broadcaster's box: white at three quarters over the top right corner.
        let mut logo = clean.clone();
        for y in 20..64 {
            for x in 560..684 {
                let p = logo.get_pixel(x, y).0[0] as f32;
                logo.put_pixel(x, y, image::Luma([(0.25 * p + 0.75 * 255.0) as u8]));
            }
        }
        let square = |img: &GrayImage| image::imageops::thumbnail(img, side as u32, side as u32).into_raw();
        let hash = |px: &[u8]| crate::library::picture::hash::hash_frame(crate::library::frames::frame_view(px)).hash;
        let truth = hash(&square(&clean));
        let covered = crate::library::picture::hash::hamming(&hash(&square(&logo)), &truth);
        let guesses = paint_out_corners(&square(&logo), side);
        assert_eq!(guesses.len(), 4);
        let dist: Vec<u32> = guesses.iter().map(|g| crate::library::picture::hash::hamming(&hash(g), &truth)).collect();
        // The top right guess undoes most of what the box did; the others do not.
        assert!(dist[1] * 2 < covered, "covered {covered}, painted {dist:?}");
        assert_eq!(dist[1], *dist.iter().min().unwrap(), "the right corner is the best guess: {dist:?}");
    }

    #[test]
    fn a_picture_without_text_is_left_alone() {
        assert!(paint_out_subtitles(&scene(720, 404)).is_none());
        // Bright lamps in a dark scene are not letters.
        let mut lamps = scene(720, 404);
        for k in 0..4 {
            for y in 300..340 {
                for x in 100 + k * 150..140 + k * 150 {
                    lamps.put_pixel(x, y, image::Luma([240]));
                }
            }
        }
        assert!(paint_out_subtitles(&lamps).is_none());
    }
}
