//! [`LibraryIndex`]: the library in one folder, its catalog kept in step with what other
//! processes (the CLI) write, and the operations on the catalog itself (list, remove, edit).
//! Adding videos is in `add`, searching in `still` and `clip`. The hashes themselves live
//! behind [`entries::EntryIndex`]; [`mapped::MappedIndex`] keeps them in the folder,
//! [`milvus::MilvusIndex`] in a Milvus server ([`backend`]: `REELFIND_LIBRARY_INDEX` chooses).
pub mod backend;
pub mod entries;
#[cfg(test)]
pub(crate) mod fake;
pub mod mapped;
pub mod migrate;
pub mod milvus;
pub mod scan;
pub mod shared;
pub mod store;
pub mod stretches;

use std::collections::HashMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

use anyhow::Context;

use self::backend::Backend;
use self::entries::{EntryIndex, IndexError};
use self::milvus::MilvusIndex;
use self::shared::{CatalogDatabase, SharedCatalog};
use crate::library::index::store::{Catalog, VideoMeta, VideoRecord};
use crate::library::{audio, frames, preview};

struct Loaded {
    catalog: Catalog,
    stamp: Option<CatalogStamp>,
}

/// Identifies one version of the catalog: of `catalog.json` its file (every save renames a
/// new file into place, so the inode changes even when two saves fall into the same coarse
/// mtime tick); of the shared catalog its version number.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum CatalogStamp {
    File { modified: Option<SystemTime>, len: u64, inode: u64 },
    Version(i64),
}

/// The library: its folder (`catalog.json` or the shared catalog's local copies, `segments/`
/// with the embedded index, the preview key and a lock file), the catalog and the hashes.
pub struct LibraryIndex {
    pub(super) dir: PathBuf,
    loaded: RwLock<Loaded>,
    /// The catalog in the database all nodes share (with an external index and a database);
    /// `None`: `catalog.json` in the folder.
    shared: Option<Arc<SharedCatalog>>,
    /// The database a migration to an external index moves the catalog into.
    database: Option<CatalogDatabase>,
    /// Where the hashes live (see [`entries`]).
    entries: Arc<dyn EntryIndex>,
    /// The same index when it is a Milvus server (readiness, the operator's commands).
    milvus: Option<Arc<MilvusIndex>>,
    backend: Backend,
    pub(super) signer: preview::Signer,
    previews: preview::Cache,
}

impl LibraryIndex {
    /// Opens (creating if needed) the library in `dir`, signing preview links with a key
    /// kept in the folder (the command line, benchmarks).
    pub fn open(dir: impl Into<PathBuf>) -> anyhow::Result<Self> {
        Self::open_on(dir, &Backend::Local)
    }

    /// [`Self::open`] with the hashes in `backend` (the command line under
    /// `REELFIND_LIBRARY_INDEX`).
    pub fn open_on(dir: impl Into<PathBuf>, backend: &Backend) -> anyhow::Result<Self> {
        Self::open_in(dir, backend, None)
    }

    /// [`Self::open_on`] beside `database`: with an external index the catalog lives there,
    /// shared by every node (the command line).
    pub fn open_in(
        dir: impl Into<PathBuf>,
        backend: &Backend,
        database: Option<CatalogDatabase>,
    ) -> anyhow::Result<Self> {
        let dir = dir.into();
        fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let signer = preview::Signer::load_or_create(&dir.join("preview.key"))?;
        Self::open_with_signer(dir, signer, backend, database)
    }

    /// Opens the library in `dir` with its hashes in `backend` (and with an external index its
    /// catalog in `database`), signing preview links with `key` (the server: a key derived
    /// from the configured secret, so every node can check a link any node made).
    pub fn open_with_preview_key(
        dir: impl Into<PathBuf>,
        key: [u8; 32],
        backend: &Backend,
        database: Option<CatalogDatabase>,
    ) -> anyhow::Result<Self> {
        Self::open_with_signer(dir.into(), preview::Signer::from_key(key), backend, database)
    }

    fn open_with_signer(
        dir: PathBuf,
        signer: preview::Signer,
        backend: &Backend,
        database: Option<CatalogDatabase>,
    ) -> anyhow::Result<Self> {
        fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let opened =
            backend.open(&dir).with_context(|| format!("cannot open the Library index of {}", dir.display()))?;
        let shared = match (&opened.milvus, &database) {
            (Some(_), Some(db)) => Some(Arc::new(SharedCatalog::open(db)?)),
            _ => None,
        };
        let previews = preview::Cache::new(dir.join("previews"), preview::CACHE_MAX_BYTES);
        let index = Self {
            dir,
            loaded: RwLock::new(Loaded { catalog: Catalog::default(), stamp: None }),
            shared,
            database,
            entries: opened.entries,
            milvus: opened.milvus,
            backend: backend.clone(),
            signer,
            previews,
        };
        if let Some(m) = &index.milvus {
            // Searches may be bounded (no wait for the time tick) but for a while after each
            // catalog change: see `milvus::Consistency::Auto`.
            m.client().follow_catalog();
        }
        index.adopt_folder_catalog()?;
        index.refresh_now()?;
        Ok(index)
    }

