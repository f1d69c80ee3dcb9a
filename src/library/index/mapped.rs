//! The first [`EntryIndex`]: one immutable segment file per owner in one folder (see
//! [`store`](super::store) for the format), memory-mapped, and scanned on every core (see
//! [`scan`](super::scan)). No server, no database: the page cache is the cache.
//!
//! The library's folder keeps its segments in `segments/`; another collection (remembered
//! answers, say) keeps its own folder and its own `MappedIndex`.
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use super::entries::{EntryIndex, Hit, IndexError, Probe, Section, Timeline, TimelineSource, VideoEntries};
use crate::library::index::scan::{self, PREFILTER, PREFILTER_MANY};
use crate::library::index::store::{self, Segment};

/// Segment files in one folder, the mapped ones by owner.
pub struct MappedIndex {
    dir: PathBuf,
    segments: RwLock<HashMap<u32, Arc<Segment>>>,
}

impl MappedIndex {
    /// The segments in `dir` (created if needed). Nothing is mapped until [`EntryIndex::put`]
    /// or [`EntryIndex::follow`] names an owner.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, IndexError> {
        let dir = dir.into();
        fs::create_dir_all(&dir)?;
        Ok(Self { dir, segments: RwLock::new(HashMap::new()) })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The segment file of owner `video`.
    pub fn path(&self, video: u32) -> PathBuf {
        self.dir.join(format!("{video}.seg"))
    }

    /// The mapped segments, in owner order: equal hits always resolve to the owner added
    /// first (ids grow).
    pub fn segments(&self) -> Vec<Arc<Segment>> {
        let mut out: Vec<Arc<Segment>> = match self.segments.read() {
            Ok(map) => map.values().cloned().collect(),
            Err(_) => Vec::new(),
        };
        out.sort_unstable_by_key(|s| s.video_id);
        out
    }

    fn mapped(&self, video: u32) -> Option<Arc<Segment>> {
        self.segments.read().ok()?.get(&video).cloned()
    }

    fn open_segment(&self, video: u32) -> Option<Arc<Segment>> {
        match Segment::open(&self.path(video)) {
            Ok(s) => Some(Arc::new(s)),
            Err(e) => {
                tracing::warn!("library: skipping video {video}: {e:#}");
                None
            }
        }
    }
}

impl EntryIndex for MappedIndex {
    fn near(&self, probe: &Probe<'_>) -> Result<Vec<Hit>, IndexError> {
        if probe.hashes.is_empty() {
            return Ok(Vec::new());
        }
        let segments = self.segments();
        let refs: Vec<&Segment> = segments.iter().map(|s| s.as_ref()).collect();
        let prefilter = if probe.many { PREFILTER_MANY } else { PREFILTER };
        let found = scan::scan(&refs, probe.section, probe.hashes, probe.radius, prefilter, probe.limit);
        Ok(found
            .into_iter()
            .map(|h| {
                let seg = refs[h.segment as usize];
                let start = seg.range(probe.section).start as u32;
                Hit {
                    query: h.query as usize,
                    video: seg.video_id,
                    entry: h.entry - start,
                    ms: seg.times()[h.entry as usize],
                    dist: h.dist as u32,
                }
            })
            .collect())
    }

    fn timeline(&self, video: u32, section: Section) -> Result<Option<Timeline>, IndexError> {
        Ok(self.mapped(video).map(|segment| {
            let range = segment.range(section);
            Timeline::of(Arc::new(SectionOf { segment, range }))
        }))
    }

    fn len(&self) -> u64 {
        self.segments.read().map(|m| m.values().map(|s| s.len() as u64).sum()).unwrap_or(0)
    }

    fn put(&self, video: u32, entries: &VideoEntries<'_>) -> Result<(), IndexError> {
        let path = self.path(video);
        store::write_segment(&path, video, entries).map_err(|e| IndexError::Storage(format!("{e:#}")))?;
        let segment = Arc::new(Segment::open(&path).map_err(|e| IndexError::Storage(format!("{e:#}")))?);
        if let Ok(mut map) = self.segments.write() {
            map.insert(video, segment);
        }
        Ok(())
    }

    fn remove(&self, video: u32) -> Result<(), IndexError> {
        if let Ok(mut map) = self.segments.write() {
            map.remove(&video);
        }
        match fs::remove_file(self.path(video)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        }
    }

