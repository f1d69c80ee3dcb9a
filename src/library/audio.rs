//! The audio tier for clips: landmark fingerprints of the soundtrack.
//!
//! The idea is the published "constellation" landmark scheme (Wang, *An Industrial-Strength
//! Audio Search Algorithm*, 2003), written here from that description:
//!
//! 1. The soundtrack is decoded to mono 8 kHz and cut into 128 ms Hann windows every 32 ms;
//!    each window's magnitude spectrum (512 bins of 7.8 Hz) is computed with an FFT.
//! 2. **Peaks**: a spectrogram cell that is the maximum of its neighbourhood (±[`PEAK_DF`]
//!    bins, ±[`PEAK_DT`] frames) and above a quiet floor. Only the strongest few per second
//!    are kept, so the density does not depend on the volume and survives added noise.
//! 3. **Landmarks**: every peak (anchor) is paired with the next few peaks in a target zone
//!    after it; the pair's `(f1, f2, dt)` is a 24-bit hash and the anchor's frame its time.
//!
//! Index side: one file per video, `audio/{id}.alm`: a 32-byte header, then the hashes sorted
//! (u32 each), then the anchor times in the same order (u32 frames). 8 bytes a landmark;
//! memory-mapped and searched by binary search.
//!
//! Query side: the clip's landmarks (denser than the index's, so the index's pairs are found
//! among them) are looked up; every hit votes for `reference time - query time`. A real match
//! piles its votes into one offset, chance hits spread thinly; the best offset must have
//! [`MIN_HITS`] votes and stand well clear of the runner-up, or the answer is no match.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use memmap2::Mmap;
use rayon::prelude::*;
use rustfft::num_complex::Complex32;
use rustfft::{Fft, FftPlanner};

use crate::library::frames::FfmpegPipe;

/// Sample rate the soundtrack is decoded at.
pub const RATE: u32 = 8000;
/// FFT window (samples) and hop between windows.
const WINDOW: usize = 1024;
const HOP: usize = 256;
/// Spectrogram frames per second (31.25).
pub const FRAMES_PER_SECOND: f64 = RATE as f64 / HOP as f64;
const BINS: usize = WINDOW / 2;
/// Lowest bin a peak may sit in (below ~60 Hz is hum and rumble).
const MIN_BIN: usize = 8;
/// Peak neighbourhood: ± bins and ± frames.
const PEAK_DF: usize = 12;
const PEAK_DT: usize = 5;
/// Magnitude floor of a peak (a sine at about -85 dBFS): silence makes no landmarks.
const FLOOR: f32 = 0.015;
/// Target zone of an anchor: 1..=`ZONE_DT` frames later, within `ZONE_DF` bins.
const ZONE_DT: u32 = 48;
const ZONE_DF: i32 = 96;

/// Peaks per second and pairs per anchor: sparse in the index (bytes), dense for a query
/// (so the index's peaks and pairs are among the query's even when noise adds its own).
#[derive(Clone, Copy, Debug)]
pub struct Density {
    pub peaks_per_second: usize,
    pub fan_out: usize,
}
pub const INDEX_DENSITY: Density = Density { peaks_per_second: 10, fan_out: 4 };
pub const QUERY_DENSITY: Density = Density { peaks_per_second: 24, fan_out: 10 };

/// The best offset needs this many votes (over a ±1 frame window) to be a match.
pub const MIN_HITS: u32 = 12;
/// ...and this many times the votes of the best offset elsewhere (another video, or the same
/// video more than [`SAME_OFFSET`] frames away).
const MARGIN: f64 = 2.0;
const SAME_OFFSET: i32 = 3;

/// One landmark: a 24-bit `(f1, f2, dt)` hash and the anchor's frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Landmark {
    pub hash: u32,
    pub frame: u32,
}

fn pack(f1: u32, f2: u32, dt: u32) -> u32 {
    (f1 << 15) | (f2 << 6) | dt
}

#[derive(Clone, Copy, Debug)]
struct Peak {
    frame: u32,
    bin: u16,
    level: f32,
}

/// Streams samples into spectrogram frames and picks local maxima, keeping only the last
/// `2 * PEAK_DT + 1` spectra in memory (an hour of soundtrack never sits in memory).
struct PeakPicker {
    fft: Arc<dyn Fft<f32>>,
    window: Vec<f32>,
    pending: Vec<f32>,
    ring: Vec<Vec<f32>>,
    frames: u32,
    peaks: Vec<Peak>,
    buf: Vec<Complex32>,
    scratch: Vec<Complex32>,
}

