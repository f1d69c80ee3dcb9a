//! `GET /api/blog`: published posts with search, category and tag filters (SPEC section 7).
use axum::extract::{Query, State};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

use crate::entities::blog_post;
use crate::error::AppResult;
use crate::services::blog::{self, ListQuery};
use crate::services::settings::SettingsExt;
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route("/blog", get(index))
}

#[derive(Debug, Deserialize, Default)]
pub struct BlogParams {
    pub offset: Option<u64>,
    pub limit: Option<u64>,
    pub tag: Option<String>,
    pub category: Option<String>,
    pub search: Option<String>,
}

/// A post as the API shows it (SPEC section 3), with the field aliases older clients read.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlogPostJson {
    pub id: i64,
    pub slug: String,
    pub title: String,
    pub summary: String,
    pub excerpt: String,
    /// Markdown source; `/blog/{slug}` serves the rendered, sanitised article.
    pub content: String,
    pub category: String,
    pub tags: Vec<String>,
    pub featured_image: Option<String>,
    pub image_url: Option<String>,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub updated_at: chrono::DateTime<chrono::Utc>,
    pub read_time_minutes: u32,
    pub author_name: String,
    pub author: String,
    pub url: String,
}

impl BlogPostJson {
    pub fn from_model(p: blog_post::Model, default_author: &str) -> Self {
        let author =
            p.author_name.clone().filter(|a| !a.trim().is_empty()).unwrap_or_else(|| default_author.to_owned());
        Self {
            id: p.id,
            excerpt: blog::excerpt(&p),
            read_time_minutes: blog::read_time_minutes(&p.content),
            url: format!("/blog/{}", p.slug),
            tags: p.tags.split(',').map(str::trim).filter(|t| !t.is_empty()).map(str::to_owned).collect(),
            slug: p.slug,
            title: p.title,
            summary: p.summary,
            content: p.content,
            category: p.category,
            image_url: p.featured_image.clone(),
            featured_image: p.featured_image,
            created_at: p.created_at,
            updated_at: p.updated_at,
            author_name: author.clone(),
            author,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct BlogList {
    pub posts: Vec<BlogPostJson>,
    pub total: u64,
}

/// `{posts, total}`; `limit` defaults to 9 and is capped at 50.
async fn index(State(state): State<AppState>, Query(p): Query<BlogParams>) -> AppResult<Json<BlogList>> {
    let q = ListQuery {
        offset: p.offset.unwrap_or(0),
        limit: p.limit.unwrap_or(blog::PAGE_SIZE),
        tag: p.tag,
        category: p.category,
        search: p.search,
    };
    let (posts, total) = blog::list(&state.db, &q).await?;
    let settings = state.settings().await?;
    let author = default_author(settings.text("site_name"));
    Ok(Json(BlogList { posts: posts.into_iter().map(|p| BlogPostJson::from_model(p, &author)).collect(), total }))
}

/// "{site_name} Team" (SPEC: author defaults to "{product} Team").
pub fn default_author(site_name: &str) -> String {
    let name = site_name.trim();
    format!("{} Team", if name.is_empty() { "Reelfind" } else { name })
}
