//! Analytics events the admin's Insight tab can count in the database: the UTC day, the
//! page path and referring host of a page view, and the engine, outcome and duration of an
//! identification or one engine's run. Added as plain columns (not read out of the JSON
//! metadata) so that grouping works the same way on SQLite and PostgreSQL, with an index on
//! the time for the retention sweep.
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DbBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum AnalyticsEvents {
    Table,
    Day,
    Path,
    Referrer,
    Engine,
    Outcome,
    DurationMs,
    Action,
    CreatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        // SQLite takes one added column per ALTER TABLE.
        let columns = [
            ColumnDef::new(AnalyticsEvents::Day).string_len(10).null().to_owned(),
            ColumnDef::new(AnalyticsEvents::Path).string_len(200).null().to_owned(),
            ColumnDef::new(AnalyticsEvents::Referrer).string_len(200).null().to_owned(),
            ColumnDef::new(AnalyticsEvents::Engine).string_len(32).null().to_owned(),
            ColumnDef::new(AnalyticsEvents::Outcome).string_len(16).null().to_owned(),
            ColumnDef::new(AnalyticsEvents::DurationMs).big_integer().null().to_owned(),
        ];
        for mut col in columns {
            m.alter_table(Table::alter().table(AnalyticsEvents::Table).add_column(&mut col).to_owned()).await?;
        }
        // Events stored before this migration get their day from their time.
        let backfill = match m.get_database_backend() {
            DbBackend::Postgres => {
                "UPDATE analytics_events SET day = to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') WHERE day IS NULL"
            }
            _ => "UPDATE analytics_events SET day = substr(created_at, 1, 10) WHERE day IS NULL",
        };
        m.get_connection().execute_unprepared(backfill).await?;
        m.create_index(
            Index::create()
                .name("idx_analytics_action_day")
                .table(AnalyticsEvents::Table)
                .col(AnalyticsEvents::Action)
                .col(AnalyticsEvents::Day)
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_analytics_created")
                .table(AnalyticsEvents::Table)
                .col(AnalyticsEvents::CreatedAt)
                .to_owned(),
        )
        .await?;
        Ok(())
    }
}
