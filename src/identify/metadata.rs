//! Catalog clients: TMDB (search, details with `append_to_response`) and OMDb (box office,
//! awards), behind one cache.
//!
//! The cache is the `metadata_cache` table, not process memory: catalog facts change
//! slowly, the cache then survives restarts and is shared by every node on one PostgreSQL,
//! and it keeps us well inside TMDB's soft rate limit and OMDb's 1,000 requests a day.
//! Keys are sha256 of the request URL without credentials; entries live 24 hours.
use std::time::Duration;

use chrono::Utc;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, Set};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::time::Instant;

use super::engine::{EngineError, TitleKind};
use super::engines::{ErrorStyle, remaining, send_with_retry};
use crate::config::{IdentifyConfig, Secret};
use crate::entities::metadata_cache;
use crate::services::settings::SettingsMap;

pub const CACHE_TTL: Duration = Duration::from_secs(24 * 3600);

/// The metadata cache over the database.
#[derive(Clone)]
pub struct Cache {
    db: DatabaseConnection,
}

impl Cache {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }

    fn key(url: &str) -> String {
        hex::encode(Sha256::digest(url.as_bytes()))
    }

    pub async fn get(&self, url: &str) -> Option<Value> {
        let row = metadata_cache::Entity::find_by_id(Self::key(url))
            .filter(metadata_cache::Column::ExpiresAt.gt(Utc::now()))
            .one(&self.db)
            .await
            .ok()??;
        serde_json::from_str(&row.value).ok()
    }

    pub async fn put(&self, url: &str, value: &Value) {
        let row = metadata_cache::ActiveModel {
            key: Set(Self::key(url)),
            value: Set(value.to_string()),
            expires_at: Set(Utc::now() + chrono::Duration::from_std(CACHE_TTL).unwrap_or_default()),
        };
        let res = metadata_cache::Entity::insert(row)
            .on_conflict(
                OnConflict::column(metadata_cache::Column::Key)
                    .update_columns([metadata_cache::Column::Value, metadata_cache::Column::ExpiresAt])
                    .to_owned(),
            )
            .exec(&self.db)
            .await;
        if let Err(e) = res {
            tracing::warn!(error = %e, "metadata cache write failed");
        }
        // Now and then, drop expired rows so the table stays small.
        if rand::random::<u8>() < 4 {
            let _ = metadata_cache::Entity::delete_many()
                .filter(metadata_cache::Column::ExpiresAt.lt(Utc::now()))
                .exec(&self.db)
                .await;
        }
    }
}

enum TmdbAuth {
    Bearer(Secret),
    Query(Secret),
}

/// TMDB v3.
pub struct Tmdb {
    http: reqwest::Client,
    base: String,
    image_base: String,
    auth: TmdbAuth,
    pub region: String,
    cache: Cache,
}

struct TmdbErrors;
impl ErrorStyle for TmdbErrors {
    fn message(&self, body: &[u8]) -> String {
        serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|v| v["status_message"].as_str().map(str::to_owned))
            .unwrap_or_else(|| super::engines::error_message(body))
    }
}

/// A title a person can pick (`Tmdb::search_titles`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, utoipa::ToSchema, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct TitleHit {
    pub tmdb_id: i64,
    /// `movie` or `tv`.
    #[serde(rename = "type")]
    pub media_type: String,
    pub title: String,
    pub year: Option<String>,
    /// A small poster (92 px wide), when the catalog has one.
    pub poster_url: Option<String>,
}

/// A search hit.
#[derive(Debug, Clone)]
pub struct Hit {
    pub id: i64,
    pub kind: TitleKind,
    pub title: String,
    pub year: Option<i32>,
    pub popularity: f64,
}

