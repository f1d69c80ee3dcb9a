//! The seam between the searches and wherever the hashes live: [`EntryIndex`].
//!
//! An index holds *entries*: a 256-bit picture hash and the millisecond it stands for, grouped
//! by owner (a video of the library; another collection, such as remembered answers, uses its
//! own owners) and by [`Section`] (the tier the hash was cut for). The searches ask it two
//! things only:
//!
//! - [`EntryIndex::near`]: the entries of one section within `radius` bits of a batch of
//!   query hashes (a picture, its mirror, its cuts and crops), best first, at most `limit`;
//! - [`EntryIndex::timeline`]: one owner's entries of one section in time order, with the
//!   video's static stretches, for the stages that walk along a video (the whole shot around
//!   a hit, a clip's alignment).
//!
//! They never see segments, memory maps or connections. [`super::mapped::MappedIndex`] (one
//! memory-mapped segment file per video, scanned on every core) is the first implementation;
//! an external vector engine is another: a batch of 256-bit binary vectors searched by
//! Hamming distance in one collection per section, by range (`radius`) and top-k (`limit`).
//! The write side ([`EntryIndex::put`], [`EntryIndex::remove`]) is what indexing uses.
use std::sync::Arc;

use crate::library::picture::hash::Hash;

/// Which entries of an owner a search looks at: the tiers the index is cut into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Section {
    /// Whole-picture hashes of sampled frames.
    Frames,
    /// The crop tier (centre windows of key frames).
    Crops,
    /// The upper tier (the part of key frames above where subtitles and controls sit).
    Upper,
    /// The column tier: [`COLUMNS`] narrow full-height windows across each key frame, stored
    /// together (entry `i` is window `i % COLUMNS` of its moment), the part of a frame a
    /// vertical repost keeps.
    Columns,
    /// The deep-crop tier: the middle of each key frame (half of each side, see
    /// [`crate::library::picture::hash::DEEP_SCALE`]), which a screenshot cropped by a quarter
    /// of each side, at any offset, still shows whole.
    Deep,
}

pub use crate::library::picture::column::COLUMNS;

impl Section {
    pub const ALL: [Section; 5] = [Section::Frames, Section::Crops, Section::Upper, Section::Columns, Section::Deep];

    /// The name a backend may give the section's collection or partition.
    pub fn name(self) -> &'static str {
        match self {
            Section::Frames => "frames",
            Section::Crops => "crops",
            Section::Upper => "upper",
            Section::Columns => "columns",
            Section::Deep => "deep",
        }
    }
}

/// One question to the index: the entries of `section` within `radius` bits of any of
/// `hashes`.
#[derive(Clone, Copy, Debug)]
pub struct Probe<'a> {
    pub section: Section,
    /// The query hashes, searched together ([`Hit::query`] indexes them).
    pub hashes: &'a [Hash],
    /// Largest Hamming distance (of 256 bits) a hit may have.
    pub radius: u32,
    /// At most this many hits, the nearest.
    pub limit: usize,
    /// The batch is dozens of guesses (crop offsets, a clip's frames): the index may trade a
    /// little recall at the edge of `radius` for speed (the mapped scan's stricter first
    /// stage, see `scan::PREFILTER_MANY`).
    pub many: bool,
}

/// One entry within a probe's radius of one of its hashes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    /// Which of the probe's hashes.
    pub query: usize,
    /// The owner (a video's id).
    pub video: u32,
    /// The entry's place in its owner's [`Timeline`] of the probe's section.
    pub entry: u32,
    /// The moment the entry stands for, ms into the video.
    pub ms: u32,
    /// Hamming distance to the query hash.
    pub dist: u32,
}

/// An index that cannot answer now. A search stops with it (the caller answers 503): no
/// answer is better than one from half an index.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The backend is not reachable or not ready (an external engine down).
    #[error("the Library index is unavailable: {0}")]
    Unavailable(String),
    /// Writing or reading the index's storage failed.
    #[error("the Library index storage failed: {0}")]
    Storage(String),
}

impl From<std::io::Error> for IndexError {
    fn from(e: std::io::Error) -> Self {
        IndexError::Storage(e.to_string())
    }
}

/// One owner's entries, tier by tier, each `(hash, ms)` in time order, and its static
/// stretches (`[from, to]` ms, in order): what indexing a video writes.
#[derive(Clone, Copy, Default)]
pub struct VideoEntries<'a> {
    pub frames: &'a [(Hash, u32)],
    pub crops: &'a [(Hash, u32)],
    pub uppers: &'a [(Hash, u32)],
    /// The column tier's windows, [`COLUMNS`] a moment (see [`Section::Columns`]).
    pub columns: &'a [(Hash, u32)],
    /// The deep-crop tier's middles (see [`Section::Deep`]).
    pub deeps: &'a [(Hash, u32)],
    pub stills: &'a [[u32; 2]],
}

impl VideoEntries<'_> {
    pub fn section(&self, section: Section) -> &[(Hash, u32)] {
        match section {
            Section::Frames => self.frames,
            Section::Crops => self.crops,
            Section::Upper => self.uppers,
            Section::Columns => self.columns,
            Section::Deep => self.deeps,
        }
    }
}

