//! Identification results, guest quota, analytics events and the metadata cache.
use sea_orm_migration::prelude::*;

use crate::m20261122_000001_foundation::Users;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Identifications {
    Table,
    Id,
    UserId,
    Title,
    Year,
    MediaType,
    PosterUrl,
    Confidence,
    Rating,
    Engine,
    Mode,
    ContentHash,
    Result,
    TotalMs,
    CreatedAt,
}

#[derive(DeriveIden)]
enum GuestUsage {
    Table,
    Key,
    Count,
    WindowStart,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum AnalyticsEvents {
    Table,
    Id,
    Action,
    ResourceType,
    ResourceId,
    Metadata,
    UserId,
    CreatedAt,
}

#[derive(DeriveIden)]
enum MetadataCache {
    Table,
    Key,
    Value,
    ExpiresAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table(Identifications::Table)
                .if_not_exists()
                // 128 random bits, base64url: the share link, unguessable
                .col(ColumnDef::new(Identifications::Id).string_len(32).not_null().primary_key())
                .col(ColumnDef::new(Identifications::UserId).big_integer().null())
                .col(ColumnDef::new(Identifications::Title).string_len(300).not_null())
                .col(ColumnDef::new(Identifications::Year).string_len(32).null())
                .col(ColumnDef::new(Identifications::MediaType).string_len(8).not_null())
                .col(ColumnDef::new(Identifications::PosterUrl).string_len(1000).null())
                .col(ColumnDef::new(Identifications::Confidence).double().not_null())
                .col(ColumnDef::new(Identifications::Rating).double().null())
                .col(ColumnDef::new(Identifications::Engine).string_len(32).not_null())
                .col(ColumnDef::new(Identifications::Mode).string_len(16).not_null())
                // sha256 of the uploaded bytes (hex): reuse an answer, never keep the media
                .col(ColumnDef::new(Identifications::ContentHash).string_len(64).not_null())
                .col(ColumnDef::new(Identifications::Result).text().not_null())
                .col(ColumnDef::new(Identifications::TotalMs).big_integer().not_null().default(0))
                .col(ColumnDef::new(Identifications::CreatedAt).timestamp_with_time_zone().not_null())
                .foreign_key(
                    ForeignKey::create()
                        .from(Identifications::Table, Identifications::UserId)
                        .to(Users::Table, Users::Id)
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_identifications_user_created")
                .table(Identifications::Table)
                .col(Identifications::UserId)
                .col(Identifications::CreatedAt)
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_identifications_hash_mode")
                .table(Identifications::Table)
                .col(Identifications::ContentHash)
                .col(Identifications::Mode)
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_identifications_created")
                .table(Identifications::Table)
                .col(Identifications::CreatedAt)
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table(GuestUsage::Table)
                .if_not_exists()
                // "guest:{cookie id}" or "addr:{client address}"
                .col(ColumnDef::new(GuestUsage::Key).string_len(100).not_null().primary_key())
                .col(ColumnDef::new(GuestUsage::Count).integer().not_null().default(0))
                .col(ColumnDef::new(GuestUsage::WindowStart).timestamp_with_time_zone().not_null())
                .col(ColumnDef::new(GuestUsage::UpdatedAt).timestamp_with_time_zone().not_null())
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table(AnalyticsEvents::Table)
                .if_not_exists()
                .col(ColumnDef::new(AnalyticsEvents::Id).big_integer().not_null().auto_increment().primary_key())
                .col(ColumnDef::new(AnalyticsEvents::Action).string_len(64).not_null())
                .col(ColumnDef::new(AnalyticsEvents::ResourceType).string_len(64).null())
                .col(ColumnDef::new(AnalyticsEvents::ResourceId).string_len(128).null())
                .col(ColumnDef::new(AnalyticsEvents::Metadata).text().null())
                .col(ColumnDef::new(AnalyticsEvents::UserId).big_integer().null())
                .col(ColumnDef::new(AnalyticsEvents::CreatedAt).timestamp_with_time_zone().not_null())
                .foreign_key(
                    ForeignKey::create()
                        .from(AnalyticsEvents::Table, AnalyticsEvents::UserId)
                        .to(Users::Table, Users::Id)
                        .on_delete(ForeignKeyAction::SetNull),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_analytics_action_created")
                .table(AnalyticsEvents::Table)
                .col(AnalyticsEvents::Action)
                .col(AnalyticsEvents::CreatedAt)
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table(MetadataCache::Table)
                .if_not_exists()
                // sha256 (hex) of the request URL without credentials
                .col(ColumnDef::new(MetadataCache::Key).string_len(64).not_null().primary_key())
                .col(ColumnDef::new(MetadataCache::Value).text().not_null())
                .col(ColumnDef::new(MetadataCache::ExpiresAt).timestamp_with_time_zone().not_null())
                .to_owned(),
        )
        .await?;
        Ok(())
    }
}
