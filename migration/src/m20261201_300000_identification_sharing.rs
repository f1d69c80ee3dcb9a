//! The owner of an identification can stop sharing it: its link then answers 404.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Identifications {
    Table,
    Shared,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table(Identifications::Table)
                .add_column(ColumnDef::new(Identifications::Shared).boolean().not_null().default(true))
                .to_owned(),
        )
        .await
    }
}