impl PeakPicker {
    fn new() -> Self {
        let fft = FftPlanner::new().plan_fft_forward(WINDOW);
        let window =
            (0..WINDOW).map(|i| 0.5 - 0.5 * (2.0 * std::f32::consts::PI * i as f32 / WINDOW as f32).cos()).collect();
        let scratch = vec![Complex32::default(); fft.get_inplace_scratch_len()];
        Self {
            fft,
            window,
            pending: Vec::with_capacity(WINDOW * 2),
            ring: vec![vec![0.0; BINS]; 2 * PEAK_DT + 1],
            frames: 0,
            peaks: Vec::new(),
            buf: vec![Complex32::default(); WINDOW],
            scratch,
        }
    }

    fn push(&mut self, samples: &[i16]) {
        for &s in samples {
            self.pending.push(s as f32 / 32768.0);
            if self.pending.len() == WINDOW {
                self.frame();
                self.pending.drain(..HOP);
            }
        }
    }

    fn frame(&mut self) {
        for (i, c) in self.buf.iter_mut().enumerate() {
            *c = Complex32::new(self.pending[i] * self.window[i], 0.0);
        }
        self.fft.process_with_scratch(&mut self.buf, &mut self.scratch);
        let slot = self.frames as usize % self.ring.len();
        for (f, m) in self.ring[slot].iter_mut().enumerate() {
            *m = self.buf[f].norm();
        }
        self.frames += 1;
        if self.frames > PEAK_DT as u32 {
            self.pick(self.frames - 1 - PEAK_DT as u32);
        }
    }

    /// Finds the peaks of frame `c`, whose neighbours up to `PEAK_DT` later are in the ring.
    fn pick(&mut self, c: u32) {
        let n = self.ring.len() as u32;
        let row = &self.ring[(c % n) as usize];
        let lo_t = c.saturating_sub(PEAK_DT as u32);
        let hi_t = (c + PEAK_DT as u32).min(self.frames - 1);
        for f in MIN_BIN..BINS {
            let v = row[f];
            if v < FLOOR {
                continue;
            }
            let (lo_f, hi_f) = (f.saturating_sub(PEAK_DF).max(MIN_BIN), (f + PEAK_DF).min(BINS - 1));
            // Cheap test first: a maximum of its own frame's band.
            if row[lo_f..=hi_f].iter().any(|&x| x > v) {
                continue;
            }
            let mut is_peak = true;
            'outer: for t in lo_t..=hi_t {
                if t == c {
                    continue;
                }
                let other = &self.ring[(t % n) as usize];
                for &x in &other[lo_f..=hi_f] {
                    // Ties go to the earlier frame, so a flat plateau gives one peak.
                    if x > v || (x == v && t < c) {
                        is_peak = false;
                        break 'outer;
                    }
                }
            }
            if is_peak {
                self.peaks.push(Peak { frame: c, bin: f as u16, level: v });
            }
        }
    }

    fn finish(mut self) -> (Vec<Peak>, u32) {
        // Pad the tail with silence so the last frames are judged too.
        if !self.pending.is_empty() {
            let missing = WINDOW - self.pending.len();
            self.push(&vec![0; missing]);
        }
        let frames = self.frames;
        let start = frames.saturating_sub(PEAK_DT as u32);
        for c in start..frames {
            self.pick(c);
        }
        (self.peaks, frames)
    }
}

/// Keeps the strongest `per_second` peaks of every second, in time order.
fn thin(mut peaks: Vec<Peak>, per_second: usize) -> Vec<Peak> {
    peaks.sort_by_key(|p| (p.frame, p.bin));
    let fps = FRAMES_PER_SECOND;
    let mut out = Vec::with_capacity(peaks.len());
    let mut i = 0;
    while i < peaks.len() {
        let second = (peaks[i].frame as f64 / fps) as u64;
        let mut j = i;
        while j < peaks.len() && (peaks[j].frame as f64 / fps) as u64 == second {
            j += 1;
        }
        let mut group: Vec<Peak> = peaks[i..j].to_vec();
        group.sort_by(|a, b| b.level.total_cmp(&a.level));
        group.truncate(per_second);
        group.sort_by_key(|p| (p.frame, p.bin));
        out.extend(group);
        i = j;
    }
    out
}

