//! Rules that were counted in the code become rules of the schema (issue 37):
//!
//! - `users.username_key`: the username as the application compares it (Unicode lower case,
//!   computed in Rust by `services::users::username_key`), stored and uniquely indexed, so
//!   that "Émile" and "émile" are one name on SQLite as on PostgreSQL (SQLite's `lower()`
//!   folds ASCII only, so the old index on `lower(username)` let both in and never found
//!   "Émile" by "émile"). Existing rows are keyed here; should two of them fold to the same
//!   key (possible on SQLite until now), the later account's key gets `#<id>` appended: it
//!   keeps its name and signs in by email address, and the log says so.
//! - One review per person per identification: a unique index on
//!   `testimonials (user_id, identification_id)` (NULLs, reviews of no identification, stay
//!   free). Duplicates that a race let in before are removed first, the earliest kept.
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, Statement};

use crate::m20261122_000001_foundation::Users;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum UsersKey {
    UsernameKey,
}

/// The same fold as `services::users::username_key` (the app crate depends on this one, not
/// the other way round, so the one line lives in both places).
fn username_key(username: &str) -> String {
    username.trim().to_lowercase()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table(Users::Table)
                .add_column(ColumnDef::new(UsersKey::UsernameKey).string_len(256).not_null().default(""))
                .to_owned(),
        )
        .await?;
        let db = m.get_connection();
        let backend = db.get_database_backend();
        let rows =
            db.query_all_raw(Statement::from_string(backend, "SELECT id, username FROM users ORDER BY id")).await?;
        let mut seen = std::collections::HashSet::new();
        for row in rows {
            let id: i64 = row.try_get("", "id")?;
            let name: String = row.try_get("", "username")?;
            let mut key = username_key(&name);
            if !seen.insert(key.clone()) {
                eprintln!(
                    "migration: username {name:?} (account {id}) folds to an earlier account's name; it signs in by email"
                );
                key = format!("{key}#{id}");
            }
            let sql = match backend {
                sea_orm_migration::sea_orm::DatabaseBackend::Postgres => {
                    "UPDATE users SET username_key = $1 WHERE id = $2"
                }
                _ => "UPDATE users SET username_key = ? WHERE id = ?",
            };
            db.execute_raw(Statement::from_sql_and_values(backend, sql, [key.into(), id.into()])).await?;
        }
        db.execute_unprepared("DROP INDEX IF EXISTS idx_users_username_lower").await?;
        db.execute_unprepared("CREATE UNIQUE INDEX IF NOT EXISTS idx_users_username_key ON users (username_key)")
            .await?;

        db.execute_unprepared(
            "DELETE FROM testimonials WHERE identification_id IS NOT NULL AND id NOT IN \
             (SELECT MIN(id) FROM testimonials WHERE identification_id IS NOT NULL GROUP BY user_id, identification_id)",
        )
        .await?;
        db.execute_unprepared(
            "CREATE UNIQUE INDEX IF NOT EXISTS idx_testimonials_user_identification \
             ON testimonials (user_id, identification_id)",
        )
        .await?;
        Ok(())
    }
}
