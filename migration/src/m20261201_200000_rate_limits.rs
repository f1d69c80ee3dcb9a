//! One shared store for every throttle, cooldown, rate limit and quota (`services::throttle`),
//! so that several app nodes on one database enforce one limit. It replaces `guest_usage`,
//! whose guest quota now lives here as two buckets.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum RateLimits {
    Table,
    Bucket,
    Hits,
    ResetAt,
}

#[derive(DeriveIden)]
enum GuestUsage {
    Table,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table(RateLimits::Table)
                .if_not_exists()
                // `{limit name}:{subject}`, e.g. `login-user:alice` (long subjects are hashed)
                .col(ColumnDef::new(RateLimits::Bucket).string_len(255).not_null().primary_key())
                .col(ColumnDef::new(RateLimits::Hits).big_integer().not_null())
                // end of the current window, Unix milliseconds (compared as plain numbers on
                // every database, with the clock of the node that asks)
                .col(ColumnDef::new(RateLimits::ResetAt).big_integer().not_null())
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_rate_limits_reset_at")
                .table(RateLimits::Table)
                .col(RateLimits::ResetAt)
                .to_owned(),
        )
        .await?;
        m.drop_table(Table::drop().table(GuestUsage::Table).if_exists().to_owned()).await?;
        Ok(())
    }
}