/// Pairs every peak with the next `fan_out` peaks in its target zone.
fn pair(peaks: &[Peak], fan_out: usize) -> Vec<Landmark> {
    let mut out = Vec::with_capacity(peaks.len() * fan_out);
    for (i, a) in peaks.iter().enumerate() {
        let mut n = 0;
        for b in &peaks[i + 1..] {
            let dt = b.frame - a.frame;
            if dt > ZONE_DT {
                break;
            }
            if dt == 0 || (b.bin as i32 - a.bin as i32).abs() > ZONE_DF {
                continue;
            }
            out.push(Landmark { hash: pack(a.bin as u32, b.bin as u32, dt), frame: a.frame });
            n += 1;
            if n == fan_out {
                break;
            }
        }
    }
    out
}

/// Landmarks of mono samples at [`RATE`] Hz.
pub fn landmarks(samples: &[i16], density: Density) -> Vec<Landmark> {
    let mut picker = PeakPicker::new();
    picker.push(samples);
    let (peaks, _) = picker.finish();
    pair(&thin(peaks, density.peaks_per_second), density.fan_out)
}

/// Decodes the soundtrack of a file with ffmpeg and fingerprints it as it streams in.
/// Returns the landmarks and the seconds of sound decoded; a file without an audio stream
/// gives none.
pub fn fingerprint_file(path: &Path, density: Density) -> anyhow::Result<(Vec<Landmark>, f64)> {
    let probe = crate::library::frames::probe(path).ok();
    if probe.as_ref().is_some_and(|p| !p.has_audio) {
        return Ok((Vec::new(), 0.0));
    }
    let seconds = probe.map_or(crate::library::frames::MAX_QUERY_SECONDS, |p| p.duration + 1.0);
    fingerprint_file_within(path, density, seconds, &crate::library::frames::Budget::default())
}

/// [`fingerprint_file`] reading at most `seconds` of sound, stopped by the budget's token. A
/// file without an audio stream is an error here (ffmpeg has no stream to write): callers
/// that probed the file already skip it.
pub fn fingerprint_file_within(
    path: &Path,
    density: Density,
    seconds: f64,
    budget: &crate::library::frames::Budget,
) -> anyhow::Result<(Vec<Landmark>, f64)> {
    let limits = if budget.format.is_some() { crate::ffmpeg::Limits::UPLOAD } else { crate::ffmpeg::Limits::INDEX };
    let mut cmd = crate::ffmpeg::command("ffmpeg", limits);
    cmd.args(["-nostdin", "-v", "error", "-t", &format!("{seconds:.3}")])
        .args(crate::ffmpeg::Input { path, format: budget.format }.args())
        .args(["-vn", "-sn", "-dn", "-map", "0:a:0?", "-ac", "1", "-ar", &RATE.to_string()])
        .args(["-f", "s16le", "pipe:1"]);
    let mut pipe = FfmpegPipe::spawn(&mut cmd, budget.cancel.as_ref())?;
    let max_samples = ((seconds + 1.0) * f64::from(RATE)) as u64;
    let mut stopped = false;
    let mut picker = PeakPicker::new();
    let mut bytes = vec![0u8; 64 * 1024];
    let mut carry: Option<u8> = None;
    let mut samples: Vec<i16> = Vec::with_capacity(32 * 1024);
    let mut total = 0u64;
    loop {
        if budget.cancelled() {
            anyhow::bail!("stopped: the work was cancelled");
        }
        if total >= max_samples {
            stopped = true;
            break;
        }
        let n = pipe.stdout.read(&mut bytes)?;
        if n == 0 {
            break;
        }
        samples.clear();
        let mut chunk = &bytes[..n];
        if let Some(lo) = carry.take() {
            samples.push(i16::from_le_bytes([lo, chunk[0]]));
            chunk = &chunk[1..];
        }
        let pairs = chunk.chunks_exact(2);
        if let [last] = pairs.remainder() {
            carry = Some(*last);
        }
        samples.extend(pairs.map(|c| i16::from_le_bytes([c[0], c[1]])));
        total += samples.len() as u64;
        picker.push(&samples);
    }
    if stopped {
        // Dropping the pipe kills ffmpeg: a gap in the timestamps cannot become hours of silence.
        drop(pipe);
    } else {
        pipe.finish("could not decode the soundtrack")?;
    }
    let (peaks, _) = picker.finish();
    Ok((pair(&thin(peaks, density.peaks_per_second), density.fan_out), total as f64 / RATE as f64))
}

const MAGIC: &[u8; 8] = b"RFLIBAU1";
const HEADER: usize = 32;

pub fn landmarks_path(dir: &Path, id: u32) -> PathBuf {
    dir.join("audio").join(format!("{id}.alm"))
}

