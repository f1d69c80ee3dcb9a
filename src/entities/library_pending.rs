use sea_orm::entity::prelude::*;

/// A Library video id an ingest holds before it publishes the video (see
/// `library::add`, `sweep_abandoned`).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "library_pending")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub video_id: i64,
    /// Seconds since the epoch.
    pub since: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