    /// A library served from an external index before its catalog moved to the database
    /// (or whose catalog is still only in its folder) brings that catalog along once: when
    /// the shared catalog is empty and `catalog.json` lists videos.
    fn adopt_folder_catalog(&self) -> anyhow::Result<()> {
        // The file first: asking the database costs a round trip on every start.
        let Some(shared) = self.shared.as_deref().filter(|_| self.dir.join("catalog.json").exists()) else {
            return Ok(());
        };
        if !shared.load()?.0.videos.is_empty() {
            return Ok(());
        }
        let folder = Catalog::load(&self.dir)?;
        if folder.videos.is_empty() {
            return Ok(());
        }
        self.share_sounds(shared, &folder.videos)?;
        shared.replace(&folder)?;
        tracing::info!(
            "library: moved the catalog of {} ({} videos) into the database all nodes share",
            self.dir.display(),
            folder.videos.len()
        );
        Ok(())
    }

    /// Where the catalog lives: `database` (shared by every node) or `folder`.
    pub fn catalog_place(&self) -> &'static str {
        if self.shared.is_some() { "database" } else { "folder" }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The catalog's current stamp; of the shared catalog asked again when `fresh` (else at
    /// most every [`shared::CHECK_EVERY`]).
    fn catalog_stamp(&self, fresh: bool) -> anyhow::Result<Option<CatalogStamp>> {
        if let Some(shared) = &self.shared {
            return Ok(Some(CatalogStamp::Version(shared.version(fresh)?)));
        }
        let Ok(m) = fs::metadata(self.dir.join("catalog.json")) else { return Ok(None) };
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&m);
        #[cfg(not(unix))]
        let inode = 0;
        Ok(Some(CatalogStamp::File { modified: m.modified().ok(), len: m.len(), inode }))
    }

    /// The catalog as it is now, read from its home.
    pub(super) fn load_catalog(&self) -> anyhow::Result<Catalog> {
        match &self.shared {
            Some(shared) => Ok(shared.load()?.0),
            None => Catalog::load(&self.dir),
        }
    }

    /// Re-reads the catalog when another process (the CLI, another node) changed it.
    pub fn refresh(&self) -> anyhow::Result<()> {
        self.refresh_with(false)
    }

    /// [`Self::refresh`], asking the shared catalog's version whatever the time (a search is
    /// about to name videos).
    pub fn refresh_now(&self) -> anyhow::Result<()> {
        self.refresh_with(true)
    }

    fn refresh_with(&self, fresh: bool) -> anyhow::Result<()> {
        let stamp = self.catalog_stamp(fresh)?;
        {
            let loaded = self.loaded.read().map_err(|_| anyhow::anyhow!("library lock poisoned"))?;
            if loaded.stamp.is_some() && loaded.stamp == stamp {
                return Ok(());
            }
        }
        let catalog = self.load_catalog()?;
        if let Some(m) = &self.milvus {
            // What was just published may be younger than a bounded search's grace time.
            m.client().catalog_changed();
        }
        let mut loaded = self.loaded.write().map_err(|_| anyhow::anyhow!("library lock poisoned"))?;
        let ids: Vec<u32> = catalog.videos.iter().map(|v| v.id).collect();
        self.entries.follow(&ids);
        *loaded = Loaded { catalog, stamp };
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

    /// Number of indexed entries (every tier) over all videos.
    pub fn frame_count(&self) -> u64 {
        let _ = self.refresh();
        self.entries.len()
    }

    /// Bytes of all segment files.
    pub fn index_bytes(&self) -> u64 {
        self.entries.bytes()
    }

    /// Where the hashes live, for the searches (see [`entries`]).
    pub fn entries(&self) -> &dyn EntryIndex {
        self.entries.as_ref()
    }

    /// The backend the hashes live in (`local` or the Milvus address).
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// The Milvus index, when the hashes live there.
    pub fn milvus(&self) -> Option<&Arc<MilvusIndex>> {
        self.milvus.as_ref()
    }

    /// Whether the index can answer searches now: always for the embedded one, a round trip
    /// for Milvus (the readiness probe).
    pub fn check_entries(&self) -> Result<(), IndexError> {
        match &self.milvus {
            Some(m) => m.check_ready(),
            None => Ok(()),
        }
    }

    /// Whether the Library engine is offered: it holds entries, or its hashes live in an
    /// external index and the catalog lists videos (while that index is down the engine
    /// stays offered, and a search answers that the index is unavailable). Asked on every
    /// identification and page: with an external index only the catalog is read, never the
    /// server, so a server that hangs cannot hold the request.
    pub fn serves(&self) -> bool {
        if self.milvus.is_some() { !self.is_empty() } else { self.frame_count() > 0 }
    }

    pub fn is_empty(&self) -> bool {
        let _ = self.refresh();
        self.loaded.read().map(|l| l.catalog.videos.is_empty()).unwrap_or(true)
    }

    /// Source files of videos whose segment is missing or in an older format (they need
    /// re-indexing: `add` does it even though the files did not change).
    pub fn stale_files(&self) -> Vec<PathBuf> {
        self.list().into_iter().filter(|v| v.size > 0 && !self.entries.holds_current(v.id)).map(|v| v.path).collect()
    }

    /// Serialises writers across processes (CLI and server) with an OS file lock.
    fn write_lock(&self) -> anyhow::Result<File> {
        let file = File::options().create(true).truncate(false).write(true).open(self.dir.join(".lock"))?;
        file.lock()?;
        Ok(file)
    }

    /// Loads the catalog, lets `change` edit it, saves it: in the folder under the write
    /// lock; in the shared catalog from the version read (`change` runs again when another
    /// node changed it in between, so it must only edit what it is given).
    pub(super) fn update_catalog<T>(
        &self,
        mut change: impl FnMut(&mut Catalog) -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        let out = match &self.shared {
            Some(shared) => shared.update(change)?,
            None => {
                let _lock = self.write_lock()?;
                let mut catalog = Catalog::load(&self.dir)?;
                let out = change(&mut catalog)?;
                catalog.save(&self.dir)?;
                out
            }
        };
        if let Ok(mut loaded) = self.loaded.write() {
            loaded.stamp = None;
        }
        self.refresh_now()?;
        Ok(out)
    }

    /// The shared catalog, when the catalog lives in the database.
    pub(super) fn shared(&self) -> Option<&SharedCatalog> {
        self.shared.as_deref()
    }

    /// Copies the landmark files this folder holds of `videos` into the shared catalog (a
    /// catalog moving into the database).
    pub(super) fn share_sounds(&self, shared: &SharedCatalog, videos: &[VideoRecord]) -> anyhow::Result<()> {
        for v in videos.iter().filter(|v| v.audio_landmarks > 0) {
            if let Ok(bytes) = fs::read(audio::landmarks_path(&self.dir, v.id)) {
                shared.put_sound(v.id, bytes)?;
            }
        }
        Ok(())
    }

    /// The database a migration moves the catalog into (see [`migrate`]).
    pub(super) fn database(&self) -> Option<&CatalogDatabase> {
        self.database.as_ref()
    }

    /// The path of a video's landmark file, fetched from the shared catalog into this
    /// node's folder first when another node indexed the video.
    pub(super) fn landmarks_file(&self, id: u32) -> PathBuf {
        let path = audio::landmarks_path(&self.dir, id);
        if let Some(shared) = &self.shared
            && !path.exists()
        {
            match shared.sound(id) {
                Ok(Some(bytes)) => {
                    if let Err(e) = write_atomically(&path, &bytes) {
                        tracing::warn!("library: cannot keep video {id}'s landmarks in {}: {e}", path.display());
                    }
                }
                Ok(None) => {}
                Err(e) => tracing::warn!("library: cannot read video {id}'s landmarks from the database: {e:#}"),
            }
        }
        path
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
            self.entries.remove(v.id)?;
            let _ = fs::remove_file(audio::landmarks_path(&self.dir, v.id));
        }
        Ok(removed)
    }

    /// Replaces a video's title, year, season and episode (the admin's edit).
    pub fn set_meta(&self, id: u32, mut meta: VideoMeta) -> anyhow::Result<VideoRecord> {
        meta.source = "admin".into();
        self.update_catalog(|c| {
            let v = c.videos.iter_mut().find(|v| v.id == id).context("no such video in the library")?;
            v.meta = meta.clone();
            Ok(v.clone())
        })
    }

    /// The catalog records by id, after a look at whether another process changed them.
    pub(super) fn videos(&self) -> HashMap<u32, VideoRecord> {
        let _ = self.refresh_now();
        match self.loaded.read() {
            Ok(l) => l.catalog.videos.iter().map(|v| (v.id, v.clone())).collect(),
            Err(_) => HashMap::new(),
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

/// Writes `bytes` to `path` through a temporary name (readers never see half a file).
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("part");
    fs::write(&tmp, bytes)?;
    fs::rename(&tmp, path)
}