impl Tmdb {
    /// `None` without `TMDB_READ_TOKEN` / `TMDB_API_KEY` (or the admin setting `tmdb_api_key`).
    pub fn from_config(
        cfg: &IdentifyConfig,
        settings: &SettingsMap,
        http: &reqwest::Client,
        cache: Cache,
    ) -> Option<Self> {
        let setting_key =
            settings.get("tmdb_api_key").map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()).map(Secret::new);
        // The read token travels in a header; a v3 key only in the query string, where any
        // URL that reaches a log would carry it (errors are scrubbed, still: prefer the token).
        let auth = match (&cfg.tmdb_read_token, &cfg.tmdb_api_key) {
            (Some(t), _) => TmdbAuth::Bearer(t.clone()),
            (None, Some(k)) => TmdbAuth::Query(k.clone()),
            (None, None) => {
                let k = setting_key?;
                // An admin may paste either kind into the setting; read tokens are JWTs.
                if is_read_token(k.expose()) { TmdbAuth::Bearer(k) } else { TmdbAuth::Query(k) }
            }
        };
        let region = settings
            .get("tmdb_region")
            .map(|r| r.trim().to_ascii_uppercase())
            .filter(|r| r.len() == 2)
            .unwrap_or_else(|| "US".into());
        let mut image_base = cfg.tmdb_image_base_url.to_string();
        if !image_base.ends_with('/') {
            image_base.push('/');
        }
        Some(Self {
            http: http.clone(),
            base: cfg.tmdb_base_url.as_str().trim_end_matches('/').to_owned(),
            image_base,
            auth,
            region,
            cache,
        })
    }

    /// `https://image.tmdb.org/t/p/{size}{path}`.
    pub fn image(&self, size: &str, path: &Value) -> Option<String> {
        path.as_str().filter(|p| p.starts_with('/')).map(|p| format!("{}{size}{p}", self.image_base))
    }

    /// A cached GET of `path` with query `params` (credentials never enter the cache key).
    pub async fn get(&self, path: &str, params: &[(&str, String)], deadline: Instant) -> Result<Value, EngineError> {
        let mut url = url::Url::parse(&format!("{}/{}", self.base, path.trim_start_matches('/')))
            .map_err(|e| EngineError::Unavailable(e.to_string()))?;
        url.query_pairs_mut().extend_pairs(params.iter().map(|(k, v)| (*k, v.as_str())));
        let cache_key = url.to_string();
        if let Some(v) = self.cache.get(&cache_key).await {
            return Ok(v);
        }
        let bytes = send_with_retry("tmdb", deadline, &TmdbErrors, || {
            let req = match &self.auth {
                TmdbAuth::Bearer(t) => self.http.get(url.clone()).bearer_auth(t.expose()),
                TmdbAuth::Query(k) => self.http.get(url.clone()).query(&[("api_key", k.expose())]),
            };
            req.header("accept", "application/json").timeout(remaining(deadline))
        })
        .await?;
        let v: Value = serde_json::from_slice(&bytes).map_err(|e| EngineError::BadAnswer(e.to_string()))?;
        self.cache.put(&cache_key, &v).await;
        Ok(v)
    }

    /// Finds the catalog entry for an engine's answer: by IMDb id when given (and well
    /// formed: it becomes part of the request path), else by searching the expected kind
    /// (then the other kind), with and without the year.
    pub async fn resolve(
        &self,
        title: &str,
        year: Option<i32>,
        kind: TitleKind,
        imdb_id: Option<&str>,
        deadline: Instant,
    ) -> Result<Option<Hit>, EngineError> {
        if let Some(imdb) = imdb_id.filter(|id| valid_imdb_id(id)) {
            let v = self
                .get(
                    &format!("find/{imdb}"),
                    &[("external_source", "imdb_id".into()), ("language", "en-US".into())],
                    deadline,
                )
                .await?;
            let hits: Vec<Hit> = [("movie_results", TitleKind::Movie), ("tv_results", TitleKind::Tv)]
                .iter()
                .flat_map(|(k, kind)| {
                    v[*k].as_array().cloned().unwrap_or_default().into_iter().map(move |r| hit(&r, *kind))
                })
                .flatten()
                .collect();
            if let Some(h) = best_hit(&hits, title, year) {
                return Ok(Some(h));
            }
        }
        let other = match kind {
            TitleKind::Movie => TitleKind::Tv,
            TitleKind::Tv => TitleKind::Movie,
        };
        for (k, with_year) in [(kind, true), (kind, false), (other, true), (other, false)] {
            if with_year && year.is_none() {
                continue;
            }
            let hits = self.search(title, if with_year { year } else { None }, k, deadline).await?;
            if let Some(h) = best_hit(&hits, title, year) {
                return Ok(Some(h));
            }
        }
        Ok(None)
    }

    async fn search(
        &self,
        title: &str,
        year: Option<i32>,
        kind: TitleKind,
        deadline: Instant,
    ) -> Result<Vec<Hit>, EngineError> {
        let mut params =
            vec![("query", title.to_owned()), ("include_adult", "false".into()), ("language", "en-US".into())];
        let path = match kind {
            TitleKind::Movie => {
                if let Some(y) = year {
                    params.push(("year", y.to_string()));
                }
                "search/movie"
            }
            TitleKind::Tv => {
                if let Some(y) = year {
                    params.push(("first_air_date_year", y.to_string()));
                }
                "search/tv"
            }
        };
        let v = self.get(path, &params, deadline).await?;
        Ok(v["results"].as_array().map(|a| a.iter().filter_map(|r| hit(r, kind)).collect()).unwrap_or_default())
    }

    /// Details with everything the result needs in one call.
    pub async fn details(&self, id: i64, kind: TitleKind, deadline: Instant) -> Result<Value, EngineError> {
        let (path, append) = match kind {
            TitleKind::Movie => {
                (format!("movie/{id}"), "credits,videos,watch/providers,recommendations,external_ids,release_dates")
            }
            TitleKind::Tv => {
                (format!("tv/{id}"), "credits,videos,watch/providers,recommendations,external_ids,content_ratings")
            }
        };
        self.get(&path, &[("append_to_response", append.into()), ("language", "en-US".into())], deadline).await
    }

    /// Movies and shows whose title matches `query` (`/search/multi`, people left out), as the
    /// catalog ranks them, with their posters: what a person picks the right title from.
    pub async fn search_titles(&self, query: &str, deadline: Instant) -> Result<Vec<TitleHit>, EngineError> {
        let params = [("query", query.to_owned()), ("include_adult", "false".into()), ("language", "en-US".into())];
        let v = self.get("search/multi", &params, deadline).await?;
        Ok(v["results"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|r| {
                        let kind = match r["media_type"].as_str()? {
                            "movie" => TitleKind::Movie,
                            "tv" => TitleKind::Tv,
                            _ => return None,
                        };
                        let h = hit(r, kind)?;
                        Some(TitleHit {
                            tmdb_id: h.id,
                            media_type: kind.as_str().into(),
                            title: h.title,
                            year: h.year.map(|y| y.to_string()),
                            poster_url: self.image("w92", &r["poster_path"]),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default())
    }

    pub async fn episode(&self, id: i64, season: u32, episode: u32, deadline: Instant) -> Result<Value, EngineError> {
        self.get(&format!("tv/{id}/season/{season}/episode/{episode}"), &[("language", "en-US".into())], deadline).await
    }
}

/// An IMDb title id: `tt` and 7 to 10 digits. Anything else (a model's answer is text we did
/// not write) could steer the keyed catalog request to another path.
pub fn valid_imdb_id(id: &str) -> bool {
    id.strip_prefix("tt")
        .is_some_and(|digits| (7..=10).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// TMDB's API read access tokens are JWTs (`eyJ...`, three dot-separated parts).
fn is_read_token(value: &str) -> bool {
    value.starts_with("eyJ") && value.split('.').count() == 3
}

fn hit(r: &Value, kind: TitleKind) -> Option<Hit> {
    let (title, date) = match kind {
        TitleKind::Movie => (r["title"].as_str(), r["release_date"].as_str()),
        TitleKind::Tv => (r["name"].as_str(), r["first_air_date"].as_str()),
    };
    Some(Hit {
        id: r["id"].as_i64()?,
        kind,
        title: title?.to_owned(),
        year: date.and_then(|d| d.get(..4)).and_then(|y| y.parse().ok()),
        popularity: r["popularity"].as_f64().unwrap_or(0.0),
    })
}

/// The hit that best fits the title and year: exact (normalised) title first, then year
/// closeness, then popularity. A hit whose title does not resemble ours is not taken.
pub fn best_hit(hits: &[Hit], title: &str, year: Option<i32>) -> Option<Hit> {
    let want = super::select::normalise_title(title);
    hits.iter()
        .filter_map(|h| {
            let got = super::select::normalise_title(&h.title);
            let title_score = if got == want {
                3.0
            } else if got.contains(&want) || want.contains(&got) {
                1.5
            } else {
                return None;
            };
            let year_score = match (year, h.year) {
                (Some(a), Some(b)) if a == b => 2.0,
                (Some(a), Some(b)) if (a - b).abs() <= 1 => 1.0,
                (Some(_), Some(_)) => -1.0,
                _ => 0.0,
            };
            Some((title_score + year_score + (h.popularity.max(0.0) + 1.0).ln() * 0.1, h))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, h)| h.clone())
}

/// OMDb by IMDb id: box office, awards, ratings.
pub struct Omdb {
    http: reqwest::Client,
    base: String,
    key: Secret,
    cache: Cache,
}

impl Omdb {
    pub fn from_config(
        cfg: &IdentifyConfig,
        settings: &SettingsMap,
        http: &reqwest::Client,
        cache: Cache,
    ) -> Option<Self> {
        let key = cfg.omdb_api_key.clone().or_else(|| {
            settings.get("omdb_api_key").map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()).map(Secret::new)
        })?;
        Some(Self { http: http.clone(), base: cfg.omdb_base_url.to_string(), key, cache })
    }

    /// The title record, or `None` when OMDb does not know it (`Response: "False"`).
    pub async fn by_imdb(&self, imdb_id: &str, deadline: Instant) -> Result<Option<Value>, EngineError> {
        if !valid_imdb_id(imdb_id) {
            return Ok(None);
        }
        let mut url = url::Url::parse(&self.base).map_err(|e| EngineError::Unavailable(e.to_string()))?;
        url.query_pairs_mut().append_pair("i", imdb_id).append_pair("plot", "short").append_pair("r", "json");
        let cache_key = url.to_string();
        let v = match self.cache.get(&cache_key).await {
            Some(v) => v,
            None => {
                let bytes = send_with_retry("omdb", deadline, &OmdbErrors, || {
                    self.http.get(url.clone()).query(&[("apikey", self.key.expose())]).timeout(remaining(deadline))
                })
                .await?;
                let v: Value = serde_json::from_slice(&bytes).map_err(|e| EngineError::BadAnswer(e.to_string()))?;
                self.cache.put(&cache_key, &v).await;
                v
            }
        };
        if v["Response"] != "True" {
            tracing::info!(imdb_id, error = %v["Error"], "OMDb has no record");
            return Ok(None);
        }
        Ok(Some(v))
    }
}

struct OmdbErrors;
impl ErrorStyle for OmdbErrors {
    fn message(&self, body: &[u8]) -> String {
        serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|v| v["Error"].as_str().map(str::to_owned))
            .unwrap_or_else(|| super::engines::error_message(body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imdb_ids_are_tt_and_digits_only() {
        for ok in ["tt0133093", "tt0903747", "tt12345678", "tt1234567890"] {
            assert!(valid_imdb_id(ok), "{ok}");
        }
        for bad in [
            "tt",
            "tt123456",
            "tt12345678901",
            "tt0133093/../../account",
            "tt0133093?api_key=x",
            "tt013309a",
            "nm0133093",
            "TT0133093",
            "tt0133093 ",
            "tt０１３３０９３",
        ] {
            assert!(!valid_imdb_id(bad), "{bad}");
        }
    }

    #[test]
    fn read_tokens_are_recognised() {
        assert!(is_read_token("eyJhbGciOiJIUzI1NiJ9.eyJhdWQiOiJ4In0.c2ln"));
        assert!(!is_read_token("0123456789abcdef0123456789abcdef"));
    }
}
