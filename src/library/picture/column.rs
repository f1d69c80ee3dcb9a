//! The column tier's geometry: which narrow, full-height windows of a frame the index keeps,
//! and where they may lie inside a vertical repost.
//!
//! A vertical (9:16) repost of a 16:9 film keeps a column of about a third of the frame's
//! width (`9/16 / 16/9`), anywhere across it, at full height; of a 4:3 frame, 42%. The whole
//! frame's hash cannot see a third of the frame, and a window's hash moves by tens of bits
//! when the window shifts by 1% of its width, so the index keeps [`COLUMNS`] windows
//! [`COLUMN_WIDTH`] of the picture wide at [`COLUMN_CENTRES`], each narrower than a repost's
//! column by more than the step between them: whichever column a repost keeps holds one of
//! them whole. The query looks for it at every other pixel across its picture (see
//! [`column_query_rects`]).
use crate::library::picture::Rect;

/// The windows the column tier keeps of each kept moment (the index's section `columns`).
pub const COLUMNS: usize = 5;

/// The share of the active picture's width each column window holds (23 of 128 pixels:
/// a whole number of the index's frame square, so its width is not rounded).
pub const COLUMN_WIDTH: f32 = 23.0 / 128.0;

/// The windows' centres, as shares of the active picture's width. A 9:16 column of a 16:9
/// frame (31.6% of the width) has 13.7% of room around a window: the step of 12.5% leaves
/// every column centred from 19% to 81% of the way across holding one whole.
pub const COLUMN_CENTRES: [f32; COLUMNS] = [0.25, 0.375, 0.5, 0.625, 0.75];

/// The frame shapes (width / height) a repost's column may have been cut from: 16:9 and 4:3.
/// A column `a` wide for its height is `a / shape` of such a frame's width.
const FRAME_SHAPES: [f32; 2] = [16.0 / 9.0, 4.0 / 3.0];

/// A picture narrower than this share of the frame is searched as a column: a 9:16 repost
/// (32% of a 16:9 frame, 42% of a 4:3 one), a 4:5 one (45%, 60%), a square one (56% of a 16:9
/// frame). Wider, the whole frame and the crop tier see enough of it, and a 4:3 picture is
/// not taken for a column of a 16:9 frame.
const MAX_SHARE: f32 = 0.6;

/// Pixels of the query's frame square between two placements of a column window: 1.4% of
/// the window's width in a 9:16 repost's picture (72 pixels wide), 1.9% as a column of a 4:3
/// frame; a placement is then at most one pixel, about 30 bits, off the indexed window.
const PLACEMENT_STEP: usize = 2;

/// The column windows of an active picture `area` (in the frame square), in the order of
/// [`COLUMN_CENTRES`].
pub fn column_rects(area: Rect) -> [Rect; COLUMNS] {
    let aw = area.width() as f32;
    let w = ((aw * COLUMN_WIDTH).round() as usize).clamp(1, area.width());
    COLUMN_CENTRES.map(|c| {
        let x0 = (aw * c - w as f32 / 2.0).round().clamp(0.0, (area.width() - w) as f32) as usize;
        Rect { x0: area.x0 + x0, x1: area.x0 + x0 + w, ..area }
    })
}

/// [`column_query_rects`] of each of `rects` (a picture's own rectangles), each once.
pub fn column_query_rects_of(rects: &[Rect], canvas: (u32, u32)) -> Vec<Rect> {
    let mut out = Vec::new();
    for r in rects.iter().flat_map(|&r| column_query_rects(r, canvas)) {
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

/// Where an indexed column window may lie inside `rect`, a rectangle of a query squeezed to
/// the frame square from a picture `canvas` pixels large: when the rectangle is narrow for its
/// height (a column of a wider frame, by [`FRAME_SHAPES`]), a window of the share the index
/// keeps at every other pixel across it ([`PLACEMENT_STEP`]), full height. Empty for a picture about as wide as a film.
pub fn column_query_rects(rect: Rect, canvas: (u32, u32)) -> Vec<Rect> {
    let (w, h) = (rect.width() as f32 * canvas.0 as f32, rect.height() as f32 * canvas.1 as f32);
    if rect.width() < 8 || h <= 0.0 {
        return Vec::new();
    }
    let aspect = w / h;
    let mut out = Vec::new();
    for shape in FRAME_SHAPES {
        let share = aspect / shape;
        if !(COLUMN_WIDTH * 1.1..=MAX_SHARE).contains(&share) {
            continue;
        }
        let ww = ((rect.width() as f32 * COLUMN_WIDTH / share).round() as usize).clamp(1, rect.width());
        for x0 in (rect.x0..=rect.x1 - ww).step_by(PLACEMENT_STEP) {
            out.push(Rect { x0, x1: x0 + ww, ..rect });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_16_9_frame_keeps_five_windows_of_23_pixels_across_its_middle() {
        let area = Rect { x0: 0, y0: 14, x1: 128, y1: 114 };
        let rects = column_rects(area);
        assert!(rects.iter().all(|r| r.width() == 23 && r.y0 == 14 && r.y1 == 114));
        let centres: Vec<f32> = rects.iter().map(|r| (r.x0 + r.x1) as f32 / 2.0 / 128.0).collect();
        for (c, want) in centres.iter().zip(COLUMN_CENTRES) {
            assert!((c - want).abs() < 1.0 / 128.0, "{c} {want}");
        }
    }

    #[test]
    fn a_vertical_repost_holds_one_window_whole_wherever_its_column_lies() {
        // A 9:16 column of a 16:9 frame (31.6% of its width) centred from 19% to 81% of the way across.
        let area = Rect { x0: 0, y0: 0, x1: 1280, y1: 720 };
        let windows = column_rects(area);
        let column = 720.0 * 9.0 / 16.0;
        for k in 0..=20 {
            let centre = 0.19 * 1280.0 + (0.62 * 1280.0) * k as f32 / 20.0;
            let (a, b) = (centre - column / 2.0, centre + column / 2.0);
            assert!(windows.iter().any(|r| a <= r.x0 as f32 && r.x1 as f32 <= b), "column at {centre}");
        }
    }

    #[test]
    fn a_portrait_picture_is_searched_at_every_other_pixel_a_landscape_one_not_at_all() {
        // The repost's picture: 720x1280 squeezed to the 128 square, 102 rows of it.
        let rect = Rect { x0: 0, y0: 16, x1: 128, y1: 118 };
        let rects = column_query_rects(rect, (720, 1600));
        // As a column of a 16:9 frame the window is 57% of it (72 px), of a 4:3 frame 42%.
        assert!(rects.iter().any(|r| r.width() == 72) && rects.iter().any(|r| r.width() == 54));
        assert_eq!(rects.len(), (128 - 72) / 2 + 1 + (128 - 54) / 2 + 1);
        assert!(rects.iter().all(|r| r.y0 == 16 && r.y1 == 118 && r.x1 <= 128));
        assert!(column_query_rects(Rect { x0: 0, y0: 0, x1: 128, y1: 128 }, (1280, 720)).is_empty());
    }
}
