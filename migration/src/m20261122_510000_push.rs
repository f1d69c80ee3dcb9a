//! Push notifications: each signed-in person's browser subscriptions and their
//! notification preferences (SPEC sections 3, 6 and 7).
use sea_orm_migration::prelude::*;

use crate::m20261122_000001_foundation::Users;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum PushSubscriptions {
    Table,
    Id,
    UserId,
    Endpoint,
    P256dh,
    Auth,
    DeviceInfo,
    CreatedAt,
    LastSuccessAt,
}

#[derive(DeriveIden)]
enum NotificationPreferences {
    Table,
    UserId,
    PushNotifications,
    EmailNotifications,
    OnboardingComplete,
    UpdatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table(PushSubscriptions::Table)
                .if_not_exists()
                .col(ColumnDef::new(PushSubscriptions::Id).big_integer().not_null().auto_increment().primary_key())
                .col(ColumnDef::new(PushSubscriptions::UserId).big_integer().not_null())
                // The push service's URL for one browser; at most 2048 characters (checked on subscribe).
                .col(ColumnDef::new(PushSubscriptions::Endpoint).string_len(2048).not_null().unique_key())
                .col(ColumnDef::new(PushSubscriptions::P256dh).string_len(128).not_null())
                .col(ColumnDef::new(PushSubscriptions::Auth).string_len(64).not_null())
                // What the browser said about itself (JSON object), shown so people can tell devices apart.
                .col(ColumnDef::new(PushSubscriptions::DeviceInfo).text().null())
                .col(ColumnDef::new(PushSubscriptions::CreatedAt).timestamp_with_time_zone().not_null())
                .col(ColumnDef::new(PushSubscriptions::LastSuccessAt).timestamp_with_time_zone().null())
                .foreign_key(
                    ForeignKey::create()
                        .from(PushSubscriptions::Table, PushSubscriptions::UserId)
                        .to(Users::Table, Users::Id)
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_push_subscriptions_user")
                .table(PushSubscriptions::Table)
                .col(PushSubscriptions::UserId)
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table(NotificationPreferences::Table)
                .if_not_exists()
                .col(ColumnDef::new(NotificationPreferences::UserId).big_integer().not_null().primary_key())
                .col(ColumnDef::new(NotificationPreferences::PushNotifications).boolean().not_null().default(false))
                .col(ColumnDef::new(NotificationPreferences::EmailNotifications).boolean().not_null().default(false))
                .col(ColumnDef::new(NotificationPreferences::OnboardingComplete).boolean().not_null().default(false))
                .col(ColumnDef::new(NotificationPreferences::UpdatedAt).timestamp_with_time_zone().not_null())
                .foreign_key(
                    ForeignKey::create()
                        .from(NotificationPreferences::Table, NotificationPreferences::UserId)
                        .to(Users::Table, Users::Id)
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await
    }
}
