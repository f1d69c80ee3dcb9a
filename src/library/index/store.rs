//! The on-disk index: `catalog.json` (one record per video, small, rewritten atomically) and
//! one immutable segment file per video under `segments/`, memory-mapped for search.
//!
//! A segment is `header | first hash words (8 B each) | other hash words (24 B each) |
//! times (u32 ms each) | static stretches (two u32 ms each)`. The first
//! `n_frames` entries are whole-picture hashes of sampled frames; the `n_crop` entries after
//! them are hashes of centre crops of key frames (the tier for cropped screenshots); the
//! `n_upper` entries after those are hashes of the upper part of key frames (the tier for
//! pictures whose lower part is covered by big subtitles or a player's controls), then the
//! column tier's windows and the deep-crop tier's middles (see [`Section`]). The static
//! stretches are the spans where the picture holds still (see [`crate::library::shot`]). Writing a
//! new segment and then the catalog makes an interrupted run harmless: a segment without a
//! catalog record is ignored and rewritten next time.
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use memmap2::Mmap;
use serde::{Deserialize, Serialize};

use crate::library::index::entries::{Section, VideoEntries};

/// Version 6 adds the deep-crop tier (its count in header bytes 32..36 of a 40-byte header, its
/// entries after the column tier's) to version 5. Version 5 adds the column tier (its count in header bytes 28..32, its entries after the
/// upper tier's) to version 4. Version 4 adds the static stretches (their count in header bytes 24..28, the stretches
/// after the times) to version 3, which added the upper tier (its count in header bytes
/// 20..24) to version 2 (hash bits ordered low frequencies first, one centre window per
/// crop-tier entry). Version-3 and version-2 segments are still searched (without stretches,
/// and for version 2 without the upper tier) but are not current, so the next `add`
/// re-indexes them. Version-1 segments are not comparable and get re-indexed before they are
/// searched.
const MAGIC: &[u8; 8] = b"RFLIBSG6";
const V5_MAGIC: &[u8; 8] = b"RFLIBSG5";
const V4_MAGIC: &[u8; 8] = b"RFLIBSG4";
const V3_MAGIC: &[u8; 8] = b"RFLIBSG3";
const V2_MAGIC: &[u8; 8] = b"RFLIBSG2";
const OLD_MAGIC: &[u8; 8] = b"RFLIBSG1";
/// The header's length from version 6 on (versions before it: [`OLD_HEADER`]); both keep the
/// hash words 8-byte aligned.
const HEADER: usize = 40;
const OLD_HEADER: usize = 32;

/// What the library knows about one video file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct VideoRecord {
    pub id: u32,
    /// Absolute path of the source file (never shown to visitors).
    pub path: PathBuf,
    pub size: u64,
    /// Modification time, seconds since the epoch.
    pub mtime: i64,
    /// SHA-256 of the size and the first and last 64 KiB, to notice changed files cheaply.
    pub partial_hash: String,
    pub meta: VideoMeta,
    pub duration: f64,
    pub frames: u32,
    pub crop_frames: u32,
    /// Entries of the upper tier (0 for videos indexed before it existed).
    #[serde(default)]
    pub upper_frames: u32,
    #[serde(default)]
    pub audio_landmarks: u32,
    pub indexed_at: String,
    /// Seconds of wall time the indexing took.
    pub index_seconds: f64,
}

/// Title, year, season and episode; from a `.nfo`, the file name, or the admin.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct VideoMeta {
    pub title: String,
    pub year: Option<i32>,
    /// The series name when this is an episode.
    pub show: Option<String>,
    pub season: Option<u32>,
    pub episode: Option<u32>,
    /// Where the metadata came from: `nfo`, `filename` or `admin`.
    pub source: String,
}

