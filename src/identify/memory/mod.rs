//! The answer memory: answers, not uploads. When an identification finishes, the perceptual
//! hashes of what was searched are kept with the catalog answer (TMDB id, type, season and
//! episode), the engine that gave it and its confidence — never the picture, the file name,
//! the transcript or who uploaded it. In `auto`, after the Library and before any cloud
//! engine, an upload close to a remembered answer is answered from memory (no engine call).
//!
//! - [`hashes`]: what a sample is remembered and looked up by (the Library's frame hash).
//! - [`index`]: the embedded index, every remembered hash in RAM; the lookup asks it through
//!   the Library's seam (`library::index::entries::EntryIndex`).
//! - [`store`]: the rows (`remembered_answers`, `remembered_hashes`), the database every
//!   node shares being the memory's source of truth; each node's embedded index reads the
//!   rows it has not seen at most every [`REFRESH_EVERY`]. With the Library on Milvus
//!   (`REELFIND_LIBRARY_INDEX=milvus://...`) the hashes are written to the `{NAME}_memory`
//!   collection every node searches instead, and no node keeps a copy.
//! - `services::feedback`: the people's votes and the corrections rule that change what is
//!   remembered.
//!
//! Thresholds were chosen by measurement (`bench_memory`, `src/identify/README.md`):
//! over transformed positives and negatives from other footage, no negative came within
//! [`WHOLE_ACCEPT`] / [`CENTRE_ACCEPT`] bits.
pub mod correct;
pub mod hashes;
pub mod index;
pub mod store;

use std::collections::HashMap;
use std::time::Duration;

pub use hashes::{Probe, Section};
pub use index::EmbeddedIndex;

use crate::library::index::entries::{self, EntryIndex, IndexError};

/// A whole-picture hit within this many bits (of 256) is the same picture.
pub const WHOLE_ACCEPT: u32 = 48;
/// A centre-window hit (a cropped copy) within this many bits; stricter, since a cropped
/// query is tried under many offsets and each is a chance for a false hit.
pub const CENTRE_ACCEPT: u32 = 44;
/// Two remembered answers of different titles both this close to the best hit make the
/// memory unsure: the engines are asked instead.
pub const AMBIGUOUS_SLACK: u32 = 8;
/// Engine answers less confident than this are not remembered (a guess is not repeated).
pub const MIN_CONFIDENCE: f64 = 0.6;
/// How often a node reads the hashes other nodes remembered.
pub const REFRESH_EVERY: Duration = Duration::from_millis(500);
/// Hits kept per scan.
const HIT_CAP: usize = 512;

/// A remembered answer an upload is close to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Near {
    pub memory_id: i64,
    /// The best distance in bits (a clip: the mean of its frames' best).
    pub dist: u32,
    /// How many of the upload's pictures found it.
    pub pictures: usize,
}

/// The remembered answers `probe` is close to, best first: a still by its best hit (whole
/// pictures first; the centre windows only when no whole picture is close), a clip by the
/// answers at least two of its pictures found (one, for a clip of one usable picture).
/// `index` is the seam the Library's searches ask too: this node's [`EmbeddedIndex`], or the
/// external engine's memory collection.
pub fn candidates(index: &dyn EntryIndex, probe: &Probe) -> Result<Vec<Near>, IndexError> {
    let near = |section: Section, hashes: &[crate::library::picture::hash::Hash], radius: u32| {
        let probe = entries::Probe { section: section.entries(), hashes, radius, limit: HIT_CAP, many: false };
        index.near(&probe)
    };
    let mut found: HashMap<i64, (u32, u32, usize)> = HashMap::new(); // id -> (best, sum, pictures)
    for pic in &probe.pictures {
        let mut best: HashMap<i64, u32> = HashMap::new();
        for h in near(Section::Whole, &pic.frame_queries, WHOLE_ACCEPT)? {
            best.entry(i64::from(h.video)).and_modify(|d| *d = (*d).min(h.dist)).or_insert(h.dist);
        }
        if best.is_empty() && !pic.crop_queries.is_empty() {
            for h in near(Section::Centre, &pic.crop_queries, CENTRE_ACCEPT)? {
                best.entry(i64::from(h.video)).and_modify(|d| *d = (*d).min(h.dist)).or_insert(h.dist);
            }
        }
        for (id, d) in best {
            let e = found.entry(id).or_insert((u32::MAX, 0, 0));
            e.0 = e.0.min(d);
            e.1 += d;
            e.2 += 1;
        }
    }
    let needed = if probe.clip { probe.pictures.len().min(2) } else { 1 };
    let mut out: Vec<Near> = found
        .into_iter()
        .filter(|(_, (_, _, n))| *n >= needed.max(1))
        .map(|(memory_id, (best, sum, n))| Near {
            memory_id,
            dist: if probe.clip { sum / n as u32 } else { best },
            pictures: n,
        })
        .collect();
    out.sort_by_key(|n| (std::cmp::Reverse(n.pictures), n.dist, n.memory_id));
    Ok(out)
}

/// The answer the memory gives for `candidates`, given each one's title (`key_of`): the best
/// one's, unless another title is about as close ([`AMBIGUOUS_SLACK`]).
pub fn decide<K: PartialEq>(candidates: &[Near], key_of: impl Fn(i64) -> Option<K>) -> Option<Near> {
    let best = *candidates.first()?;
    let key = key_of(best.memory_id)?;
    let rival = candidates[1..].iter().any(|c| {
        c.pictures >= best.pictures
            && c.dist <= best.dist + AMBIGUOUS_SLACK
            && key_of(c.memory_id).is_some_and(|k| k != key)
    });
    (!rival).then_some(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rival_title_about_as_close_makes_the_memory_unsure() {
        let near = |memory_id, dist| Near { memory_id, dist, pictures: 1 };
        let titles = |id: i64| Some(if id == 3 { "heat" } else { "matrix" });
        assert_eq!(decide(&[near(1, 10), near(2, 12)], titles).map(|n| n.memory_id), Some(1));
        assert_eq!(decide(&[near(1, 10), near(3, 17)], titles), None);
        assert_eq!(decide(&[near(1, 10), near(3, 30)], titles).map(|n| n.memory_id), Some(1));
        assert_eq!(decide::<&str>(&[], titles), None);
    }
}
