//! When a hit is a match: the tiers a still is searched in, how far each reaches, and when
//! the hash alone decides, when one look at the source frames is enough and when both looks
//! must agree. Every threshold of the still and clip searches is here, with its reason; the
//! design and the measurements behind them are in `src/library/README.md`, "Tiers and
//! thresholds".
//!
//! Distances are bits of the 256-bit hash. Unrelated footage measures 90-110 bits apart, so
//! every threshold below sits well under that and the searches never guess: below the
//! threshold the answer is "no match".
use crate::library::index::entries::Section;

/// A whole picture (and a screen or window found in a photo, warped or cut back to the frame
/// square) is a match when its best hash is at most this many bits away: about two thirds of
/// the way to unrelated footage, which leaves room for JPEG, rescaling, grading and bars.
pub const STILL_ACCEPT: u32 = 70;

/// A guess among many is a match at most this many bits away: the crop tier's 34 placements,
/// the upper tier's tops, the shape tier's film shapes and the corner tier's painted corners
/// (each mirrored too) are each one more chance to land on an unrelated frame, so they
/// accept 8 bits less than a whole picture. The same number is where a photo's screen or
/// window stops standing on one look (see [`one_look_up_to`]): past it, one correlation
/// alone let unrelated frames through.
pub const GUESS_ACCEPT: u32 = 62;

/// A hit at most this far stands on the hash alone when it has no rival run of entries; a
/// still whose whole-frame hits are all further also tries every fallback tier (a slightly
/// cropped or covered picture can still pass for the whole frame of a similar moment).
pub const CLOSE: u32 = 40;

/// How far (bits) beyond its threshold each still tier's scan reaches. A hit in this band is
/// a match only when its frame was looked at and correlates with the query at
/// [`LOOK_ACCEPT`] both as a whole and by blocks: a phone photo or a hard crop often lands a
/// few bits past the threshold, and two smooth unrelated pictures can correlate as a whole
/// without sharing any detail.
pub const BAND: u32 = 8;

/// How far beyond [`BAND`] a hit of the picture with its subtitles painted out may be: the
/// painted block's low frequencies are only a guess at what the text hides, so a true match
/// lands further out (82-84 bits on the benchmark's misses with big subtitles).
pub const PAINTED_BAND: u32 = 8;

/// A hit that needs a look is a match only when its frame and the query correlate at least
/// this much, as a whole or by the median of their blocks (both, where the rules below say
/// so). On the benchmark's calibration footage and tuning negatives every false accept stayed
/// at or under 0.60, true matches under the hard transforms mostly above 0.75.
pub const LOOK_ACCEPT: f32 = 0.65;

/// A hit in [`PAINTED_BAND`] stands only when its frame correlates with the query at least
/// this much as a whole and by blocks: stricter than [`LOOK_ACCEPT`], as more of the hash
/// disagrees (true matches under the hard transforms mostly correlate above it, false
/// accepts stayed at or under 0.60).
pub const PAINTED_LOOK: f32 = 0.75;

/// A clip's frames vote with hits up to this distance: a frame of a clip is softer than a
/// still (motion blur, a lower bit rate), and the vote, not one frame, decides; the offset's
/// mean distance must still be within the tier's threshold (see [`CLIP_TIERS`]).
pub const CLIP_CANDIDATE: u32 = 72;

/// The offset a clip's frames agree on wins only when at least this share of its frames
/// (and two) back it: a third of a clip landing on one offset does not happen by chance,
/// where a few frames may.
pub const CLIP_SUPPORT: f64 = 0.3;

// Every threshold, band included, stays short of unrelated footage (90 bits and more).
const _: () = assert!(GUESS_ACCEPT < STILL_ACCEPT && STILL_ACCEPT + BAND + PAINTED_BAND < 90 && CLIP_CANDIDATE < 90);

