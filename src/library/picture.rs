//! What is inside a picture: the finders the index and the query share (the frame hash,
//! bars and blurred copies, subtitles and logos, a photographed screen and its light, a
//! picture inside a picture), and the two plain types they all take: a grey picture borrowed
//! from a decoder or an image, and a rectangle of it (here, so that the finders can share
//! them without importing each other).
pub mod borders;
pub mod column;
pub mod glare;
pub mod hash;
pub mod light;
pub mod overlay;
pub mod screen;
pub mod warp;
pub mod window;

/// A grayscale picture borrowed from a decoder or an image.
#[derive(Clone, Copy)]
pub struct GrayView<'a> {
    pub width: usize,
    pub height: usize,
    pub pixels: &'a [u8],
}

/// A rectangle `[x0, x1) x [y0, y1)` in pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rect {
    pub x0: usize,
    pub y0: usize,
    pub x1: usize,
    pub y1: usize,
}

impl Rect {
    pub fn width(&self) -> usize {
        self.x1 - self.x0
    }
    pub fn height(&self) -> usize {
        self.y1 - self.y0
    }
    /// Within a pixel of `other` on every side: the two hash alike, one of them is enough.
    pub fn near(&self, other: &Rect) -> bool {
        self.x0.abs_diff(other.x0) <= 1
            && self.x1.abs_diff(other.x1) <= 1
            && self.y0.abs_diff(other.y0) <= 1
            && self.y1.abs_diff(other.y1) <= 1
    }

    /// Adds `self` to `rects` unless one of them is [`near`](Self::near) it.
    pub fn add_to(self, rects: &mut Vec<Rect>) {
        if !rects.iter().any(|o| o.near(&self)) {
            rects.push(self);
        }
    }

    /// The centred sub-rectangle holding `scale` of each side.
    pub fn centre(&self, scale: f32) -> Rect {
        self.window(scale, 0.5, 0.5)
    }

    /// The top `share` of the rectangle, full width.
    pub fn upper(&self, share: f32) -> Rect {
        Rect { y1: self.y0 + ((self.height() as f32 * share).round() as usize).max(1), ..*self }
    }

    /// The sub-rectangle holding `scale` of each side, placed at `fx`, `fy` (0 = left/top
    /// edge, 1 = right/bottom edge) of the room left over.
    pub fn window(&self, scale: f32, fx: f32, fy: f32) -> Rect {
        let (w, h) = (self.width() as f32, self.height() as f32);
        let (cw, ch) = ((w * scale).round() as usize, (h * scale).round() as usize);
        let x0 = self.x0 + ((self.width() - cw) as f32 * fx).round() as usize;
        let y0 = self.y0 + ((self.height() - ch) as f32 * fy).round() as usize;
        Rect { x0, y0, x1: x0 + cw, y1: y0 + ch }
    }
}
