//! Users, sessions, settings and blog posts: what the foundation needs.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
pub enum Users {
    Table,
    Id,
    Username,
    Email,
    PasswordHash,
    Role,
    EmailVerified,
    DisplayName,
    Bio,
    ProfilePicture,
    DefaultAiModel,
    GoogleSub,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum Sessions {
    Table,
    Id,
    UserId,
    CreatedAt,
    ExpiresAt,
    LastSeenAt,
    UserAgent,
}

#[derive(DeriveIden)]
enum Settings {
    Table,
    Key,
    Value,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum BlogPosts {
    Table,
    Id,
    Slug,
    Title,
    Summary,
    Content,
    Category,
    Tags,
    FeaturedImage,
    AuthorName,
    Published,
    CreatedAt,
    UpdatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table(Users::Table)
                .if_not_exists()
                .col(ColumnDef::new(Users::Id).big_integer().not_null().auto_increment().primary_key())
                .col(ColumnDef::new(Users::Username).string_len(64).not_null().unique_key())
                .col(ColumnDef::new(Users::Email).string_len(254).not_null().unique_key())
                .col(ColumnDef::new(Users::PasswordHash).string().null())
                .col(ColumnDef::new(Users::Role).string_len(16).not_null().default("user"))
                .col(ColumnDef::new(Users::EmailVerified).boolean().not_null().default(false))
                .col(ColumnDef::new(Users::DisplayName).string_len(100).null())
                .col(ColumnDef::new(Users::Bio).text().null())
                .col(ColumnDef::new(Users::ProfilePicture).string().null())
                .col(ColumnDef::new(Users::DefaultAiModel).string_len(32).null())
                .col(ColumnDef::new(Users::GoogleSub).string().null().unique_key())
                .col(ColumnDef::new(Users::CreatedAt).timestamp_with_time_zone().not_null())
                .col(ColumnDef::new(Users::UpdatedAt).timestamp_with_time_zone().not_null())
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table(Sessions::Table)
                .if_not_exists()
                // sha256 of the cookie token, hex: the token itself is never stored
                .col(ColumnDef::new(Sessions::Id).string_len(64).not_null().primary_key())
                .col(ColumnDef::new(Sessions::UserId).big_integer().not_null())
                .col(ColumnDef::new(Sessions::CreatedAt).timestamp_with_time_zone().not_null())
                .col(ColumnDef::new(Sessions::ExpiresAt).timestamp_with_time_zone().not_null())
                .col(ColumnDef::new(Sessions::LastSeenAt).timestamp_with_time_zone().not_null())
                .col(ColumnDef::new(Sessions::UserAgent).string().null())
                .foreign_key(
                    ForeignKey::create()
                        .from(Sessions::Table, Sessions::UserId)
                        .to(Users::Table, Users::Id)
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create().name("idx_sessions_user").table(Sessions::Table).col(Sessions::UserId).to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table(Settings::Table)
                .if_not_exists()
                .col(ColumnDef::new(Settings::Key).string_len(64).not_null().primary_key())
                .col(ColumnDef::new(Settings::Value).text().not_null())
                .col(ColumnDef::new(Settings::UpdatedAt).timestamp_with_time_zone().not_null())
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table(BlogPosts::Table)
                .if_not_exists()
                .col(ColumnDef::new(BlogPosts::Id).big_integer().not_null().auto_increment().primary_key())
                .col(ColumnDef::new(BlogPosts::Slug).string_len(160).not_null().unique_key())
                .col(ColumnDef::new(BlogPosts::Title).string_len(200).not_null())
                .col(ColumnDef::new(BlogPosts::Summary).text().not_null())
                .col(ColumnDef::new(BlogPosts::Content).text().not_null())
                .col(ColumnDef::new(BlogPosts::Category).string_len(64).not_null())
                .col(ColumnDef::new(BlogPosts::Tags).string().not_null().default(""))
                .col(ColumnDef::new(BlogPosts::FeaturedImage).string().null())
                .col(ColumnDef::new(BlogPosts::AuthorName).string_len(100).null())
                .col(ColumnDef::new(BlogPosts::Published).boolean().not_null().default(true))
                .col(ColumnDef::new(BlogPosts::CreatedAt).timestamp_with_time_zone().not_null())
                .col(ColumnDef::new(BlogPosts::UpdatedAt).timestamp_with_time_zone().not_null())
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create().name("idx_blog_posts_created").table(BlogPosts::Table).col(BlogPosts::CreatedAt).to_owned(),
        )
        .await?;
        Ok(())
    }
}
