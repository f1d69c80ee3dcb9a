//! Receiving the upload: the multipart form of SPEC section 7 streamed into a private temp
//! folder with the size cap applied while streaming, hashed on the way, and its real type
//! sniffed from the bytes (the name is never trusted).
//!
//! Every file of one request lives in one [`WorkDir`] (a `tempfile::TempDir` under
//! `{data_dir}/tmp`): the upload, the frames and the sound track. Dropping it deletes the
//! folder, so a request that ends in any way (answer, error, panic, client gone) leaves
//! nothing behind.
use std::path::{Path, PathBuf};

use axum::extract::Multipart;
use axum::extract::multipart::Field;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use super::engine::MediaKind;
use crate::error::AppError;

/// The request's private folder; deleted (with everything in it) when dropped.
pub struct WorkDir {
    dir: tempfile::TempDir,
}

impl WorkDir {
    pub fn new(data_dir: &Path) -> std::io::Result<Self> {
        let root = tmp_root(data_dir);
        std::fs::create_dir_all(&root)?;
        Ok(Self { dir: tempfile::Builder::new().prefix("identify-").tempdir_in(root)? })
    }
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// Where request folders are made: `{data_dir}/tmp`.
pub fn tmp_root(data_dir: &Path) -> PathBuf {
    data_dir.join("tmp")
}

/// The uploaded file, on disk inside the request's [`WorkDir`].
#[derive(Debug, Clone)]
pub struct Upload {
    pub path: PathBuf,
    /// The name the browser sent (display only).
    pub filename: Option<String>,
    pub size: u64,
    /// sha256 of the bytes, hex.
    pub sha256: String,
    /// Sniffed from the bytes, e.g. `image/jpeg`.
    pub mime: String,
    /// Canonical extension of the sniffed type, e.g. `jpg`, `mov`.
    pub ext: String,
    pub kind: MediaKind,
}

/// The fields of `POST /api/identify`.
pub struct IdentifyForm {
    pub upload: Upload,
    pub mode: String,
    pub use_audio_analysis: bool,
    pub use_enhanced_analysis: bool,
}

/// Limits that apply while reading the form.
pub struct UploadRules {
    pub max_bytes: u64,
    pub max_mb: u64,
    /// Lower-case extensions from the `allowed_file_types` setting.
    pub allowed: Vec<String>,
}

const MAX_TEXT_FIELD: usize = 256;

/// Reads the whole form, streaming the `file` field to `work`.
pub async fn read_form(
    mut multipart: Multipart,
    work: &WorkDir,
    rules: &UploadRules,
) -> Result<IdentifyForm, AppError> {
    let mut upload = None;
    let mut mode = String::new();
    let mut use_audio = true;
    let mut enhanced = true;
    while let Some(field) = multipart.next_field().await.map_err(multipart_error(rules))? {
        let name = field.name().unwrap_or("").to_owned();
        match name.as_str() {
            "file" => {
                if upload.is_some() {
                    return Err(AppError::BadRequest("Please upload one file at a time.".into()));
                }
                upload = Some(stream_file(field, work, rules).await?);
            }
            "mode" => mode = text_field(field, rules).await?,
            "useAudioAnalysis" => use_audio = parse_flag(&text_field(field, rules).await?, true),
            "useEnhancedAnalysis" => enhanced = parse_flag(&text_field(field, rules).await?, true),
            // Unknown fields are read and ignored (bounded like the others).
            _ => {
                text_field(field, rules).await?;
            }
        }
    }
    let upload = upload.ok_or_else(|| {
        AppError::BadRequest("No file was uploaded. Attach an image or video in the \"file\" field.".into())
    })?;
    Ok(IdentifyForm { upload, mode, use_audio_analysis: use_audio, use_enhanced_analysis: enhanced })
}

fn parse_flag(v: &str, default: bool) -> bool {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => true,
        "false" | "0" | "no" | "off" => false,
        _ => default,
    }
}

pub fn too_large(max_mb: u64) -> AppError {
    AppError::PayloadTooLarge(format!("File too large. Maximum allowed size is {max_mb}MB."))
}

fn multipart_error(rules: &UploadRules) -> impl Fn(axum::extract::multipart::MultipartError) -> AppError + '_ {
    move |e| {
        if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
            too_large(rules.max_mb)
        } else {
            AppError::BadRequest(format!("The upload could not be read ({}). Please try again.", e.body_text()))
        }
    }
}