/// Where the hashes live. Every method blocks (disk, all cores or the network).
pub trait EntryIndex: Send + Sync {
    /// The hits of `probe`, best first: by distance, then owner, then entry.
    fn near(&self, probe: &Probe<'_>) -> Result<Vec<Hit>, IndexError>;

    /// One owner's entries of `section` in time order (what [`Hit::entry`] indexes) and its
    /// static stretches; `None` when the index holds nothing of it (removed meanwhile).
    fn timeline(&self, video: u32, section: Section) -> Result<Option<Timeline>, IndexError>;

    /// Entries over every section and owner.
    fn len(&self) -> u64;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stores an owner's entries, replacing any it had.
    fn put(&self, video: u32, entries: &VideoEntries<'_>) -> Result<(), IndexError>;

    /// Forgets an owner's entries (nothing to forget is not an error).
    fn remove(&self, video: u32) -> Result<(), IndexError>;

    /// Whether the owner's entries are held in the index's current format (else the video
    /// is indexed again, even when its file did not change).
    fn holds_current(&self, video: u32) -> bool;

    /// The owners the catalog lists now (it may have been changed by another process): an
    /// index that follows the catalog (the mapped one) maps the new and lets go of the rest.
    fn follow(&self, _videos: &[u32]) {}

    /// Bytes the index keeps for its entries, when it knows (for the benchmark and stats).
    fn bytes(&self) -> u64 {
        0
    }
}

/// What a [`Timeline`] reads: a backend's own keeping of one owner's entries of one section.
pub trait TimelineSource: Send + Sync {
    /// The hash of entry `i`.
    fn hash(&self, i: usize) -> Hash;
    /// The moment of every entry, ms, in order.
    fn times(&self) -> &[u32];
    /// The video's static stretches, `[from, to]` ms, in order.
    fn stills(&self) -> &[[u32; 2]];
}

/// One owner's entries of one section, in time order, and the video's static stretches.
#[derive(Clone)]
pub struct Timeline(Arc<dyn TimelineSource>);

/// A timeline a backend fetched into memory.
struct Fetched {
    hashes: Vec<Hash>,
    times: Vec<u32>,
    stills: Vec<[u32; 2]>,
}

impl TimelineSource for Fetched {
    fn hash(&self, i: usize) -> Hash {
        self.hashes[i]
    }
    fn times(&self) -> &[u32] {
        &self.times
    }
    fn stills(&self) -> &[[u32; 2]] {
        &self.stills
    }
}

/// One window of a timeline that keeps several a moment (see [`Timeline::window`]).
struct Strided {
    inner: Timeline,
    k: usize,
    of: usize,
    times: Vec<u32>,
}

impl TimelineSource for Strided {
    fn hash(&self, i: usize) -> Hash {
        self.inner.hash(self.k + i * self.of)
    }
    fn times(&self) -> &[u32] {
        &self.times
    }
    fn stills(&self) -> &[[u32; 2]] {
        self.inner.stills()
    }
}

impl Timeline {
    /// A timeline a backend fetched: `hashes[i]` stands for `times[i]` ms (in order).
    pub fn new(hashes: Vec<Hash>, times: Vec<u32>, stills: Vec<[u32; 2]>) -> Self {
        debug_assert_eq!(hashes.len(), times.len());
        Timeline(Arc::new(Fetched { hashes, times, stills }))
    }

    /// A timeline read from a backend's own storage, where it lies (no copy).
    pub fn of(source: Arc<dyn TimelineSource>) -> Self {
        Timeline(source)
    }

    pub fn len(&self) -> usize {
        self.times().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The hash of entry `i`.
    pub fn hash(&self, i: usize) -> Hash {
        self.0.hash(i)
    }

    /// The moment of every entry, ms.
    pub fn times(&self) -> &[u32] {
        self.0.times()
    }

    /// The moment of entry `i`, seconds.
    pub fn seconds(&self, i: usize) -> f64 {
        self.times()[i] as f64 / 1000.0
    }

    /// The video's static stretches, `[from, to]` ms, in order.
    pub fn stills(&self) -> &[[u32; 2]] {
        self.0.stills()
    }

    /// Every `of`-th entry from entry `k` (one window of a section that stores several a
    /// moment, see [`Section::Columns`]), as a timeline of its own: the hashes read where they
    /// lie, only the times copied.
    pub fn window(&self, k: usize, of: usize) -> Timeline {
        let of = of.max(1);
        let times = (k..self.len()).step_by(of).map(|i| self.times()[i]).collect();
        Timeline(Arc::new(Strided { inner: self.clone(), k, of, times }))
    }
}

/// The timelines one search has fetched, by owner and section: each fetched once, however
/// many stages walk along it (a backend over the network answers each at a round trip).
pub struct Timelines<'a> {
    entries: &'a dyn EntryIndex,
    fetched: std::sync::Mutex<std::collections::HashMap<(u32, Section), Fetch>>,
}

/// A timeline fetched, or the owner's absence.
type Fetch = Option<Arc<Timeline>>;

impl<'a> Timelines<'a> {
    pub fn new(entries: &'a dyn EntryIndex) -> Self {
        Self { entries, fetched: Default::default() }
    }

    /// The index the timelines come from.
    pub fn entries(&self) -> &'a dyn EntryIndex {
        self.entries
    }

    /// Owner `video`'s timeline of `section` (see [`EntryIndex::timeline`]).
    pub fn get(&self, video: u32, section: Section) -> Result<Fetch, IndexError> {
        if let Some(known) = self.fetched.lock().ok().and_then(|f| f.get(&(video, section)).cloned()) {
            return Ok(known);
        }
        let timeline = self.entries.timeline(video, section)?.map(Arc::new);
        if let Ok(mut f) = self.fetched.lock() {
            f.insert((video, section), timeline.clone());
        }
        Ok(timeline)
    }
}
