//! Testimonials: reviews signed-in people leave after an identification (SPEC section 3).
use sea_orm_migration::prelude::*;

use crate::m20261122_000001_foundation::Users;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Testimonials {
    Table,
    Id,
    UserId,
    Rating,
    Review,
    MovieTitle,
    IdentificationId,
    Featured,
    CreatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table(Testimonials::Table)
                .if_not_exists()
                .col(ColumnDef::new(Testimonials::Id).big_integer().not_null().auto_increment().primary_key())
                .col(ColumnDef::new(Testimonials::UserId).big_integer().not_null())
                .col(ColumnDef::new(Testimonials::Rating).integer().not_null())
                .col(ColumnDef::new(Testimonials::Review).text().not_null())
                .col(ColumnDef::new(Testimonials::MovieTitle).string_len(200).null())
                // The identification's public id; no foreign key so a review outlives a cleared history.
                .col(ColumnDef::new(Testimonials::IdentificationId).string_len(64).null())
                // Admins may hide a review from the home page without deleting it.
                .col(ColumnDef::new(Testimonials::Featured).boolean().not_null().default(true))
                .col(ColumnDef::new(Testimonials::CreatedAt).timestamp_with_time_zone().not_null())
                .foreign_key(
                    ForeignKey::create()
                        .from(Testimonials::Table, Testimonials::UserId)
                        .to(Users::Table, Users::Id)
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_testimonials_featured_created")
                .table(Testimonials::Table)
                .col(Testimonials::Featured)
                .col(Testimonials::CreatedAt)
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_testimonials_user")
                .table(Testimonials::Table)
                .col(Testimonials::UserId)
                .to_owned(),
        )
        .await
    }
}
