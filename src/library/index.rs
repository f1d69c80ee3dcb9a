//! [`LibraryIndex`]: the library in one folder, its catalog kept in step with what other
//! processes (the CLI) write, and the operations on the catalog itself (list, remove, edit).
//! Adding videos is in `add`, searching in `still` and `clip`.
use std::collections::HashMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

use anyhow::Context;

use super::store::{self, Catalog, Segment, VideoMeta, VideoRecord};
use super::{audio, frames, preview};

struct Loaded {
    catalog: Catalog,
    segments: HashMap<u32, Arc<Segment>>,
    stamp: Option<CatalogStamp>,
}

/// Identifies one version of `catalog.json`: every save renames a new file into place, so
/// the inode changes even when two saves fall into the same coarse mtime tick.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct CatalogStamp {
    modified: Option<SystemTime>,
    len: u64,
    inode: u64,
}

/// The library in one folder: `catalog.json`, `segments/`, the preview key and a lock file.
pub struct LibraryIndex {
    pub(super) dir: PathBuf,
    loaded: RwLock<Loaded>,
    pub(super) signer: preview::Signer,
    previews: preview::Cache,
}

impl LibraryIndex {
    /// Opens (creating if needed) the library in `dir`, signing preview links with a key
    /// kept in the folder (the command line, benchmarks).
    pub fn open(dir: impl Into<PathBuf>) -> anyhow::Result<Self> {
        let dir = dir.into();
        fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let signer = preview::Signer::load_or_create(&dir.join("preview.key"))?;
        Self::open_with_signer(dir, signer)
    }

    /// Opens the library in `dir`, signing preview links with `key` (the server: a key derived
    /// from the configured secret, so every node can check a link any node made).
    pub fn open_with_preview_key(dir: impl Into<PathBuf>, key: [u8; 32]) -> anyhow::Result<Self> {
        Self::open_with_signer(dir.into(), preview::Signer::from_key(key))
    }

    fn open_with_signer(dir: PathBuf, signer: preview::Signer) -> anyhow::Result<Self> {
        fs::create_dir_all(dir.join("segments")).with_context(|| format!("cannot create {}", dir.display()))?;
        let previews = preview::Cache::new(dir.join("previews"), preview::CACHE_MAX_BYTES);
        let index = Self {
            dir,
            loaded: RwLock::new(Loaded { catalog: Catalog::default(), segments: HashMap::new(), stamp: None }),
            signer,
            previews,
        };
        index.refresh()?;
        Ok(index)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn catalog_stamp(&self) -> Option<CatalogStamp> {
        let m = fs::metadata(self.dir.join("catalog.json")).ok()?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&m);
        #[cfg(not(unix))]
        let inode = 0;
        Some(CatalogStamp { modified: m.modified().ok(), len: m.len(), inode })
    }

    /// Re-reads the catalog when another process (the CLI) changed it.
    pub fn refresh(&self) -> anyhow::Result<()> {
        let stamp = self.catalog_stamp();
        {
            let loaded = self.loaded.read().map_err(|_| anyhow::anyhow!("library lock poisoned"))?;
            if loaded.stamp.is_some() && loaded.stamp == stamp {
                return Ok(());
            }
        }
        let catalog = Catalog::load(&self.dir)?;
        let mut loaded = self.loaded.write().map_err(|_| anyhow::anyhow!("library lock poisoned"))?;
        let mut segments = HashMap::new();
        for v in &catalog.videos {
            let seg = match loaded.segments.get(&v.id) {
                Some(s) => s.clone(),
                None => match Segment::open(&store::segment_path(&self.dir, v.id)) {
                    Ok(s) => Arc::new(s),
                    Err(e) => {
                        tracing::warn!("library: skipping {}: {e:#}", v.path.display());
                        continue;
                    }
                },
            };
            segments.insert(v.id, seg);
        }
        *loaded = Loaded { catalog, segments, stamp };
        Ok(())
    }

    /// Every indexed video, in the order they were added.
    pub fn list(&self) -> Vec<VideoRecord> {
        let _ = self.refresh();
        self.loaded.read().map(|l| l.catalog.videos.clone()).unwrap_or_default()
    }

    pub fn get(&self, id: u32) -> Option<VideoRecord> {
        self.list().into_iter().find(|v| v.id == id)
    }

    /// Number of indexed entries (frames and crop tier) over all videos.
    pub fn frame_count(&self) -> u64 {
        let _ = self.refresh();
        self.loaded.read().map(|l| l.segments.values().map(|s| s.len() as u64).sum()).unwrap_or(0)
    }

