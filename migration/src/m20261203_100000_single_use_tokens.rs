//! One table for the mailed single-use links (email verification, password reset): the two
//! tables of the same shape become `single_use_tokens` with a `purpose`, their rows moved
//! over (links already mailed keep working).
use sea_orm_migration::prelude::*;

use crate::m20261122_000001_foundation::Users;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum SingleUseTokens {
    Table,
    Id,
    UserId,
    Purpose,
    TokenHash,
    CreatedAt,
    ExpiresAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table(SingleUseTokens::Table)
                .if_not_exists()
                .col(ColumnDef::new(SingleUseTokens::Id).big_integer().not_null().auto_increment().primary_key())
                .col(ColumnDef::new(SingleUseTokens::UserId).big_integer().not_null())
                // What the link does: `verify_email` or `reset_password`.
                .col(ColumnDef::new(SingleUseTokens::Purpose).string_len(32).not_null())
                // sha256 (hex) of the token in the mailed link; the token itself is never stored.
                .col(ColumnDef::new(SingleUseTokens::TokenHash).string_len(64).not_null().unique_key())
                .col(ColumnDef::new(SingleUseTokens::CreatedAt).timestamp_with_time_zone().not_null())
                .col(ColumnDef::new(SingleUseTokens::ExpiresAt).timestamp_with_time_zone().not_null())
                .foreign_key(
                    ForeignKey::create()
                        .from(SingleUseTokens::Table, SingleUseTokens::UserId)
                        .to(Users::Table, Users::Id)
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_single_use_tokens_user_purpose")
                .table(SingleUseTokens::Table)
                .col(SingleUseTokens::UserId)
                .col(SingleUseTokens::Purpose)
                .to_owned(),
        )
        .await?;
        // Plain SQL that SQLite and PostgreSQL read alike.
        let db = m.get_connection();
        for (table, purpose) in
            [("email_verification_tokens", "verify_email"), ("password_reset_tokens", "reset_password")]
        {
            db.execute_unprepared(&format!(
                "INSERT INTO single_use_tokens (user_id, purpose, token_hash, created_at, expires_at) \
                 SELECT user_id, '{purpose}', token_hash, created_at, expires_at FROM {table}"
            ))
            .await?;
            m.drop_table(Table::drop().table(Alias::new(table)).to_owned()).await?;
        }
        Ok(())
    }
}
