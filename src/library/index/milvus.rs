//! The second [`EntryIndex`]: the entries in one Milvus collection (see
//! [`crate::library::milvus`] for the client, the schema and the index rule), chosen with
//! `REELFIND_LIBRARY_INDEX=milvus://HOST:PORT/NAME` (see [`super::backend`]).
//!
//! Rows: every tier's hashes in its own partition (`frames`, `crops`, `upper`, `columns`, `deep`), the entry's
//! place in its owner's tier as `entry`, its moment as `ms`. The `meta` partition holds what is
//! not a hash: an owner's static stretches (`entry` = their order, `ms` = from, the first word
//! of `hash` = to) and, written last, its completion mark (`entry` = [`MARK`], `ms` = the
//! format version, `hash` = the tiers' sizes). Writing an owner first deletes whatever it had
//! (a put cut short by a crash leaves rows without a mark; the next put removes them), so an
//! ingest resumed after a Milvus restart leaves no duplicates.
//!
//! Searches only answer owners the catalog lists ([`EntryIndex::follow`]): rows of a video
//! whose put did not finish, or that was removed meanwhile, are never a match. Nothing of an
//! owner's rows is kept between searches (the seam's [`super::entries::Timelines`] keeps them
//! within one): another node may re-index a video at any time.
//!
//! Every failure to get an answer (Milvus down, slow past the address's `timeout`, a collection
//! not loaded yet after a restart) is [`IndexError::Unavailable`]; the next call tries again
//! (connects again, creates and loads the collection if needed), so a node comes back by
//! itself when Milvus does.
use std::collections::HashSet;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use super::entries::{EntryIndex, Hit, IndexError, Probe, Section, Timeline, VideoEntries};
use crate::library::milvus::{IndexPlan, Milvus, MilvusError, MilvusUrl, NPROBE_SHARE, Row};
use crate::library::picture::hash::Hash;

/// The `entry` of an owner's completion mark in the `meta` partition.
pub const MARK: u32 = 0x0fff_ffff;
/// The row layout's version, in the mark (a change re-indexes, as segment versions do).
/// Version 2 adds the column tier (partition `columns`), version 3 the deep-crop tier
/// (partition `deep`).
pub const FORMAT: u32 = 3;
/// The `meta` partition's place in [`crate::library::milvus::PARTITIONS`].
const META: usize = 3;
/// The tiers' partitions.
const TIERS: [usize; 5] = [0, 1, 2, 4, 5];
/// How long a count of rows is reused before it is counted again (in the background: see
/// [`MilvusIndex::len`]).
const COUNT_FRESH: Duration = Duration::from_secs(2);
/// Bytes one row holds in Milvus's memory (hash, id, owner, place, moment).
pub const ROW_BYTES: u64 = 32 + 8 + 8 + 4 + 4;

fn partition(section: Section) -> usize {
    match section {
        Section::Frames => 0,
        Section::Crops => 1,
        Section::Upper => 2,
        Section::Columns => 4,
        Section::Deep => 5,
    }
}

fn unavailable(e: MilvusError) -> IndexError {
    IndexError::Unavailable(e.0)
}

struct Counted {
    /// When `rows` was counted (or the count failed); `None`: never, or a write here since.
    at: Option<Instant>,
    rows: u64,
    /// A count runs in the background now.
    refreshing: bool,
    /// Bumped by every write from this process: a count begun before one is not kept.
    writes: u64,
}

/// A Library (or another kind of entries) in a Milvus collection.
pub struct MilvusIndex {
    client: Arc<Milvus>,
    collection: String,
    /// The collection exists and is loaded (checked on first use, and again after a failure).
    ready: Mutex<bool>,
    /// The owners the catalog lists (`None`: not told yet, every owner counts).
    owners: RwLock<Option<HashSet<u32>>>,
    counted: Arc<Mutex<Counted>>,
    /// Owners whose mark this process saw, complete and current. A mark is only written
    /// after the owner's rows, and a put or remove from here clears it; another node's
    /// re-index of the same owner writes a new mark of the same format.
    complete: Mutex<HashSet<u32>>,
    /// Owners whose put failed part-way here (Milvus went away): their rows, if any, are
    /// deleted at the next write that reaches Milvus. The catalog never lists such an owner
    /// (its id was reserved for that one add), so searches ignore the rows meanwhile; this
    /// keeps them from taking room in top-k answers and counts.
    unfinished: Mutex<HashSet<u32>>,
}