/// Which of a still's query sets found the match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// The picture's own cuts against whole frames.
    Frame,
    /// Windows of a cropped picture against the indexed centre windows.
    Crop,
    /// The top of a picture whose lower part is covered against the indexed tops.
    Upper,
    /// The rectified screen of a phone photo against whole frames.
    Screen,
    /// A window inside the picture (a video in a web page, a picture-in-picture) against
    /// whole frames.
    Window,
    /// The picture where a film's shape would lie centred in the canvas, against whole frames.
    Shape,
    /// The picture with one corner painted out (a broadcaster's logo), against whole frames.
    Corner,
    /// Narrow windows of a vertical repost's picture against the indexed column windows.
    Column,
    /// The centre of a slightly rotated picture, turned back by each of a few angles, against
    /// the indexed centre windows.
    Rotation,
    /// Where the indexed middle of a frame would lie in a picture cropped to about three
    /// quarters of each side, against the indexed middles.
    Deep,
}

/// One row of [`TIERS`].
#[derive(Clone, Copy, Debug)]
pub struct TierRule {
    pub tier: Tier,
    /// The tier's name in an answer (`LibraryMatch::tier`).
    pub name: &'static str,
    /// The index section its queries are scanned against.
    pub section: Section,
    /// A hit stands within this many bits (and in [`BAND`] beyond, with both looks).
    pub accept: u32,
    /// Up to this distance one look (as a whole or by blocks) is enough; further, both.
    pub one_look_up_to: u32,
    /// Whether the tier sends many guesses at once (offsets, tops, shapes, corners) rather
    /// than one picture or one screen.
    pub guesses_many: bool,
    /// Whether cuts too flat to say anything are left out (a covered or centred guess can
    /// land on a plain part of the picture, a window found can be a plain box with a spot in
    /// it; the picture's own cuts are judged as a whole).
    pub drops_flat: bool,
}

/// The tiers, in the order a still tries them, and their rules. A hit closer than [`CLOSE`]
/// with no rival run stands on the hash; otherwise its frames are looked at, and within
/// `one_look_up_to` one correlation at [`LOOK_ACCEPT`] is enough, from there to `accept` both
/// must reach it, and in the [`BAND`] beyond as well.
///
/// - The whole picture is its own best guess: one look is enough up to its threshold.
/// - A screen or window is one of a few guesses whose true hits land far (a phone photo), so
///   one look is enough up to [`GUESS_ACCEPT`]; past it, both.
/// - A guess among many needs both looks as soon as it is not close: with dozens of guesses
///   one lands on an unrelated frame whose coarse light agrees (a frame of a diver taken for a
///   flat cartoon frame by the shape tier at 62 bits looked 0.83 alike as a whole and 0.53 by
///   blocks).
pub const TIERS: [TierRule; 10] = [
    rule(Tier::Frame, "frame", Section::Frames, STILL_ACCEPT, STILL_ACCEPT, false, false),
    rule(Tier::Crop, "crop", Section::Crops, GUESS_ACCEPT, CLOSE, true, false),
    rule(Tier::Upper, "upper", Section::Upper, GUESS_ACCEPT, CLOSE, true, true),
    rule(Tier::Screen, "screen", Section::Frames, STILL_ACCEPT, GUESS_ACCEPT, false, false),
    rule(Tier::Window, "window", Section::Frames, STILL_ACCEPT, GUESS_ACCEPT, false, true),
    rule(Tier::Shape, "shape", Section::Frames, GUESS_ACCEPT, CLOSE, true, true),
    rule(Tier::Corner, "corner", Section::Frames, GUESS_ACCEPT, CLOSE, true, true),
    rule(Tier::Column, "column", Section::Columns, GUESS_ACCEPT, CLOSE, true, true),
    rule(Tier::Rotation, "rotation", Section::Crops, GUESS_ACCEPT, CLOSE, true, false),
    rule(Tier::Deep, "deep crop", Section::Deep, GUESS_ACCEPT, CLOSE, true, true),
];

const fn rule(
    tier: Tier,
    name: &'static str,
    section: Section,
    accept: u32,
    one_look_up_to: u32,
    guesses_many: bool,
    drops_flat: bool,
) -> TierRule {
    TierRule { tier, name, section, accept, one_look_up_to, guesses_many, drops_flat }
}

impl Tier {
    /// This tier's row of [`TIERS`].
    pub fn rule(self) -> &'static TierRule {
        &TIERS[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.rule().name
    }

    /// The distance a hit of this tier must be within.
    pub fn accept(self) -> u32 {
        self.rule().accept
    }

    pub fn guesses_many(self) -> bool {
        self.rule().guesses_many
    }

