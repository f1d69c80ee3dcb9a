//! The Library engine: the operator's own video files, indexed offline, searched by a
//! screenshot or a clip to the exact title, episode and second.
//!
//! - [`audio`]: landmark fingerprints of the soundtrack, the audio tier for clips.
//! - [`hash`]: the 256-bit DCT frame hash (PDQ-like), mirror twin, border removal.
//! - [`frames`]: ffmpeg/ffprobe decoding, previews, soundtrack.
//! - [`store`]: `catalog.json` plus one memory-mapped segment file per video.
//! - [`search`]: the all-cores scan.
//! - [`meta`]: title/year/season/episode from `.nfo` files and names.
//! - [`preview`]: signed, expiring preview links.
//!
//! [`LibraryIndex`] ties them together; every method blocks (CPU and subprocess work), so
//! async callers wrap it in `spawn_blocking`.
pub mod audio;
pub mod cli;
pub mod demo;
pub mod edit;
pub mod engine;
pub mod frames;
pub mod hash;
pub mod meta;
pub mod preview;
pub mod search;
pub mod store;

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Instant, SystemTime};

use anyhow::{Context, bail};
use image::DynamicImage;
use serde::Serialize;
use sha2::{Digest, Sha256};

use self::hash::{FrameHash, GrayView, Hash, MIN_QUALITY, hamming};
use self::store::{Catalog, Segment, VideoMeta, VideoRecord};

/// Extensions `library add` picks up when walking folders.
pub const VIDEO_EXTENSIONS: &[&str] =
    &["mp4", "m4v", "mov", "mkv", "webm", "avi", "flv", "wmv", "mpg", "mpeg", "ts", "m2ts", "ogv", "3gp"];

/// A still is a match when its best hash is at most this many bits (of 256) away.
pub const STILL_ACCEPT: u32 = 70;
/// Clip frames vote with hits up to this distance; the vote, not one frame, decides.
pub const CLIP_CANDIDATE: u32 = 72;
/// A decoded frame is kept when its hash is more than this many bits from the last kept
/// frame: every decoded frame is then this close to an indexed one, however fast the camera
/// moves, and a static shot costs one entry a [`MAX_GAP`].
const KEEP_BITS: u32 = 16;
/// However static the picture, a frame is kept at least this often (seconds), so any moment
/// is within half of it of an indexed frame.
const MAX_GAP: f64 = 1.0;
/// The cropped-screenshot tier keeps the centre window ([`hash::CROP_SCALE`]) of decoded
/// frames by the same rule with this many bits (coarser: the tier is a fallback).
const CROP_KEEP_BITS: u32 = 24;
/// A still whose best whole-frame hit is further than this also tries the crop tier (a
/// slightly cropped picture can still pass for the whole frame of a similar moment).
const CROP_TRIGGER: u32 = 40;
/// A crop-tier hit is a match at most this many bits away. Stricter than [`STILL_ACCEPT`]:
/// a cropped query is tried under dozens of offsets, and each is a chance for a false accept.
pub const CROP_ACCEPT: u32 = 62;

/// One answer of the library: where in which video the query comes from.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LibraryMatch {
    pub video_id: u32,
    pub title: String,
    pub year: Option<i32>,
    /// `movie` or `tv`.
    pub media_type: &'static str,
    pub show: Option<String>,
    pub season: Option<u32>,
    pub episode: Option<u32>,
    /// File name only; the server's folders are nobody's business.
    pub file: String,
    /// Seconds into the video: the span the query covers and the best single moment.
    pub from: f64,
    pub at: f64,
    pub to: f64,
    /// 0..1; 0.5 is the decision threshold, 1.0 an identical picture.
    pub similarity: f32,
    /// Hamming distance of the best frame (0..256).
    pub distance: u32,
    /// Which tier decided: `frame`, `crop` or `clip`.
    pub tier: &'static str,
    pub mirrored: bool,
    /// Relative URL of a preview picture cut at `at`; expires (see [`preview`]).
    pub preview_url: String,
}

/// The library's answer to one query: a match, or none and why.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchAnswer {
    #[serde(rename = "match")]
    pub best: Option<LibraryMatch>,
    /// Why there is no match, in words for a person.
    pub reason: Option<String>,
    pub frames_searched: u64,
    pub videos: usize,
    pub elapsed_ms: f64,
}

impl SearchAnswer {
    fn none(reason: impl Into<String>, frames: u64, videos: usize, started: Instant) -> Self {
        Self {
            best: None,
            reason: Some(reason.into()),
            frames_searched: frames,
            videos,
            elapsed_ms: started.elapsed().as_secs_f64() * 1e3,
        }
    }
}

