//! The embedded memory index: every remembered hash of this node's copy of the memory, in
//! RAM, scanned on all cores. It answers "entries within d bits of these hashes, in this
//! section", the question the Library's index answers, and it is one of the implementations
//! of the Library's seam ([`EntryIndex`]): the lookup asks the seam, so with an external
//! engine configured the same lookup asks that engine's `{NAME}_memory` collection instead.
//! Owners are remembered answers' ids; [`Section::Whole`] is the seam's `Frames` section and
//! [`Section::Centre`] its `Crops` (what the Library keeps in them is alike: whole frames,
//! and their centre windows).
//!
//! Hashes are kept split as the Library's segments keep them: the first 64-bit word of
//! every entry contiguously (the 8 x 8 lowest frequencies, the bits a real match keeps
//! best), the other three words beside it. The scan reads the first words only and looks at
//! the rest when the first word is within [`PREFILTER`] bits, so it costs 8 bytes of memory
//! traffic per entry and query hash (`bench_memory` measures what it costs at 10^5 and 10^6
//! remembered answers).
use std::sync::RwLock;

use rayon::prelude::*;

use super::hashes::Section;
use crate::library::index::entries::{self, EntryIndex, IndexError, Probe, Timeline, VideoEntries};
use crate::library::picture::hash::Hash;

/// A first word further than this cannot belong to an entry we would accept. The accept
/// thresholds ([`super::WHOLE_ACCEPT`], [`super::CENTRE_ACCEPT`]) leave at most that many bits
/// for all four words; a match keeps its low frequencies best, so its first word is rarely
/// more than a third of that (the benchmark counts what the prefilter loses: nothing there).
pub const PREFILTER: u32 = 22;
/// Entries per parallel work item.
const CHUNK: usize = 1 << 15;

/// One entry within the asked distance of one query hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    /// Index of the query hash.
    pub query: u16,
    /// The remembered answer the entry belongs to.
    pub memory_id: i64,
    pub dist: u32,
}

#[derive(Default)]
struct Column {
    first: Vec<u64>,
    rest: Vec<[u64; 3]>,
    ids: Vec<i64>,
}

/// Every remembered hash, by section.
#[derive(Default)]
pub struct EmbeddedIndex {
    sections: RwLock<[Column; 2]>,
}

impl EmbeddedIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds entries (`memory id`, section, hash).
    pub fn add(&self, entries: impl IntoIterator<Item = (i64, Section, Hash)>) {
        let mut s = self.sections.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        for (id, section, h) in entries {
            let c = &mut s[section as usize];
            c.first.push(h[0]);
            c.rest.push([h[1], h[2], h[3]]);
            c.ids.push(id);
        }
    }

    /// How many entries the index holds.
    pub fn count(&self) -> usize {
        let s = self.sections.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        s.iter().map(|c| c.ids.len()).sum()
    }

    /// Every entry of `section` within `max_d` bits of one of `queries`, nearest first, at
    /// most `cap` of them.
    pub fn near(&self, section: Section, queries: &[Hash], max_d: u32, cap: usize) -> Vec<Hit> {
        if queries.is_empty() {
            return Vec::new();
        }
        let s = self.sections.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        let c = &s[section as usize];
        let pre = PREFILTER.min(max_d);
        let mut hits: Vec<Hit> = c
            .first
            .par_chunks(CHUNK)
            .enumerate()
            .fold(Vec::new, |mut acc, (chunk, firsts)| {
                let base = chunk * CHUNK;
                for (i, &w0) in firsts.iter().enumerate() {
                    for (q, qh) in queries.iter().enumerate() {
                        let d0 = (w0 ^ qh[0]).count_ones();
                        if d0 > pre {
                            continue;
                        }
                        let r = &c.rest[base + i];
                        let d = d0
                            + (r[0] ^ qh[1]).count_ones()
                            + (r[1] ^ qh[2]).count_ones()
                            + (r[2] ^ qh[3]).count_ones();
                        if d <= max_d {
                            acc.push(Hit { query: q as u16, memory_id: c.ids[base + i], dist: d });
                        }
                    }
                }
                acc
            })
            .reduce(Vec::new, |mut a, mut b| {
                a.append(&mut b);
                a
            });
        hits.sort_unstable_by_key(|h| (h.dist, h.memory_id, h.query));
        hits.truncate(cap);
        hits
    }
}

impl Section {
    /// The seam's section this memory section is kept in (`None`: the memory has no such).
    pub fn of(section: entries::Section) -> Option<Self> {
        match section {
            entries::Section::Frames => Some(Section::Whole),
            entries::Section::Crops => Some(Section::Centre),
            entries::Section::Upper | entries::Section::Columns | entries::Section::Deep => None,
        }
    }

    pub fn entries(self) -> entries::Section {
        match self {
            Section::Whole => entries::Section::Frames,
            Section::Centre => entries::Section::Crops,
        }
    }
}