async fn text_field(mut field: Field<'_>, rules: &UploadRules) -> Result<String, AppError> {
    let mut buf = Vec::new();
    while let Some(chunk) = field.chunk().await.map_err(multipart_error(rules))? {
        buf.extend_from_slice(&chunk);
        if buf.len() > MAX_TEXT_FIELD {
            return Err(AppError::BadRequest("A form field is too long.".into()));
        }
    }
    Ok(String::from_utf8_lossy(&buf).trim().to_owned())
}

/// How many leading bytes we keep for type sniffing.
const SNIFF_BYTES: usize = 8192;

async fn stream_file(mut field: Field<'_>, work: &WorkDir, rules: &UploadRules) -> Result<Upload, AppError> {
    let filename = field.file_name().map(|n| n.chars().take(200).collect::<String>());
    let path = work.file("upload");
    let mut file = tokio::fs::File::create(&path).await.map_err(|e| AppError::Internal(e.into()))?;
    let mut hasher = Sha256::new();
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    let mut size: u64 = 0;
    while let Some(chunk) = field.chunk().await.map_err(multipart_error(rules))? {
        size += chunk.len() as u64;
        if size > rules.max_bytes {
            return Err(too_large(rules.max_mb));
        }
        if head.len() < SNIFF_BYTES {
            let take = (SNIFF_BYTES - head.len()).min(chunk.len());
            head.extend_from_slice(&chunk[..take]);
        }
        hasher.update(&chunk);
        file.write_all(&chunk).await.map_err(|e| AppError::Internal(e.into()))?;
    }
    file.flush().await.map_err(|e| AppError::Internal(e.into()))?;
    drop(file);
    if size == 0 {
        return Err(AppError::Unprocessable(
            "Invalid file format: the uploaded file is empty. Please upload an image or video.".into(),
        ));
    }
    let (mime, ext, kind) = sniff(&head).ok_or_else(|| {
        AppError::Unprocessable(format!(
            "Invalid file format: the content of this file is not an image or video. Please upload one of these formats: {}.",
            rules.allowed.join(", ")
        ))
    })?;
    if !is_allowed(ext, &rules.allowed) {
        return Err(AppError::Unprocessable(format!(
            "File type \"{ext}\" not supported. Please upload one of these formats: {}.",
            rules.allowed.join(", ")
        )));
    }
    Ok(Upload {
        path,
        filename,
        size,
        sha256: hex::encode(hasher.finalize()),
        mime: mime.to_owned(),
        ext: ext.to_owned(),
        kind,
    })
}

/// The real type of a file from its first bytes: (MIME type, canonical extension, kind).
pub fn sniff(head: &[u8]) -> Option<(&'static str, &'static str, MediaKind)> {
    let t = infer::get(head)?;
    let (ext, kind) = match t.mime_type() {
        "image/jpeg" => ("jpg", MediaKind::Image),
        "image/png" => ("png", MediaKind::Image),
        "image/webp" => ("webp", MediaKind::Image),
        "image/gif" => ("gif", MediaKind::Image),
        "image/bmp" => ("bmp", MediaKind::Image),
        "image/tiff" => ("tiff", MediaKind::Image),
        "video/mp4" => ("mp4", MediaKind::Video),
        "video/quicktime" => ("mov", MediaKind::Video),
        "video/x-msvideo" => ("avi", MediaKind::Video),
        "video/webm" => ("webm", MediaKind::Video),
        "video/x-matroska" => ("mkv", MediaKind::Video),
        "video/x-flv" => ("flv", MediaKind::Video),
        "video/x-m4v" => ("mp4", MediaKind::Video),
        _ => return None,
    };
    Some((t.mime_type(), ext, kind))
}

/// Whether a sniffed extension is in the admin's list (jpg/jpeg and tif/tiff are one type).
pub fn is_allowed(ext: &str, allowed: &[String]) -> bool {
    let aliases: &[&str] = match ext {
        "jpg" => &["jpg", "jpeg"],
        "tiff" => &["tiff", "tif"],
        "mp4" => &["mp4", "m4v"],
        other => return allowed.iter().any(|a| a == other),
    };
    allowed.iter().any(|a| aliases.contains(&a.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing_ignores_names() {
        assert!(sniff(b"hello, I am a text file").is_none());
        assert_eq!(sniff(&[0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, b'J', b'F', b'I', b'F']).unwrap().1, "jpg");
    }

    #[test]
    fn aliases() {
        let allowed = vec!["jpeg".to_string(), "mov".to_string()];
        assert!(is_allowed("jpg", &allowed));
        assert!(is_allowed("mov", &allowed));
        assert!(!is_allowed("png", &allowed));
    }
}
