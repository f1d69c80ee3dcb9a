//! Site settings: a key-value table over documented defaults (SPEC sections 1 and 3).
//!
//! Reads go through an in-process copy so that no request queries the table: the copy is
//! tagged with the content version it was read at (`content_version`) and read again when
//! the version changes. A write here changes the version at once on this node and, within
//! the version's bound, on every other node of the same database.
use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock};

use chrono::Utc;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ConnectionTrait, DatabaseConnection, EntityTrait, Set};

use crate::entities::setting;
use crate::services::content_version::{self, Tracker, Version};

pub mod registry;

pub use registry::{SETTINGS, Setting};

/// Settings whose values must never leave the server through `/api/settings`.
pub fn is_secret_key(key: &str) -> bool {
    key.ends_with("_api_key")
        || key.ends_with("_private_key")
        || key.ends_with("_secret")
        || key.ends_with("_token")
        || key.ends_with("_password")
}

pub type SettingsMap = BTreeMap<String, String>;

pub struct SettingsStore {
    cache: RwLock<Option<(Version, Arc<SettingsMap>)>>,
    content: Arc<Tracker>,
}

impl Default for SettingsStore {
    /// A store with a version reading of its own (the app shares one: [`SettingsStore::new`]).
    fn default() -> Self {
        Self::new(Tracker::new(content_version::CHECK_EVERY))
    }
}

impl SettingsStore {
    pub fn new(content: Arc<Tracker>) -> Self {
        Self { cache: RwLock::new(None), content }
    }

    /// Defaults ([`SETTINGS`]) overlaid with stored values (keys not in the table too: the
    /// engines' keys and models, the search appearance).
    pub async fn all(&self, db: &DatabaseConnection) -> Result<Arc<SettingsMap>, sea_orm::DbErr> {
        let version = self.content.current(db).await?;
        if let Some((at, map)) = self.cache.read().unwrap_or_else(PoisonError::into_inner).as_ref()
            && *at == version
        {
            return Ok(map.clone());
        }
        let mut map: SettingsMap = SETTINGS.iter().map(|s| (s.key.to_owned(), s.default.to_owned())).collect();
        for row in setting::Entity::find().all(db).await? {
            map.insert(row.key, row.value);
        }
        let map = Arc::new(map);
        *self.cache.write().unwrap_or_else(PoisonError::into_inner) = Some((version, map.clone()));
        Ok(map)
    }

    pub async fn set(&self, db: &impl ConnectionTrait, key: &str, value: &str) -> Result<(), sea_orm::DbErr> {
        let row = setting::ActiveModel {
            key: Set(key.to_owned()),
            value: Set(value.to_owned()),
            updated_at: Set(Utc::now()),
        };
        setting::Entity::insert(row)
            .on_conflict(
                OnConflict::column(setting::Column::Key)
                    .update_columns([setting::Column::Value, setting::Column::UpdatedAt])
                    .to_owned(),
            )
            .exec(db)
            .await?;
        content_version::bump(db).await?;
        self.invalidate();
        self.content.refresh(db).await?;
        Ok(())
    }

    pub fn invalidate(&self) {
        *self.cache.write().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

/// Typed reads over the map, with the SPEC's fallbacks when a stored value is unusable.
pub trait SettingsExt {
    fn text(&self, key: &str) -> &str;
    fn max_file_size_mb(&self) -> u64;
    fn allowed_file_types(&self) -> Vec<String>;
    fn flag(&self, key: &str) -> bool;
}

impl SettingsExt for SettingsMap {
    fn text(&self, key: &str) -> &str {
        self.get(key).map(String::as_str).unwrap_or("")
    }
    fn max_file_size_mb(&self) -> u64 {
        let size = registry::MAX_FILE_SIZE;
        size.whole(self.get(size.key).map(String::as_str)).unsigned_abs()
    }
    fn allowed_file_types(&self) -> Vec<String> {
        self.text("allowed_file_types")
            .split(',')
            .map(|s| s.trim().trim_start_matches('.').to_ascii_lowercase())
            .filter(|s| !s.is_empty())
            .collect()
    }
    fn flag(&self, key: &str) -> bool {
        matches!(self.text(key).trim(), "true" | "1" | "yes" | "on")
    }
}
