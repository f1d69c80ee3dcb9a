use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "blog_posts")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(unique)]
    pub slug: String,
    pub title: String,
    pub summary: String,
    /// Markdown source; rendered and sanitised on the way out.
    pub content: String,
    pub category: String,
    /// Comma-separated tags.
    pub tags: String,
    pub featured_image: Option<String>,
    pub author_name: Option<String>,
    /// NULL: a draft. In the future: scheduled. In the past: published (decided when read).
    pub published_at: Option<DateTimeUtc>,
    /// Incremented by every save; a save naming an older version is refused.
    pub version: i32,
    pub meta_title: Option<String>,
    pub meta_description: Option<String>,
    pub social_image: Option<String>,
    pub noindex: bool,
    pub created_by: Option<i64>,
    pub updated_by: Option<i64>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
