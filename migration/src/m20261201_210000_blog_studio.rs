//! The blog studio: posts are written, scheduled and retired by admins.
//!
//! * `published_at` replaces the `published` flag: NULL is a draft, a future time is a
//!   scheduled post, a past time a published one. Visibility is decided when a page is
//!   asked for (`published_at <= now`), so a scheduled post appears on time on every node
//!   without a job or a restart.
//! * `version` counts saves: an editor sends the version it loaded and a stale save is
//!   refused instead of overwriting someone else's work.
//! * Per-post SEO: `meta_title`, `meta_description`, `social_image`, `noindex`.
//! * `blog_slug_redirects`: old addresses of renamed published posts (answered with 301).
//! * `blog_images`: uploaded pictures, re-encoded into a few widths under the data dir.
use sea_orm_migration::prelude::*;

use crate::m20261122_000001_foundation::Users;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum BlogPosts {
    Table,
    Id,
    Published,
    PublishedAt,
    Version,
    MetaTitle,
    MetaDescription,
    SocialImage,
    Noindex,
    CreatedBy,
    UpdatedBy,
}

#[derive(DeriveIden)]
enum BlogSlugRedirects {
    Table,
    Slug,
    PostId,
    CreatedAt,
}

#[derive(DeriveIden)]
enum BlogImages {
    Table,
    Id,
    Key,
    Width,
    Height,
    Widths,
    Bytes,
    UploadedBy,
    CreatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        let columns = [
            ColumnDef::new(BlogPosts::PublishedAt).timestamp_with_time_zone().null().to_owned(),
            ColumnDef::new(BlogPosts::Version).integer().not_null().default(1).to_owned(),
            ColumnDef::new(BlogPosts::MetaTitle).string_len(200).null().to_owned(),
            ColumnDef::new(BlogPosts::MetaDescription).string_len(400).null().to_owned(),
            ColumnDef::new(BlogPosts::SocialImage).string().null().to_owned(),
            ColumnDef::new(BlogPosts::Noindex).boolean().not_null().default(false).to_owned(),
            ColumnDef::new(BlogPosts::CreatedBy).big_integer().null().to_owned(),
            ColumnDef::new(BlogPosts::UpdatedBy).big_integer().null().to_owned(),
        ];
        // SQLite takes one change per ALTER TABLE.
        for mut col in columns {
            m.alter_table(Table::alter().table(BlogPosts::Table).add_column(&mut col).to_owned()).await?;
        }
        // Published posts keep their date; unpublished ones become drafts.
        m.get_connection()
            .execute_unprepared("UPDATE blog_posts SET published_at = created_at WHERE published")
            .await?;
        m.alter_table(Table::alter().table(BlogPosts::Table).drop_column(BlogPosts::Published).to_owned()).await?;
        m.create_index(
            Index::create()
                .name("idx_blog_posts_published_at")
                .table(BlogPosts::Table)
                .col(BlogPosts::PublishedAt)
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table(BlogSlugRedirects::Table)
                .if_not_exists()
                .col(ColumnDef::new(BlogSlugRedirects::Slug).string_len(160).not_null().primary_key())
                .col(ColumnDef::new(BlogSlugRedirects::PostId).big_integer().not_null())
                .col(ColumnDef::new(BlogSlugRedirects::CreatedAt).timestamp_with_time_zone().not_null())
                .foreign_key(
                    ForeignKey::create()
                        .from(BlogSlugRedirects::Table, BlogSlugRedirects::PostId)
                        .to(BlogPosts::Table, BlogPosts::Id)
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_blog_slug_redirects_post")
                .table(BlogSlugRedirects::Table)
                .col(BlogSlugRedirects::PostId)
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table(BlogImages::Table)
                .if_not_exists()
                .col(ColumnDef::new(BlogImages::Id).big_integer().not_null().auto_increment().primary_key())
                // Random, unguessable name of the files: media/blog/{key}-{width}.jpg.
                .col(ColumnDef::new(BlogImages::Key).string_len(32).not_null().unique_key())
                .col(ColumnDef::new(BlogImages::Width).integer().not_null())
                .col(ColumnDef::new(BlogImages::Height).integer().not_null())
                // The widths written, ascending, comma-separated ("400,800,1200").
                .col(ColumnDef::new(BlogImages::Widths).string_len(64).not_null())
                .col(ColumnDef::new(BlogImages::Bytes).big_integer().not_null())
                .col(ColumnDef::new(BlogImages::UploadedBy).big_integer().null())
                .col(ColumnDef::new(BlogImages::CreatedAt).timestamp_with_time_zone().not_null())
                .foreign_key(
                    ForeignKey::create()
                        .from(BlogImages::Table, BlogImages::UploadedBy)
                        .to(Users::Table, Users::Id)
                        .on_delete(ForeignKeyAction::SetNull),
                )
                .to_owned(),
        )
        .await
    }
}
