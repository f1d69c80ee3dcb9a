//! Adding videos: walking folders, skipping unchanged files, fingerprinting picture and
//! soundtrack, publishing the segment and then the catalog record.
use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;
use sha2::{Digest, Sha256};

use crate::library::fingerprint::fingerprint_video;
use crate::library::index::entries::VideoEntries;
use crate::library::index::store::{Pending, VideoMeta, VideoRecord};
use crate::library::picture::hash::Hash;
use crate::library::{LibraryIndex, audio, frames, meta};

/// Extensions `library add` picks up when walking folders.
pub const VIDEO_EXTENSIONS: &[&str] =
    &["mp4", "m4v", "mov", "mkv", "webm", "avi", "flv", "wmv", "mpg", "mpeg", "ts", "m2ts", "ogv", "3gp"];

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
    /// The run was cancelled ([`Progress::cancel`]) before every file was done.
    pub stopped: bool,
}

/// Hooks for a progress bar (CLI) or log lines (server). All optional.
pub trait Progress {
    fn start(&mut self, _files: usize, _total_seconds: f64) {}
    fn file(&mut self, _path: &Path) {}
    /// `seconds` of video just got decoded.
    fn advance(&mut self, _seconds: f64) {}
    fn outcome(&mut self, _path: &Path, _outcome: &AddOutcome) {}
    /// The run's stop token: once cancelled, the ffmpeg children are killed, the file being
    /// indexed is left out (nothing of it is written) and no further file is started.
    fn cancel(&self) -> Option<&tokio_util::sync::CancellationToken> {
        None
    }
}

/// Progress that goes nowhere.
pub struct Quiet;
impl Progress for Quiet {}

/// An id held this long by an ingest that never published its video belonged to a process
/// that died: no video takes a day to index (the slowest seen here runs at about real time).
pub const ABANDONED_AFTER: Duration = Duration::from_secs(24 * 3600);

impl LibraryIndex {
    /// Gives an ingest its video id and notes it as pending: its entries may be written
    /// before the video is published, and a process that dies in between leaves them to
    /// [`Self::sweep_abandoned`].
    #[doc(hidden)]
    pub fn reserve_id(&self) -> anyhow::Result<u32> {
        let since = chrono::Utc::now().timestamp();
        self.update_catalog(|c| {
            let id = c.next_id.max(1);
            c.next_id = id + 1;
            c.pending.push(Pending { id, since });
            Ok(id)
        })
    }

    /// Removes the entries (and soundtrack landmarks) of every id an ingest has held for
    /// longer than `older_than` without publishing its video, then forgets the ids; the ids
    /// swept. Run at the start of every `add`; an entry that cannot be removed now (Milvus
    /// down) keeps its id pending for the next one.
    pub fn sweep_abandoned(&self, older_than: Duration) -> anyhow::Result<Vec<u32>> {
        let cutoff = chrono::Utc::now().timestamp() - older_than.as_secs() as i64;
        let stale: Vec<u32> = self.load_catalog()?.pending.iter().filter(|p| p.since <= cutoff).map(|p| p.id).collect();
        let swept = self.discard_ingests(&stale)?;
        if !swept.is_empty() {
            tracing::info!("library: removed the entries of {} ingest(s) that never finished: {swept:?}", swept.len());
        }
        Ok(swept)
    }

    /// Removes the entries and landmarks of unfinished ingests' ids and forgets the ids (the
    /// shared catalog drops their soundtrack rows with them); an id whose entries cannot be
    /// removed now stays pending for the next sweep. The ids discarded.
    fn discard_ingests(&self, ids: &[u32]) -> anyhow::Result<Vec<u32>> {
        let mut discarded = Vec::new();
        for &id in ids {
            match self.entries().remove(id) {
                Ok(()) => {
                    let _ = fs::remove_file(audio::landmarks_path(&self.dir, id));
                    discarded.push(id);
                }
                Err(e) => {
                    tracing::warn!("library: the entries of unfinished ingest {id} stay until the next sweep: {e}")
                }
            }
        }
        if !discarded.is_empty() {
            self.update_catalog(|c| {
                c.pending.retain(|p| !discarded.contains(&p.id));
                Ok(())
            })?;
        }
        Ok(discarded)
    }
}

