//! Database connection and migrations: SQLite by default, PostgreSQL by URL.
use std::time::Duration;

use migration::{Migrator, MigratorTrait};
use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
use sea_orm::{
    ConnectOptions, ConnectionTrait, Database, DatabaseBackend, DatabaseConnection, DbErr, SqliteTransactionMode,
    Statement, TransactionOptions, TransactionTrait,
};

/// Opens the database named by `url`, creating a SQLite file's folder when needed.
pub async fn connect(url: &str) -> Result<DatabaseConnection, DbErr> {
    let mut opts = ConnectOptions::new(url.to_owned());
    opts.sqlx_logging(false).acquire_timeout(Duration::from_secs(10));
    if url.starts_with("sqlite:") {
        if let Some(path) = sqlite_file(url)
            && let Some(dir) = std::path::Path::new(&path).parent().filter(|d| !d.as_os_str().is_empty())
        {
            std::fs::create_dir_all(dir).map_err(|e| DbErr::Custom(format!("cannot create {}: {e}", dir.display())))?;
        }
        let in_memory = url.contains(":memory:") || url.contains("mode=memory");
        if in_memory {
            // Every connection to :memory: is its own database: keep exactly one.
            opts.max_connections(1).min_connections(1).idle_timeout(None::<Duration>).max_lifetime(None::<Duration>);
        } else {
            opts.max_connections(8);
        }
        opts.map_sqlx_sqlite_opts(move |o| {
            let o = o.foreign_keys(true).busy_timeout(Duration::from_secs(10));
            // WAL with synchronous=NORMAL (SQLite's recommendation for WAL): a commit no
            // longer waits for an fsync (checkpoints still do), which took 1-20 ms per
            // write on a busy disk. The database stays consistent; a power cut may lose
            // the last commits, never corrupt.
            if in_memory { o } else { o.journal_mode(SqliteJournalMode::Wal).synchronous(SqliteSynchronous::Normal) }
        });
    } else {
        opts.max_connections(16);
    }
    Database::connect(opts).await
}

/// Key of the PostgreSQL advisory lock held while migrating ("reelfind" in ASCII).
const MIGRATION_LOCK: i64 = 0x7265_656c_6669_6e64;

/// Brings the schema up to date; safe to call at every start, and from several nodes
/// starting at once: migrations run under a lock (a PostgreSQL advisory lock held by one
/// connection; for a SQLite file, an exclusive lock on `{file}.migrate-lock`), so the
/// second node waits and then finds nothing left to do.
pub async fn migrate(db: &DatabaseConnection) -> Result<(), DbErr> {
    match db.get_database_backend() {
        DatabaseBackend::Postgres => {
            let pool = db.get_postgres_connection_pool();
            let mut conn = pool.acquire().await.map_err(|e| DbErr::Custom(format!("migration lock: {e}")))?;
            sea_orm::sqlx::query("SELECT pg_advisory_lock($1)")
                .bind(MIGRATION_LOCK)
                .execute(&mut *conn)
                .await
                .map_err(|e| DbErr::Custom(format!("migration lock: {e}")))?;
            let result = Migrator::up(db, None).await;
            let unlocked =
                sea_orm::sqlx::query("SELECT pg_advisory_unlock($1)").bind(MIGRATION_LOCK).execute(&mut *conn).await;
            if let Err(e) = unlocked {
                // The lock goes with the connection; drop it rather than return it to the pool.
                tracing::warn!(error = %e, "could not release the migration lock; closing its connection");
                conn.detach();
            }
            result
        }
        _ => {
            let _lock = match sqlite_main_file(db).await? {
                Some(file) => Some(lock_file(format!("{file}.migrate-lock")).await?),
                None => None,
            };
            Migrator::up(db, None).await
        }
    }
}

/// The file behind a SQLite connection (`None` in memory).
async fn sqlite_main_file(db: &DatabaseConnection) -> Result<Option<String>, DbErr> {
    let row = db
        .query_one_raw(Statement::from_string(
            DatabaseBackend::Sqlite,
            "SELECT file FROM pragma_database_list WHERE name = 'main'",
        ))
        .await?;
    Ok(row.and_then(|r| r.try_get::<String>("", "file").ok()).filter(|f| !f.is_empty()))
}

