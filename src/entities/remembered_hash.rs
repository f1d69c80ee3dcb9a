use sea_orm::entity::prelude::*;

/// A perceptual hash a remembered answer stands for (four 64-bit words, as signed integers).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "remembered_hashes")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub memory_id: i64,
    pub section: i16,
    pub h0: i64,
    pub h1: i64,
    pub h2: i64,
    pub h3: i64,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
