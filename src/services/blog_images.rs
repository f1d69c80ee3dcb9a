//! Blog pictures: an admin's upload is decoded (never trusted by its name or type),
//! turned upright by its EXIF orientation, flattened onto white, and written again as
//! baseline JPEG in a few widths. Nothing of the original file survives: no EXIF, GPS,
//! camera or editing metadata, no ICC profile, no trailing bytes.
//!
//! Files live in `{data_dir}/media/blog/{key}-{width}.jpg`, `key` random; the names never
//! change, so they are served with a year of caching. Widths: 400, 800, 1200 below the
//! picture's own width, and its own width (at most 1600).
use std::io::Cursor;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use chrono::Utc;
use image::{DynamicImage, ImageDecoder, ImageReader, Limits};
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, Set};
use serde::Serialize;

use crate::entities::blog_image;

/// Largest upload accepted.
pub const MAX_BYTES: usize = 10 * 1024 * 1024;
/// Largest picture decoded: 40 megapixels, 12,000 px a side.
pub const MAX_PIXELS: u64 = 40_000_000;
pub const MAX_SIDE: u32 = 12_000;
/// Smallest useful picture.
pub const MIN_SIDE: u32 = 200;
pub const WIDTHS: &[u32] = &[400, 800, 1200, 1600];
const QUALITY: u8 = 82;
/// Public URL prefix of the files.
pub const URL_PREFIX: &str = "/media/blog/";

#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("Image too large. Maximum size is {} MB.", MAX_BYTES / 1024 / 1024)]
    TooLarge,
    #[error("File type not supported. Please upload a JPEG, PNG, WebP or GIF image.")]
    NotAnImage,
    #[error("The image could not be read. It may be damaged or incomplete; please export it again.")]
    Corrupt,
    #[error("{0}")]
    Dimensions(String),
    #[error("image storage failed: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
}

/// An uploaded picture as the studio uses it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoredImage {
    pub id: i64,
    /// The default URL (the 1200 px file, or the widest below it).
    pub url: String,
    pub width: u32,
    pub height: u32,
    pub widths: Vec<u32>,
    /// `url 400w, url 800w, ...` for `srcset`.
    pub srcset: String,
    pub bytes: u64,
}

impl StoredImage {
    fn from_model(m: &blog_image::Model) -> Self {
        let widths: Vec<u32> = m.widths.split(',').filter_map(|w| w.trim().parse().ok()).collect();
        let file = |w: u32| format!("{URL_PREFIX}{}-{w}.jpg", m.key);
        let default = widths.iter().copied().filter(|w| *w <= 1200).max().or(widths.first().copied()).unwrap_or(0);
        Self {
            id: m.id,
            url: file(default),
            width: m.width as u32,
            height: m.height as u32,
            srcset: widths.iter().map(|w| format!("{} {w}w", file(*w))).collect::<Vec<_>>().join(", "),
            widths,
            bytes: m.bytes as u64,
        }
    }

    /// Height of this picture shown `width` pixels wide.
    pub fn height_at(&self, width: u32) -> u32 {
        if self.width == 0 { 0 } else { ((u64::from(self.height) * u64::from(width)) / u64::from(self.width)) as u32 }
    }
}

/// The folder of the files.
pub fn dir(data_dir: &Path) -> PathBuf {
    data_dir.join("media").join("blog")
}

/// One re-encoded width.
struct Encoded {
    width: u32,
    height: u32,
    jpeg: Vec<u8>,
}

