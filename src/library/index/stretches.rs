//! The static stretches of a video, found while it is indexed: the run of hashed entries alone
//! cannot always give a static shot (in a dark, soft picture under heavy grain the grain moves
//! the hash more than the picture does), so indexing also follows the picture itself, and a
//! still matched inside a stretch spans exactly it (see `shot`).
use crate::library::frames;
use crate::library::picture::hash::{GrayView, cell_means};

/// Side of the grey thumbnails a static picture is followed on at indexing: cells of 8x8
/// pixels of the decoded frame average grain away and still see a head turn.
const STILL_SIDE: usize = 16;
/// A frame continues a static stretch while its thumbnail differs from the mean of the
/// stretch's frames by at most this many grey levels on average: grain, flicker and
/// compression move a thumbnail by a fraction of a level, a moving camera, a cut or a fade by
/// several.
const STILL_LEVELS: f32 = 1.0;
/// Stretches shorter than this (seconds) are not stored: the run of entries spans them.
const MIN_STILL: f64 = 1.0;

/// Finds the static stretches of a video from its decoded frames, fed in order: a stretch
/// goes on while each frame's [`STILL_SIDE`]² thumbnail is within [`STILL_LEVELS`] of the
/// stretch's mean thumbnail (the mean, not the first frame: grain on one frame must not
/// decide), and is kept when it lasts [`MIN_STILL`].
#[derive(Default)]
pub struct StillFinder {
    mean: Vec<f32>,
    frames: u32,
    from: f64,
    last: f64,
    found: Vec<[u32; 2]>,
}

impl StillFinder {
    /// The frame at `t` seconds.
    pub fn push(&mut self, t: f64, frame: GrayView<'_>) {
        let thumb = thumbnail(frame);
        let diff = |mean: &[f32]| mean.iter().zip(&thumb).map(|(m, x)| (m - x).abs()).sum::<f32>() / thumb.len() as f32;
        if self.frames > 0 && diff(&self.mean) <= STILL_LEVELS {
            self.frames += 1;
            let k = 1.0 / self.frames as f32;
            self.mean.iter_mut().zip(&thumb).for_each(|(m, x)| *m += (x - *m) * k);
            self.last = t;
        } else {
            self.close();
            *self = Self { mean: thumb, frames: 1, from: t, last: t, found: std::mem::take(&mut self.found) };
        }
    }

    fn close(&mut self) {
        if self.frames > 0 && self.last - self.from >= MIN_STILL - 1e-6 {
            self.found.push([ms(self.from), ms(self.last)]);
        }
    }

    /// The stretches found, `[first frame, last frame]` in ms, in order.
    pub fn finish(mut self) -> Vec<[u32; 2]> {
        self.close();
        self.found
    }
}

/// Mean grey levels of [`STILL_SIDE`]² equal cells of a decoded frame.
fn thumbnail(frame: GrayView<'_>) -> Vec<f32> {
    debug_assert_eq!((frame.width, frame.height), (frames::FRAME_SIDE, frames::FRAME_SIDE));
    cell_means(frame.pixels, frames::FRAME_SIDE, frames::FRAME_SIDE / STILL_SIDE)
}

/// Seconds to the index's milliseconds.
fn ms(t: f64) -> u32 {
    (t * 1000.0).round() as u32
}