impl MilvusIndex {
    /// The `kind` collection (`library`, `memory`) of the installation `url` names. Nothing
    /// is asked of the server yet: a node starts while Milvus is down and serves once it is up.
    pub fn open(url: &MilvusUrl, kind: &str) -> anyhow::Result<Self> {
        Ok(Self {
            client: Arc::new(Milvus::new(url.clone(), url.timeout)?),
            collection: url.collection(kind),
            ready: Mutex::new(false),
            owners: RwLock::new(None),
            counted: Arc::new(Mutex::new(Counted { at: None, rows: 0, refreshing: false, writes: 0 })),
            complete: Mutex::new(HashSet::new()),
            unfinished: Mutex::new(HashSet::new()),
        })
    }

    pub fn client(&self) -> &Milvus {
        &self.client
    }

    pub fn collection(&self) -> &str {
        &self.collection
    }

    /// Creates and loads the collection if needed, and reads which index it has (for the
    /// searches' nprobe).
    fn ensure(&self) -> Result<(), IndexError> {
        self.ensure_within(false)
    }

    /// [`Self::ensure`] for a writer, who may wait for the schema work
    /// ([`crate::library::milvus::SCHEMA_BUDGET`]).
    fn ensure_patiently(&self) -> Result<(), IndexError> {
        self.ensure_within(true)
    }

    fn ensure_within(&self, patient: bool) -> Result<(), IndexError> {
        let mut ready = self.ready.lock().map_err(|_| IndexError::Unavailable("lock poisoned".into()))?;
        if *ready {
            return Ok(());
        }
        self.client.ensure_collection(&self.collection, patient).map_err(unavailable)?;
        self.follow_plan()?;
        *ready = true;
        Ok(())
    }

    /// Sets the searches' nprobe from the collection's index (see [`IndexPlan`]): none for an
    /// exact index, a share of the lists for a clustered one (`?nprobe=` overrides).
    fn follow_plan(&self) -> Result<(), IndexError> {
        match self.client.index_plan(&self.collection).map_err(unavailable)? {
            IndexPlan::Flat => self.client.set_nprobe(None),
            IndexPlan::Ivf { nlist, .. } => {
                self.client.set_nprobe(Some(IndexPlan::nprobe_for(nlist, NPROBE_SHARE)));
            }
        }
        Ok(())
    }

    /// A failed call may mean a restarted server that has not loaded the collection yet: look
    /// again next time.
    fn check<T>(&self, r: Result<T, MilvusError>) -> Result<T, IndexError> {
        if r.is_err()
            && let Ok(mut ready) = self.ready.lock()
        {
            *ready = false;
        }
        r.map_err(unavailable)
    }

    /// Gives the collection the index its size calls for (exact under a million rows, else
    /// clustered: [`IndexPlan::for_rows`]). The collection is released while the index is
    /// rebuilt, so this runs at the end of a bulk load from the command line, not per video.
    pub fn fit_index(&self) -> Result<IndexPlan, IndexError> {
        self.ensure_patiently()?;
        self.sweep();
        let rows = self.check(self.client.count(&self.collection))?;
        let want = IndexPlan::for_rows(rows, self.client.url().nprobe);
        let have = self.check(self.client.index_plan(&self.collection))?;
        let same = match (have, want) {
            (IndexPlan::Flat, IndexPlan::Flat) => true,
            (IndexPlan::Ivf { nlist: a, .. }, IndexPlan::Ivf { nlist: b, .. }) => {
                // Rebuilding for a few percent more rows is not worth a release.
                (a as f64 / b as f64 - 1.0).abs() < 0.5
            }
            _ => false,
        };
        if !same {
            self.check(self.client.set_index(&self.collection, want))?;
        }
        self.follow_plan()?;
        Ok(want)
    }

    /// Seals what was written (segments get their index built).
    pub fn flush(&self) -> Result<(), IndexError> {
        let r = self.client.flush(&self.collection);
        self.check(r)
    }

    fn mark_of(&self, video: u32) -> Result<Option<Row>, IndexError> {
        let filter = format!("video == {video} && entry == {MARK}");
        // Always strong: whether an owner is complete is asked right after writing it.
        let rows = self.check(self.client.rows_where(&self.collection, META, &filter, true))?;
        Ok(rows.into_iter().next())
    }

    fn stills_of(&self, video: u32) -> Result<Vec<[u32; 2]>, IndexError> {
        // The mark's `entry` is past every page `rows_of` reads: only the stretches come back.
        let rows = self.check(self.client.rows_of(&self.collection, META, video))?;
        Ok(rows.iter().filter(|r| r.entry != MARK).map(|r| [r.ms, r.hash[0] as u32]).collect())
    }

