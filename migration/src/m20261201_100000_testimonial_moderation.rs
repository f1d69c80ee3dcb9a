//! Testimonials are moderated: every review starts `pending`, an admin makes it `featured`
//! (shown on the home page) or `hidden`. Replaces the `featured` flag, which made every
//! review public the moment it was posted.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Testimonials {
    Table,
    Featured,
    Status,
    ModeratedAt,
    ModeratedBy,
    CreatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        // SQLite takes one change per ALTER TABLE.
        m.alter_table(
            Table::alter()
                .table(Testimonials::Table)
                .add_column(ColumnDef::new(Testimonials::Status).string_len(16).not_null().default("pending"))
                .to_owned(),
        )
        .await?;
        m.alter_table(
            Table::alter()
                .table(Testimonials::Table)
                .add_column(ColumnDef::new(Testimonials::ModeratedAt).timestamp_with_time_zone().null())
                .to_owned(),
        )
        .await?;
        m.alter_table(
            Table::alter()
                .table(Testimonials::Table)
                // The admin's user id; no foreign key (SQLite cannot add one to an existing
                // table) and the log of who moderated should outlive the account anyway.
                .add_column(ColumnDef::new(Testimonials::ModeratedBy).big_integer().null())
                .to_owned(),
        )
        .await?;
        // Reviews posted before moderation existed were never looked at by anyone: they go
        // back to the queue. Only the ones already taken off the home page stay hidden.
        let db = m.get_connection();
        db.execute_unprepared("UPDATE testimonials SET status = CASE WHEN featured THEN 'pending' ELSE 'hidden' END")
            .await?;
        m.drop_index(Index::drop().name("idx_testimonials_featured_created").table(Testimonials::Table).to_owned())
            .await?;
        m.alter_table(Table::alter().table(Testimonials::Table).drop_column(Testimonials::Featured).to_owned()).await?;
        m.create_index(
            Index::create()
                .name("idx_testimonials_status_created")
                .table(Testimonials::Table)
                .col(Testimonials::Status)
                .col(Testimonials::CreatedAt)
                .to_owned(),
        )
        .await
    }
}
