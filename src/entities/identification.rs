use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "identifications")]
pub struct Model {
    /// 128 random bits, base64url; the share link.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub user_id: Option<i64>,
    pub title: String,
    pub year: Option<String>,
    pub media_type: String,
    pub poster_url: Option<String>,
    pub confidence: f64,
    pub rating: Option<f64>,
    pub engine: String,
    pub mode: String,
    /// sha256 (hex) of the uploaded bytes; the media itself is never stored.
    pub content_hash: String,
    /// The identification result JSON (SPEC section 3).
    pub result: String,
    pub total_ms: i64,
    pub created_at: DateTimeUtc,
    /// Anyone with the link may see the public shape; false once the owner stopped sharing.
    pub shared: bool,
    /// The remembered answer this identification was answered from or remembered as.
    pub memory_id: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::user::Entity",
        from = "Column::UserId",
        to = "super::user::Column::Id",
        on_delete = "Cascade"
    )]
    User,
}

impl Related<super::user::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::User.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