/// What happened to one file during `add`.
#[derive(Clone, Debug, PartialEq)]
pub enum AddOutcome {
    Added { id: u32, frames: u32 },
    Reindexed { id: u32, frames: u32 },
    Unchanged,
    Failed(String),
}

#[derive(Clone, Debug, Default)]
pub struct AddReport {
    pub added: usize,
    pub reindexed: usize,
    pub unchanged: usize,
    pub failed: Vec<(PathBuf, String)>,
    /// Seconds of video indexed and the wall time it took.
    pub video_seconds: f64,
    pub wall_seconds: f64,
}

/// Hooks for a progress bar (CLI) or log lines (server). All optional.
pub trait Progress {
    fn start(&mut self, _files: usize, _total_seconds: f64) {}
    fn file(&mut self, _path: &Path) {}
    /// `seconds` of video just got decoded.
    fn advance(&mut self, _seconds: f64) {}
    fn outcome(&mut self, _path: &Path, _outcome: &AddOutcome) {}
}

/// Progress that goes nowhere.
pub struct Quiet;
impl Progress for Quiet {}

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
    dir: PathBuf,
    loaded: RwLock<Loaded>,
    signer: preview::Signer,
}

impl LibraryIndex {
    /// Opens (creating if needed) the library in `dir`.
    pub fn open(dir: impl Into<PathBuf>) -> anyhow::Result<Self> {
        let dir = dir.into();
        fs::create_dir_all(dir.join("segments")).with_context(|| format!("cannot create {}", dir.display()))?;
        let signer = preview::Signer::load_or_create(&dir.join("preview.key"))?;
        let index = Self {
            dir,
            loaded: RwLock::new(Loaded { catalog: Catalog::default(), segments: HashMap::new(), stamp: None }),
            signer,
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
    fn update_catalog<T>(&self, change: impl FnOnce(&mut Catalog) -> anyhow::Result<T>) -> anyhow::Result<T> {
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

    /// Expands folders recursively into the video files they hold (sorted, canonical paths).
    pub fn collect_files(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<(PathBuf, String)>) {
        let mut files = Vec::new();
        let mut missing = Vec::new();
        let mut stack: Vec<PathBuf> = paths.to_vec();
        while let Some(p) = stack.pop() {
            match fs::metadata(&p) {
                Ok(m) if m.is_dir() => match fs::read_dir(&p) {
                    Ok(entries) => stack.extend(entries.flatten().map(|e| e.path())),
                    Err(e) => missing.push((p, format!("cannot read folder: {e}"))),
                },
                Ok(_) => {
                    let explicit = paths.contains(&p);
                    let ext = p.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
                    if VIDEO_EXTENSIONS.contains(&ext.as_str()) || explicit {
                        files.push(fs::canonicalize(&p).unwrap_or(p));
                    }
                }
                Err(e) => missing.push((p, format!("not found: {e}"))),
            }
        }
        files.sort();
        files.dedup();
        (files, missing)
    }

    /// Indexes files and folders. Unchanged files are skipped, changed ones re-indexed, and a
    /// file that cannot be read is reported in the result without stopping the run.
    pub fn add_paths(&self, paths: &[PathBuf], progress: &mut dyn Progress) -> AddReport {
        let started = Instant::now();
        let (files, missing) = Self::collect_files(paths);
        let mut report = AddReport { failed: missing, ..Default::default() };
        let _ = self.refresh();
        let total: f64 = files.iter().filter_map(|f| frames::probe(f).ok()).map(|p| p.duration).sum();
        progress.start(files.len(), total);
        for file in files {
            progress.file(&file);
            let outcome = match self.add_video(&file, None, progress) {
                Ok(o) => o,
                Err(e) => AddOutcome::Failed(format!("{e:#}")),
            };
            match &outcome {
                AddOutcome::Added { .. } => report.added += 1,
                AddOutcome::Reindexed { .. } => report.reindexed += 1,
                AddOutcome::Unchanged => report.unchanged += 1,
                AddOutcome::Failed(msg) => report.failed.push((file.clone(), msg.clone())),
            }
            if matches!(outcome, AddOutcome::Added { .. } | AddOutcome::Reindexed { .. })
                && let Some(v) = self.list().into_iter().find(|v| v.path == file)
            {
                report.video_seconds += v.duration;
            }
            progress.outcome(&file, &outcome);
        }
        report.wall_seconds = started.elapsed().as_secs_f64();
        report
    }

    /// Indexes one video file; `meta` overrides what the `.nfo` or the name would say.
    pub fn add_video(
        &self,
        path: &Path,
        meta: Option<VideoMeta>,
        progress: &mut dyn Progress,
    ) -> anyhow::Result<AddOutcome> {
        let path = fs::canonicalize(path).with_context(|| format!("not found: {}", path.display()))?;
        let stat = fs::metadata(&path)?;
        let size = stat.len();
        let mtime = stat
            .modified()
            .ok()
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs() as i64);
        let existing = Catalog::load(&self.dir)?.by_path(&path).cloned();
        let mut partial = None;
        if let Some(old) = &existing {
            let current = store::segment_is_current(&self.dir, old.id);
            if old.size == size && old.mtime == mtime && meta.is_none() && current {
                return Ok(AddOutcome::Unchanged);
            }
            let hash = partial_hash(&path, size)?;
            if old.size == size && old.partial_hash == hash && meta.is_none() && current {
                // Touched but not changed: remember the new time and move on.
                self.update_catalog(|c| {
                    if let Some(v) = c.videos.iter_mut().find(|v| v.id == old.id) {
                        v.mtime = mtime;
                    }
                    Ok(())
                })?;
                return Ok(AddOutcome::Unchanged);
            }
            partial = Some(hash);
        }
        let partial = match partial {
            Some(h) => h,
            None => partial_hash(&path, size)?,
        };
        let started = Instant::now();
        let probe = frames::probe(&path)?;
        // The soundtrack is fingerprinted on its own thread while the picture decodes.
        let (fingerprints, landmarks) = std::thread::scope(|scope| {
            let sound = scope.spawn(|| audio_landmarks(&path, &probe));
            let picture = fingerprint_video(&path, &probe, progress);
            (picture, sound.join().unwrap_or_default())
        });
        let fingerprints = fingerprints?;
        let meta = meta
            .or_else(|| existing.as_ref().filter(|e| e.meta.source == "admin").map(|e| e.meta.clone()))
            .unwrap_or_else(|| meta::for_file(&path));
        // Reserve an id, write the segment, then publish it in the catalog.
        let id = self.update_catalog(|c| {
            let id = c.next_id.max(1);
            c.next_id = id + 1;
            Ok(id)
        })?;
        store::write_segment(&self.dir, id, &fingerprints.frames, &fingerprints.crops)?;
        if !landmarks.is_empty() {
            audio::write_landmarks(&self.dir, id, &landmarks)?;
        }
        let record = VideoRecord {
            id,
            path: path.clone(),
            size,
            mtime,
            partial_hash: partial,
            meta,
            duration: probe.duration,
            frames: fingerprints.frames.len() as u32,
            crop_frames: fingerprints.crops.len() as u32,
            audio_landmarks: landmarks.len() as u32,
            indexed_at: chrono::Utc::now().to_rfc3339(),
            index_seconds: started.elapsed().as_secs_f64(),
        };
        let replaced = self.update_catalog(|c| {
            let old: Vec<u32> = c.videos.iter().filter(|v| v.path == path).map(|v| v.id).collect();
            c.videos.retain(|v| v.path != path);
            c.videos.push(record.clone());
            Ok(old)
        })?;
        for old in &replaced {
            let _ = fs::remove_file(store::segment_path(&self.dir, *old));
            let _ = fs::remove_file(audio::landmarks_path(&self.dir, *old));
        }
        let frames = record.frames;
        Ok(if replaced.is_empty() { AddOutcome::Added { id, frames } } else { AddOutcome::Reindexed { id, frames } })
    }

    /// Registers ready-made entries as a video (the benchmark pads the index with these).
    #[doc(hidden)]
    pub fn add_raw(
        &self,
        meta: VideoMeta,
        frames: &[(Hash, u32)],
        crops: &[(Hash, u32)],
        duration: f64,
    ) -> anyhow::Result<u32> {
        let id = self.update_catalog(|c| {
            let id = c.next_id.max(1);
            c.next_id = id + 1;
            Ok(id)
        })?;
        store::write_segment(&self.dir, id, frames, crops)?;
        self.update_catalog(|c| {
            c.videos.push(VideoRecord {
                id,
                path: self.dir.join(format!("raw-{id}")),
                size: 0,
                mtime: 0,
                partial_hash: String::new(),
                meta,
                duration,
                frames: frames.len() as u32,
                crop_frames: crops.len() as u32,
                audio_landmarks: 0,
                indexed_at: chrono::Utc::now().to_rfc3339(),
                index_seconds: 0.0,
            });
            Ok(())
        })?;
        Ok(id)
    }

    fn snapshot(&self) -> (Vec<Arc<Segment>>, HashMap<u32, VideoRecord>) {
        let _ = self.refresh();
        match self.loaded.read() {
            Ok(l) => {
                (l.segments.values().cloned().collect(), l.catalog.videos.iter().map(|v| (v.id, v.clone())).collect())
            }
            Err(_) => (vec![], HashMap::new()),
        }
    }

    /// Searches one still picture (a screenshot or a photo of a screen).
    pub fn search_image(&self, image: &DynamicImage) -> SearchAnswer {
        let started = Instant::now();
        let (segments, videos) = self.snapshot();
        let total: u64 = segments.iter().map(|s| s.len() as u64).sum();
        if segments.is_empty() {
            return SearchAnswer::none("The library is empty: no video has been indexed yet.", 0, 0, started);
        }
        let (hypotheses, view) = hash_image_hypotheses_and_view(image);
        if hypotheses[0].quality < MIN_QUALITY {
            return SearchAnswer::none(
                "The picture is too dark or too flat to match against the library.",
                total,
                videos.len(),
                started,
            );
        }
        // Even query indexes are pictures as given, odd ones their mirror.
        let queries: Vec<Hash> = hypotheses.iter().flat_map(|f| [f.hash, f.mirror]).collect();
        let refs: Vec<&Segment> = segments.iter().map(|s| s.as_ref()).collect();
        let hits = search::scan(&refs, search::Section::Frames, &queries, STILL_ACCEPT, search::PREFILTER, 64);
        let mut best = hits.first().copied();
        if best.is_none_or(|b| b.dist as u32 > CROP_TRIGGER) {
            // Second tier, when the whole picture found nothing close: the picture may be a
            // crop; look for the indexed centre windows inside it. The better similarity wins.
            let side = frames::FRAME_SIDE;
            let crops = hash::crop_query_hashes(GrayView { width: side, height: side, pixels: &view });
            let queries: Vec<Hash> = crops.iter().flat_map(|f| [f.hash, f.mirror]).collect();
            let crop_hits =
                search::scan(&refs, search::Section::Crops, &queries, CROP_ACCEPT, search::PREFILTER_MANY, 1);
            if let Some(c) = crop_hits.first()
                && best.is_none_or(|b| similarity(c.dist as u32, CROP_ACCEPT) > similarity(b.dist as u32, STILL_ACCEPT))
            {
                best = Some(*c);
            }
        }
        let Some(best) = best.as_ref() else {
            return SearchAnswer::none("No match in the library.", total, videos.len(), started);
        };
        let seg = refs[best.segment as usize];
        let Some(video) = videos.get(&seg.video_id) else {
            return SearchAnswer::none("No match in the library.", total, videos.len(), started);
        };
        let entry = best.entry as usize;
        let at = seg.times()[entry] as f64 / 1000.0;
        let main_times = &seg.times()[..seg.n_frames];
        // The kept frame stands for the near-duplicates up to the next kept frame.
        let (from, to) = if seg.is_crop(entry) {
            (at, at)
        } else {
            let next = main_times.get(entry + 1).map_or(video.duration, |t| *t as f64 / 1000.0);
            (at, (next - 1.0 / frames::INDEX_FPS as f64).max(at))
        };
        let (tier, accept) = if seg.is_crop(entry) { ("crop", CROP_ACCEPT) } else { ("frame", STILL_ACCEPT) };
        let m = self.make_match(video, from, at, to, best.dist as u32, accept, tier, best.query % 2 == 1);
        SearchAnswer {
            best: Some(m),
            reason: None,
            frames_searched: total,
            videos: videos.len(),
            elapsed_ms: started.elapsed().as_secs_f64() * 1e3,
        }
    }

    /// The nearest indexed whole-frame entry to a picture at any distance:
    /// `(video id, seconds, distance, word-0 distance)`. For calibration and the benchmark;
    /// answers never use it.
    #[doc(hidden)]
    pub fn nearest(&self, image: &DynamicImage) -> Option<(u32, f64, u32, u32)> {
        let (segments, _) = self.snapshot();
        let queries: Vec<Hash> = hash_image_hypotheses(image).iter().flat_map(|f| [f.hash, f.mirror]).collect();
        let refs: Vec<&Segment> = segments.iter().map(|s| s.as_ref()).collect();
        let (hit, d0) = *search::scan_exhaustive(&refs, &queries, 1).first()?;
        let seg = refs[hit.segment as usize];
        Some((seg.video_id, seg.times()[hit.entry as usize] as f64 / 1000.0, hit.dist as u32, d0))
    }

    /// How many whole-frame entries pass the scan's first stage (word 0 within
    /// [`search::PREFILTER`] of any query hash of `image`), and how many were looked at. For
    /// the benchmark: the second stage's cost depends on this share on real footage.
    #[doc(hidden)]
    pub fn first_stage_passes(&self, image: &DynamicImage) -> (u64, u64) {
        let (segments, _) = self.snapshot();
        let queries: Vec<u64> = hash_image_hypotheses(image).iter().flat_map(|f| [f.hash[0], f.mirror[0]]).collect();
        let (mut passed, mut scanned) = (0, 0);
        for seg in &segments {
            for &w in &seg.first_words()[..seg.n_frames] {
                scanned += 1;
                if queries.iter().any(|q| (w ^ q).count_ones() <= search::PREFILTER) {
                    passed += 1;
                }
            }
        }
        (passed, scanned)
    }

    /// Searches a short clip: every sampled frame looks for near hashes, and the hits vote
    /// for an offset between clip time and video time; the offset most frames agree on wins.
    /// When the whole frames agree on nothing, the clip may be cropped: the crop tier is
    /// searched the same way with each frame's crop hypotheses.
    pub fn search_clip(&self, path: &Path) -> anyhow::Result<SearchAnswer> {
        let started = Instant::now();
        let (segments, videos) = self.snapshot();
        let total: u64 = segments.iter().map(|s| s.len() as u64).sum();
        if segments.is_empty() {
            return Ok(SearchAnswer::none("The library is empty: no video has been indexed yet.", 0, 0, started));
        }
        let probe = frames::probe(path)?;
        let mut query: Vec<(f64, Vec<FrameHash>)> = Vec::new();
        let mut pictures: Vec<Vec<u8>> = Vec::new();
        frames::decode_frames(path, frames::CLIP_FPS, |t, px| {
            let view = GrayView { width: frames::FRAME_SIDE, height: frames::FRAME_SIDE, pixels: px };
            let hypotheses = hash::query_hashes(view);
            if hypotheses[0].quality >= MIN_QUALITY {
                query.push((t, hypotheses));
                pictures.push(px.to_vec());
            }
        })?;
        if query.is_empty() {
            return Ok(SearchAnswer::none(
                "The clip is too dark or too flat to match against the library.",
                total,
                videos.len(),
                started,
            ));
        }
        let refs: Vec<&Segment> = segments.iter().map(|s| s.as_ref()).collect();
        let times: Vec<f64> = query.iter().map(|(t, _)| *t).collect();
        let per_frame: Vec<Vec<FrameHash>> = query.into_iter().map(|(_, h)| h).collect();
        let mut found = clip_vote(&refs, search::Section::Frames, &per_frame, &times, CLIP_CANDIDATE, STILL_ACCEPT);
        let mut accept = STILL_ACCEPT;
        if found.is_none() {
            let side = frames::FRAME_SIDE;
            let crops: Vec<Vec<FrameHash>> = pictures
                .iter()
                .map(|px| hash::crop_query_hashes(GrayView { width: side, height: side, pixels: px }))
                .collect();
            found = clip_vote(&refs, search::Section::Crops, &crops, &times, CROP_ACCEPT, CROP_ACCEPT);
            accept = CROP_ACCEPT;
        }
        let Some(vote) = found else {
            return Ok(SearchAnswer::none("No match in the library.", total, videos.len(), started));
        };
        let seg = refs[vote.segment];
        let Some(video) = videos.get(&seg.video_id) else {
            return Ok(SearchAnswer::none("No match in the library.", total, videos.len(), started));
        };
        let from = (vote.offset as f64 / frames::CLIP_FPS as f64).max(0.0);
        let to = (from + probe.duration).min(video.duration);
        let at = (from + times[vote.best_frame]).min(video.duration);
        // Agreement of many frames is stronger evidence than one frame's distance.
        let share = vote.support as f64 / times.len() as f64;
        let effective = (vote.mean * (1.0 - 0.3 * share)).round() as u32;
        let m = self.make_match(video, from, at, to, effective, accept, "clip", vote.mirrored);
        Ok(SearchAnswer {
            best: Some(m),
            reason: None,
            frames_searched: total,
            videos: videos.len(),
            elapsed_ms: started.elapsed().as_secs_f64() * 1e3,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn make_match(
        &self,
        video: &VideoRecord,
        from: f64,
        at: f64,
        to: f64,
        dist: u32,
        accept: u32,
        tier: &'static str,
        mirrored: bool,
    ) -> LibraryMatch {
        let m = &video.meta;
        let round = |x: f64| (x * 100.0).round() / 100.0;
        LibraryMatch {
            video_id: video.id,
            title: m.display_title().to_owned(),
            year: m.year,
            media_type: if m.is_tv() { "tv" } else { "movie" },
            show: m.show.clone(),
            season: m.season,
            episode: m.episode,
            file: video.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            from: round(from),
            at: round(at),
            to: round(to),
            similarity: similarity(dist, accept),
            distance: dist,
            tier,
            mirrored,
            preview_url: format!("/api/library/preview/{}", self.signer.sign(video.id, (at * 1000.0) as u32)),
        }
    }

    /// Checks a preview token and cuts the JPEG it stands for.
    pub fn preview(&self, token: &str) -> Result<Vec<u8>, preview::PreviewError> {
        let (id, at_ms) = self.signer.verify(token)?;
        let video = self.get(id).ok_or(preview::PreviewError::Gone)?;
        frames::cut_preview(&video.path, at_ms as f64 / 1000.0, 480).map_err(|e| {
            tracing::warn!("library preview of {} failed: {e:#}", video.path.display());
            preview::PreviewError::Gone
        })
    }
}

/// The offset a clip's frames agree on.
struct ClipVote {
    segment: usize,
    mirrored: bool,
    /// Video time minus clip time, in sample periods.
    offset: i64,
    /// Frames voting for the offset or its neighbours within 0.5 s.
    support: usize,
    /// Their mean best distance.
    mean: f64,
    /// The clip frame closest to its indexed twin.
    best_frame: usize,
}

/// Scans `section` for every hypothesis of every clip frame (as given and mirrored), lets
/// each frame's hits within `candidate` bits vote for (segment, mirrored, offset), and returns
/// the offset with the most support if at least 30% of the frames (and 2) back it and their
/// mean distance is at most `accept`.
fn clip_vote(
    refs: &[&Segment],
    section: search::Section,
    per_frame: &[Vec<FrameHash>],
    times: &[f64],
    candidate: u32,
    accept: u32,
) -> Option<ClipVote> {
    // Every hypothesis of every frame, as given (even index) and mirrored (odd index).
    let mut hashes: Vec<Hash> = Vec::new();
    let mut frame_of: Vec<usize> = Vec::new();
    for (k, hypotheses) in per_frame.iter().enumerate() {
        for f in hypotheses {
            hashes.extend([f.hash, f.mirror]);
            frame_of.extend([k, k]);
        }
    }
    let prefilter = if hashes.len() > 16 { search::PREFILTER_MANY } else { search::PREFILTER };
    let hits = search::scan(refs, section, &hashes, candidate, prefilter, 64 * hashes.len());
    // Vote: (segment, mirrored, offset in clip frame periods) -> best distance per query frame.
    let mut votes: HashMap<(u32, bool, i64), HashMap<usize, u32>> = HashMap::new();
    for h in &hits {
        let seg = refs[h.segment as usize];
        let q = frame_of[h.query as usize];
        let t_ref = seg.times()[h.entry as usize] as f64 / 1000.0;
        let offset = ((t_ref - times[q]) * frames::CLIP_FPS as f64).round() as i64;
        let slot = votes.entry((h.segment, h.query % 2 == 1, offset)).or_default();
        let d = slot.entry(q).or_insert(u32::MAX);
        *d = (*d).min(h.dist as u32);
    }
    // A bin's support: frames voting for it or its neighbours within 0.5 s (static shots
    // blur offsets).
    let spread = (frames::CLIP_FPS / 2) as i64;
    let mut ranked: Vec<((u32, bool, i64), usize, usize, f64)> = Vec::new();
    for &(s, mirrored, off) in votes.keys() {
        let mut frames_near: HashMap<usize, u32> = HashMap::new();
        for o in off - spread..=off + spread {
            if let Some(v) = votes.get(&(s, mirrored, o)) {
                for (&q, &d) in v {
                    let e = frames_near.entry(q).or_insert(u32::MAX);
                    *e = (*e).min(d);
                }
            }
        }
        let support = frames_near.len();
        let mean = frames_near.values().map(|&d| d as f64).sum::<f64>() / support.max(1) as f64;
        let own = votes[&(s, mirrored, off)].len();
        ranked.push(((s, mirrored, off), support, own, mean));
    }
    // Most support first, then most votes of its own, then the smaller mean distance.
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)).then(a.3.total_cmp(&b.3)).then(a.0.cmp(&b.0)));
    let needed = ((times.len() as f64) * 0.3).ceil().max(2.0).min(times.len() as f64) as usize;
    // The bins are coarse where entries are sparse (a static shot keeps one frame a second,
    // which every clip frame in that second hits): align the leading candidates precisely by
    // comparing every clip frame with the entry that covers its moment under each offset
    // within 0.5 s, and keep the alignment with the smallest mean distance.
    let mut chosen: Option<(usize, i64, f64)> = None;
    for (rank, &((s, mirrored, off), support, _, mean)) in ranked.iter().take(5).enumerate() {
        if support < needed || mean > accept as f64 {
            continue;
        }
        for o in off - spread..=off + spread {
            let fit = alignment_distance(refs[s as usize], section, per_frame, times, mirrored, o);
            if chosen.is_none_or(|(_, _, best)| fit < best) {
                chosen = Some((rank, o, fit));
            }
        }
    }
    let (rank, offset, _) = chosen?;
    let ((s, mirrored, _), support, _, mean) = ranked[rank];
    let best_frame = (0..times.len())
        .min_by_key(|&k| {
            let t = times[k] + offset as f64 / frames::CLIP_FPS as f64;
            covering_distance(refs[s as usize], section, &per_frame[k], mirrored, t)
        })
        .unwrap_or(0);
    Some(ClipVote { segment: s as usize, mirrored, offset, support, mean, best_frame })
}

/// The distance of a clip frame's best hypothesis to the entry of `section` that stands for
/// moment `t` of the video (the last kept entry at or before it, or the next when it is
/// closer in time than a frame); 128 when there is none.
fn covering_distance(seg: &Segment, section: search::Section, hypotheses: &[FrameHash], mirrored: bool, t: f64) -> u32 {
    let (lo, hi) = match section {
        search::Section::Frames => (0, seg.n_frames),
        search::Section::Crops => (seg.n_frames, seg.len()),
    };
    let times = &seg.times()[lo..hi];
    let ms = t * 1000.0;
    let next = times.partition_point(|&x| x as f64 <= ms + 1.0);
    let mut candidates = Vec::with_capacity(2);
    if next > 0 {
        candidates.push(next - 1);
    }
    if next < times.len() && (times[next] as f64 - ms) <= 1000.0 / frames::INDEX_FPS as f64 {
        candidates.push(next);
    }
    candidates
        .into_iter()
        .flat_map(|e| {
            let h = seg.hash(lo + e);
            hypotheses.iter().map(move |f| hamming(&h, if mirrored { &f.mirror } else { &f.hash }))
        })
        .min()
        .unwrap_or(128)
}

/// Mean [`covering_distance`] of the clip's frames under `offset` (clip frame periods).
fn alignment_distance(
    seg: &Segment,
    section: search::Section,
    per_frame: &[Vec<FrameHash>],
    times: &[f64],
    mirrored: bool,
    offset: i64,
) -> f64 {
    let shift = offset as f64 / frames::CLIP_FPS as f64;
    let total: u32 =
        per_frame.iter().zip(times).map(|(h, &t)| covering_distance(seg, section, h, mirrored, t + shift)).sum();
    total as f64 / times.len().max(1) as f64
}

/// Maps a Hamming distance to 0..1: 1 for identical, 0.5 at the acceptance threshold, 0 at
/// 128 (what two unrelated pictures score on average).
pub fn similarity(dist: u32, accept: u32) -> f32 {
    let d = dist as f32;
    let a = accept as f32;
    let s = if d <= a { 1.0 - 0.5 * d / a } else { 0.5 * (128.0 - d).max(0.0) / (128.0 - a) };
    (s * 1000.0).round() / 1000.0
}

/// Hashes a picture the way indexed frames are hashed: luminance squeezed to the frame
/// square, borders removed, active picture hashed.
pub fn hash_image(image: &DynamicImage) -> FrameHash {
    hash_image_hypotheses(image)[0]
}

/// The query hypotheses of a picture (see [`hash::query_hashes`]); the first is the active
/// picture with borders removed.
pub fn hash_image_hypotheses(image: &DynamicImage) -> Vec<FrameHash> {
    hash_image_hypotheses_and_view(image).0
}

/// The hypotheses and the `FRAME_SIDE`² gray picture they were cut from.
fn hash_image_hypotheses_and_view(image: &DynamicImage) -> (Vec<FrameHash>, Vec<u8>) {
    let side = frames::FRAME_SIDE as u32;
    let gray = image.to_luma8();
    let small = if gray.width() == side && gray.height() == side {
        gray
    } else {
        image::imageops::thumbnail(&gray, side, side)
    };
    let hypotheses =
        hash::query_hashes(GrayView { width: side as usize, height: side as usize, pixels: small.as_raw() });
    (hypotheses, small.into_raw())
}

/// Fingerprints of one video: kept frames and crop-tier entries, each with its time in ms.
pub struct Fingerprints {
    pub frames: Vec<(Hash, u32)>,
    pub crops: Vec<(Hash, u32)>,
}

/// Decodes a video at [`frames::INDEX_FPS`] and hashes every frame; a frame is kept when it
/// moved more than [`KEEP_BITS`] from the last kept one (or [`MAX_GAP`] passed), flat frames
/// are skipped, and the centre windows for the crop tier are kept by the same rule.
pub fn fingerprint_video(
    path: &Path,
    probe: &frames::Probe,
    progress: &mut dyn Progress,
) -> anyhow::Result<Fingerprints> {
    use rayon::prelude::*;
    /// Frames hashed together on all cores before the keep rule runs over them in order.
    const BATCH: usize = 48;
    let mut out = Fingerprints { frames: Vec::new(), crops: Vec::new() };
    let mut last: Option<(Hash, f64)> = None;
    let mut last_crop: Option<(Hash, f64)> = None;
    let mut batch: Vec<(f64, Vec<u8>)> = Vec::with_capacity(BATCH);
    let step = 1.0 / frames::INDEX_FPS as f64;
    let mut flush = |batch: &mut Vec<(f64, Vec<u8>)>, out: &mut Fingerprints| {
        let hashed: Vec<(f64, FrameHash, FrameHash)> = batch
            .par_iter()
            .map(|(t, px)| {
                let view = GrayView { width: frames::FRAME_SIDE, height: frames::FRAME_SIDE, pixels: px };
                let area = hash::active_area(view);
                (*t, hash::hash_rect(view, area), hash::hash_rect(view, area.centre(hash::CROP_SCALE)))
            })
            .collect();
        batch.clear();
        let moved = |last: Option<(Hash, f64)>, h: &Hash, t: f64, bits: u32| {
            last.is_none_or(|(lh, lt)| hamming(&lh, h) > bits || t - lt >= MAX_GAP - 1e-6)
        };
        for (t, fh, crop) in hashed {
            if fh.quality < MIN_QUALITY {
                continue;
            }
            let ms = (t * 1000.0).round() as u32;
            if moved(last, &fh.hash, t, KEEP_BITS) {
                out.frames.push((fh.hash, ms));
                last = Some((fh.hash, t));
            }
            if crop.quality >= MIN_QUALITY && moved(last_crop, &crop.hash, t, CROP_KEEP_BITS) {
                out.crops.push((crop.hash, ms));
                last_crop = Some((crop.hash, t));
            }
        }
    };
    let (decoded, complaints) = frames::decode_frames(path, frames::INDEX_FPS, |t, px| {
        progress.advance(step);
        batch.push((t, px.to_vec()));
        if batch.len() == BATCH {
            flush(&mut batch, &mut out);
        }
    })?;
    flush(&mut batch, &mut out);
    let expected = probe.duration * frames::INDEX_FPS as f64;
    if (decoded as f64) < expected * 0.9 - 2.0 {
        let got = decoded as f64 / frames::INDEX_FPS as f64;
        let why = complaints.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("the stream ends early");
        bail!("the video is truncated or damaged: decoded {got:.1} s of {:.1} s ({why})", probe.duration);
    }
    if out.frames.is_empty() {
        bail!("no usable picture in the video (all frames are flat or black)");
    }
    Ok(out)
}

/// The soundtrack's landmarks for the audio tier; none for a video without sound (or whose
/// sound cannot be decoded: the picture is still indexed, and the log says why).
fn audio_landmarks(path: &Path, probe: &frames::Probe) -> Vec<audio::Landmark> {
    if !probe.has_audio {
        return Vec::new();
    }
    match audio::fingerprint_file(path, audio::INDEX_DENSITY) {
        Ok((landmarks, _)) => landmarks,
        Err(e) => {
            tracing::warn!("library: {}: no audio tier: {e:#}", path.display());
            Vec::new()
        }
    }
}

/// SHA-256 over the size and the first and last 64 KiB: cheap and good enough to notice a
/// replaced file whose size and time happen to match.
pub fn partial_hash(path: &Path, size: u64) -> anyhow::Result<String> {
    const PART: u64 = 64 * 1024;
    let mut f = File::open(path)?;
    let mut h = Sha256::new();
    h.update(size.to_le_bytes());
    let mut buf = vec![0u8; PART as usize];
    let n = f.read(&mut buf)?;
    h.update(&buf[..n]);
    if size > PART {
        f.seek(SeekFrom::Start(size.saturating_sub(PART).max(PART)))?;
        let mut tail = Vec::new();
        f.take(PART).read_to_end(&mut tail)?;
        h.update(&tail);
    }
    Ok(hex::encode(h.finalize()))
}