impl VideoMeta {
    pub fn is_tv(&self) -> bool {
        self.show.is_some() || self.season.is_some() || self.episode.is_some()
    }
    /// The name a person reads: the show for an episode, else the title.
    pub fn display_title(&self) -> &str {
        self.show.as_deref().unwrap_or(&self.title)
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Catalog {
    pub version: u32,
    pub next_id: u32,
    pub videos: Vec<VideoRecord>,
    /// Ids given to an ingest that has not published its video yet: its entries may be in
    /// the index already. One still here long after (its process died) is swept: its entries
    /// removed, the id dropped (`LibraryIndex::sweep_abandoned`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<Pending>,
}

/// An id an ingest holds, and since when (seconds since the epoch).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Pending {
    pub id: u32,
    pub since: i64,
}

impl Catalog {
    /// Reads `catalog.json`. A damaged catalog does not stop anyone: it is moved aside as
    /// `catalog.json.damaged-{time}` (kept for the operator), the log says so, and the last
    /// good copy (`catalog.json.bak`, written before every save) is used, else an empty
    /// catalog: the server starts and serves what it can; `library add` re-indexes.
    pub fn load(dir: &Path) -> anyhow::Result<Self> {
        let path = dir.join("catalog.json");
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::empty()),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        match serde_json::from_slice(&bytes) {
            Ok(c) => Ok(c),
            Err(e) => Ok(Self::recover(dir, &path, &e.to_string())),
        }
    }

    fn empty() -> Self {
        Self { version: 1, next_id: 1, videos: vec![], pending: vec![] }
    }

    fn recover(dir: &Path, path: &Path, why: &str) -> Self {
        let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let aside = dir.join(format!("catalog.json.damaged-{stamp}"));
        match fs::rename(path, &aside) {
            Ok(()) => tracing::error!(
                "library: {} is damaged ({why}); kept it as {} and carried on",
                path.display(),
                aside.display()
            ),
            Err(e) => {
                tracing::error!("library: {} is damaged ({why}) and could not be moved aside: {e}", path.display())
            }
        }
        let backup = dir.join("catalog.json.bak");
        match fs::read(&backup).ok().and_then(|b| serde_json::from_slice::<Self>(&b).ok()) {
            Some(c) => {
                tracing::warn!(
                    "library: using the last good catalog ({} videos) from {}",
                    c.videos.len(),
                    backup.display()
                );
                if let Err(e) = c.save(dir) {
                    tracing::error!("library: could not restore the catalog: {e:#}");
                }
                c
            }
            None => {
                tracing::warn!(
                    "library: no usable backup; starting with an empty catalog (`reelfind library add` re-indexes)"
                );
                Self::empty()
            }
        }
    }

    /// Writes to a temporary file, flushes it to disk, keeps the current catalog as
    /// `catalog.json.bak`, renames the new one into place and flushes the folder: after a
    /// crash or power cut the catalog is the old one or the new one, never half of either.
    pub fn save(&self, dir: &Path) -> anyhow::Result<()> {
        let path = dir.join("catalog.json");
        let tmp = dir.join("catalog.json.tmp");
        {
            let mut f = File::create(&tmp)?;
            f.write_all(&serde_json::to_vec_pretty(self)?)?;
            f.sync_all()?;
        }
        if path.exists() {
            // A hard link is instant and atomic; copy where links are not possible.
            let backup = dir.join("catalog.json.bak");
            let _ = fs::remove_file(&backup);
            if fs::hard_link(&path, &backup).is_err() {
                let _ = fs::copy(&path, &backup);
            }
        }
        fs::rename(&tmp, &path)?;
        sync_dir(dir);
        Ok(())
    }

    pub fn by_path(&self, path: &Path) -> Option<&VideoRecord> {
        self.videos.iter().find(|v| v.path == path)
    }
}

/// Flushes a folder's entries (a rename is durable only once its folder is).
pub fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// Writes the segment file `path` of video `id` (through a temporary name, so readers never
/// see half a file).
pub fn write_segment(path: &Path, id: u32, entries: &VideoEntries<'_>) -> anyhow::Result<()> {
    let &VideoEntries { frames, crops, uppers, columns, deeps, stills } = entries;
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let tmp = path.with_extension("seg.tmp");
    {
        let mut out = BufWriter::new(File::create(&tmp)?);
        let mut header = [0u8; HEADER];
        header[..8].copy_from_slice(MAGIC);
        header[8..12].copy_from_slice(&(frames.len() as u32).to_le_bytes());
        header[12..16].copy_from_slice(&(crops.len() as u32).to_le_bytes());
        header[16..20].copy_from_slice(&id.to_le_bytes());
        header[20..24].copy_from_slice(&(uppers.len() as u32).to_le_bytes());
        header[24..28].copy_from_slice(&(stills.len() as u32).to_le_bytes());
        header[28..32].copy_from_slice(&(columns.len() as u32).to_le_bytes());
        header[32..36].copy_from_slice(&(deeps.len() as u32).to_le_bytes());
        out.write_all(&header)?;
        let entries = || frames.iter().chain(crops).chain(uppers).chain(columns).chain(deeps);
        // First words of every entry, then the other three words (see `scan`).
        for (h, _) in entries() {
            out.write_all(&h[0].to_le_bytes())?;
        }
        for (h, _) in entries() {
            for w in &h[1..] {
                out.write_all(&w.to_le_bytes())?;
            }
        }
        for (_, t) in entries() {
            out.write_all(&t.to_le_bytes())?;
        }
        for t in stills.iter().flatten() {
            out.write_all(&t.to_le_bytes())?;
        }
        out.flush()?;
        out.get_ref().sync_all()?;
    }
    fs::rename(&tmp, path)?;
    sync_dir(dir);
    Ok(())
}

