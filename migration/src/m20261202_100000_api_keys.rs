//! API keys for developers (issue 14): each belongs to one person, is stored only as the
//! sha256 of the secret, and may carry its own quota. Per-person quota overrides live in
//! `api_quotas`; the defaults are site settings.
use sea_orm_migration::prelude::*;

use crate::m20261122_000001_foundation::Users;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum ApiKeys {
    Table,
    Id,
    UserId,
    Name,
    Prefix,
    KeyHash,
    CreatedAt,
    LastUsedAt,
    RevokedAt,
    PerMinute,
    PerDay,
    Concurrent,
}

#[derive(DeriveIden)]
enum ApiQuotas {
    Table,
    UserId,
    PerMinute,
    PerDay,
    Concurrent,
    UpdatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table(ApiKeys::Table)
                .if_not_exists()
                .col(ColumnDef::new(ApiKeys::Id).big_integer().not_null().auto_increment().primary_key())
                .col(ColumnDef::new(ApiKeys::UserId).big_integer().not_null())
                .col(ColumnDef::new(ApiKeys::Name).string_len(80).not_null())
                // `rf_` and the first characters of the key: shown in lists, not secret.
                .col(ColumnDef::new(ApiKeys::Prefix).string_len(16).not_null())
                // sha256 (hex) of the whole key; the key itself is shown once and never stored.
                .col(ColumnDef::new(ApiKeys::KeyHash).string_len(64).not_null().unique_key())
                .col(ColumnDef::new(ApiKeys::CreatedAt).timestamp_with_time_zone().not_null())
                .col(ColumnDef::new(ApiKeys::LastUsedAt).timestamp_with_time_zone().null())
                .col(ColumnDef::new(ApiKeys::RevokedAt).timestamp_with_time_zone().null())
                // The admin's per-key quota; NULL: the person's, else the site default.
                .col(ColumnDef::new(ApiKeys::PerMinute).integer().null())
                .col(ColumnDef::new(ApiKeys::PerDay).integer().null())
                .col(ColumnDef::new(ApiKeys::Concurrent).integer().null())
                .foreign_key(
                    ForeignKey::create()
                        .from(ApiKeys::Table, ApiKeys::UserId)
                        .to(Users::Table, Users::Id)
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_api_keys_user").table(ApiKeys::Table).col(ApiKeys::UserId).to_owned())
            .await?;
        m.create_table(
            Table::create()
                .table(ApiQuotas::Table)
                .if_not_exists()
                .col(ColumnDef::new(ApiQuotas::UserId).big_integer().not_null().primary_key())
                .col(ColumnDef::new(ApiQuotas::PerMinute).integer().null())
                .col(ColumnDef::new(ApiQuotas::PerDay).integer().null())
                .col(ColumnDef::new(ApiQuotas::Concurrent).integer().null())
                .col(ColumnDef::new(ApiQuotas::UpdatedAt).timestamp_with_time_zone().not_null())
                .foreign_key(
                    ForeignKey::create()
                        .from(ApiQuotas::Table, ApiQuotas::UserId)
                        .to(Users::Table, Users::Id)
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await
    }
}
