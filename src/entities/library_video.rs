use sea_orm::entity::prelude::*;

/// One video of the Library's shared catalog (see `library::index::shared`).
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "library_videos")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: i64,
    pub path: String,
    pub size: i64,
    pub mtime: i64,
    pub partial_hash: String,
    pub title: String,
    pub year: Option<i32>,
    pub show: Option<String>,
    pub season: Option<i32>,
    pub episode: Option<i32>,
    pub meta_source: String,
    pub duration: f64,
    pub frames: i32,
    pub crop_frames: i32,
    pub upper_frames: i32,
    pub audio_landmarks: i32,
    pub indexed_at: String,
    pub index_seconds: f64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
