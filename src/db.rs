//! Database connection and migrations: SQLite by default, PostgreSQL by URL.
use std::time::Duration;

use migration::{Migrator, MigratorTrait};
use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
use sea_orm::{ConnectOptions, Database, DatabaseConnection, DbErr};

/// Opens the database named by `url`, creating a SQLite file's folder when needed.
pub async fn connect(url: &str) -> Result<DatabaseConnection, DbErr> {
    let mut opts = ConnectOptions::new(url.to_owned());
    opts.sqlx_logging(false).acquire_timeout(Duration::from_secs(10));
    if url.starts_with("sqlite:") {
        if let Some(path) = sqlite_file(url) {
            if let Some(dir) = std::path::Path::new(&path).parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .map_err(|e| DbErr::Custom(format!("cannot create {}: {e}", dir.display())))?;
            }
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

/// Brings the schema up to date; safe to call at every start.
pub async fn migrate(db: &DatabaseConnection) -> Result<(), DbErr> {
    Migrator::up(db, None).await
}

fn sqlite_file(url: &str) -> Option<String> {
    let rest = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next()?;
    (!path.is_empty() && path != ":memory:").then(|| path.to_owned())
}