/// An exclusive lock on `path`, held until the file is dropped.
async fn lock_file(path: String) -> Result<std::fs::File, DbErr> {
    tokio::task::spawn_blocking(move || {
        let f = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path)?;
        f.lock()?;
        Ok::<_, std::io::Error>(f)
    })
    .await
    .map_err(|e| DbErr::Custom(format!("migration lock: {e}")))?
    .map_err(|e| DbErr::Custom(format!("migration lock: {e}")))
}

fn sqlite_file(url: &str) -> Option<String> {
    let rest = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next()?;
    (!path.is_empty() && path != ":memory:").then(|| path.to_owned())
}

/// Starts a transaction that will write. On SQLite it is `BEGIN IMMEDIATE`, which takes the
/// write lock at once (waiting up to the busy timeout): a deferred transaction that reads
/// first and writes later fails with "database is locked" without waiting when another
/// connection commits in between (WAL cannot move its read snapshot forward), which
/// happened whenever a page's analytics beacon landed during an email verification.
/// PostgreSQL ignores the mode.
pub async fn begin_write<C: TransactionTrait>(db: &C) -> Result<C::Transaction, DbErr> {
    db.begin_with_options(TransactionOptions {
        sqlite_transaction_mode: Some(SqliteTransactionMode::Immediate),
        ..Default::default()
    })
    .await
}

/// An OFFSET both databases take: SQL integers are signed 64-bit, so a larger request
/// (a client's `offset=18446744073709551615`) would fail the query; past the end is empty.
pub fn sql_offset(n: u64) -> u64 {
    n.min(i64::MAX as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn exec(db: &impl ConnectionTrait, sql: &str) -> Result<(), DbErr> {
        db.execute_raw(Statement::from_string(DatabaseBackend::Sqlite, sql)).await.map(|_| ())
    }

    /// The race behind "Something went wrong" on the verify page: a transaction reads, another
    /// connection commits a write, then the transaction writes. With `begin_write` the
    /// transaction holds the write lock from its start, so the other writer cannot commit in
    /// between: one that will not wait is refused at once (`database is locked`), one that
    /// waits (the busy timeout) writes after the commit. With a deferred `BEGIN` the first
    /// writer's commit went through and the transaction's own write then failed.
    #[tokio::test]
    async fn a_write_transaction_that_reads_first_survives_a_concurrent_commit() {
        use sea_orm::sqlx::ConnectOptions as _;
        use sea_orm::sqlx::sqlite::SqliteConnectOptions;

        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("t.db").display());
        let db = connect(&url).await.unwrap();
        exec(&db, "CREATE TABLE t (x INTEGER)").await.unwrap();
        exec(&db, "INSERT INTO t VALUES (1)").await.unwrap();

        let txn = begin_write(&db).await.unwrap();
        exec(&txn, "SELECT x FROM t").await.unwrap();
        // Another connection that does not wait for locks tries to commit a write now.
        let mut impatient =
            url.parse::<SqliteConnectOptions>().unwrap().busy_timeout(Duration::ZERO).connect().await.unwrap();
        let refused = sea_orm::sqlx::query("INSERT INTO t VALUES (3)").execute(&mut impatient).await;
        let err = refused.expect_err("no other write commits while the transaction is open");
        assert!(err.to_string().contains("locked"), "{err}");
        // One that waits: it writes once the transaction has committed.
        let other = db.clone();
        let writer = tokio::spawn(async move { exec(&other, "INSERT INTO t VALUES (2)").await });
        exec(&txn, "DELETE FROM t WHERE x = 1").await.expect("the transaction's write");
        txn.commit().await.unwrap();
        writer.await.unwrap().expect("the other writer waited, then wrote");
        let rows = db
            .query_all_raw(Statement::from_string(DatabaseBackend::Sqlite, "SELECT x FROM t ORDER BY x"))
            .await
            .unwrap();
        let xs: Vec<i64> = rows.iter().map(|r| r.try_get::<i64>("", "x").unwrap()).collect();
        assert_eq!(xs, [2], "the transaction's delete and the patient writer's insert, nothing else");
    }
}
