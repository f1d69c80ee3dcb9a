//! The catalog in the database every node shares: used when the hashes live in an external
//! index (Milvus), so that a node knows every video whoever added it, and an admin's edit on
//! one node holds on all of them. Tables: `library_videos`, `library_catalog` (next id and
//! version), `library_sounds` (the audio tier's bytes) and `library_pending` (ids of ingests
//! not published yet); see the migration
//! `m20261209_100000_library_catalog`.
//!
//! A node keeps the catalog it read and the version it read it at; it asks for the version
//! again before a search, and at most every [`CHECK_EVERY`] for everything else (pages ask
//! whether the Library serves). A change is made from the version read: the writer raises the
//! version only if it is still the one it read, else reads again and makes its change anew
//! (optimistic, so no lock is held while the caller's change runs).
//!
//! Calls block, as the rest of the index does: they run on a runtime of the catalog's own
//! ([`blocking::Runtime`](crate::library::blocking::Runtime)).
use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::Context;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, Set,
};

use super::store::{Catalog, Pending, VideoMeta, VideoRecord};
use crate::entities::{library_catalog, library_pending, library_sound, library_video};
use crate::library::blocking::Runtime;

/// How long a node trusts the version it read for anything but a search.
pub const CHECK_EVERY: Duration = Duration::from_millis(250);
/// Tries of a change that keeps meeting a newer version (another writer each time).
const TRIES: usize = 50;

/// The database to keep the catalog in: its address, and the application's own connection
/// when there is one (an in-memory SQLite database is reachable only through it).
#[derive(Clone, Debug)]
pub struct CatalogDatabase {
    pub url: String,
    pub connection: Option<DatabaseConnection>,
}

impl CatalogDatabase {
    pub fn url(url: impl Into<String>) -> Self {
        Self { url: url.into(), connection: None }
    }
}

/// The catalog's rows, read and written from any thread.
pub struct SharedCatalog {
    runtime: Runtime,
    db: DatabaseConnection,
    /// The version last read, and when.
    checked: Mutex<Option<(i64, Instant)>>,
}

impl SharedCatalog {
    /// Connects (a pool of its own, on its own runtime, for a database server, whose sockets
    /// belong to the runtime that opened them; the application's connection for SQLite, whose
    /// connections each run on a thread of their own, and which in memory is reachable only
    /// through it) and brings the
    /// schema up to date (a no-op when the server already did, safe beside other nodes).
    pub fn open(database: &CatalogDatabase) -> anyhow::Result<Self> {
        let runtime = Runtime::new("library-catalog")?;
        let reuse =
            database.connection.clone().filter(|c| c.get_database_backend() == sea_orm::DatabaseBackend::Sqlite);
        let url = database.url.clone();
        let db = runtime
            .wait(async move {
                let db = match reuse {
                    Some(db) => db,
                    None => crate::db::connect(&url).await?,
                };
                crate::db::migrate(&db).await?;
                Ok::<_, sea_orm::DbErr>(db)
            })
            .context("the catalog's runtime stopped")?
            .context("cannot open the Library's catalog in the database")?;
        Ok(Self { runtime, db, checked: Mutex::new(None) })
    }

    fn call<T, Fut>(&self, f: impl FnOnce(DatabaseConnection) -> Fut) -> anyhow::Result<T>
    where
        T: Send + 'static,
        Fut: Future<Output = Result<T, sea_orm::DbErr>> + Send + 'static,
    {
        self.runtime
            .wait(f(self.db.clone()))
            .context("the catalog's runtime stopped")?
            .context("the Library's catalog in the database")
    }

    /// The catalog's version: asked of the database when `fresh`, or when the last answer is
    /// older than [`CHECK_EVERY`].
    pub fn version(&self, fresh: bool) -> anyhow::Result<i64> {
        if !fresh
            && let Ok(c) = self.checked.lock()
            && let Some((v, at)) = *c
            && at.elapsed() < CHECK_EVERY
        {
            return Ok(v);
        }
        let v = self.call(|db| async move { state(&db).await.map(|s| s.version) })?;
        self.note(v);
        Ok(v)
    }

    fn note(&self, version: i64) {
        if let Ok(mut c) = self.checked.lock() {
            *c = Some((version, Instant::now()));
        }
    }

