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

/// Every documented setting with its default. Keys not listed here may still be stored
/// (later features add their own), and they appear in the map too.
pub const DEFAULTS: &[(&str, &str)] = &[
    ("site_name", "Reelfind"),
    ("site_description", "Instantly identify movies and TV shows."),
    ("site_tagline", "Name that scene in seconds"),
    (
        "hero_description",
        "Drop in a screenshot or a short clip and get the movie or TV show it comes from, with the cast, the trailer and where to watch it tonight.",
    ),
    ("company_name", "Reelfind"),
    // Empty means "derive from the public URL": {host} and support@{host}.
    ("company_url", ""),
    ("contact_email", ""),
    ("github_url", "https://github.com"),
    ("twitter_url", "https://twitter.com"),
    ("linkedin_url", "https://www.linkedin.com"),
    ("support_hours", "Monday - Friday: 9:00 AM - 5:00 PM EST"),
    ("response_time", "Within 24 hours"),
    ("terms_url", "/terms-of-service"),
    ("max_file_size", "10"),
    ("allowed_file_types", "jpg,jpeg,png,webp,mp4,mov"),
    ("ai_primary_model", "auto"),
    ("allowed_engines", "google,openai,xai,anthropic,ensemble,library"),
    ("require_email_verification", "false"),
    ("tmdb_region", "US"),
    // Days analytics events are kept (1-3650); the Insight tab shows at most 90.
    ("analytics_retention_days", "90"),
    // The third-party analytics tag (services::analytics_tag): none by default.
    ("analytics_tag_provider", ""),
    ("analytics_tag_id", ""),
    ("analytics_tag_host", ""),
    // API keys (services::api_quota): default quota of keyed requests, and the origins
    // whose pages may call the API with a key (CORS), comma-separated; empty: none.
    ("api_quota_per_minute", "30"),
    ("api_quota_per_day", "1000"),
    ("api_quota_concurrent", "2"),
    ("api_cors_origins", ""),
    ("auto_name", "Auto (recommended)"),
    ("auto_desc", "Picks the best engine available right now."),
    ("google_name", "Google Gemini"),
    ("google_desc", "Fast multimodal model, strong on recent releases and native audio."),
    ("openai_name", "OpenAI GPT"),
    ("openai_desc", "Careful visual reasoning over faces, sets and on-screen text."),
    ("xai_name", "xAI Grok"),
    ("xai_desc", "Broad pop-culture knowledge with quick answers."),
    ("anthropic_name", "Anthropic Claude"),
    ("anthropic_desc", "Thorough scene analysis that explains its reasoning."),
    ("ensemble_name", "Ensemble"),
    ("ensemble_desc", "Asks every available engine at once and lets them vote."),
    ("library_name", "Library"),
    ("library_desc", "Matches your own indexed videos to the exact second, offline."),
];

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

    /// Defaults overlaid with stored values.
    pub async fn all(&self, db: &DatabaseConnection) -> Result<Arc<SettingsMap>, sea_orm::DbErr> {
        let version = self.content.current(db).await?;
        if let Some((at, map)) = self.cache.read().unwrap_or_else(PoisonError::into_inner).as_ref()
            && *at == version
        {
            return Ok(map.clone());
        }
        let mut map: SettingsMap = DEFAULTS.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
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
        self.text("max_file_size").trim().parse().ok().filter(|n| *n > 0).unwrap_or(10)
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