/// Decodes `bytes` and re-encodes them in every width (CPU-bound: call off the runtime).
fn process(bytes: &[u8]) -> Result<Vec<Encoded>, ImageError> {
    let format = image::guess_format(bytes).map_err(|_| ImageError::NotAnImage)?;
    if !matches!(
        format,
        image::ImageFormat::Jpeg | image::ImageFormat::Png | image::ImageFormat::WebP | image::ImageFormat::Gif
    ) {
        return Err(ImageError::NotAnImage);
    }
    if format == image::ImageFormat::Jpeg && !jpeg_is_complete(bytes) {
        return Err(ImageError::Corrupt);
    }
    let reader = || ImageReader::with_format(Cursor::new(bytes), format);
    let (w, h) = reader().into_dimensions().map_err(|_| ImageError::Corrupt)?;
    if w > MAX_SIDE || h > MAX_SIDE || u64::from(w) * u64::from(h) > MAX_PIXELS {
        return Err(ImageError::Dimensions(format!(
            "The image is {w}×{h} pixels; the largest accepted is {} megapixels ({MAX_SIDE} px a side).",
            MAX_PIXELS / 1_000_000
        )));
    }
    let mut r = reader();
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_PIXELS * 4 + (64 << 20));
    r.limits(limits);
    let mut decoder = r.into_decoder().map_err(|_| ImageError::Corrupt)?;
    let orientation = decoder.orientation().unwrap_or(image::metadata::Orientation::NoTransforms);
    let mut img = DynamicImage::from_decoder(decoder).map_err(|_| ImageError::Corrupt)?;
    img.apply_orientation(orientation);
    let (w, h) = (img.width(), img.height());
    if w < MIN_SIDE || h < MIN_SIDE / 2 {
        return Err(ImageError::Dimensions(format!(
            "The image is {w}×{h} pixels; use one at least {MIN_SIDE} pixels wide and {} tall.",
            MIN_SIDE / 2
        )));
    }
    let rgb = flatten(img);
    // The standard widths below the picture's own, and its own (at most the largest).
    let top = w.min(WIDTHS[WIDTHS.len() - 1]);
    let mut widths: Vec<u32> = WIDTHS.iter().copied().filter(|x| *x < top).collect();
    widths.push(top);
    let mut out = Vec::with_capacity(widths.len());
    for tw in widths {
        let th = ((u64::from(h) * u64::from(tw)) / u64::from(w)).max(1) as u32;
        let scaled = if tw == w {
            rgb.clone()
        } else {
            let mut dst = DynamicImage::new_rgb8(tw, th);
            let opts = fast_image_resize::ResizeOptions::new()
                .resize_alg(fast_image_resize::ResizeAlg::Convolution(fast_image_resize::FilterType::Lanczos3));
            fast_image_resize::Resizer::new()
                .resize(&rgb, &mut dst, &opts)
                .map_err(|e| ImageError::Io(std::io::Error::other(format!("resize failed: {e}"))))?;
            dst
        };
        let (sw, sh) = (scaled.width(), scaled.height());
        let mut jpeg = Vec::with_capacity(128 * 1024);
        let (Ok(w16), Ok(h16)) = (u16::try_from(sw), u16::try_from(sh)) else {
            return Err(ImageError::Dimensions(format!("The image is {sw}×{sh} pixels, too large for JPEG.")));
        };
        let mut enc = jpeg_encoder::Encoder::new(&mut jpeg, QUALITY);
        enc.set_progressive(true);
        enc.encode(scaled.as_bytes(), w16, h16, jpeg_encoder::ColorType::Rgb)
            .map_err(|e| ImageError::Io(std::io::Error::other(format!("JPEG encoding failed: {e}"))))?;
        out.push(Encoded { width: sw, height: sh, jpeg });
    }
    Ok(out)
}

/// The JPEG decoder fills a cut-off file with grey rather than failing; a complete file
/// has an end-of-image marker after its last scan. (Inside entropy-coded data a 0xFF byte
/// is always followed by 0x00 or a restart marker, so both markers are real.)
fn jpeg_is_complete(bytes: &[u8]) -> bool {
    let last = |m: u8| bytes.windows(2).rposition(|w| w[0] == 0xFF && w[1] == m);
    matches!((last(0xDA), last(0xD9)), (Some(sos), Some(eoi)) if eoi > sos)
}

/// RGB on a white background (a transparent PNG would otherwise turn black in JPEG).
fn flatten(img: DynamicImage) -> DynamicImage {
    if !img.color().has_alpha() {
        return DynamicImage::ImageRgb8(img.to_rgb8());
    }
    let rgba = img.to_rgba8();
    let mut rgb = image::RgbImage::new(rgba.width(), rgba.height());
    for (dst, src) in rgb.pixels_mut().zip(rgba.pixels()) {
        let a = u16::from(src[3]);
        for c in 0..3 {
            dst[c] = ((u16::from(src[c]) * a + 255 * (255 - a)) / 255) as u8;
        }
    }
    DynamicImage::ImageRgb8(rgb)
}

