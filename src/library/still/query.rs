//! A still picture as a query: the squares its hypotheses are cut from (the picture squeezed
//! to the frame square, the same picture with its subtitles painted out, a phone photo's
//! screen warped back to a rectangle) and, per tier, the rectangles of those squares that are
//! hashed. Keeping the cut behind every query hash lets a later stage look at the picture a
//! hit came from (see [`verify`](super::verify)), not only at its 256 bits.
use std::sync::{Arc, OnceLock};

use image::{DynamicImage, GrayImage};

use crate::library::picture::glare::{self, Glare};
use crate::library::picture::hash::{self, FrameHash, GrayView, Hash, MIN_QUALITY, Rect};
use crate::library::picture::warp::Quad;
use crate::library::picture::{column, overlay, screen, warp, window};
use crate::library::{frames, still::refine};

/// How many of a corner-painted picture's own rectangles are searched (best guess first).
const CORNER_RECTS: usize = 3;

/// The angles (degrees, each way) a picture is turned back by in the rotation tier: a photo
/// or repost held askew by 2-6 degrees lies within 0.75 of one of them.
const ROTATIONS: [f32; 3] = [2.5, 4.0, 5.5];

/// One query hypothesis: a rectangle of one of the query's squares.
#[derive(Clone, Debug)]
pub struct Cut {
    /// `FRAME_SIDE`² gray pixels.
    pub square: Arc<[u8]>,
    pub rect: Rect,
    /// Cut from the picture with its subtitles painted out (see [`overlay`]): its hits may lie
    /// in [`PAINTED_BAND`](crate::library::policy::PAINTED_BAND). A corner painted out is not: each
    /// corner is a guess, judged like the other many-guess tiers' cuts.
    pub painted: bool,
    /// The glare taken off the square (a photographed screen's, see [`glare`]), or off the
    /// pictures its corners were moved by (see [`StillQuery::refined_screen_cuts`]), when one
    /// was: its hits are a guess at the light too.
    pub glare: Option<Glare>,
}

impl Cut {
    fn view(&self) -> GrayView<'_> {
        frames::frame_view(&self.square)
    }

    pub fn hash(&self) -> FrameHash {
        hash::hash_rect(self.view(), self.rect)
    }

    /// The cut area-averaged to the hash's 64x64 buffer (as [`hash::downsample`]), mirrored
    /// left to right when `mirrored`.
    pub fn picture(&self, mirrored: bool) -> Vec<f32> {
        let mut buf = hash::downsample(self.view(), self.rect);
        if mirrored {
            buf.chunks_exact_mut(hash::HASH_SIDE).for_each(<[f32]>::reverse);
        }
        buf
    }
}

/// What a found screen's corners are moved toward (see [`StillQuery::refined_screen_cuts`]):
/// the entry its best hit found, hashed as that hit's query was.
pub struct ScreenAim {
    /// Which screen (of [`StillQuery::screen_cuts`]' groups).
    pub screen: usize,
    /// The rectangle of the square the hit's query was cut by.
    pub rect: Rect,
    /// Whether the hit's query was the mirrored hash.
    pub mirrored: bool,
    /// The hash of the entry the hit found.
    pub target: Hash,
    /// The glare the hit's query had taken off (see [`glare`]): each try takes off the same.
    pub glare: Option<Glare>,
}

/// A still, ready to be cut into the hypotheses of every tier.
pub struct StillQuery<'a> {
    /// The picture as given (the window tier looks at its colours).
    image: &'a DynamicImage,
    /// The picture squeezed to the frame square.
    square: Arc<[u8]>,
    /// The same with burned-in subtitles painted out, when any were found.
    painted: Option<(Arc<[u8]>, Rect)>,
    /// The picture's own rectangles (see [`hash::query_rects_with`]), best guess first.
    rects: Vec<Rect>,
    /// The picture in gray at its own size (the screen tier looks at it).
    gray: GrayImage,
    /// Width and height of the picture as given.
    canvas: (u32, u32),
    /// The screens a phone photo shows (see [`screen::screen_quads`]), found when first asked.
    screens: OnceLock<Vec<Quad>>,
}