/// Writes a video's landmark file (sorted by hash; through a temporary name).
pub fn write_landmarks(dir: &Path, id: u32, landmarks: &[Landmark]) -> anyhow::Result<PathBuf> {
    let path = landmarks_path(dir, id);
    fs::create_dir_all(path.parent().unwrap_or(dir))?;
    let mut sorted = landmarks.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let tmp = path.with_extension("alm.tmp");
    {
        let mut out = BufWriter::new(File::create(&tmp)?);
        let mut header = [0u8; HEADER];
        header[..8].copy_from_slice(MAGIC);
        header[8..12].copy_from_slice(&(sorted.len() as u32).to_le_bytes());
        header[12..16].copy_from_slice(&id.to_le_bytes());
        header[16..20].copy_from_slice(&RATE.to_le_bytes());
        header[20..24].copy_from_slice(&(HOP as u32).to_le_bytes());
        out.write_all(&header)?;
        for l in &sorted {
            out.write_all(&l.hash.to_le_bytes())?;
        }
        for l in &sorted {
            out.write_all(&l.frame.to_le_bytes())?;
        }
        out.flush()?;
        out.get_ref().sync_all()?;
    }
    fs::rename(&tmp, &path)?;
    Ok(path)
}

/// A memory-mapped landmark file.
pub struct AudioSegment {
    pub video_id: u32,
    len: usize,
    map: Mmap,
}

impl AudioSegment {
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        // Safety: landmark files are written under a temporary name and renamed into place;
        // nothing modifies a published file (re-indexing writes a new one under a new id).
        let map = unsafe { Mmap::map(&file) }?;
        if map.len() < HEADER || &map[..8] != MAGIC {
            bail!("{} is not a landmark file", path.display());
        }
        let word = |at: usize| u32::from_le_bytes(map[at..at + 4].try_into().unwrap_or([0; 4]));
        let (len, video_id, rate, hop) = (word(8) as usize, word(12), word(16), word(20));
        if rate != RATE || hop as usize != HOP {
            bail!("{} was made with other parameters; re-index the video", path.display());
        }
        if map.len() != HEADER + len * 8 {
            bail!("{} is truncated", path.display());
        }
        Ok(Self { video_id, len, map })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn bytes(&self) -> usize {
        self.map.len()
    }

    fn hashes(&self) -> &[u32] {
        // The map is page-aligned and the header is 32 bytes, so the words are aligned.
        bytemuck::cast_slice(&self.map[HEADER..HEADER + self.len * 4])
    }

    fn frames(&self) -> &[u32] {
        bytemuck::cast_slice(&self.map[HEADER + self.len * 4..HEADER + self.len * 8])
    }

    /// Reference frames of every landmark with this hash.
    pub fn lookup(&self, hash: u32) -> &[u32] {
        let hashes = self.hashes();
        let start = hashes.partition_point(|&h| h < hash);
        let end = start + hashes[start..].partition_point(|&h| h == hash);
        &self.frames()[start..end]
    }
}

/// The audio tier's verdict for a query.
#[derive(Clone, Debug)]
pub struct AudioHit {
    pub video_id: u32,
    /// Video time (s) at which the query starts.
    pub offset: f64,
    /// Query time (s) of the middle of the matching landmarks.
    pub centre: f64,
    /// Votes for the winning offset (±1 frame), and for the best other candidate.
    pub votes: u32,
    pub runner_up: u32,
    pub query_landmarks: usize,
}

impl AudioHit {
    /// 0.5 at [`MIN_HITS`] votes, 0.75 at twice as many, towards 1 with more.
    pub fn similarity(&self) -> f32 {
        let s = 1.0 - 0.5 * MIN_HITS as f64 / self.votes.max(1) as f64;
        ((s.clamp(0.0, 1.0) * 1000.0).round() / 1000.0) as f32
    }
}

