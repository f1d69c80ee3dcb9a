//! The memory's rows and where their hashes are searched.
//!
//! The database is the source of truth every node shares. By default each node's [`Memory`]
//! holds an [`EmbeddedIndex`] of every remembered hash and reads the rows it has not seen
//! before a lookup, at most every [`REFRESH_EVERY`](super::REFRESH_EVERY): rows after the
//! highest id it holds, and (ids are drawn before a transaction commits, so a row can appear
//! below that id) the rows of the last minute it does not hold yet. With an external index
//! ([`Memory::shared`]: the Library's Milvus, collection `{NAME}_memory`) the node that
//! remembers an answer writes its hashes there and every node searches it; no node keeps a
//! copy or reads the hash rows. Hash rows are only ever added; what an answer says (its
//! title, its standing) is read from its row when it is found, so a correction made on one
//! node holds on every node at once.
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Utc};
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set};

use super::hashes::{Probe, Section};
use super::index::EmbeddedIndex;
use super::{Near, REFRESH_EVERY, candidates, decide};
use crate::entities::{remembered_answer, remembered_hash};
use crate::library::index::entries::{EntryIndex, IndexError, VideoEntries};
use crate::library::picture::hash::Hash;

/// Indexes smaller than this are scanned on the request's own thread.
const INLINE_SCAN: usize = 20_000;
/// Rows read per query while catching up.
const BATCH: u64 = 50_000;
/// A row's id is drawn before its transaction commits; one that commits later than this
/// after it was written could be missed by the other nodes (transactions here take
/// milliseconds).
const LATE_COMMIT_SECS: i64 = 60;

/// What a new remembered answer says.
#[derive(Clone, Debug)]
pub struct NewAnswer {
    pub tmdb_id: i64,
    pub media_type: String,
    pub season: Option<u32>,
    pub episode: Option<u32>,
    pub title: String,
    pub year: Option<String>,
    pub engine: String,
    pub confidence: f64,
    pub media_kind: String,
}

/// What the memory found for an upload.
#[derive(Clone, Debug, Default)]
pub struct Recall {
    /// The remembered answer the upload is closest to, whatever its standing (an engine's
    /// answer to this upload is then linked to it rather than remembered twice).
    pub near: Option<i64>,
    /// The answer to give from memory: close, unambiguous and standing.
    pub answer: Option<remembered_answer::Model>,
    pub dist: Option<u32>,
}

#[derive(Default)]
struct Sync {
    high: i64,
    /// Ids of the last minute's rows this node holds, with their time.
    recent: HashMap<i64, DateTime<Utc>>,
    last: Option<Instant>,
}

/// What reading or writing the memory can fail on.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
    #[error("the memory's index: {0}")]
    Index(#[from] IndexError),
}

/// The answer memory as this node sees it: the rows, and the index its lookups ask.
pub struct Memory {
    /// What the lookups ask (the seam): `embedded`, or the external engine's collection.
    index: Arc<dyn EntryIndex>,
    /// This node's own copy, kept in step with the rows; `None` when the index is shared.
    embedded: Option<Arc<EmbeddedIndex>>,
    sync: tokio::sync::Mutex<Sync>,
}

impl Default for Memory {
    fn default() -> Self {
        Self::new()
    }
}

fn hash_of(r: &remembered_hash::Model) -> [u64; 4] {
    [r.h0 as u64, r.h1 as u64, r.h2 as u64, r.h3 as u64]
}

impl Memory {
    /// A memory searched in this node's own copy ([`EmbeddedIndex`]).
    pub fn new() -> Self {
        let embedded = Arc::new(EmbeddedIndex::new());
        Self { index: embedded.clone(), embedded: Some(embedded), sync: Default::default() }
    }

    /// A memory searched in `index`, which every node shares and writes to (an external
    /// engine's collection): nothing is copied to this node.
    pub fn shared(index: Arc<dyn EntryIndex>) -> Self {
        Self { index, embedded: None, sync: Default::default() }
    }

    /// What the lookups ask (for the benchmark, tests and the start-up log).
    pub fn index(&self) -> &dyn EntryIndex {
        self.index.as_ref()
    }

    /// Whether the index is an external one every node shares.
    pub fn is_shared(&self) -> bool {
        self.embedded.is_none()
    }

    /// Reads the hash rows this node has not seen into its own copy, if the last reading is
    /// older than [`REFRESH_EVERY`] (or `force`). Nothing to do with a shared index.
    pub async fn refresh(&self, db: &impl ConnectionTrait, force: bool) -> Result<(), sea_orm::DbErr> {
        let Some(embedded) = &self.embedded else { return Ok(()) };
        let mut s = self.sync.lock().await;
        if !force && s.last.is_some_and(|t| t.elapsed() < REFRESH_EVERY) {
            return Ok(());
        }
        use remembered_hash::Column as C;
        let cutoff = Utc::now() - chrono::Duration::seconds(LATE_COMMIT_SECS);
        let high = s.high;
        s.recent.retain(|id, at| *at > cutoff || *id > high);
        // Late commits: rows of the last minute below the highest id held.
        let late =
            remembered_hash::Entity::find().filter(C::CreatedAt.gt(cutoff)).filter(C::Id.lte(s.high)).all(db).await?;
        let mut add = Vec::new();
        for r in late {
            if let std::collections::hash_map::Entry::Vacant(e) = s.recent.entry(r.id) {
                e.insert(r.created_at);
                add.push(r);
            }
        }
        loop {
            let rows = remembered_hash::Entity::find()
                .filter(C::Id.gt(s.high))
                .order_by_asc(C::Id)
                .limit(BATCH)
                .all(db)
                .await?;
            let n = rows.len() as u64;
            for r in rows {
                s.high = s.high.max(r.id);
                if r.created_at > cutoff {
                    s.recent.insert(r.id, r.created_at);
                }
                add.push(r);
            }
            if n < BATCH {
                break;
            }
        }
        embedded.add(add.iter().filter_map(|r| Some((r.memory_id, Section::from_i16(r.section)?, hash_of(r)))));
        s.last = Some(Instant::now());
        Ok(())
    }