impl<'a> StillQuery<'a> {
    pub fn new(image: &'a DynamicImage) -> Self {
        let side = frames::FRAME_SIDE as u32;
        let gray = image.to_luma8();
        let squeeze = |g: &GrayImage| -> Arc<[u8]> {
            if g.dimensions() == (side, side) {
                g.as_raw().as_slice().into()
            } else {
                image::imageops::thumbnail(g, side, side).into_raw().into()
            }
        };
        let square = squeeze(&gray);
        let detail = crate::library::picture::borders::fine_detail_area(&gray, side as usize);
        let rects = hash::query_rects_with(frames::frame_view(&square), detail);
        let painted = overlay::paint_out_subtitles(&gray)
            .map(|p| (squeeze(&p), crate::library::picture::borders::fine_detail_area(&p, side as usize)));
        let canvas = (image.width(), image.height());
        Self { image, square, painted, rects, gray, canvas, screens: OnceLock::new() }
    }

    fn view(&self) -> GrayView<'_> {
        frames::frame_view(&self.square)
    }

    fn on_square(&self, rects: impl IntoIterator<Item = Rect>) -> Vec<Cut> {
        rects.into_iter().map(|rect| Cut { square: self.square.clone(), rect, painted: false, glare: None }).collect()
    }

    /// The picture's own rectangles (flat and found borders cut), then the picture with its
    /// subtitles painted out under the same rectangles and, where they differ, under its own
    /// (text that reached into a dark film's flat sides kept them from being cut).
    pub fn frame_cuts(&self) -> Vec<Cut> {
        let mut out = self.on_square(self.rects.iter().copied());
        if let Some((painted, detail)) = &self.painted {
            let view = frames::frame_view(painted);
            let mut under = self.rects.clone();
            for r in hash::query_rects_with(view, *detail) {
                r.add_to(&mut under);
            }
            out.extend(under.into_iter().map(|rect| Cut { square: painted.clone(), rect, painted: true, glare: None }));
        }
        out
    }

    /// The picture with each corner painted out in turn (see [`overlay::paint_out_corners`]),
    /// each cut by its own first rectangles ([`CORNER_RECTS`]): a logo over a dark film's flat
    /// sides kept them from being cut, and with it painted out they are.
    pub fn corner_cuts(&self) -> Vec<Cut> {
        let side = frames::FRAME_SIDE;
        let mut out = Vec::new();
        for painted in overlay::paint_out_corners(&self.square, side) {
            let square: Arc<[u8]> = painted.into();
            let rects = hash::query_rects(frames::frame_view(&square));
            out.extend(rects.into_iter().take(CORNER_RECTS).map(|rect| Cut {
                square: square.clone(),
                rect,
                painted: false,
                glare: None,
            }));
        }
        out
    }

    /// Where the indexed centre window would lie in a cropped picture (see
    /// [`hash::crop_query_rects`]).
    pub fn crop_cuts(&self) -> Vec<Cut> {
        self.on_square(hash::crop_query_rects(self.view()))
    }

    /// Where an indexed column window would lie in the picture's own rectangles that are
    /// narrow for their height: a vertical repost's column of the frame (see
    /// [`column::column_query_rects`]; a caption band's words may keep the first rectangle
    /// from being cut where the picture starts).
    pub fn column_cuts(&self) -> Vec<Cut> {
        self.on_square(column::column_query_rects_of(&self.rects, self.canvas))
    }

    /// Where the deep-crop tier's indexed middle would lie in the picture if it were a crop
    /// keeping 70-80% of each side of the frame, anywhere in it (see
    /// [`hash::deep_query_rects`]).
    pub fn deep_cuts(&self) -> Vec<Cut> {
        self.on_square(hash::deep_query_rects(self.view()))
    }

    /// The indexed centre window ([`hash::CROP_SCALE`] of the picture's first rectangle) as it
    /// lies in the picture turned by each of [`ROTATIONS`] either way about its centre, warped
    /// back to the frame square (see [`warp::warp_quads`]): a picture rotated a few degrees
    /// (its corners lost to the canvas) shows that window whole, and turned back it is the
    /// indexed crop again.
    pub fn rotation_cuts(&self) -> Vec<Cut> {
        let side = frames::FRAME_SIDE as f32;
        let (w, h) = (self.canvas.0 as f32, self.canvas.1 as f32);
        let r = self.rects[0];
        let (cx, cy) = ((r.x0 + r.x1) as f32 / 2.0 / side * w, (r.y0 + r.y1) as f32 / 2.0 / side * h);
        let a = (r.x1 - r.x0) as f32 / 2.0 / side * w * hash::CROP_SCALE;
        let b = (r.y1 - r.y0) as f32 / 2.0 / side * h * hash::CROP_SCALE;
        let quads: Vec<Quad> = ROTATIONS
            .iter()
            .flat_map(|d| [*d, -*d])
            .map(|degrees: f32| {
                let (sin, cos) = degrees.to_radians().sin_cos();
                [(-a, -b), (a, -b), (a, b), (-a, b)]
                    .map(|(u, v)| ((cx + u * cos - v * sin) / w, (cy + u * sin + v * cos) / h))
            })
            .collect();
        let whole = Rect { x0: 0, y0: 0, x1: frames::FRAME_SIDE, y1: frames::FRAME_SIDE };
        warp::warp_quads(&self.gray, quads, frames::FRAME_SIDE)
            .into_iter()
            .map(|square| Cut { square: square.into(), rect: whole, painted: false, glare: None })
            .collect()
    }

    /// The tops of the picture's own rectangles (see [`hash::upper_query_rects`]).
    pub fn upper_cuts(&self) -> Vec<Cut> {
        self.on_square(hash::upper_query_rects(self.view(), &self.rects))
    }

    /// Each screen a phone photo shows, found and warped back to the frame square (see
    /// [`screen::screen_quads`], [`warp::warp_quads`]): its cuts, as the index cuts and whole
    /// where that differs, and the same of it with a glare taken off when it shows one.
    pub fn screen_cuts(&self) -> Vec<Vec<Cut>> {
        squares_cut(with_glare_off(warp::warp_quads(&self.gray, self.screens().to_vec(), frames::FRAME_SIDE)))
    }

    /// The screens found, in the order of [`Self::screen_cuts`]' groups.
    fn screens(&self) -> &[Quad] {
        self.screens.get_or_init(|| screen::screen_quads(&self.gray, true))
    }

    /// The screens of `aims` (see [`ScreenAim`]) with their corners moved while the picture
    /// they warp to hashes closer to each aim's target (see [`refine`]): the cuts of each screen
    /// some move brought closer, as for a screen found, one group each.
    pub fn refined_screen_cuts(&self, aims: &[ScreenAim]) -> Vec<Vec<Cut>> {
        if aims.is_empty() {
            return Vec::new();
        }
        let copy = refine::try_copy(&self.gray);
        let (moved, aimed): (Vec<Quad>, Vec<Option<Glare>>) = aims
            .iter()
            .filter_map(|aim| {
                let start = *self.screens().get(aim.screen)?;
                let spot = aim.glare.map(|g| g.spot(frames::FRAME_SIDE));
                let distance = |square: &[u8]| {
                    let off = spot.as_ref().map(|s| glare::take_off(square, s));
                    let found = hash::hash_rect(frames::frame_view(off.as_deref().unwrap_or(square)), aim.rect);
                    hash::hamming(if aim.mirrored { &found.mirror } else { &found.hash }, &aim.target)
                };
                let (moved, _) = refine::refine_quad(&copy, start, frames::FRAME_SIDE, &distance);
                (moved != start).then_some((moved, aim.glare))
            })
            .unzip();
        let mut groups = squares_cut(with_glare_off(warp::warp_quads(&self.gray, moved, frames::FRAME_SIDE)));
        // Corners moved while a glare was taken off are a guess at the light too, whichever
        // picture of them hits (see `still::can_stand`).
        for (cuts, glare) in groups.iter_mut().zip(aimed) {
            cuts.iter_mut().for_each(|c| c.glare = c.glare.or(glare));
        }
        groups
    }

    /// Each window the picture shows another picture in (a video in a web page, a
    /// picture-in-picture), cut out and squeezed to the frame square (see
    /// [`window::window_squares`]): its cuts, as for a screen.
    pub fn window_cuts(&self) -> Vec<Vec<Cut>> {
        let squares = window::window_squares(self.image, &self.gray, frames::FRAME_SIDE);
        squares_cut(squares.into_iter().map(|s| vec![(s, None)]).collect())
    }

    /// Where a picture of each film shape would lie centred in the canvas (see
    /// [`hash::shape_query_rects`]).
    pub fn shape_cuts(&self) -> Vec<Cut> {
        self.on_square(hash::shape_query_rects(self.view(), self.canvas))
    }

    /// The picture's own rectangles (for the benchmark's analysis of misses).
    pub fn rects(&self) -> &[Rect] {
        &self.rects
    }
}