    fn forget(&self, video: u32) {
        if let Ok(mut c) = self.complete.lock() {
            c.remove(&video);
        }
        if let Ok(mut c) = self.counted.lock() {
            c.at = None;
            c.writes += 1;
        }
    }

    /// Rows over the three tiers, counted again at most every [`COUNT_FRESH`].
    fn rows(&self) -> Result<u64, IndexError> {
        if let Ok(c) = self.counted.lock()
            && c.at.is_some_and(|t| t.elapsed() < COUNT_FRESH)
        {
            return Ok(c.rows);
        }
        let writes = self.counted.lock().map(|c| c.writes).unwrap_or(0);
        let counted = self.ensure().and_then(|()| {
            let r = self.client.count_in(&self.collection, &TIERS);
            self.check(r)
        });
        // A failure is remembered as long as a count (the last count stands meanwhile): a
        // server that does not answer is not asked again on every request.
        if let Ok(mut c) = self.counted.lock()
            && c.writes == writes
        {
            c.at = Some(Instant::now());
            if let Ok(rows) = counted {
                c.rows = rows;
            }
        }
        counted
    }

    /// Whether Milvus answers and the collection is there and loaded (the readiness probe).
    pub fn check_ready(&self) -> Result<(), IndexError> {
        self.ensure()?;
        let r = self.client.has_collection(&self.collection);
        match self.check(r)? {
            true => Ok(()),
            false => {
                if let Ok(mut ready) = self.ready.lock() {
                    *ready = false;
                }
                Err(IndexError::Unavailable(format!("the collection {} is gone", self.collection)))
            }
        }
    }

    /// Whether the owner's rows are complete in the current format (its mark says so).
    fn holds(&self, video: u32) -> Result<bool, IndexError> {
        if self.complete.lock().is_ok_and(|c| c.contains(&video)) {
            return Ok(true);
        }
        self.ensure()?;
        let current = self.mark_of(video)?.is_some_and(|m| m.ms == FORMAT);
        if current && let Ok(mut c) = self.complete.lock() {
            c.insert(video);
        }
        Ok(current)
    }

    /// Deletes the rows of owners whose put failed here (see `unfinished`); those it cannot
    /// reach yet stay for the next write.
    fn sweep(&self) {
        let pending: Vec<u32> = self.unfinished.lock().map(|u| u.iter().copied().collect()).unwrap_or_default();
        for video in pending {
            if self.client.delete_video(&self.collection, video).is_ok()
                && let Ok(mut u) = self.unfinished.lock()
            {
                u.remove(&video);
            }
        }
    }

    /// Owners whose put failed here and whose rows are not deleted yet.
    pub fn unfinished(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.unfinished.lock().map(|u| u.iter().copied().collect()).unwrap_or_default();
        v.sort_unstable();
        v
    }

    /// Writes an owner's rows: whatever it had deleted, its tiers, then its mark.
    fn write(&self, video: u32, entries: &VideoEntries<'_>) -> Result<(), IndexError> {
        self.ensure_patiently()?;
        self.forget(video);
        // Whatever the owner had, including the rows of a put cut short (no mark yet).
        self.check(self.client.delete_video(&self.collection, video))?;
        for section in Section::ALL {
            let rows: Vec<Row> = entries
                .section(section)
                .iter()
                .enumerate()
                .map(|(i, &(hash, ms))| Row { video, entry: i as u32, ms, hash })
                .collect();
            self.check(self.client.insert(&self.collection, partition(section), &rows))?;
        }
        let mut meta: Vec<Row> = entries
            .stills
            .iter()
            .enumerate()
            .map(|(i, s)| Row { video, entry: i as u32, ms: s[0], hash: [s[1] as u64, 0, 0, 0] })
            .collect();
        meta.push(Row {
            video,
            entry: MARK,
            ms: FORMAT,
            hash: [
                entries.frames.len() as u64,
                entries.crops.len() as u64,
                entries.uppers.len() as u64,
                entries.stills.len() as u64,
            ],
        });
        self.check(self.client.insert(&self.collection, META, &meta))
    }

    /// Drops the collection (tests and benchmarks clean up with it).
    pub fn drop_all(&self) -> Result<(), IndexError> {
        if let Ok(mut ready) = self.ready.lock() {
            *ready = false;
        }
        let r = self.client.drop_collection(&self.collection);
        self.check(r)
    }
}

