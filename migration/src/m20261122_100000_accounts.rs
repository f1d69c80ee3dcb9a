//! Accounts: email verification tokens and pending Google sign-ins (state + PKCE verifier).
use sea_orm_migration::prelude::*;

use crate::m20261122_000001_foundation::Users;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum EmailVerificationTokens {
    Table,
    Id,
    UserId,
    TokenHash,
    CreatedAt,
    ExpiresAt,
}

#[derive(DeriveIden)]
enum OauthStates {
    Table,
    Id,
    PkceVerifier,
    CreatedAt,
    ExpiresAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table(EmailVerificationTokens::Table)
                .if_not_exists()
                .col(
                    ColumnDef::new(EmailVerificationTokens::Id).big_integer().not_null().auto_increment().primary_key(),
                )
                .col(ColumnDef::new(EmailVerificationTokens::UserId).big_integer().not_null())
                // sha256 (hex) of the token in the mailed link; the token itself is never stored
                .col(ColumnDef::new(EmailVerificationTokens::TokenHash).string_len(64).not_null().unique_key())
                .col(ColumnDef::new(EmailVerificationTokens::CreatedAt).timestamp_with_time_zone().not_null())
                .col(ColumnDef::new(EmailVerificationTokens::ExpiresAt).timestamp_with_time_zone().not_null())
                .foreign_key(
                    ForeignKey::create()
                        .from(EmailVerificationTokens::Table, EmailVerificationTokens::UserId)
                        .to(Users::Table, Users::Id)
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_email_verification_tokens_user")
                .table(EmailVerificationTokens::Table)
                .col(EmailVerificationTokens::UserId)
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table(OauthStates::Table)
                .if_not_exists()
                // sha256 (hex) of the OAuth `state`, which also sits in the browser's cookie
                .col(ColumnDef::new(OauthStates::Id).string_len(64).not_null().primary_key())
                .col(ColumnDef::new(OauthStates::PkceVerifier).string_len(128).not_null())
                .col(ColumnDef::new(OauthStates::CreatedAt).timestamp_with_time_zone().not_null())
                .col(ColumnDef::new(OauthStates::ExpiresAt).timestamp_with_time_zone().not_null())
                .to_owned(),
        )
        .await?;
        Ok(())
    }
}