/// The best offset of the query's landmarks against these landmark files, whether or not it
/// clears the threshold (`None` only when nothing at all was hit).
pub fn best_offset(segments: &[AudioSegment], query: &[Landmark]) -> Option<AudioHit> {
    // Per video: offset (frames) -> votes, and the query frames that voted.
    let per_video: Vec<(u32, i32, u32, u32, f64)> = segments
        .par_iter()
        .filter_map(|seg| {
            let mut votes: HashMap<i32, (u32, u64)> = HashMap::new();
            for q in query {
                for &t in seg.lookup(q.hash) {
                    let e = votes.entry(t as i32 - q.frame as i32).or_default();
                    e.0 += 1;
                    e.1 += q.frame as u64;
                }
            }
            let window = |o: i32| (o - 1..=o + 1).filter_map(|k| votes.get(&k)).map(|v| v.0).sum::<u32>();
            let (&best, _) = votes.iter().max_by_key(|(o, v)| (window(**o), v.0, -**o))?;
            let top = window(best);
            // The best elsewhere in the same video (a repeated sound).
            let second =
                votes.keys().filter(|o| (**o - best).abs() > SAME_OFFSET).map(|o| window(*o)).max().unwrap_or(0);
            let (n, sum) =
                (best - 1..=best + 1).filter_map(|k| votes.get(&k)).fold((0u32, 0u64), |(n, s), v| (n + v.0, s + v.1));
            let centre = if n > 0 { sum as f64 / n as f64 } else { 0.0 };
            Some((seg.video_id, best, top, second, centre))
        })
        .collect();
    let winner = per_video.iter().max_by_key(|v| (v.2, std::cmp::Reverse(v.0)))?;
    let runner_up =
        per_video.iter().filter(|v| v.0 != winner.0).map(|v| v.2).chain(std::iter::once(winner.3)).max().unwrap_or(0);
    Some(AudioHit {
        video_id: winner.0,
        offset: winner.1 as f64 / FRAMES_PER_SECOND,
        centre: winner.4 / FRAMES_PER_SECOND,
        votes: winner.2,
        runner_up,
        query_landmarks: query.len(),
    })
}

/// Whether a hit is strong and unambiguous enough to answer.
pub fn accepted(hit: &AudioHit) -> bool {
    hit.votes >= MIN_HITS && hit.votes as f64 >= MARGIN * hit.runner_up as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A few seconds of chirps and chords, deterministic.
    fn music(seconds: f64, seed: u32) -> Vec<i16> {
        let n = (seconds * RATE as f64) as usize;
        let mut state = seed.wrapping_mul(2654435761).max(1);
        let mut rnd = move || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state
        };
        let note_len = RATE as usize / 4;
        let mut out = vec![0i16; n];
        let mut i = 0;
        while i < n {
            let f1 = 200.0 + (rnd() % 1500) as f32;
            let f2 = 300.0 + (rnd() % 2500) as f32;
            for k in 0..note_len.min(n - i) {
                let t = k as f32 / RATE as f32;
                let env = (1.0 - k as f32 / note_len as f32).max(0.0);
                let v = (2.0 * std::f32::consts::PI * f1 * t).sin() * 0.4
                    + (2.0 * std::f32::consts::PI * f2 * t).sin() * 0.25;
                out[i + k] = (v * env * 20000.0) as i16;
            }
            i += note_len;
        }
        out
    }

    #[test]
    fn an_excerpt_votes_for_its_own_offset_and_other_music_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let song = music(30.0, 1);
        let other = music(30.0, 2);
        write_landmarks(dir.path(), 1, &landmarks(&song, INDEX_DENSITY)).unwrap();
        write_landmarks(dir.path(), 2, &landmarks(&other, INDEX_DENSITY)).unwrap();
        let segs = vec![
            AudioSegment::open(&landmarks_path(dir.path(), 1)).unwrap(),
            AudioSegment::open(&landmarks_path(dir.path(), 2)).unwrap(),
        ];
        // 3 s from 12.4 s, quieter by half.
        let start = (12.4 * RATE as f64) as usize;
        let excerpt: Vec<i16> = song[start..start + 3 * RATE as usize].iter().map(|s| s / 2).collect();
        let hit = best_offset(&segs, &landmarks(&excerpt, QUERY_DENSITY)).unwrap();
        assert!(accepted(&hit), "{hit:?}");
        assert_eq!(hit.video_id, 1);
        assert!((hit.offset - 12.4).abs() < 0.05, "{hit:?}");
        assert!(hit.similarity() > 0.5);

        let stranger = music(3.0, 3);
        let miss = best_offset(&segs, &landmarks(&stranger, QUERY_DENSITY));
        assert!(miss.as_ref().is_none_or(|h| !accepted(h)), "{miss:?}");
        // Silence makes no landmarks at all.
        assert!(landmarks(&vec![0; 3 * RATE as usize], QUERY_DENSITY).is_empty());
    }

    #[test]
    fn a_truncated_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_landmarks(dir.path(), 5, &[Landmark { hash: 1, frame: 2 }]).unwrap();
        let bytes = fs::read(&path).unwrap();
        fs::write(&path, &bytes[..bytes.len() - 2]).unwrap();
        assert!(AudioSegment::open(&path).is_err());
    }
}