    /// Every video with the version they are of (read until the version before and after the
    /// videos agree, so that no writer's change is seen half).
    pub fn load(&self) -> anyhow::Result<(Catalog, i64)> {
        let (catalog, version) = self.call(|db| async move { read(&db).await })?;
        self.note(version);
        Ok((catalog, version))
    }

    /// Reads the catalog, lets `change` edit it and writes what changed, if the version is
    /// still the one read; else does it all again from the newer catalog.
    pub fn update<T>(&self, mut change: impl FnMut(&mut Catalog) -> anyhow::Result<T>) -> anyhow::Result<T> {
        for _ in 0..TRIES {
            let (before, version) = self.load()?;
            let mut after = before.clone();
            let out = change(&mut after)?;
            let written = self.call(move |db| async move { write(&db, &before, &after, version).await })?;
            if let Some(v) = written {
                self.note(v);
                return Ok(out);
            }
        }
        anyhow::bail!("the Library's catalog kept changing under this change ({TRIES} tries); try again")
    }

    /// Replaces the whole catalog (a library moved here; see `migrate`).
    pub fn replace(&self, catalog: &Catalog) -> anyhow::Result<()> {
        self.update(|c| {
            // Ids are never given twice, even if this catalog gave more than the moved one.
            c.next_id = c.next_id.max(catalog.next_id);
            c.videos = catalog.videos.clone();
            Ok(())
        })
    }

    /// Keeps a video's soundtrack landmarks (the bytes of its landmark file).
    pub fn put_sound(&self, video: u32, bytes: Vec<u8>) -> anyhow::Result<()> {
        self.call(move |db| async move {
            library_sound::Entity::delete_by_id(video as i64).exec(&db).await?;
            library_sound::ActiveModel { video_id: Set(video as i64), landmarks: Set(bytes) }.insert(&db).await?;
            Ok(())
        })
    }

    /// A video's soundtrack landmarks, if they were kept.
    pub fn sound(&self, video: u32) -> anyhow::Result<Option<Vec<u8>>> {
        self.call(move |db| async move {
            Ok(library_sound::Entity::find_by_id(video as i64).one(&db).await?.map(|s| s.landmarks))
        })
    }
}

async fn state(db: &impl ConnectionTrait) -> Result<library_catalog::Model, sea_orm::DbErr> {
    library_catalog::Entity::find_by_id(1)
        .one(db)
        .await?
        .ok_or_else(|| sea_orm::DbErr::RecordNotFound("library_catalog row 1 (run the migrations)".into()))
}

async fn read(db: &DatabaseConnection) -> Result<(Catalog, i64), sea_orm::DbErr> {
    loop {
        let before = state(db).await?;
        let rows = library_video::Entity::find().order_by_asc(library_video::Column::Id).all(db).await?;
        let pending = library_pending::Entity::find().order_by_asc(library_pending::Column::VideoId).all(db).await?;
        let after = state(db).await?;
        if before.version == after.version {
            let catalog = Catalog {
                version: 1,
                next_id: u32::try_from(after.next_id).unwrap_or(u32::MAX),
                videos: rows.into_iter().map(record).collect(),
                pending: pending.into_iter().map(|p| Pending { id: p.video_id as u32, since: p.since }).collect(),
            };
            return Ok((catalog, after.version));
        }
    }
}

