use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "analytics_events")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub action: String,
    pub resource_type: Option<String>,
    pub resource_id: Option<String>,
    /// JSON object of known keys only, bounded in size, with no IP address.
    pub metadata: Option<String>,
    pub user_id: Option<i64>,
    pub created_at: DateTimeUtc,
    /// UTC day of `created_at`, `YYYY-MM-DD` (what the Insight tab groups by).
    pub day: Option<String>,
    /// Page views: the page's path, ids and tokens replaced by placeholders.
    pub path: Option<String>,
    /// Page views: the referring site's host (`google.com`), when it is another site.
    pub referrer: Option<String>,
    /// Identifications and engine runs: the engine (`openai`, `library`, ...).
    pub engine: Option<String>,
    /// Identifications and engine runs: `identified`, `no_match`, `failed`, `timeout`, ...
    pub outcome: Option<String>,
    pub duration_ms: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
