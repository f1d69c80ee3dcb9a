//! `reelfind library migrate --to <backend>`: copies every video's entries from the index the
//! library is served from (`REELFIND_LIBRARY_INDEX`) to another one: the embedded segment
//! files to Milvus, and back. Nothing is decoded again: each video's timelines are read
//! through the seam and written whole with [`EntryIndex::put`], so the copy holds exactly
//! what the source did (the same hashes, moments and static stretches).
//!
//! Resumable: a video the destination already holds complete, in its current format and with
//! as many entries in every tier as the source, is skipped, so a migration cut short (a
//! killed process, Milvus gone away) is finished by running the command again. Writers are
//! kept out meanwhile by the library's write lock (a `library add` waits).
//!
//! The catalog goes with the hashes: to Milvus it moves into the database every node shares
//! (when the library knows its database), back to the embedded index into `catalog.json`,
//! each video's soundtrack landmarks along with it. It is written after the entries, so a
//! node reading the destination never lists a video whose entries are not there yet. A
//! database already holding another library's catalog is not overwritten. The operator then
//! points `REELFIND_LIBRARY_INDEX` at the destination.

use anyhow::Context;

use super::LibraryIndex;
use super::backend::Backend;
use super::entries::{EntryIndex, IndexError, Section, VideoEntries};
use super::shared::SharedCatalog;
use super::store::Catalog;
use crate::library::picture::hash::Hash;

/// What a migration did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MigrateReport {
    /// Videos written to the destination.
    pub copied: usize,
    /// Videos the destination already held complete (a run before this one copied them).
    pub already: usize,
    /// Videos the catalog lists but the source holds no entries of (they need `library add`).
    pub missing: Vec<u32>,
    /// Entries written.
    pub entries: u64,
    /// Where the catalog was written: `database` or `folder` (`None`: it stays where it was).
    pub catalog: Option<&'static str>,
}

/// One video's entries, read out of an index.
#[derive(Default)]
struct Owned {
    frames: Vec<(Hash, u32)>,
    crops: Vec<(Hash, u32)>,
    uppers: Vec<(Hash, u32)>,
    columns: Vec<(Hash, u32)>,
    deeps: Vec<(Hash, u32)>,
    stills: Vec<[u32; 2]>,
}

impl Owned {
    fn section(&self, section: Section) -> &[(Hash, u32)] {
        match section {
            Section::Frames => &self.frames,
            Section::Crops => &self.crops,
            Section::Upper => &self.uppers,
            Section::Columns => &self.columns,
            Section::Deep => &self.deeps,
        }
    }

    fn view(&self) -> VideoEntries<'_> {
        VideoEntries {
            frames: &self.frames,
            crops: &self.crops,
            uppers: &self.uppers,
            columns: &self.columns,
            deeps: &self.deeps,
            stills: &self.stills,
        }
    }

    fn len(&self) -> u64 {
        (self.frames.len() + self.crops.len() + self.uppers.len() + self.columns.len() + self.deeps.len()) as u64
    }
}

/// `video`'s entries in `index`; `None` when it holds none of them.
fn read(index: &dyn EntryIndex, video: u32) -> Result<Option<Owned>, IndexError> {
    let mut out = Owned::default();
    let mut any = false;
    for section in Section::ALL {
        let Some(t) = index.timeline(video, section)? else { continue };
        any = true;
        let list: Vec<(Hash, u32)> = (0..t.len()).map(|i| (t.hash(i), t.times()[i])).collect();
        if out.stills.is_empty() {
            out.stills = t.stills().to_vec();
        }
        match section {
            Section::Frames => out.frames = list,
            Section::Crops => out.crops = list,
            Section::Upper => out.uppers = list,
            Section::Columns => out.columns = list,
            Section::Deep => out.deeps = list,
        }
    }
    Ok(any.then_some(out))
}

/// Whether `index` already holds `video` complete: current, and as many entries in every tier
/// as `source`.
fn holds(index: &dyn EntryIndex, video: u32, source: &Owned) -> Result<bool, IndexError> {
    if !index.holds_current(video) {
        return Ok(false);
    }
    for section in Section::ALL {
        let have = index.timeline(video, section)?.map_or(0, |t| t.len());
        if have != source.section(section).len() {
            return Ok(false);
        }
    }
    Ok(true)
}

impl LibraryIndex {
    /// Copies every listed video's entries to `to` (see the module's doc). `progress` is told
    /// (videos done, videos in all, the title at hand) before each video and at the end.
    pub fn migrate_to(
        &self,
        to: &Backend,
        mut progress: impl FnMut(usize, usize, &str),
    ) -> anyhow::Result<MigrateReport> {
        anyhow::ensure!(to != &self.backend, "the library is already served from {to}");
        let _lock = self.write_lock()?;
        let dest = to.open(&self.dir)?;
        let catalog = self.load_catalog()?;
        let dest_catalog = match (&dest.milvus, self.database()) {
            (Some(_), Some(db)) if self.shared().is_none() => {
                let shared = SharedCatalog::open(db)?;
                refuse_another_library(&shared.load()?.0, &catalog)?;
                Some(shared)
            }
            _ => None,
        };
        let videos = catalog.videos.clone();
        let ids: Vec<u32> = videos.iter().map(|v| v.id).collect();
        dest.entries.follow(&ids);
        let mut report = MigrateReport::default();
        for (done, v) in videos.iter().enumerate() {
            progress(done, videos.len(), v.meta.display_title());
            let Some(source) = read(self.entries.as_ref(), v.id)? else {
                report.missing.push(v.id);
                continue;
            };
            if holds(dest.entries.as_ref(), v.id, &source)? {
                report.already += 1;
                continue;
            }
            dest.entries.put(v.id, &source.view())?;
            report.copied += 1;
            report.entries += source.len();
        }
        progress(videos.len(), videos.len(), "");
        if let Some(m) = &dest.milvus {
            // Seal what was written and give the collection the index its size calls for.
            m.fit_index()?;
        }
        if let Some(shared) = dest_catalog {
            self.share_sounds(&shared, &videos)?;
            shared.replace(&catalog)?;
            report.catalog = Some("database");
        } else if self.shared().is_some() && dest.milvus.is_none() {
            // Back to the folder: the landmark files this node has not fetched yet, then
            // `catalog.json`.
            for v in videos.iter().filter(|v| v.audio_landmarks > 0) {
                self.landmarks_file(v.id);
            }
            catalog.save(&self.dir).context("cannot write catalog.json")?;
            report.catalog = Some("folder");
        }
        Ok(report)
    }
}

/// A database holding a catalog whose videos are not this library's (another library was
/// moved there, or added to there) is not overwritten.
fn refuse_another_library(there: &Catalog, here: &Catalog) -> anyhow::Result<()> {
    for v in &there.videos {
        if !here.videos.iter().any(|h| h.id == v.id && h.path == v.path) {
            anyhow::bail!(
                "the database already holds another library's catalog (video {} is {}); \
                 remove its videos there first, or point REELFIND_LIBRARY_INDEX at that library",
                v.id,
                v.path.display()
            );
        }
    }
    Ok(())
}
