use sea_orm::entity::prelude::*;
use serde::Serialize;

pub use super::sea_orm_active_enums::Role;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, Serialize)]
#[sea_orm(table_name = "users")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(unique)]
    pub username: String,
    #[sea_orm(unique)]
    pub email: String,
    #[serde(skip)]
    pub password_hash: Option<String>,
    pub role: Role,
    pub email_verified: bool,
    pub display_name: Option<String>,
    pub bio: Option<String>,
    pub profile_picture: Option<String>,
    pub default_ai_model: Option<String>,
    #[serde(skip)]
    pub google_sub: Option<String>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
    /// The username as names are compared (`services::users::username_key`), unique.
    #[serde(skip)]
    pub username_key: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(has_many = "super::session::Entity")]
    Session,
}

impl Related<super::session::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Session.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