/// Writes the difference between `before` and `after` if the version is still `version`;
/// the new version, or `None` when another writer came first.
async fn write(
    db: &DatabaseConnection,
    before: &Catalog,
    after: &Catalog,
    version: i64,
) -> Result<Option<i64>, sea_orm::DbErr> {
    let txn = crate::db::begin_write(db).await?;
    // The version first: on PostgreSQL the row stays locked until the commit, so a second
    // writer from the same version waits here and then finds it raised.
    let raised = library_catalog::Entity::update_many()
        .col_expr(library_catalog::Column::Version, sea_orm::sea_query::Expr::value(version + 1))
        .col_expr(library_catalog::Column::NextId, sea_orm::sea_query::Expr::value(after.next_id.max(1) as i64))
        .filter(library_catalog::Column::Id.eq(1))
        .filter(library_catalog::Column::Version.eq(version))
        .exec(&txn)
        .await?;
    if raised.rows_affected != 1 {
        txn.rollback().await?;
        return Ok(None);
    }
    let old: HashMap<u32, &VideoRecord> = before.videos.iter().map(|v| (v.id, v)).collect();
    let new: HashMap<u32, &VideoRecord> = after.videos.iter().map(|v| (v.id, v)).collect();
    let gone: Vec<i64> = old.keys().filter(|id| !new.contains_key(id)).map(|&id| id as i64).collect();
    let done: Vec<i64> = before.pending.iter().filter(|p| !after.pending.contains(p)).map(|p| p.id as i64).collect();
    // Soundtracks go with their videos, and with ingests dropped before they published one.
    let silenced: Vec<i64> =
        gone.iter().chain(done.iter().filter(|&&id| !new.contains_key(&(id as u32)))).copied().collect();
    let changed: Vec<&VideoRecord> = after.videos.iter().filter(|v| old.get(&v.id).is_none_or(|o| *o != *v)).collect();
    let mut replaced: Vec<i64> = changed.iter().filter(|v| old.contains_key(&v.id)).map(|v| v.id as i64).collect();
    replaced.extend(&gone);
    if !replaced.is_empty() {
        library_video::Entity::delete_many().filter(library_video::Column::Id.is_in(replaced)).exec(&txn).await?;
    }
    if !silenced.is_empty() {
        library_sound::Entity::delete_many().filter(library_sound::Column::VideoId.is_in(silenced)).exec(&txn).await?;
    }
    for v in changed {
        row(v).insert(&txn).await?;
    }
    if !done.is_empty() {
        library_pending::Entity::delete_many().filter(library_pending::Column::VideoId.is_in(done)).exec(&txn).await?;
    }
    for p in after.pending.iter().filter(|p| !before.pending.contains(p)) {
        library_pending::ActiveModel { video_id: Set(p.id as i64), since: Set(p.since) }.insert(&txn).await?;
    }
    txn.commit().await?;
    Ok(Some(version + 1))
}

fn row(v: &VideoRecord) -> library_video::ActiveModel {
    library_video::ActiveModel {
        id: Set(v.id as i64),
        path: Set(v.path.to_string_lossy().into_owned()),
        size: Set(i64::try_from(v.size).unwrap_or(i64::MAX)),
        mtime: Set(v.mtime),
        partial_hash: Set(v.partial_hash.clone()),
        title: Set(v.meta.title.clone()),
        year: Set(v.meta.year),
        show: Set(v.meta.show.clone()),
        season: Set(v.meta.season.map(|s| s as i32)),
        episode: Set(v.meta.episode.map(|e| e as i32)),
        meta_source: Set(v.meta.source.clone()),
        duration: Set(v.duration),
        frames: Set(v.frames as i32),
        crop_frames: Set(v.crop_frames as i32),
        upper_frames: Set(v.upper_frames as i32),
        audio_landmarks: Set(v.audio_landmarks as i32),
        indexed_at: Set(v.indexed_at.clone()),
        index_seconds: Set(v.index_seconds),
    }
}

