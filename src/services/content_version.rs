//! What public answers are built from, as one version that every node can compare.
//!
//! What an anonymous visitor gets from the settings answer, the home page, the about page
//! and the blog changes only when someone writes: an admin saves a setting, a post, a
//! picture or a testimonial's moderation; a featured reviewer changes their name; an
//! account goes. Each of those writes calls [`bump`] after its own write (or inside its
//! transaction), which draws a new random `generation` in the one-row `content_versions`
//! table every node shares (random, not counted up: a value from a transaction that rolled
//! back is never seen again). A scheduled post goes live with no write at all, so the
//! [`Version`] also holds the newest publication time that has come.
//!
//! A node keeps what it built from that content (the settings map, the public answers of
//! `routes::public_answers`) tagged with the version it read *before* building, and uses it
//! only while the version it reads is still the same. [`Tracker`] reads the version at most
//! once per interval (`REELFIND_CONTENT_CHECK_MS`, 500 ms by default): requests in between
//! use the last reading; the first request after the interval starts a new reading in the
//! background and goes on with the last one; only when the last reading is two intervals
//! old does a request wait for a new one. So an edit made on one node is seen by every
//! node within two intervals (1 s by default) plus one small query, and a node that wrote
//! reads again at once.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set};

use crate::entities::{blog_post, content_version};

/// How often a node reads the version by default.
pub const CHECK_EVERY: Duration = Duration::from_millis(500);

/// What public answers were built from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Version {
    /// Redrawn by every write that changes public content.
    pub generation: i64,
    /// The newest publication time of a visible post (a scheduled post going live changes it).
    pub newest_post: Option<DateTime<Utc>>,
}

/// Marks public content as changed, for every node. Call it after the write (or in its
/// transaction), never before: a node reading between the two would tag the old content
/// with the new version.
pub async fn bump(db: &impl ConnectionTrait) -> Result<(), sea_orm::DbErr> {
    let row = content_version::ActiveModel {
        id: Set(1),
        generation: Set(rand::random::<i64>()),
        changed_at: Set(Utc::now()),
    };
    content_version::Entity::insert(row)
        .on_conflict(
            OnConflict::column(content_version::Column::Id)
                .update_columns([content_version::Column::Generation, content_version::Column::ChangedAt])
                .to_owned(),
        )
        .exec(db)
        .await?;
    Ok(())
}

/// The version as the database has it now.
pub async fn read(db: &impl ConnectionTrait) -> Result<Version, sea_orm::DbErr> {
    let generation = content_version::Entity::find_by_id(1).one(db).await?.map_or(0, |r| r.generation);
    let newest_post: Result<Option<Option<DateTime<Utc>>>, _> = blog_post::Entity::find()
        .select_only()
        .column(blog_post::Column::PublishedAt)
        .filter(crate::services::blog::visible())
        .order_by_desc(blog_post::Column::PublishedAt)
        .limit(1)
        .into_tuple()
        .one(db)
        .await;
    // The blog failing is the blog's error to show (its pages say so); the settings and
    // every other page still have a version.
    let newest_post = newest_post.unwrap_or_else(|error| {
        tracing::warn!(%error, "the newest blog post could not be read for the content version");
        None
    });
    Ok(Version { generation, newest_post: newest_post.flatten() })
}

/// This node's reading of the version (see the module docs for when it reads again).
pub struct Tracker {
    /// The last reading and when the query for it started.
    seen: Mutex<Option<(Version, Instant)>>,
    refreshing: AtomicBool,
    every: Duration,
}

impl Tracker {
    pub fn new(every: Duration) -> Arc<Self> {
        Arc::new(Self { seen: Mutex::new(None), refreshing: AtomicBool::new(false), every })
    }

    /// How long a reading is used before the next one starts.
    pub fn interval(&self) -> Duration {
        self.every
    }

    /// The version, read at most two intervals ago.
    pub async fn current(self: &Arc<Self>, db: &DatabaseConnection) -> Result<Version, sea_orm::DbErr> {
        match self.fresh(db) {
            Some(version) => Ok(version),
            None => self.refresh(db).await,
        }
    }

    /// The last reading when it is recent enough to use without waiting (younger than two
    /// intervals; past one, a new reading is started in the background), else `None` and the
    /// caller reads with [`Tracker::current`]. No query and no allocation on this path: the
    /// public answers answer from it without leaving the request's `call`.
    pub fn fresh(self: &Arc<Self>, db: &DatabaseConnection) -> Option<Version> {
        let (version, at) = (*self.seen.lock().unwrap_or_else(PoisonError::into_inner))?;
        let age = at.elapsed();
        if age < self.every {
            return Some(version);
        }
        if age >= self.every * 2 {
            return None;
        }
        if !self.refreshing.swap(true, Ordering::AcqRel) {
            let (me, db) = (self.clone(), db.clone());
            tokio::spawn(async move {
                if let Err(error) = me.refresh(&db).await {
                    tracing::warn!(%error, "the content version could not be read");
                }
                me.refreshing.store(false, Ordering::Release);
            });
        }
        Some(version)
    }

    /// Reads the version now (after this node wrote, or when the last reading is too old).
    pub async fn refresh(&self, db: &impl ConnectionTrait) -> Result<Version, sea_orm::DbErr> {
        let started = Instant::now();
        let version = read(db).await?;
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        match *seen {
            // A reading that started later finished first: it is the newer one.
            Some((newer, at)) if at > started => Ok(newer),
            _ => {
                *seen = Some((version, started));
                Ok(version)
            }
        }
    }
}
