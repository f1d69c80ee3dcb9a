//! What a sample is remembered and looked up by: the Library's 256-bit frame hash
//! (`library::hash`), of the same 128 x 128 gray square the Library indexes.
//!
//! A picture is **remembered** by two hashes, as the Library indexes a frame: the whole
//! picture with its flat borders cut ([`Section::Whole`]) and the centre window of that
//! ([`Section::Centre`], `hash::CROP_SCALE` of each side). It is **looked up** by the
//! Library's still hypotheses: the picture's own rectangles (borders of any kind cut, a
//! subtitled picture painted out) with their mirror twins against whole pictures, then the
//! crop hypotheses (where the centre window lies in a picture cut to 90 or 95% of each side)
//! against centre windows. A re-encode, a resize and a mirror are close as whole pictures; a
//! cropped screenshot is close by its centre window.
use image::DynamicImage;

use crate::library::frames::{FRAME_SIDE, frame_view};
use crate::library::picture::hash::{self, CROP_SCALE, FrameHash, Hash, MIN_QUALITY};
use crate::library::still::query::StillQuery;

/// Which hash of a remembered picture an entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Section {
    /// The whole picture, flat borders cut.
    Whole = 0,
    /// Its centre window (what a cropped copy still holds).
    Centre = 1,
}

impl Section {
    pub fn from_i16(v: i16) -> Option<Self> {
        match v {
            0 => Some(Self::Whole),
            1 => Some(Self::Centre),
            _ => None,
        }
    }
}

/// One picture of a sample, hashed for remembering and for looking up.
#[derive(Clone, Debug)]
pub struct PictureProbe {
    /// Remembered: the whole picture and its centre window.
    pub whole: Hash,
    pub centre: Hash,
    /// Looked up against whole pictures: each hypothesis and its mirror twin.
    pub frame_queries: Vec<Hash>,
    /// Looked up against centre windows: each crop hypothesis and its mirror twin.
    pub crop_queries: Vec<Hash>,
}

/// The pictures of one sample that carry enough texture to be hashed (a black frame or a
/// fade says nothing and is left out).
#[derive(Clone, Debug, Default)]
pub struct Probe {
    pub pictures: Vec<PictureProbe>,
    /// The sample is a clip (its frames must agree, see `lookup`).
    pub clip: bool,
}

/// At most this many frames of a clip are remembered and looked up (the sample's frames are
/// taken at scene changes, in time order; these are spread over them).
pub const CLIP_FRAMES: usize = 4;

fn hashes_of(cuts: &[crate::library::still::query::Cut], out: &mut Vec<Hash>) {
    for c in cuts {
        let h = c.hash();
        if h.quality >= MIN_QUALITY {
            out.push(h.hash);
            out.push(h.mirror);
        }
    }
}

/// Hashes one picture; `None` when it is too flat to say anything.
pub fn picture(image: &DynamicImage, with_crops: bool) -> Option<PictureProbe> {
    let side = FRAME_SIDE as u32;
    let gray = image.to_luma8();
    let square =
        if gray.dimensions() == (side, side) { gray.clone() } else { image::imageops::thumbnail(&gray, side, side) };
    let view = frame_view(square.as_raw());
    let area = hash::active_area(view);
    let whole: FrameHash = hash::hash_rect(view, area);
    if whole.quality < MIN_QUALITY {
        return None;
    }
    let centre = hash::hash_rect(view, area.centre(CROP_SCALE));
    let query = StillQuery::new(image);
    let mut frame_queries = Vec::new();
    hashes_of(&query.frame_cuts(), &mut frame_queries);
    let mut crop_queries = Vec::new();
    if with_crops {
        hashes_of(&query.crop_cuts(), &mut crop_queries);
    }
    Some(PictureProbe { whole: whole.hash, centre: centre.hash, frame_queries, crop_queries })
}

/// Hashes a sample's frames (JPEG, as the engines get them). Blocking: call it off the
/// async threads.
pub fn probe(frames: &[crate::identify::Frame], clip: bool) -> Probe {
    let picked: Vec<&crate::identify::Frame> = if frames.len() <= CLIP_FRAMES {
        frames.iter().collect()
    } else {
        (0..CLIP_FRAMES).map(|i| &frames[i * (frames.len() - 1) / (CLIP_FRAMES - 1)]).collect()
    };
    let pictures = picked
        .into_iter()
        .filter_map(|f| image::load_from_memory_with_format(&f.jpeg, image::ImageFormat::Jpeg).ok())
        // A clip's frames are looked up as whole pictures only: several frames agreeing is
        // already a strong test, and dozens of crop guesses per frame would weaken it.
        .filter_map(|img| picture(&img, !clip))
        .collect();
    Probe { pictures, clip }
}
