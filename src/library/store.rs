//! The on-disk index: `catalog.json` (one record per video, small, rewritten atomically) and
//! one immutable segment file per video under `segments/`, memory-mapped for search.
//!
//! A segment is `header | first hash words (8 B each) | other hash words (24 B each) |
//! times (u32 ms each)`. The first
//! `n_frames` entries are whole-picture hashes of sampled frames; the `n_crop` entries after
//! them are hashes of centre crops of key frames (the tier for cropped screenshots). Writing a
//! new segment and then the catalog makes an interrupted run harmless: a segment without a
//! catalog record is ignored and rewritten next time.
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use memmap2::Mmap;
use serde::{Deserialize, Serialize};

use super::hash::Hash;

/// Version 2: hash bits ordered low frequencies first, frames sampled at 8 fps, one centre
/// window per crop-tier entry. Version-1 segments are not comparable and get re-indexed.
const MAGIC: &[u8; 8] = b"RFLIBSG2";
const OLD_MAGIC: &[u8; 8] = b"RFLIBSG1";
const HEADER: usize = 32;

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
}

impl Catalog {
    pub fn load(dir: &Path) -> anyhow::Result<Self> {
        let path = dir.join("catalog.json");
        match fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).with_context(|| format!("cannot read {}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self { version: 1, next_id: 1, videos: vec![] }),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// Writes to a temporary file and renames it over the old one (atomic on one file system).
    pub fn save(&self, dir: &Path) -> anyhow::Result<()> {
        let tmp = dir.join("catalog.json.tmp");
        fs::write(&tmp, serde_json::to_vec_pretty(self)?)?;
        fs::rename(&tmp, dir.join("catalog.json"))?;
        Ok(())
    }

    pub fn by_path(&self, path: &Path) -> Option<&VideoRecord> {
        self.videos.iter().find(|v| v.path == path)
    }
}

pub fn segment_path(dir: &Path, id: u32) -> PathBuf {
    dir.join("segments").join(format!("{id}.seg"))
}

/// Writes a segment file (through a temporary name, so readers never see half a file).
pub fn write_segment(dir: &Path, id: u32, frames: &[(Hash, u32)], crops: &[(Hash, u32)]) -> anyhow::Result<PathBuf> {
    let path = segment_path(dir, id);
    fs::create_dir_all(path.parent().unwrap_or(dir))?;
    let tmp = path.with_extension("seg.tmp");
    {
        let mut out = BufWriter::new(File::create(&tmp)?);
        let mut header = [0u8; HEADER];
        header[..8].copy_from_slice(MAGIC);
        header[8..12].copy_from_slice(&(frames.len() as u32).to_le_bytes());
        header[12..16].copy_from_slice(&(crops.len() as u32).to_le_bytes());
        header[16..20].copy_from_slice(&id.to_le_bytes());
        out.write_all(&header)?;
        // First words of every entry, then the other three words (see `search`).
        for (h, _) in frames.iter().chain(crops) {
            out.write_all(&h[0].to_le_bytes())?;
        }
        for (h, _) in frames.iter().chain(crops) {
            for w in &h[1..] {
                out.write_all(&w.to_le_bytes())?;
            }
        }
        for (_, t) in frames.iter().chain(crops) {
            out.write_all(&t.to_le_bytes())?;
        }
        out.flush()?;
        out.get_ref().sync_all()?;
    }
    fs::rename(&tmp, &path)?;
    Ok(path)
}

/// Whether the segment of video `id` exists and is in the current format (else the video
/// is re-indexed by the next `add`, even when the file did not change).
pub fn segment_is_current(dir: &Path, id: u32) -> bool {
    let mut magic = [0u8; 8];
    File::open(segment_path(dir, id)).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic)).is_ok()
        && &magic == MAGIC
}

/// A memory-mapped segment, ready to scan.
pub struct Segment {
    pub video_id: u32,
    pub n_frames: usize,
    pub n_crop: usize,
    map: Mmap,
}

impl Segment {
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        // Safety: segment files are written once under a temporary name and renamed into
        // place; nothing modifies a published segment (re-indexing writes a new file).
        let map = unsafe { Mmap::map(&file) }?;
        if map.len() >= HEADER && &map[..8] == OLD_MAGIC {
            bail!("{} was written by an older version of the index; it needs re-indexing", path.display());
        }
        if map.len() < HEADER || &map[..8] != MAGIC {
            bail!("{} is not a library segment", path.display());
        }
        let word = |at: usize| u32::from_le_bytes(map[at..at + 4].try_into().unwrap_or([0; 4])) as usize;
        let (n_frames, n_crop, video_id) = (word(8), word(12), word(16) as u32);
        let n = n_frames + n_crop;
        if map.len() != HEADER + n * 36 {
            bail!("{} is truncated", path.display());
        }
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::WillNeed);
        Ok(Self { video_id, n_frames, n_crop, map })
    }

    pub fn len(&self) -> usize {
        self.n_frames + self.n_crop
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first 64-bit word of every entry.
    pub fn first_words(&self) -> &[u64] {
        // The map is page-aligned and the header is 32 bytes, so words are 8-byte aligned.
        bytemuck::cast_slice(&self.map[HEADER..HEADER + self.len() * 8])
    }

    /// Words 1..4 of every entry.
    pub fn rest_words(&self) -> &[[u64; 3]] {
        let start = HEADER + self.len() * 8;
        bytemuck::cast_slice(&self.map[start..start + self.len() * 24])
    }

    pub fn hash(&self, i: usize) -> Hash {
        let r = self.rest_words()[i];
        [self.first_words()[i], r[0], r[1], r[2]]
    }

    pub fn times(&self) -> &[u32] {
        let start = HEADER + self.len() * 32;
        bytemuck::cast_slice(&self.map[start..start + self.len() * 4])
    }

    /// Whether entry `i` belongs to the crop tier.
    pub fn is_crop(&self, i: usize) -> bool {
        i >= self.n_frames
    }

    pub fn bytes(&self) -> usize {
        self.map.len()
    }
}
