use sea_orm::entity::prelude::*;

/// One remembered catalog answer (see `identify::memory`): never a picture, a file name, a
/// transcript or who uploaded it.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "remembered_answers")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub tmdb_id: i64,
    pub media_type: String,
    pub season: Option<i32>,
    pub episode: Option<i32>,
    pub title: String,
    pub year: Option<String>,
    pub engine: String,
    pub confidence: f64,
    pub media_kind: String,
    pub supporters: i32,
    pub support_weight: f64,
    pub doubt_weight: f64,
    pub standing: bool,
    pub pinned: bool,
    pub previous_title: Option<String>,
    pub corrected_at: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