    pub fn drops_flat(self) -> bool {
        self.rule().drops_flat
    }

    pub fn section(self) -> Section {
        self.rule().section
    }
}

/// Up to which distance one look stands for a hit of `tier`. A screen or window with a
/// glare taken off is a guess at the light as well as the corners, and smoother than the
/// photo: as strict as the many (a repost caption's white band taken for a spot left a
/// picture that hit a flat cartoon at 62 bits, 0.68 alike as a whole and 0.12 by blocks).
pub fn one_look_up_to(tier: Tier, glare_taken_off: bool) -> u32 {
    match tier {
        Tier::Screen | Tier::Window if glare_taken_off => CLOSE,
        t => t.rule().one_look_up_to,
    }
}

/// A clip's tiers, in the order it tries them until one's vote stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClipTier {
    /// Each frame's own cuts against whole frames.
    Frame,
    /// Each frame's crop placements against the indexed centre windows.
    Crop,
    /// The tops of each frame's rectangles against the indexed tops.
    Upper,
    /// Where each film shape would lie in each frame, against whole frames.
    Shape,
    /// The screens and windows of the clip's frames decoded larger (`insets`), against whole
    /// frames.
    Inset,
    /// Narrow windows of each frame of a vertical repost against the indexed column windows.
    Column,
}

/// One row of [`CLIP_TIERS`].
#[derive(Clone, Copy, Debug)]
pub struct ClipRule {
    pub tier: ClipTier,
    /// The tier's name in an answer: the frame-square tiers answer as `clip`.
    pub name: &'static str,
    pub section: Section,
    /// A frame's hits vote up to this distance.
    pub candidate: u32,
    /// The winning offset's mean distance must be within this.
    pub accept: u32,
}

/// The clip tiers and their thresholds. Whole frames vote with hits up to
/// [`CLIP_CANDIDATE`]; the fallback tiers, guesses among many, vote only with hits within
/// their own threshold ([`GUESS_ACCEPT`]); the insets are screens and windows, judged as a
/// whole picture is.
pub const CLIP_TIERS: [ClipRule; 6] = [
    ClipRule {
        tier: ClipTier::Frame,
        name: "clip",
        section: Section::Frames,
        candidate: CLIP_CANDIDATE,
        accept: STILL_ACCEPT,
    },
    ClipRule {
        tier: ClipTier::Crop,
        name: "clip",
        section: Section::Crops,
        candidate: GUESS_ACCEPT,
        accept: GUESS_ACCEPT,
    },
    ClipRule {
        tier: ClipTier::Upper,
        name: "clip",
        section: Section::Upper,
        candidate: GUESS_ACCEPT,
        accept: GUESS_ACCEPT,
    },
    ClipRule {
        tier: ClipTier::Shape,
        name: "clip",
        section: Section::Frames,
        candidate: GUESS_ACCEPT,
        accept: GUESS_ACCEPT,
    },
    ClipRule {
        tier: ClipTier::Inset,
        name: "clip inset",
        section: Section::Frames,
        candidate: STILL_ACCEPT,
        accept: STILL_ACCEPT,
    },
    ClipRule {
        tier: ClipTier::Column,
        name: "clip column",
        section: Section::Columns,
        candidate: GUESS_ACCEPT,
        accept: GUESS_ACCEPT,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_the_order_of_the_enum() {
        for (k, row) in TIERS.iter().enumerate() {
            assert_eq!(row.tier as usize, k, "{} is out of place", row.name);
        }
    }

    #[test]
    fn a_guess_among_many_is_stricter_than_a_whole_picture() {
        for row in &TIERS {
            assert!(row.accept <= STILL_ACCEPT && row.one_look_up_to <= row.accept, "{}", row.name);
            assert!(CLOSE <= row.one_look_up_to, "{}", row.name);
            if row.guesses_many {
                assert_eq!((row.accept, row.one_look_up_to), (GUESS_ACCEPT, CLOSE), "{}", row.name);
            }
        }
        assert_eq!(one_look_up_to(Tier::Screen, false), GUESS_ACCEPT);
        assert_eq!(one_look_up_to(Tier::Screen, true), CLOSE);
        assert_eq!(one_look_up_to(Tier::Frame, true), STILL_ACCEPT);
    }
}