fn new_key() -> String {
    let bytes: [u8; 12] = rand::random();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Re-encodes and stores an upload; on any failure nothing is left on disk or in the table.
pub async fn store(
    db: &impl ConnectionTrait,
    data_dir: &Path,
    bytes: Vec<u8>,
    uploaded_by: i64,
) -> Result<StoredImage, ImageError> {
    if bytes.len() > MAX_BYTES {
        return Err(ImageError::TooLarge);
    }
    // One picture at a time per node: a 40 MP decode holds a few hundred MB.
    static JOBS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);
    let _permit = JOBS.acquire().await.map_err(|e| ImageError::Io(std::io::Error::other(e.to_string())))?;
    let encoded = tokio::task::spawn_blocking(move || process(&bytes))
        .await
        .map_err(|e| ImageError::Io(std::io::Error::other(e.to_string())))??;
    let folder = dir(data_dir);
    tokio::fs::create_dir_all(&folder).await?;
    let key = new_key();
    let mut written: Vec<PathBuf> = Vec::new();
    let result = async {
        for e in &encoded {
            let path = folder.join(format!("{key}-{}.jpg", e.width));
            // Written under a temporary name and renamed: a reader never sees half a file.
            let tmp = folder.join(format!(".{key}-{}.part", e.width));
            written.push(tmp.clone());
            tokio::fs::write(&tmp, &e.jpeg).await?;
            tokio::fs::rename(&tmp, &path).await?;
            written.push(path);
        }
        let largest = encoded.last().ok_or(ImageError::Corrupt)?;
        let row = blog_image::ActiveModel {
            key: Set(key.clone()),
            width: Set(largest.width as i32),
            height: Set(largest.height as i32),
            widths: Set(encoded.iter().map(|e| e.width.to_string()).collect::<Vec<_>>().join(",")),
            bytes: Set(encoded.iter().map(|e| e.jpeg.len() as i64).sum()),
            uploaded_by: Set(Some(uploaded_by)),
            created_at: Set(Utc::now()),
            ..Default::default()
        }
        .insert(db)
        .await?;
        Ok::<_, ImageError>(StoredImage::from_model(&row))
    }
    .await;
    if result.is_err() {
        for p in &written {
            let _ = tokio::fs::remove_file(p).await;
        }
    }
    result
}

/// The stored picture behind one of our URLs (`/media/blog/{key}-{w}.jpg`), if any.
pub async fn find_by_url(db: &impl ConnectionTrait, url: &str) -> Result<Option<StoredImage>, sea_orm::DbErr> {
    let Some(key) = key_of(url) else { return Ok(None) };
    Ok(blog_image::Entity::find()
        .filter(blog_image::Column::Key.eq(key))
        .one(db)
        .await?
        .map(|m| StoredImage::from_model(&m)))
}

/// The stored pictures behind several URLs, by key (one query for a page of posts).
pub async fn find_many(
    db: &impl ConnectionTrait,
    urls: &[String],
) -> Result<std::collections::HashMap<String, StoredImage>, sea_orm::DbErr> {
    let keys: Vec<String> = urls.iter().filter_map(|u| key_of(u)).map(str::to_owned).collect();
    if keys.is_empty() {
        return Ok(Default::default());
    }
    Ok(blog_image::Entity::find()
        .filter(blog_image::Column::Key.is_in(keys))
        .all(db)
        .await?
        .into_iter()
        .map(|m| (m.key.clone(), StoredImage::from_model(&m)))
        .collect())
}

/// `{key}` of `/media/blog/{key}-{width}.jpg`.
pub fn key_of(url: &str) -> Option<&str> {
    let name = url.strip_prefix(URL_PREFIX)?.strip_suffix(".jpg")?;
    let (key, width) = name.rsplit_once('-')?;
    (width.bytes().all(|b| b.is_ascii_digit()) && is_key(key)).then_some(key)
}

fn is_key(s: &str) -> bool {
    s.len() == 16 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A file name safe to open from the media folder: `{key}-{digits}.jpg`.
pub fn is_file_name(name: &str) -> bool {
    key_of(&format!("{URL_PREFIX}{name}")).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_checked() {
        assert_eq!(key_of("/media/blog/abcdefghij_-1234-800.jpg"), Some("abcdefghij_-1234"));
        assert!(is_file_name("abcdefghij_-1234-800.jpg"));
        for bad in
            ["../secret.key", "abcdefghij_-1234-800.png", "abc-800.jpg", "abcdefghij_-1234-80a.jpg", ".x-800.jpg"]
        {
            assert!(!is_file_name(bad), "{bad}");
        }
    }

    #[test]
    fn transparency_becomes_white() {
        let img = DynamicImage::ImageRgba8(image::RgbaImage::from_pixel(2, 2, image::Rgba([0, 0, 0, 0])));
        assert_eq!(flatten(img).to_rgb8().get_pixel(0, 0).0, [255, 255, 255]);
    }
}
