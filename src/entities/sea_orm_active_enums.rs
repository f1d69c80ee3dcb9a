//! Columns with a fixed set of values, as `sea-orm-cli generate entity` names the file.
use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};

/// What an account may do. Stored as the text `user` or `admin` (the column stays a
/// string, so a new role needs no schema change); the same words in JSON.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, EnumIter, DeriveActiveEnum, Serialize, Deserialize, utoipa::ToSchema,
)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(16))")]
#[serde(rename_all = "lowercase")]
pub enum Role {
    #[default]
    #[sea_orm(string_value = "user")]
    User,
    #[sea_orm(string_value = "admin")]
    Admin,
}

impl Role {
    pub fn is_admin(self) -> bool {
        self == Self::Admin
    }

    /// The stored word (`user`, `admin`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Admin => "admin",
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