/// Hashes a picture the way indexed frames are hashed: luminance squeezed to the frame
/// square, borders removed, active picture hashed.
pub fn hash_image(image: &DynamicImage) -> FrameHash {
    hash_image_hypotheses(image)[0]
}

/// The query hypotheses of a picture against whole frames (see
/// [`StillQuery::frame_cuts`]); the first is the active
/// picture with borders removed.
pub fn hash_image_hypotheses(image: &DynamicImage) -> Vec<FrameHash> {
    StillQuery::new(image).frame_cuts().iter().map(Cut::hash).collect()
}

/// The cuts of squares found in a picture (a screen, a window), one group each: as the index
/// cuts, whole where that differs, and as the index cuts with the photo's light taken off (see
/// [`screen::still_square_rects`]).
fn squares_cut(squares: Vec<Vec<(Vec<u8>, Option<Glare>)>>) -> Vec<Vec<Cut>> {
    squares
        .into_iter()
        .map(|group| {
            group
                .into_iter()
                .flat_map(|(square, glare)| {
                    let rects = screen::still_square_rects(frames::frame_view(&square));
                    let square: Arc<[u8]> = square.into();
                    rects.into_iter().map(move |rect| Cut { square: square.clone(), rect, painted: false, glare })
                })
                .collect()
        })
        .collect()
}

