use sea_orm::entity::prelude::*;

/// "Was this right?": one person's vote on one identification (see `services::feedback`).
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "answer_votes")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub memory_id: Option<i64>,
    pub identification_id: String,
    pub user_id: i64,
    pub engine: String,
    pub verdict: String,
    pub shown_tmdb_id: Option<i64>,
    pub shown_media_type: Option<String>,
    pub tmdb_id: Option<i64>,
    pub media_type: Option<String>,
    pub title: Option<String>,
    pub year: Option<String>,
    pub weight: f64,
    pub origin: String,
    pub status: String,
    pub decided_at: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
