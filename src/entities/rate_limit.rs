use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "rate_limits")]
pub struct Model {
    /// `{limit name}:{subject}`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub bucket: String,
    pub hits: i64,
    /// End of the current window, Unix milliseconds.
    pub reset_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