impl EntryIndex for MilvusIndex {
    fn near(&self, probe: &Probe<'_>) -> Result<Vec<Hit>, IndexError> {
        if probe.hashes.is_empty() || probe.limit == 0 {
            return Ok(Vec::new());
        }
        self.ensure()?;
        let r = self.client.search(&self.collection, partition(probe.section), probe.hashes, probe.radius, probe.limit);
        let found = self.check(r)?;
        let owners = self.owners.read().ok().and_then(|o| o.clone());
        let mut hits: Vec<Hit> = found
            .into_iter()
            .filter(|f| f.dist <= probe.radius)
            .filter(|f| owners.as_ref().is_none_or(|o| o.contains(&f.video)))
            .map(|f| Hit { query: f.query, video: f.video, entry: f.entry, ms: f.ms, dist: f.dist })
            .collect();
        // The mapped scan's order: distance, then owner (ids grow: the owner added first), then
        // place; the query hash last so that equal answers come out the same every time.
        hits.sort_unstable_by_key(|h| (h.dist, h.video, h.entry, h.query));
        hits.truncate(probe.limit);
        Ok(hits)
    }

    fn timeline(&self, video: u32, section: Section) -> Result<Option<Timeline>, IndexError> {
        if self.owners.read().ok().and_then(|o| o.as_ref().map(|o| !o.contains(&video))).unwrap_or(false) {
            return Ok(None);
        }
        self.ensure()?;
        let rows = self.check(self.client.rows_of(&self.collection, partition(section), video))?;
        if rows.is_empty() && !self.holds(video)? {
            return Ok(None);
        }
        let stills = self.stills_of(video)?;
        let (hashes, times): (Vec<Hash>, Vec<u32>) = rows.iter().map(|r| (r.hash, r.ms)).unzip();
        Ok(Some(Timeline::new(hashes, times, stills)))
    }

    /// The rows over the tiers. Counted here only the first time and after a write from this
    /// process; a count older than [`COUNT_FRESH`] is answered as it is while one thread counts
    /// again, so a Milvus that hangs holds at most that thread, never the requests asking
    /// (pages and the dashboard show the count). Down: the last count.
    fn len(&self) -> u64 {
        let Ok(mut c) = self.counted.lock() else { return 0 };
        let Some(at) = c.at else {
            drop(c);
            return self.rows().unwrap_or_else(|_| self.counted.lock().map(|c| c.rows).unwrap_or(0));
        };
        if at.elapsed() >= COUNT_FRESH && !c.refreshing {
            c.refreshing = true;
            let writes = c.writes;
            let (client, collection, counted) = (self.client.clone(), self.collection.clone(), self.counted.clone());
            let spawned = std::thread::Builder::new().name("milvus-count".into()).spawn(move || {
                let rows = client.count_in(&collection, &TIERS);
                if let Ok(mut c) = counted.lock() {
                    c.refreshing = false;
                    if c.writes != writes {
                        // A write from here since the count began: the next call counts afresh.
                        return;
                    }
                    c.at = Some(Instant::now());
                    if let Ok(rows) = rows {
                        c.rows = rows;
                    }
                }
            });
            if spawned.is_err() {
                c.refreshing = false;
            }
        }
        c.rows
    }

    fn put(&self, video: u32, entries: &VideoEntries<'_>) -> Result<(), IndexError> {
        let written = self.write(video, entries);
        if let Ok(mut u) = self.unfinished.lock() {
            match written {
                Ok(()) => u.remove(&video),
                Err(_) => u.insert(video),
            };
        }
        written?;
        self.sweep();
        if let Ok(mut c) = self.complete.lock() {
            c.insert(video);
        }
        if let Ok(mut c) = self.counted.lock() {
            c.at = None;
            c.writes += 1;
        }
        Ok(())
    }

    fn remove(&self, video: u32) -> Result<(), IndexError> {
        self.ensure_patiently()?;
        self.forget(video);
        let r = self.client.delete_video(&self.collection, video);
        self.check(r)?;
        self.sweep();
        Ok(())
    }

    fn holds_current(&self, video: u32) -> bool {
        // Unknown while Milvus is down: say current, so an outage does not re-index the library.
        self.holds(video).unwrap_or(true)
    }

    fn follow(&self, videos: &[u32]) {
        if let Ok(mut o) = self.owners.write() {
            *o = Some(videos.iter().copied().collect());
        }
    }

    fn bytes(&self) -> u64 {
        self.len() * ROW_BYTES
    }
}
