use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "guest_usage")]
pub struct Model {
    /// `guest:{cookie id}` or `addr:{client address}`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub key: String,
    pub count: i32,
    pub window_start: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
