use sea_orm::entity::prelude::*;

/// An uploaded blog picture, re-encoded as JPEG in a few widths: `media/blog/{key}-{w}.jpg`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "blog_images")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(unique)]
    pub key: String,
    /// Size of the largest stored width.
    pub width: i32,
    pub height: i32,
    /// Stored widths, ascending, comma-separated.
    pub widths: String,
    /// Bytes of all stored files together.
    pub bytes: i64,
    pub uploaded_by: Option<i64>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
