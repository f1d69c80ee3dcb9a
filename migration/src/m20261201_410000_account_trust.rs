//! Accounts people trust: password-reset tokens, and usernames and emails unique whatever
//! their case (until now only the code compared them case-insensitively).
use sea_orm_migration::prelude::*;

use crate::m20261122_000001_foundation::Users;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum PasswordResetTokens {
    Table,
    Id,
    UserId,
    TokenHash,
    CreatedAt,
    ExpiresAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table(PasswordResetTokens::Table)
                .if_not_exists()
                .col(ColumnDef::new(PasswordResetTokens::Id).big_integer().not_null().auto_increment().primary_key())
                .col(ColumnDef::new(PasswordResetTokens::UserId).big_integer().not_null())
                // sha256 (hex) of the token in the mailed link; the token itself is never stored
                .col(ColumnDef::new(PasswordResetTokens::TokenHash).string_len(64).not_null().unique_key())
                .col(ColumnDef::new(PasswordResetTokens::CreatedAt).timestamp_with_time_zone().not_null())
                .col(ColumnDef::new(PasswordResetTokens::ExpiresAt).timestamp_with_time_zone().not_null())
                .foreign_key(
                    ForeignKey::create()
                        .from(PasswordResetTokens::Table, PasswordResetTokens::UserId)
                        .to(Users::Table, Users::Id)
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_password_reset_tokens_user")
                .table(PasswordResetTokens::Table)
                .col(PasswordResetTokens::UserId)
                .to_owned(),
        )
        .await?;
        // Expression indexes: the same SQL on SQLite and PostgreSQL.
        let db = m.get_connection();
        db.execute_unprepared("CREATE UNIQUE INDEX IF NOT EXISTS idx_users_username_lower ON users (lower(username))")
            .await?;
        db.execute_unprepared("CREATE UNIQUE INDEX IF NOT EXISTS idx_users_email_lower ON users (lower(email))")
            .await?;
        Ok(())
    }
}
