//! Receiving the upload: its bytes (a form field the route reads, or a fetched URL)
//! streamed into a private temp folder with the size cap applied while streaming, hashed on
//! the way, and its real type sniffed from the bytes (the name is never trusted).
//!
//! Every file of one request lives in one [`WorkDir`] (a `tempfile::TempDir` under
//! `{data_dir}/tmp`): the upload, the frames and the sound track. Dropping it deletes the
//! folder, so a request that ends in any way (answer, error, panic, client gone) leaves
//! nothing behind. A process that dies without dropping it (`kill -9`, the OOM killer, a
//! power cut) leaves the folder, so each folder holds an OS lock on its `.owner` file while
//! it lives: at start [`sweep`] deletes every folder whose lock nobody holds, and never one
//! of another live node sharing the data folder.
use std::collections::HashSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use super::engine::MediaKind;
use crate::outbound::{OutboundError, Scheme, StrictClient};

/// Why an upload (a form field or a fetched URL) was not taken. The route turns it into an
/// answer (`routes::api::identify_errors`); the texts here are the person's.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// Over the site's size limit, while streaming or by the declared length.
    #[error("File too large. Maximum allowed size is {max_mb}MB.")]
    TooLarge { max_mb: u64 },
    #[error("Invalid file format: the uploaded file is empty. Please upload an image or video.")]
    Empty,
    /// The bytes are no image or video we know; `allowed` lists the admin's types.
    #[error(
        "Invalid file format: the content of this file is not an image or video. Please upload one of these formats: {allowed}."
    )]
    NotMedia { allowed: String },
    /// A real image or video, of a type the admin does not accept.
    #[error("File type \"{ext}\" not supported. Please upload one of these formats: {allowed}.")]
    NotAllowed { ext: &'static str, allowed: String },
    /// The bytes stopped coming before the end (the reader's reason).
    #[error("The upload could not be read ({0}). Please try again.")]
    Interrupted(String),
    #[error(
        "The url answered with a redirect (HTTP {0}), which is not followed. Give the address of the image or video itself."
    )]
    UrlRedirected(u16),
    #[error("The url could not be fetched: it answered HTTP {0}. Give the address of a public image or video.")]
    UrlStatus(u16),
    /// The strict client refused the URL or could not fetch it.
    #[error(transparent)]
    Url(#[from] OutboundError),
    /// Writing the request's folder failed: our fault, not the person's.
    #[error("could not store the upload: {0}")]
    Io(#[from] std::io::Error),
}

/// The request's private folder; deleted (with everything in it) when dropped.
pub struct WorkDir {
    dir: tempfile::TempDir,
    /// Holds the folder's lock while the folder lives (released by the OS if we die).
    _owner: File,
}

/// Folders of this process's requests that are alive now (removed on a forced exit).
static LIVE: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

const OWNER_FILE: &str = ".owner";

impl WorkDir {
    pub fn new(data_dir: &Path) -> std::io::Result<Self> {
        let root = tmp_root(data_dir);
        std::fs::create_dir_all(&root)?;
        let dir = tempfile::Builder::new().prefix("identify-").tempdir_in(root)?;
        let owner = File::create(dir.path().join(OWNER_FILE))?;
        owner.try_lock().map_err(std::io::Error::other)?;
        if let Ok(mut live) = LIVE.lock() {
            live.get_or_insert_with(HashSet::new).insert(dir.path().to_path_buf());
        }
        Ok(Self { dir, _owner: owner })
    }
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if let Ok(mut live) = LIVE.lock()
            && let Some(set) = live.as_mut()
        {
            set.remove(self.dir.path());
        }
    }
}

/// Where request folders are made: `{data_dir}/tmp`.
pub fn tmp_root(data_dir: &Path) -> PathBuf {
    data_dir.join("tmp")
}

/// How long an entry without an owner lock is left alone (it may be a folder another node
/// is creating this instant).
const UNOWNED_GRACE: Duration = Duration::from_secs(60);

/// Deletes what dead processes left in `{data_dir}/tmp`: request folders whose owner lock is
/// free, and anything without an owner older than a minute. Returns how many entries went.
pub fn sweep(data_dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(tmp_root(data_dir)) else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = entry.metadata() else { continue };
        let old = meta.modified().ok().and_then(|m| m.elapsed().ok()).is_some_and(|age| age > UNOWNED_GRACE);
        let abandoned = if meta.is_dir() {
            match File::options().write(true).open(path.join(OWNER_FILE)) {
                // Lockable: its owner is gone.
                Ok(f) => f.try_lock().is_ok(),
                Err(_) => old,
            }
        } else {
            old
        };
        if !abandoned {
            continue;
        }
        let gone = if meta.is_dir() { std::fs::remove_dir_all(&path) } else { std::fs::remove_file(&path) };
        match gone {
            Ok(()) => removed += 1,
            Err(e) => tracing::warn!("could not delete the leftover upload {}: {e}", path.display()),
        }
    }
    removed
}