/// Each square of a photographed screen, and beside it the same with its glare taken off
/// when it shows one (see [`glare`]): the glare may be the film's own light.
fn with_glare_off(squares: Vec<Vec<u8>>) -> Vec<Vec<(Vec<u8>, Option<Glare>)>> {
    squares
        .into_iter()
        .map(|square| {
            let off = glare::without_glare(&square, frames::FRAME_SIDE).map(|(s, g)| (s, Some(g)));
            std::iter::once((square, None)).chain(off).collect()
        })
        .collect()
}

/// The hashes of `cuts`, in order; with `drop_flat`, cuts too flat to say anything are left
/// out of both.
pub fn hash_cuts(cuts: Vec<Cut>, drop_flat: bool) -> (Vec<Cut>, Vec<FrameHash>) {
    let hashed: Vec<(Cut, FrameHash)> = cuts
        .into_iter()
        .map(|c| {
            let h = c.hash();
            (c, h)
        })
        .filter(|(_, h)| !drop_flat || h.quality >= MIN_QUALITY)
        .collect();
    hashed.into_iter().unzip()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A picture with detail at every scale, `w` x `h`, optionally inside black bars of `bar`
    /// rows above and below.
    fn picture(w: u32, h: u32, bar: u32) -> DynamicImage {
        let img = image::RgbImage::from_fn(w, h + 2 * bar, |x, y| {
            if y < bar || y >= h + bar {
                return image::Rgb([0, 0, 0]);
            }
            // A mosaic of 24 x 16 cells of random grey: energy at every low frequency.
            let (cx, cy) = (x * 24 / w, (y - bar) * 16 / h);
            let cell = (cx * 7919 + cy * 104_729).wrapping_mul(2_654_435_761) >> 7;
            let g = (30 + cell % 200) as u8;
            image::Rgb([g, g / 2 + 40, 255 - g])
        });
        DynamicImage::ImageRgb8(img)
    }

    #[test]
    fn a_letterboxed_still_is_cut_to_the_picture_inside_its_bars() {
        let plain = picture(320, 180, 0);
        let boxed = picture(320, 180, 40);
        let hash_of = |img: &DynamicImage| StillQuery::new(img).frame_cuts()[0].hash().hash;
        let d = hash::hamming(&hash_of(&plain), &hash_of(&boxed));
        assert!(d <= 12, "the letterboxed picture's first cut hashes {d} bits from the picture");
        // The whole canvas, bars and all, is far from it.
        let square = StillQuery::new(&boxed).frame_cuts()[0].square.clone();
        let whole = hash::hash_rect(
            frames::frame_view(&square),
            Rect { x0: 0, y0: 0, x1: frames::FRAME_SIDE, y1: frames::FRAME_SIDE },
        );
        assert!(hash::hamming(&whole.hash, &hash_of(&plain)) > d + 20);
    }

    #[test]
    fn a_still_is_searched_under_34_crop_placements_inside_it() {
        let img = picture(320, 180, 0);
        let query = StillQuery::new(&img);
        let cuts = query.crop_cuts();
        assert_eq!(cuts.len(), 34);
        let own = query.rects()[0];
        for c in &cuts {
            let r = c.rect;
            assert!(r.x0 >= own.x0 && r.x1 <= own.x1 && r.y0 >= own.y0 && r.y1 <= own.y1, "{r:?} outside {own:?}");
            assert!(!c.painted && c.glare.is_none());
        }
    }

    /// `img` turned by `degrees` about its centre (y down), black where the canvas shows
    /// nothing of it, as an editor rotates a picture inside its frame.
    fn rotated(img: &DynamicImage, degrees: f32) -> DynamicImage {
        let src = img.to_rgb8();
        let (w, h) = (src.width() as f32, src.height() as f32);
        let (sin, cos) = degrees.to_radians().sin_cos();
        let out = image::RgbImage::from_fn(src.width(), src.height(), |x, y| {
            let (dx, dy) = (x as f32 + 0.5 - w / 2.0, y as f32 + 0.5 - h / 2.0);
            // The source point this pixel shows: the inverse turn.
            let (sx, sy) = (w / 2.0 + dx * cos + dy * sin, h / 2.0 - dx * sin + dy * cos);
            if (0.0..w).contains(&sx) && (0.0..h).contains(&sy) {
                *src.get_pixel(sx as u32, sy as u32)
            } else {
                image::Rgb([0, 0, 0])
            }
        });
        DynamicImage::ImageRgb8(out)
    }

    #[test]
    fn a_picture_turned_a_few_degrees_is_turned_back_to_its_indexed_centre() {
        let plain = picture(640, 360, 0);
        let own = StillQuery::new(&plain);
        let indexed = hash::hash_rect(own.view(), own.rects[0].centre(hash::CROP_SCALE)).hash;
        for degrees in [3.2f32, -3.8, 4.6] {
            let turned = rotated(&plain, degrees);
            let query = StillQuery::new(&turned);
            let cuts = query.rotation_cuts();
            assert_eq!(cuts.len(), 2 * ROTATIONS.len());
            let best = cuts.iter().map(|c| hash::hamming(&c.hash().hash, &indexed)).min().unwrap();
            let crop = query.crop_cuts().iter().map(|c| hash::hamming(&c.hash().hash, &indexed)).min().unwrap();
            assert!(best <= 24 && best + 16 <= crop, "{degrees} degrees: turned back {best} bits away, cropped {crop}");
        }
    }

    #[test]
    fn a_picture_cropped_to_three_quarters_anywhere_shows_the_indexed_middle_at_a_placement() {
        let plain = picture(640, 360, 0);
        let own = StillQuery::new(&plain);
        let indexed = hash::hash_rect(own.view(), own.rects[0].centre(hash::DEEP_SCALE)).hash;
        let flipped = plain.flipv();
        let other = StillQuery::new(&flipped);
        let far = hash::hash_rect(other.view(), other.rects[0].centre(hash::DEEP_SCALE)).hash;
        for (fx, fy) in [(0.0, 0.0), (1.0, 0.3), (0.4, 1.0), (0.7, 0.6)] {
            let (x, y) = ((160.0 * fx) as u32, (90.0 * fy) as u32);
            let cropped = plain.crop_imm(x, y, 480, 270);
            let query = StillQuery::new(&cropped);
            let cuts = query.deep_cuts();
            assert_eq!(cuts.len(), 13 * 13 * 2 + 10 * 10);
            let hashes: Vec<_> = cuts.iter().map(|c| c.hash().hash).collect();
            let nearest = |to: &Hash| hashes.iter().map(|h| hash::hamming(h, to)).min().unwrap();
            // Another picture's middle is no placement's match.
            let (best, other) = (nearest(&indexed), nearest(&far));
            // The mosaic's hard cell edges make it a hard case: a placement 1.4 pixels of the
            // square off its middle lies 59 bits from it (31-35 where one falls near it).
            assert!(
                best <= 60 && best + 30 <= other,
                "crop at {x},{y}: middle {best} bits away, another picture's {other}"
            );
        }
    }

    #[test]
    fn a_flat_picture_says_nothing_and_its_flat_cuts_can_be_left_out() {
        let flat = DynamicImage::ImageRgb8(image::RgbImage::from_pixel(320, 180, image::Rgb([90, 90, 90])));
        let query = StillQuery::new(&flat);
        let (cuts, hashes) = hash_cuts(query.frame_cuts(), false);
        assert_eq!(cuts.len(), hashes.len());
        assert!(hashes[0].quality < MIN_QUALITY);
        let (cuts, hashes) = hash_cuts(query.shape_cuts(), true);
        assert!(cuts.is_empty() && hashes.is_empty());
    }

    #[test]
    fn a_cut_looked_at_mirrored_is_its_picture_reversed_row_by_row() {
        let img = picture(320, 180, 0);
        let cut = &StillQuery::new(&img).frame_cuts()[0];
        let (given, mirrored) = (cut.picture(false), cut.picture(true));
        assert_eq!(given.len(), hash::HASH_SIDE * hash::HASH_SIDE);
        for (a, b) in given.chunks(hash::HASH_SIDE).zip(mirrored.chunks(hash::HASH_SIDE)) {
            assert!(a.iter().eq(b.iter().rev()));
        }
        assert_ne!(given, mirrored);
    }
}
