//! `GET /api/blog`: published posts with search, category and tag filters (SPEC section 7).
use axum::Json;
use axum::extract::{Query, State};
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::entities::blog_post;
use crate::error::AppResult;
use crate::services::blog::{self, ListQuery};
use crate::services::settings::SettingsExt;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(index))
}

#[derive(Debug, Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct BlogParams {
    pub offset: Option<u64>,
    pub limit: Option<u64>,
    pub tag: Option<String>,
    pub category: Option<String>,
    pub search: Option<String>,
}

/// A post as the API shows it (SPEC section 3), with the field aliases older clients read.
#[derive(Debug, Serialize, utoipa::ToSchema)]
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
    /// The publication date (what readers see as the post's date).
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub published_at: chrono::DateTime<chrono::Utc>,
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
            created_at: p.published_at.unwrap_or(p.created_at),
            published_at: p.published_at.unwrap_or(p.created_at),
            updated_at: p.updated_at,
            author_name: author.clone(),
            author,
        }
    }
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct BlogList {
    pub posts: Vec<BlogPostJson>,
    pub total: u64,
}

/// List blog posts
///
/// Anyone may call it. A page of published posts, newest first, optionally narrowed to a
/// `tag`, a `category` or a `search` (in the title, summary, text or category), with the `total` number that
/// match (for paging with `offset`). `limit` defaults to 9 and is at most 50.
#[utoipa::path(get, path = "/blog", tag = "site", params(BlogParams),
    responses((status = 200, description = "A page of posts and how many match", body = BlogList)))]
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
