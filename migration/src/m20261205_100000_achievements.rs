//! Achievements a person has earned: one row per person and achievement, written once when
//! the rule first holds (the rules read stored activity; see `services::achievements`).
//! The row keeps the award and its date even after the activity behind it is deleted
//! (a cleared history does not take an achievement back).
use sea_orm_migration::prelude::*;

use crate::m20261122_000001_foundation::Users;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Achievements {
    Table,
    Id,
    UserId,
    Key,
    EarnedAt,
    AnnouncedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table(Achievements::Table)
                .if_not_exists()
                .col(ColumnDef::new(Achievements::Id).big_integer().not_null().auto_increment().primary_key())
                .col(ColumnDef::new(Achievements::UserId).big_integer().not_null())
                // Which rule: `first_identification`, `ten_titles`, ...
                .col(ColumnDef::new(Achievements::Key).string_len(40).not_null())
                // When the activity that completed the rule happened.
                .col(ColumnDef::new(Achievements::EarnedAt).timestamp_with_time_zone().not_null())
                // When the person was told (a toast); null until then.
                .col(ColumnDef::new(Achievements::AnnouncedAt).timestamp_with_time_zone().null())
                .foreign_key(
                    ForeignKey::create()
                        .from(Achievements::Table, Achievements::UserId)
                        .to(Users::Table, Users::Id)
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await?;
        // Awarded once: a second award of the same rule, from any node, is refused here.
        m.create_index(
            Index::create()
                .name("idx_achievements_user_key")
                .table(Achievements::Table)
                .col(Achievements::UserId)
                .col(Achievements::Key)
                .unique()
                .to_owned(),
        )
        .await
    }
}
