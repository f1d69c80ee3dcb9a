//! A clip of a picture shown inside another: a phone's video of a screen, a screen recording
//! of a video playing in a web page, a picture-in-picture. The ordinary clip search decodes
//! frames already squeezed to the frame square, far too small to find a screen's corners or a
//! window's edges in. Here the clip is decoded again at the size the screen and window
//! finders look at (see [`screen`] and [`window`]), the screens and windows are looked for
//! every half second (a hand-held phone drifts), and every frame is cut by the latest ones
//! found and hashed as a still's screen or window is: more hypotheses per frame for the vote.
use std::path::Path;

use image::{GrayImage, RgbImage};

use crate::library::frames::{self, Budget, FRAME_SIDE};
use crate::library::picture::hash::{FrameHash, GrayView};
use crate::library::{picture::screen, picture::warp, picture::window};

/// Screens and windows are looked for again every this many clip frames (half a second at
/// [`frames::CLIP_FPS`]); the frames between are cut where the last look found them.
const FIND_EVERY: u32 = 4;

/// At most this many seconds of a clip are decoded again: their frames are votes enough, and
/// a long clip would otherwise cost a screen and window search every half second of it.
const MAX_SECONDS: f64 = 20.0;

/// Where a picture lies inside a frame, in shares of the frame's sides.
#[derive(Clone, Copy, Debug)]
enum Inset {
    /// A screen's corners: top left, top right, bottom right, bottom left.
    Screen([(f32, f32); 4]),
    /// A window: left, top, right, bottom.
    Window([f32; 4]),
}

impl Inset {
    /// The picture inside `gray`, warped or squeezed to a `side`² square.
    fn cut(&self, gray: &GrayImage, side: usize) -> Option<Vec<u8>> {
        match *self {
            Inset::Screen(quad) => {
                let (w, h) = (gray.width() as usize, gray.height() as usize);
                let view = GrayView { width: w, height: h, pixels: gray.as_raw() };
                Some(warp::rectify(view, quad.map(|(x, y)| (x * w as f32, y * h as f32)), side))
            }
            Inset::Window(share) => window::cut_window(gray, share, side),
        }
    }
}

/// The screens and windows one frame shows, in shares of its sides.
fn insets_of(rgb: &RgbImage, gray: &GrayImage) -> Vec<Inset> {
    let screens = screen::screen_quads(gray, false).into_iter().map(Inset::Screen);
    screens.chain(window::window_shares(rgb).into_iter().map(Inset::Window)).collect()
}

/// The clip at `path` (shown `width` x `height`) decoded at [`frames::CLIP_FPS`] for at most
/// `seconds` (and [`MAX_SECONDS`]): each frame's time and the hashes of the pictures inside
/// it (each cut as the index cuts, and whole where that differs; none when no screen or
/// window was found).
pub(in crate::library) fn inset_hypotheses(
    path: &Path,
    (width, height): (u32, u32),
    seconds: f64,
    budget: &Budget,
) -> anyhow::Result<(Vec<f64>, Vec<Vec<FrameHash>>)> {
    let (mut times, mut per_frame) = (Vec::new(), Vec::new());
    if width < 64 || height < 64 {
        return Ok((times, per_frame));
    }
    // Even sides: every decoder's pixel format scales to them.
    let (w, h) = warp::look_size((width, height), window::LOOK_SIDE);
    let size = ((w & !1).max(64), (h & !1).max(64));
    let mut insets: Vec<Inset> = Vec::new();
    let mut n = 0u32;
    frames::decode_pictures(path, frames::CLIP_FPS, seconds.min(MAX_SECONDS), budget, size, |t, px| {
        let Some(rgb) = RgbImage::from_raw(size.0, size.1, px.to_vec()) else { return };
        let gray = image::imageops::grayscale(&rgb);
        if n.is_multiple_of(FIND_EVERY) {
            insets = insets_of(&rgb, &gray);
        }
        n += 1;
        let hashes: Vec<FrameHash> = insets
            .iter()
            .filter_map(|inset| inset.cut(&gray, FRAME_SIDE))
            .flat_map(|square| screen::square_hashes(frames::frame_view(&square)))
            .collect();
        times.push(t);
        per_frame.push(hashes);
    })?;
    Ok((times, per_frame))
}