/// Deletes the folders of this process's requests still running: the last thing a forced
/// exit does, so that "uploads are deleted after analysis" holds then too.
pub fn remove_live_dirs() {
    let dirs: Vec<PathBuf> =
        LIVE.lock().ok().and_then(|mut l| l.take()).map(|s| s.into_iter().collect()).unwrap_or_default();
    for d in dirs {
        let _ = std::fs::remove_dir_all(d);
    }
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

/// Limits that apply while reading the form.
pub struct UploadRules {
    pub max_bytes: u64,
    pub max_mb: u64,
    /// Lower-case extensions from the `allowed_file_types` setting.
    pub allowed: Vec<String>,
}

/// Fetches `url` into `work` as the upload: only a public address (no redirects, time and
/// size capped by the strict client, the size cap of uploads on top), and its content
/// sniffed and checked like an uploaded file's.
pub async fn fetch_url(
    url: &str,
    work: &WorkDir,
    rules: &UploadRules,
    outbound: &StrictClient,
) -> Result<Upload, UploadError> {
    use futures::TryStreamExt;
    let req = outbound.request(reqwest::Method::GET, url, Scheme::HttpOrHttps)?;
    let res = outbound.send(req).await?;
    let status = res.status();
    if status.is_redirection() {
        return Err(UploadError::UrlRedirected(status.as_u16()));
    }
    if !status.is_success() {
        return Err(UploadError::UrlStatus(status.as_u16()));
    }
    if res.content_length().is_some_and(|n| n > rules.max_bytes) {
        return Err(UploadError::TooLarge { max_mb: rules.max_mb });
    }
    let filename =
        res.url().path_segments().and_then(|mut s| s.next_back()).filter(|s| !s.is_empty()).map(str::to_owned);
    let chunks = res.bytes_stream().map_err(|e| UploadError::Url(crate::outbound::map_error(e)));
    write_upload(chunks, filename, work, rules).await
}

/// How many leading bytes we keep for type sniffing.
const SNIFF_BYTES: usize = 8192;

/// Writes the bytes of an upload (a form field or a fetched URL) to `work`: size-capped,
/// hashed, and sniffed against the allowed types.
pub async fn write_upload(
    chunks: impl futures::Stream<Item = Result<bytes::Bytes, UploadError>>,
    filename: Option<String>,
    work: &WorkDir,
    rules: &UploadRules,
) -> Result<Upload, UploadError> {
    use futures::TryStreamExt;
    let filename = filename.map(|n| n.chars().take(200).collect::<String>());
    let path = work.file("upload");
    let mut file = tokio::fs::File::create(&path).await?;
    let mut hasher = Sha256::new();
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    let mut size: u64 = 0;
    let mut chunks = std::pin::pin!(chunks);
    while let Some(chunk) = chunks.try_next().await? {
        size += chunk.len() as u64;
        if size > rules.max_bytes {
            return Err(UploadError::TooLarge { max_mb: rules.max_mb });
        }
        if head.len() < SNIFF_BYTES {
            let take = (SNIFF_BYTES - head.len()).min(chunk.len());
            head.extend_from_slice(&chunk[..take]);
        }
        hasher.update(&chunk);
        file.write_all(&chunk).await?;
    }
    file.flush().await?;
    drop(file);
    if size == 0 {
        return Err(UploadError::Empty);
    }
    let (mime, ext, kind) = sniff(&head).ok_or_else(|| UploadError::NotMedia { allowed: rules.allowed.join(", ") })?;
    if !is_allowed(ext, &rules.allowed) {
        return Err(UploadError::NotAllowed { ext, allowed: rules.allowed.join(", ") });
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
    fn the_sweep_deletes_what_the_dead_left_and_spares_the_living() {
        let data = tempfile::tempdir().unwrap();
        let live = WorkDir::new(data.path()).unwrap();
        std::fs::write(live.file("upload"), b"x").unwrap();
        // A folder of a process that died: its lock file is there, unlocked.
        let dead = tmp_root(data.path()).join("identify-dead");
        std::fs::create_dir_all(&dead).unwrap();
        std::fs::write(dead.join(OWNER_FILE), b"").unwrap();
        std::fs::write(dead.join("upload"), b"secret frames").unwrap();
        // A folder being made this instant (no lock yet) is left for now.
        let fresh = tmp_root(data.path()).join("identify-fresh");
        std::fs::create_dir_all(&fresh).unwrap();
        assert_eq!(sweep(data.path()), 1);
        assert!(!dead.exists() && fresh.exists() && live.path().exists());
        drop(live);
        std::fs::remove_dir(&fresh).unwrap();
        assert_eq!(std::fs::read_dir(tmp_root(data.path())).unwrap().count(), 0);
    }

    #[test]
    fn aliases() {
        let allowed = vec!["jpeg".to_string(), "mov".to_string()];
        assert!(is_allowed("jpg", &allowed));
        assert!(is_allowed("mov", &allowed));
        assert!(!is_allowed("png", &allowed));
    }
}