/// Whether the segment file `path` exists and is in the current format (else the video is
/// re-indexed by the next `add`, even when the file did not change).
pub fn segment_is_current(path: &Path) -> bool {
    let mut magic = [0u8; 8];
    File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic)).is_ok() && &magic == MAGIC
}

/// A memory-mapped segment, ready to scan.
pub struct Segment {
    pub video_id: u32,
    pub n_frames: usize,
    pub n_crop: usize,
    pub n_upper: usize,
    pub n_columns: usize,
    pub n_deep: usize,
    pub n_stills: usize,
    /// The header's length (by version).
    header: usize,
    map: Mmap,
}

impl Segment {
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        // Safety: segment files are written once under a temporary name and renamed into
        // place; nothing modifies a published segment (re-indexing writes a new file).
        let map = unsafe { Mmap::map(&file) }?;
        if map.len() >= OLD_HEADER && &map[..8] == OLD_MAGIC {
            bail!("{} was written by an older version of the index; it needs re-indexing", path.display());
        }
        let version = match map.get(..8) {
            Some(m) if m == MAGIC => 6,
            Some(m) if m == V5_MAGIC => 5,
            Some(m) if m == V4_MAGIC => 4,
            Some(m) if m == V3_MAGIC => 3,
            Some(m) if m == V2_MAGIC => 2,
            _ => bail!("{} is not a library segment", path.display()),
        };
        let header = if version >= 6 { HEADER } else { OLD_HEADER };
        if map.len() < header {
            bail!("{} is truncated", path.display());
        }
        let word = |at: usize| u32::from_le_bytes(map[at..at + 4].try_into().unwrap_or([0; 4])) as usize;
        let (n_frames, n_crop, video_id) = (word(8), word(12), word(16) as u32);
        let n_upper = if version >= 3 { word(20) } else { 0 };
        let n_stills = if version >= 4 { word(24) } else { 0 };
        let n_columns = if version >= 5 { word(28) } else { 0 };
        let n_deep = if version >= 6 { word(32) } else { 0 };
        let n = n_frames + n_crop + n_upper + n_columns + n_deep;
        if map.len() != header + n * 36 + n_stills * 8 {
            bail!("{} is truncated", path.display());
        }
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::WillNeed);
        Ok(Self { video_id, n_frames, n_crop, n_upper, n_columns, n_deep, n_stills, header, map })
    }

    pub fn len(&self) -> usize {
        self.n_frames + self.n_crop + self.n_upper + self.n_columns + self.n_deep
    }

    /// The entry range of one tier.
    pub fn range(&self, section: Section) -> std::ops::Range<usize> {
        match section {
            Section::Frames => 0..self.n_frames,
            Section::Crops => self.n_frames..self.n_frames + self.n_crop,
            Section::Upper => self.n_frames + self.n_crop..self.n_frames + self.n_crop + self.n_upper,
            Section::Columns => {
                let start = self.n_frames + self.n_crop + self.n_upper;
                start..start + self.n_columns
            }
            Section::Deep => self.len() - self.n_deep..self.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first 64-bit word of every entry.
    pub fn first_words(&self) -> &[u64] {
        // The map is page-aligned and the header 32 or 40 bytes, so words are 8-byte aligned.
        bytemuck::cast_slice(&self.map[self.header..self.header + self.len() * 8])
    }

    /// Words 1..4 of every entry.
    pub fn rest_words(&self) -> &[[u64; 3]] {
        let start = self.header + self.len() * 8;
        bytemuck::cast_slice(&self.map[start..start + self.len() * 24])
    }

    pub fn hash(&self, i: usize) -> crate::library::picture::hash::Hash {
        let r = self.rest_words()[i];
        [self.first_words()[i], r[0], r[1], r[2]]
    }

    pub fn times(&self) -> &[u32] {
        let start = self.header + self.len() * 32;
        bytemuck::cast_slice(&self.map[start..start + self.len() * 4])
    }

    /// The static stretches, `[from, to]` ms, in order (none in a segment older than version 4).
    pub fn stills(&self) -> &[[u32; 2]] {
        let start = self.header + self.len() * 36;
        bytemuck::cast_slice(&self.map[start..start + self.n_stills * 8])
    }

    pub fn bytes(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog(n: u32) -> Catalog {
        Catalog {
            version: 1,
            pending: vec![],
            next_id: n + 1,
            videos: (1..=n)
                .map(|id| VideoRecord {
                    id,
                    path: PathBuf::from(format!("/films/{id}.mkv")),
                    size: 1,
                    mtime: 0,
                    partial_hash: "h".into(),
                    meta: VideoMeta { title: format!("Film {id}"), ..Default::default() },
                    duration: 1.0,
                    frames: 1,
                    crop_frames: 0,
                    upper_frames: 0,
                    audio_landmarks: 0,
                    indexed_at: String::new(),
                    index_seconds: 0.0,
                })
                .collect(),
        }
    }

    #[test]
    fn a_segment_keeps_its_tiers_and_static_stretches_and_a_short_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let entry = |k: u64, ms: u32| ([k, k + 1, k + 2, k + 3], ms);
        let frames = [entry(1, 0), entry(5, 1000), entry(9, 2500)];
        let uppers = [entry(20, 40)];
        let stills = [[1000, 2400], [2500, 7000]];
        let columns = [entry(30, 0), entry(34, 0)];
        let deeps = [entry(40, 900)];
        let tiers = VideoEntries {
            frames: &frames,
            crops: &[],
            uppers: &uppers,
            columns: &columns,
            deeps: &deeps,
            stills: &stills,
        };
        let path = dir.path().join("7.seg");
        write_segment(&path, 7, &tiers).unwrap();
        let seg = Segment::open(&path).unwrap();
        assert_eq!(
            (seg.video_id, seg.n_frames, seg.n_crop, seg.n_upper, seg.n_columns, seg.n_deep),
            (7, 3, 0, 1, 2, 1)
        );
        assert_eq!(seg.hash(1), [5, 6, 7, 8]);
        assert_eq!(seg.times(), &[0, 1000, 2500, 40, 0, 0, 900]);
        assert_eq!(
            (seg.range(Section::Upper), seg.range(Section::Columns), seg.range(Section::Deep)),
            (3..4, 4..6, 6..7)
        );
        assert_eq!((seg.hash(5), seg.hash(6)), ([34, 35, 36, 37], [40, 41, 42, 43]));
        assert_eq!(seg.stills(), &stills);
        assert!(segment_is_current(&path));
        // Cut short by one stretch: not a segment to search.
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 8]).unwrap();
        assert!(Segment::open(&path).is_err());
    }

    #[test]
    fn a_damaged_catalog_is_kept_aside_and_the_last_good_one_serves() {
        let dir = tempfile::tempdir().unwrap();
        catalog(1).save(dir.path()).unwrap();
        catalog(2).save(dir.path()).unwrap();
        // Cut short, as by a full disk or a bad copy.
        let path = dir.path().join("catalog.json");
        let good = std::fs::read(&path).unwrap();
        std::fs::write(&path, &good[..good.len() / 2]).unwrap();
        let c = Catalog::load(dir.path()).unwrap();
        assert_eq!(c.videos.len(), 1, "the backup of the save before");
        let aside: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("catalog.json.damaged-"))
            .collect();
        assert_eq!(aside.len(), 1, "the damaged file is kept for the operator");
        assert_eq!(Catalog::load(dir.path()).unwrap().videos.len(), 1, "the restored catalog is on disk");

        // No backup at all: empty, not an error.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("catalog.json"), b"{\"version\": 1, \"vid").unwrap();
        assert!(Catalog::load(dir.path()).unwrap().videos.is_empty());
    }
}
