//! Collections: titles a signed-in person saved from a result ("Add to Collection").
use sea_orm_migration::prelude::*;

use crate::m20261122_000001_foundation::Users;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum CollectionItems {
    Table,
    Id,
    UserId,
    TmdbId,
    Title,
    Year,
    PosterUrl,
    DedupeKey,
    CreatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table(CollectionItems::Table)
                .if_not_exists()
                .col(ColumnDef::new(CollectionItems::Id).big_integer().not_null().auto_increment().primary_key())
                .col(ColumnDef::new(CollectionItems::UserId).big_integer().not_null())
                .col(ColumnDef::new(CollectionItems::TmdbId).big_integer().null())
                .col(ColumnDef::new(CollectionItems::Title).string_len(300).not_null())
                // "1999", or a TV range such as "2010-Present".
                .col(ColumnDef::new(CollectionItems::Year).string_len(32).null())
                .col(ColumnDef::new(CollectionItems::PosterUrl).string_len(1000).null())
                // "tmdb:{id}", or "title:{lowercase title}|{year}" without a catalog id: saving
                // the same title twice is one item (the unique index below).
                .col(ColumnDef::new(CollectionItems::DedupeKey).string_len(400).not_null())
                .col(ColumnDef::new(CollectionItems::CreatedAt).timestamp_with_time_zone().not_null())
                .foreign_key(
                    ForeignKey::create()
                        .from(CollectionItems::Table, CollectionItems::UserId)
                        .to(Users::Table, Users::Id)
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_collection_items_user_key")
                .table(CollectionItems::Table)
                .col(CollectionItems::UserId)
                .col(CollectionItems::DedupeKey)
                .unique()
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table(CollectionItems::Table).to_owned()).await
    }
}
