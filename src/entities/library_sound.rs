use sea_orm::entity::prelude::*;

/// A Library video's soundtrack landmarks: the bytes of its audio-tier file.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "library_sounds")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub video_id: i64,
    pub landmarks: Vec<u8>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