    /// What the memory says about `probe`.
    pub async fn recall(&self, db: &impl ConnectionTrait, probe: &Probe) -> Result<Recall, MemoryError> {
        if probe.pictures.is_empty() {
            return Ok(Recall::default());
        }
        self.refresh(db, false).await?;
        // A small copy of our own is scanned at once; a large one (a scan of 10^6 answers
        // takes milliseconds of every core) and an external engine (the network) on the
        // blocking pool.
        let found: Vec<Near> = match &self.embedded {
            Some(own) if own.count() < INLINE_SCAN => candidates(own.as_ref(), probe)?,
            _ => {
                let (index, probe) = (self.index.clone(), probe.clone());
                tokio::task::spawn_blocking(move || candidates(index.as_ref(), &probe))
                    .await
                    .map_err(|e| IndexError::Storage(format!("memory scan: {e}")))??
            }
        };
        if found.is_empty() {
            return Ok(Recall::default());
        }
        let ids: Vec<i64> = found.iter().take(16).map(|n| n.memory_id).collect();
        let rows: HashMap<i64, remembered_answer::Model> = remembered_answer::Entity::find()
            .filter(remembered_answer::Column::Id.is_in(ids))
            .all(db)
            .await?
            .into_iter()
            .map(|r| (r.id, r))
            .collect();
        let found: Vec<Near> = found.into_iter().filter(|n| rows.contains_key(&n.memory_id)).take(16).collect();
        let near = found.first().map(|n| n.memory_id);
        let key = |id: i64| rows.get(&id).map(|r| (r.tmdb_id, r.media_type.clone(), r.season, r.episode));
        let chosen = decide(&found, key);
        let answer = chosen.and_then(|n| rows.get(&n.memory_id)).filter(|r| r.standing).cloned();
        Ok(Recall { near, dist: chosen.map(|n| n.dist), answer })
    }

    /// Remembers `answer` for the pictures of `probe`; the new row's id.
    pub async fn remember(
        &self,
        db: &impl ConnectionTrait,
        probe: &Probe,
        answer: NewAnswer,
    ) -> Result<Option<i64>, MemoryError> {
        if probe.pictures.is_empty() {
            return Ok(None);
        }
        let now = Utc::now();
        let row = remembered_answer::ActiveModel {
            tmdb_id: Set(answer.tmdb_id),
            media_type: Set(answer.media_type),
            season: Set(answer.season.map(|s| s as i32)),
            episode: Set(answer.episode.map(|e| e as i32)),
            title: Set(answer.title.chars().take(300).collect()),
            year: Set(answer.year.map(|y| y.chars().take(32).collect())),
            engine: Set(answer.engine.chars().take(32).collect()),
            confidence: Set(answer.confidence),
            media_kind: Set(answer.media_kind),
            supporters: Set(0),
            support_weight: Set(0.0),
            doubt_weight: Set(0.0),
            standing: Set(true),
            pinned: Set(false),
            previous_title: Set(None),
            corrected_at: Set(None),
            created_at: Set(now),
            updated_at: Set(now),
            ..Default::default()
        }
        .insert(db)
        .await?;
        let entries = probe.pictures.iter().flat_map(|p| [(Section::Whole, p.whole), (Section::Centre, p.centre)]);
        let models: Vec<remembered_hash::ActiveModel> = entries
            .map(|(section, h)| remembered_hash::ActiveModel {
                memory_id: Set(row.id),
                section: Set(section as i16),
                h0: Set(h[0] as i64),
                h1: Set(h[1] as i64),
                h2: Set(h[2] as i64),
                h3: Set(h[3] as i64),
                created_at: Set(now),
                ..Default::default()
            })
            .collect();
        remembered_hash::Entity::insert_many(models).exec(db).await?;
        if self.embedded.is_some() {
            // This node holds its own answer at once; the others at their next refresh.
            self.refresh(db, true).await?;
        } else {
            // Every node searches the shared index: the answer is written there (the rows
            // stay the record; an answer whose write failed is not found by the memory, and
            // the engines are asked for that scene again).
            self.put_shared(row.id, probe).await?;
        }
        Ok(Some(row.id))
    }

    /// Writes an answer's hashes to the shared index (owner: the answer's id).
    async fn put_shared(&self, id: i64, probe: &Probe) -> Result<(), MemoryError> {
        let owner =
            u32::try_from(id).map_err(|_| IndexError::Storage(format!("answer id {id} past the index's owners")))?;
        let whole: Vec<(Hash, u32)> = probe.pictures.iter().map(|p| (p.whole, 0)).collect();
        let centre: Vec<(Hash, u32)> = probe.pictures.iter().map(|p| (p.centre, 0)).collect();
        let index = self.index.clone();
        tokio::task::spawn_blocking(move || {
            index.put(owner, &VideoEntries { frames: &whole, crops: &centre, ..Default::default() })
        })
        .await
        .map_err(|e| IndexError::Storage(format!("memory write: {e}")))??;
        Ok(())
    }
}