    /// Bytes of all segment files.
    pub fn index_bytes(&self) -> u64 {
        self.loaded.read().map(|l| l.segments.values().map(|s| s.bytes() as u64).sum()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.list().is_empty()
    }

    /// Source files of videos whose segment is missing or in an older format (they need
    /// re-indexing: `add` does it even though the files did not change).
    pub fn stale_files(&self) -> Vec<PathBuf> {
        self.list()
            .into_iter()
            .filter(|v| v.size > 0 && !store::segment_is_current(&self.dir, v.id))
            .map(|v| v.path)
            .collect()
    }

    /// Serialises writers across processes (CLI and server) with an OS file lock.
    fn write_lock(&self) -> anyhow::Result<File> {
        let file = File::options().create(true).truncate(false).write(true).open(self.dir.join(".lock"))?;
        file.lock()?;
        Ok(file)
    }

    /// Loads the catalog from disk under the write lock, lets `change` edit it, saves it.
    pub(super) fn update_catalog<T>(
        &self,
        change: impl FnOnce(&mut Catalog) -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        let _lock = self.write_lock()?;
        let mut catalog = Catalog::load(&self.dir)?;
        let out = change(&mut catalog)?;
        catalog.save(&self.dir)?;
        drop(_lock);
        if let Ok(mut loaded) = self.loaded.write() {
            loaded.stamp = None;
        }
        self.refresh()?;
        Ok(out)
    }

    /// Removes a video (by id, path or file name) from the index. Returns what was removed.
    pub fn remove(&self, key: &str) -> anyhow::Result<Vec<VideoRecord>> {
        let canonical = fs::canonicalize(key).ok();
        let removed = self.update_catalog(|c| {
            let (gone, keep): (Vec<_>, Vec<_>) = c.videos.drain(..).partition(|v| {
                v.id.to_string() == key
                    || Some(&v.path) == canonical.as_ref()
                    || v.path.as_os_str() == key
                    || v.path.file_name().is_some_and(|n| n == key)
            });
            c.videos = keep;
            Ok(gone)
        })?;
        for v in &removed {
            let _ = fs::remove_file(store::segment_path(&self.dir, v.id));
            let _ = fs::remove_file(audio::landmarks_path(&self.dir, v.id));
        }
        Ok(removed)
    }

    /// Replaces a video's title, year, season and episode (the admin's edit).
    pub fn set_meta(&self, id: u32, mut meta: VideoMeta) -> anyhow::Result<VideoRecord> {
        meta.source = "admin".into();
        self.update_catalog(|c| {
            let v = c.videos.iter_mut().find(|v| v.id == id).context("no such video in the library")?;
            v.meta = meta;
            Ok(v.clone())
        })
    }

    /// The segments (in the order the videos were added, so that equal hits always resolve to
    /// the same video) and the catalog records by id.
    pub(super) fn snapshot(&self) -> (Vec<Arc<Segment>>, HashMap<u32, VideoRecord>) {
        let _ = self.refresh();
        match self.loaded.read() {
            Ok(l) => {
                let mut segments: Vec<Arc<Segment>> = l.segments.values().cloned().collect();
                segments.sort_unstable_by_key(|s| s.video_id);
                (segments, l.catalog.videos.iter().map(|v| (v.id, v.clone())).collect())
            }
            Err(_) => (vec![], HashMap::new()),
        }
    }

    /// Checks a preview token; the picture it stands for if it is already cut, else `None`
    /// (the caller then takes a cutting slot and calls [`Self::preview`]).
    pub fn preview_cached(&self, token: &str) -> Result<Option<Vec<u8>>, preview::PreviewError> {
        let (video, at_ms) = self.preview_target(token)?;
        Ok(self.previews.get(&preview_key(&video, at_ms)))
    }

    /// Checks a preview token and gives the JPEG it stands for: from the cache, or cut once
    /// with ffmpeg (480 px wide) and kept.
    pub fn preview(&self, token: &str) -> Result<Vec<u8>, preview::PreviewError> {
        let (video, at_ms) = self.preview_target(token)?;
        self.previews.get_or_make(&preview_key(&video, at_ms), || {
            frames::cut_preview(&video.path, at_ms as f64 / 1000.0, 480).map_err(|e| {
                tracing::warn!("library preview of {} failed: {e:#}", video.path.display());
                preview::PreviewError::Gone
            })
        })
    }

    fn preview_target(&self, token: &str) -> Result<(VideoRecord, u32), preview::PreviewError> {
        let (id, at_ms) = self.signer.verify(token)?;
        let video = self.get(id).ok_or(preview::PreviewError::Gone)?;
        Ok((video, at_ms))
    }
}

/// One picture of one version of a file: a re-indexed, changed file gets new pictures.
fn preview_key(video: &VideoRecord, at_ms: u32) -> String {
    let version: String = video.partial_hash.chars().filter(char::is_ascii_alphanumeric).take(12).collect();
    format!("{}-{version}-{at_ms}", video.id)
}