impl LibraryIndex {
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
        if let Err(e) = self.sweep_abandoned(ABANDONED_AFTER) {
            tracing::warn!("library: could not sweep abandoned ingests: {e:#}");
        }
        let total: f64 = files.iter().filter_map(|f| frames::probe(f).ok()).map(|p| p.duration).sum();
        progress.start(files.len(), total);
        for file in files {
            if progress.cancel().is_some_and(|t| t.is_cancelled()) {
                report.stopped = true;
                break;
            }
            progress.file(&file);
            let outcome = match self.add_video(&file, None, progress) {
                Ok(o) => o,
                Err(_) if progress.cancel().is_some_and(|t| t.is_cancelled()) => {
                    report.stopped = true;
                    break;
                }
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
        let existing = self.load_catalog()?.by_path(&path).cloned();
        let mut partial = None;
        if let Some(old) = &existing {
            let current = self.entries().holds_current(old.id);
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
        let budget = frames::Budget { cancel: progress.cancel().cloned(), ..Default::default() };
        // The soundtrack is fingerprinted on its own thread while the picture decodes.
        let (fingerprints, landmarks) = std::thread::scope(|scope| {
            let sound = scope.spawn(|| audio_landmarks(&path, &probe, &budget));
            let cancel = progress.cancel().cloned();
            let picture = fingerprint_video(&path, &probe, &mut |s| progress.advance(s), cancel.as_ref());
            (picture, sound.join().unwrap_or_default())
        });
        // Cancelled while either half ran: a video without its sound tier must not be published.
        if budget.cancelled() {
            anyhow::bail!("stopped: the work was cancelled");
        }
        let fingerprints = fingerprints?;
        let meta = meta
            .or_else(|| existing.as_ref().filter(|e| e.meta.source == "admin").map(|e| e.meta.clone()))
            .unwrap_or_else(|| meta::for_file(&path));
        // Reserve an id, write the entries, then publish the video in the catalog.
        let id = self.reserve_id()?;
        let entries = VideoEntries {
            frames: &fingerprints.frames,
            crops: &fingerprints.crops,
            uppers: &fingerprints.uppers,
            columns: &fingerprints.columns,
            deeps: &fingerprints.deeps,
            stills: &fingerprints.stills,
        };
        let written = self.entries().put(id, &entries).map_err(anyhow::Error::from).and_then(|()| {
            if !landmarks.is_empty() {
                let file = audio::write_landmarks(&self.dir, id, &landmarks)?;
                if let Some(shared) = self.shared() {
                    // Every node searches the sound, not only the one whose folder has the file.
                    shared.put_sound(id, fs::read(&file)?)?;
                }
            }
            Ok(())
        });
        if let Err(e) = written {
            // The id is swept later if this cannot be done now.
            let _ = self.discard_ingests(&[id]);
            return Err(e);
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
            upper_frames: fingerprints.uppers.len() as u32,
            audio_landmarks: landmarks.len() as u32,
            indexed_at: chrono::Utc::now().to_rfc3339(),
            index_seconds: started.elapsed().as_secs_f64(),
        };
        let replaced = self.update_catalog(|c| {
            let old: Vec<u32> = c.videos.iter().filter(|v| v.path == path).map(|v| v.id).collect();
            c.videos.retain(|v| v.path != path);
            c.videos.push(record.clone());
            c.pending.retain(|p| p.id != id);
            Ok(old)
        })?;
        for old in &replaced {
            if let Err(e) = self.entries().remove(*old) {
                tracing::warn!("library: the entries of replaced video {old} stay behind: {e}");
            }
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
        let id = self.reserve_id()?;
        self.entries().put(id, &VideoEntries { frames, crops, ..Default::default() })?;
        self.update_catalog(|c| {
            c.pending.retain(|p| p.id != id);
            c.videos.push(VideoRecord {
                id,
                path: self.dir.join(format!("raw-{id}")),
                size: 0,
                mtime: 0,
                partial_hash: String::new(),
                meta: meta.clone(),
                duration,
                frames: frames.len() as u32,
                crop_frames: crops.len() as u32,
                upper_frames: 0,
                audio_landmarks: 0,
                indexed_at: chrono::Utc::now().to_rfc3339(),
                index_seconds: 0.0,
            });
            Ok(())
        })?;
        Ok(id)
    }
}

/// The soundtrack's landmarks for the audio tier; none for a video without sound (or whose
/// sound cannot be decoded: the picture is still indexed, and the log says why).
fn audio_landmarks(path: &Path, probe: &frames::Probe, budget: &frames::Budget) -> Vec<audio::Landmark> {
    if !probe.has_audio {
        return Vec::new();
    }
    // As `audio::fingerprint_file` reads it: what the file declares, and a second.
    match audio::fingerprint_file_within(path, audio::INDEX_DENSITY, probe.duration + 1.0, budget) {
        Ok((landmarks, _)) => landmarks,
        // Stopped with the server: `add_video` publishes nothing, so there is nothing to say.
        Err(_) if budget.cancelled() => Vec::new(),
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