    fn holds_current(&self, video: u32) -> bool {
        store::segment_is_current(&self.path(video))
    }

    fn follow(&self, videos: &[u32]) {
        let current = match self.segments.read() {
            Ok(map) => map.clone(),
            Err(_) => return,
        };
        let mut next = HashMap::new();
        for &id in videos {
            if let Some(seg) = current.get(&id).cloned().or_else(|| self.open_segment(id)) {
                next.insert(id, seg);
            }
        }
        if let Ok(mut map) = self.segments.write() {
            *map = next;
        }
    }

    fn bytes(&self) -> u64 {
        self.segments.read().map(|m| m.values().map(|s| s.bytes() as u64).sum()).unwrap_or(0)
    }
}

/// One section of a mapped segment, read where it lies.
struct SectionOf {
    segment: Arc<Segment>,
    range: std::ops::Range<usize>,
}

impl TimelineSource for SectionOf {
    fn hash(&self, i: usize) -> crate::library::picture::hash::Hash {
        self.segment.hash(self.range.start + i)
    }
    fn times(&self) -> &[u32] {
        &self.segment.times()[self.range.clone()]
    }
    fn stills(&self) -> &[[u32; 2]] {
        self.segment.stills()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::picture::hash::Hash;

    fn entry(seed: u64, ms: u32) -> (Hash, u32) {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut word = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        ([word(), word(), word(), word()], ms)
    }

    /// `hash` with its first `n` bits flipped (spread over the four words).
    fn flipped(mut hash: Hash, n: u32) -> Hash {
        for b in 0..n {
            hash[(b % 4) as usize] ^= 1 << (b / 4);
        }
        hash
    }

    #[test]
    fn a_probe_finds_the_planted_entry_at_its_distance_in_its_section_only() {
        let dir = tempfile::tempdir().unwrap();
        let index = MappedIndex::open(dir.path()).unwrap();
        let frames: Vec<(Hash, u32)> = (0..300).map(|k| entry(k, k as u32 * 40)).collect();
        let crops: Vec<(Hash, u32)> = (1000..1100).map(|k| entry(k, (k as u32 - 1000) * 100)).collect();
        let entries = VideoEntries { frames: &frames, crops: &crops, ..Default::default() };
        index.put(3, &entries).unwrap();
        index.put(5, &VideoEntries { frames: &frames[..10], ..Default::default() }).unwrap();
        assert_eq!(index.len(), 300 + 100 + 10);

        let planted = frames[123].0;
        let probe = |section, hashes: &[Hash], radius| {
            index.near(&Probe { section, hashes, radius, limit: 10, many: false }).unwrap()
        };
        let hits = probe(Section::Frames, &[flipped(planted, 9), entry(99_999, 0).0], 20);
        assert_eq!(hits, vec![Hit { query: 0, video: 3, entry: 123, ms: 123 * 40, dist: 9 }]);
        // Not within a radius short of its distance, and not in another section.
        assert!(probe(Section::Frames, &[flipped(planted, 9)], 8).is_empty());
        assert!(probe(Section::Crops, &[planted], 40).is_empty());
        // A crop entry: its place is counted within its section.
        let hits = probe(Section::Crops, &[crops[7].0], 0);
        assert_eq!(hits, vec![Hit { query: 0, video: 3, entry: 7, ms: 700, dist: 0 }]);
        // An entry both videos hold: the owner added first, then the other.
        let hits = probe(Section::Frames, &[frames[4].0], 0);
        assert_eq!(hits.iter().map(|h| h.video).collect::<Vec<_>>(), vec![3, 5]);

        let timeline = index.timeline(3, Section::Crops).unwrap().unwrap();
        assert_eq!((timeline.len(), timeline.hash(7), timeline.times()[7]), (100, crops[7].0, 700));
        index.remove(3).unwrap();
        assert!(index.timeline(3, Section::Frames).unwrap().is_none());
        assert_eq!(index.len(), 10);
        // Following the catalog maps a segment written by another process and drops the rest.
        let other = MappedIndex::open(dir.path()).unwrap();
        other.follow(&[5, 8]);
        assert_eq!(other.len(), 10);
        assert!(other.holds_current(5) && !other.holds_current(3));
    }
}
