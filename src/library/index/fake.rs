//! A brute-force [`EntryIndex`] in memory, for the stages' unit tests: every entry compared
//! with every query hash, no prefilter, so a test states what a stage does with the hits, not
//! what a scan finds. Hashes for planting: [`random_hash`], [`flipped`].
use std::collections::BTreeMap;
use std::sync::Mutex;

use std::path::Path;

use crate::library::index::entries::{EntryIndex, Hit, IndexError, Probe, Section, Timeline, VideoEntries};
use crate::library::index::store::VideoRecord;
use crate::library::picture::hash::{Hash, hamming};

/// One owner's entries: whole frames, crop tier, upper tier.
type Sections = [Vec<(Hash, u32)>; 5];

/// Owners' entries by section, in the order they were put.
#[derive(Default)]
pub struct FakeIndex {
    videos: Mutex<BTreeMap<u32, Sections>>,
}

fn slot(section: Section) -> usize {
    match section {
        Section::Frames => 0,
        Section::Crops => 1,
        Section::Upper => 2,
        Section::Columns => 3,
        Section::Deep => 4,
    }
}

impl FakeIndex {
    /// Puts one owner's whole-frame entries.
    pub fn with_frames(self, video: u32, frames: &[(Hash, u32)]) -> Self {
        self.put(video, &VideoEntries { frames, ..Default::default() }).unwrap();
        self
    }
}

impl EntryIndex for FakeIndex {
    fn near(&self, probe: &Probe<'_>) -> Result<Vec<Hit>, IndexError> {
        let videos = self.videos.lock().unwrap();
        let mut hits = Vec::new();
        for (&video, sections) in videos.iter() {
            for (entry, (hash, ms)) in sections[slot(probe.section)].iter().enumerate() {
                for (query, q) in probe.hashes.iter().enumerate() {
                    let dist = hamming(hash, q);
                    if dist <= probe.radius {
                        hits.push(Hit { query, video, entry: entry as u32, ms: *ms, dist });
                    }
                }
            }
        }
        hits.sort_by_key(|h| (h.dist, h.video, h.entry, h.query));
        hits.truncate(probe.limit);
        Ok(hits)
    }

    fn timeline(&self, video: u32, section: Section) -> Result<Option<Timeline>, IndexError> {
        let videos = self.videos.lock().unwrap();
        Ok(videos.get(&video).map(|s| {
            let entries = &s[slot(section)];
            Timeline::new(entries.iter().map(|e| e.0).collect(), entries.iter().map(|e| e.1).collect(), Vec::new())
        }))
    }

    fn len(&self) -> u64 {
        self.videos.lock().unwrap().values().map(|s| s.iter().map(Vec::len).sum::<usize>() as u64).sum()
    }

    fn put(&self, video: u32, entries: &VideoEntries<'_>) -> Result<(), IndexError> {
        let sections = Section::ALL.map(|s| entries.section(s).to_vec());
        self.videos.lock().unwrap().insert(video, sections);
        Ok(())
    }

    fn remove(&self, video: u32) -> Result<(), IndexError> {
        self.videos.lock().unwrap().remove(&video);
        Ok(())
    }

    fn holds_current(&self, video: u32) -> bool {
        self.videos.lock().unwrap().contains_key(&video)
    }
}

/// A hash that looks random (about 128 bits from any other such hash), the same for `seed`.
pub fn random_hash(seed: u64) -> Hash {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut word = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    [word(), word(), word(), word()]
}

/// `hash` with `n` of its bits flipped, spread over the four words (`n` <= 256).
pub fn flipped(mut hash: Hash, n: u32) -> Hash {
    for b in 0..n {
        hash[(b % 4) as usize] ^= 1 << (b / 4);
    }
    hash
}

/// `hash` with `n` bits of its first word flipped and none of the others.
pub fn flipped_first_word(mut hash: Hash, n: u32) -> Hash {
    for b in 0..n {
        hash[0] ^= 1 << b;
    }
    hash
}

/// The catalog's record of video `id` whose file (in `dir`) does not exist: a search that
/// would look at the source finds nothing to decode, so the hash decides. `frames` whole-frame
/// and crop entries over `duration` seconds.
pub fn missing_video(dir: &Path, id: u32, duration: f64, frames: u32) -> VideoRecord {
    VideoRecord {
        id,
        path: dir.join(format!("missing-{id}.mp4")),
        size: 0,
        mtime: 0,
        partial_hash: String::new(),
        meta: Default::default(),
        duration,
        frames,
        crop_frames: frames,
        upper_frames: 0,
        audio_landmarks: 0,
        indexed_at: String::new(),
        index_seconds: 0.0,
    }
}