impl EmbeddedIndex {
    /// Forgets every entry of `owner`.
    fn forget(&self, owner: i64) {
        let mut s = self.sections.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        for c in s.iter_mut() {
            if !c.ids.contains(&owner) {
                continue;
            }
            let keep: Vec<bool> = c.ids.iter().map(|&id| id != owner).collect();
            let mut k = keep.iter();
            c.first.retain(|_| *k.next().unwrap_or(&true));
            let mut k = keep.iter();
            c.rest.retain(|_| *k.next().unwrap_or(&true));
            c.ids.retain(|&id| id != owner);
        }
    }
}

/// The seam over this index: no timelines (a remembered answer has no time), owners are
/// remembered answers' ids.
impl EntryIndex for EmbeddedIndex {
    fn near(&self, probe: &Probe<'_>) -> Result<Vec<entries::Hit>, IndexError> {
        let Some(section) = Section::of(probe.section) else { return Ok(Vec::new()) };
        Ok(EmbeddedIndex::near(self, section, probe.hashes, probe.radius, probe.limit)
            .into_iter()
            .filter_map(|h| {
                Some(entries::Hit {
                    query: h.query as usize,
                    video: u32::try_from(h.memory_id).ok()?,
                    entry: 0,
                    ms: 0,
                    dist: h.dist,
                })
            })
            .collect())
    }

    fn timeline(&self, _owner: u32, _section: entries::Section) -> Result<Option<Timeline>, IndexError> {
        Ok(None)
    }

    fn len(&self) -> u64 {
        self.count() as u64
    }

    fn put(&self, owner: u32, entries: &VideoEntries<'_>) -> Result<(), IndexError> {
        let id = i64::from(owner);
        self.forget(id);
        let whole = entries.frames.iter().map(|&(h, _)| (id, Section::Whole, h));
        self.add(whole.chain(entries.crops.iter().map(|&(h, _)| (id, Section::Centre, h))));
        Ok(())
    }

    fn remove(&self, owner: u32) -> Result<(), IndexError> {
        self.forget(i64::from(owner));
        Ok(())
    }

    fn holds_current(&self, _owner: u32) -> bool {
        true
    }

    fn bytes(&self) -> u64 {
        self.count() as u64 * (32 + 8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_finds_entries_within_the_distance_only() {
        let idx = EmbeddedIndex::new();
        let a: Hash = [0, 0, 0, 0];
        let b: Hash = [0b111, 0, 0, 1]; // 4 bits from a
        let far: Hash = [u64::MAX, u64::MAX, 0, 0];
        idx.add([(1, Section::Whole, a), (2, Section::Whole, b), (3, Section::Whole, far), (4, Section::Centre, a)]);
        assert_eq!(idx.count(), 4);
        let hits = idx.near(Section::Whole, &[a], 4, 10);
        assert_eq!(hits.iter().map(|h| (h.memory_id, h.dist)).collect::<Vec<_>>(), vec![(1, 0), (2, 4)]);
        assert_eq!(idx.near(Section::Whole, &[a], 3, 10).len(), 1);
        assert_eq!(idx.near(Section::Centre, &[b], 4, 10)[0].memory_id, 4);
    }

    #[test]
    fn through_the_seam_owners_are_answers_and_a_put_replaces_what_an_owner_had() {
        let idx = EmbeddedIndex::new();
        let a: Hash = [0, 0, 0, 0];
        let b: Hash = [0b11, 0, 0, 0];
        let seam: &dyn EntryIndex = &idx;
        seam.put(7, &VideoEntries { frames: &[(a, 0)], crops: &[(b, 0)], ..Default::default() }).unwrap();
        seam.put(9, &VideoEntries { frames: &[(b, 0)], ..Default::default() }).unwrap();
        assert_eq!(seam.len(), 3);
        let probe = |section, hashes: &'static [Hash]| Probe { section, hashes, radius: 2, limit: 10, many: false };
        let hits = seam.near(&probe(entries::Section::Frames, &[[0, 0, 0, 0]])).unwrap();
        assert_eq!(hits.iter().map(|h| (h.video, h.dist)).collect::<Vec<_>>(), vec![(7, 0), (9, 2)]);
        assert_eq!(seam.near(&probe(entries::Section::Crops, &[[0b11, 0, 0, 0]])).unwrap()[0].video, 7);
        assert!(seam.near(&probe(entries::Section::Upper, &[[0, 0, 0, 0]])).unwrap().is_empty());
        // Owner 7 again, with another picture: its old entries are gone.
        seam.put(7, &VideoEntries { frames: &[([u64::MAX, 0, 0, 0], 0)], ..Default::default() }).unwrap();
        assert_eq!(seam.len(), 2);
        let hits = seam.near(&probe(entries::Section::Frames, &[[0, 0, 0, 0]])).unwrap();
        assert_eq!(hits.iter().map(|h| h.video).collect::<Vec<_>>(), vec![9]);
        seam.remove(9).unwrap();
        assert!(seam.near(&probe(entries::Section::Frames, &[[0, 0, 0, 0]])).unwrap().is_empty());
    }
}
