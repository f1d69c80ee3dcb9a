//! The content version: one row every node reads to learn that what public pages show has
//! changed (see `services::content_version` in the app).
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum ContentVersions {
    Table,
    Id,
    Generation,
    ChangedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table(ContentVersions::Table)
                .if_not_exists()
                // Always 1: one row.
                .col(ColumnDef::new(ContentVersions::Id).integer().not_null().primary_key())
                // Counted up by every write that changes what an anonymous visitor sees.
                .col(ColumnDef::new(ContentVersions::Generation).big_integer().not_null())
                .col(ColumnDef::new(ContentVersions::ChangedAt).timestamp_with_time_zone().not_null())
                .to_owned(),
        )
        .await?;
        m.get_connection()
            .execute_unprepared(
                "INSERT INTO content_versions (id, generation, changed_at) VALUES (1, 0, CURRENT_TIMESTAMP)",
            )
            .await?;
        Ok(())
    }
}