fn record(m: library_video::Model) -> VideoRecord {
    VideoRecord {
        id: m.id as u32,
        path: PathBuf::from(m.path),
        size: m.size.max(0) as u64,
        mtime: m.mtime,
        partial_hash: m.partial_hash,
        meta: VideoMeta {
            title: m.title,
            year: m.year,
            show: m.show,
            season: m.season.map(|s| s as u32),
            episode: m.episode.map(|e| e as u32),
            source: m.meta_source,
        },
        duration: m.duration,
        frames: m.frames as u32,
        crop_frames: m.crop_frames as u32,
        upper_frames: m.upper_frames as u32,
        audio_landmarks: m.audio_landmarks as u32,
        indexed_at: m.indexed_at,
        index_seconds: m.index_seconds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn video(id: u32, title: &str) -> VideoRecord {
        VideoRecord {
            id,
            path: PathBuf::from(format!("/films/{title}.mp4")),
            size: 1000 + id as u64,
            mtime: 1_700_000_000,
            partial_hash: format!("hash{id}"),
            meta: VideoMeta { title: title.into(), year: Some(2008), source: "filename".into(), ..Default::default() },
            duration: 60.5,
            frames: 300,
            crop_frames: 40,
            upper_frames: 20,
            audio_landmarks: 7,
            indexed_at: "2026-11-28T22:00:00Z".into(),
            index_seconds: 3.25,
        }
    }

    /// A fresh database for the test: a SQLite file in `dir`, or with `TEST_DATABASE_URL` a
    /// PostgreSQL database of its own (dropped with the guard), so both databases' ways of
    /// making a second writer wait are what the tests check.
    struct Database {
        url: String,
        pg: Option<(String, String)>,
    }

    impl Database {
        fn new(dir: &std::path::Path) -> Self {
            let Some(admin) = std::env::var("TEST_DATABASE_URL").ok().filter(|u| !u.is_empty()) else {
                return Self { url: format!("sqlite://{}?mode=rwc", dir.join("shared.db").display()), pg: None };
            };
            let name = format!("reelfind_catalog_{}", uuid::Uuid::new_v4().simple());
            admin_sql(&admin, &format!("CREATE DATABASE \"{name}\""));
            let mut url = url::Url::parse(&admin).unwrap();
            url.set_path(&name);
            Self { url: url.to_string(), pg: Some((admin, name)) }
        }
    }

    impl Drop for Database {
        fn drop(&mut self) {
            if let Some((admin, name)) = &self.pg {
                admin_sql(admin, &format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"));
            }
        }
    }

    fn admin_sql(admin: &str, sql: &str) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let db = crate::db::connect(admin).await.unwrap();
            db.execute_unprepared(sql).await.unwrap();
            db.close().await.ok();
        });
    }

    fn catalog(db: &Database) -> SharedCatalog {
        SharedCatalog::open(&CatalogDatabase::url(db.url.clone())).unwrap()
    }

    /// Two handles on one database (two nodes): what one writes the other reads, with the
    /// version raised; a record round-trips every field; a removal takes its sound along.
    #[test]
    fn two_nodes_see_one_catalog_and_every_field_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::new(dir.path());
        let (a, b) = (catalog(&db), catalog(&db));
        let v0 = b.version(true).unwrap();
        let id = a
            .update(|c| {
                let id = c.next_id.max(1);
                c.next_id = id + 1;
                c.videos.push(video(id, "Big Buck Bunny"));
                Ok(id)
            })
            .unwrap();
        a.put_sound(id, vec![1, 2, 3]).unwrap();
        assert!(b.version(true).unwrap() > v0);
        let (seen, _) = b.load().unwrap();
        assert_eq!(seen.videos, vec![video(id, "Big Buck Bunny")]);
        assert_eq!(seen.next_id, id + 1);
        assert_eq!(b.sound(id).unwrap(), Some(vec![1, 2, 3]));

        // An edit on B, seen by A; then a removal on A takes the sound along.
        b.update(|c| {
            c.videos[0].meta.title = "Elephants Dream".into();
            c.videos[0].meta.source = "admin".into();
            Ok(())
        })
        .unwrap();
        assert_eq!(a.load().unwrap().0.videos[0].meta.title, "Elephants Dream");
        a.update(|c| {
            c.videos.clear();
            Ok(())
        })
        .unwrap();
        assert!(b.load().unwrap().0.videos.is_empty());
        assert_eq!(b.sound(id).unwrap(), None);
    }

    /// Writers on two nodes at once, each from the version it read: no change is lost and no
    /// id is given twice.
    #[test]
    fn concurrent_writers_lose_nothing_and_share_no_id() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::new(dir.path());
        let nodes = [catalog(&db), catalog(&db)];
        std::thread::scope(|s| {
            for (n, node) in nodes.iter().enumerate() {
                s.spawn(move || {
                    for i in 0..10 {
                        node.update(|c| {
                            let id = c.next_id.max(1);
                            c.next_id = id + 1;
                            c.videos.push(video(id, &format!("node{n}-{i}")));
                            Ok(())
                        })
                        .unwrap();
                    }
                });
            }
        });
        let (c, _) = nodes[0].load().unwrap();
        let mut ids: Vec<u32> = c.videos.iter().map(|v| v.id).collect();
        ids.dedup();
        assert_eq!(ids.len(), 20);
        assert_eq!(c.next_id, 21);
    }
}
