use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "metadata_cache")]
pub struct Model {
    /// sha256 (hex) of the request URL without credentials.
    #[sea_orm(primary_key, auto_increment = false)]
    pub key: String,
    /// The provider's JSON answer.
    pub value: String,
    pub expires_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
