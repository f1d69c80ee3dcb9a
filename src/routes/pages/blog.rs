//! `/blog` (list with search, category filter and pagination), `/blog/{slug}` (with 301s
//! from the old slugs of renamed posts), the admin's draft preview
//! `/admin/blog/{id}/preview`, and the blog's pictures `/media/blog/{file}`.
use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;
use serde_json::json;

use std::collections::HashMap;

use axum::http::{HeaderValue, header};

use sea_orm::EntityTrait;

use crate::entities::blog_post;
use crate::error::{AppError, AppResult};
use crate::routes::admin::AdminPage;
use crate::routes::api::blog::default_author;
use crate::services::blog::{self, ListQuery, PAGE_SIZE};
use crate::services::blog_images::{self, StoredImage};
use crate::services::settings::SettingsExt;
use crate::state::AppState;
use crate::views::PageCtx;
use crate::views::page_meta::Page;

/// The pictures of a page of posts, in one query.
pub async fn images_of(
    db: &impl sea_orm::ConnectionTrait,
    posts: &[blog_post::Model],
) -> Result<HashMap<String, StoredImage>, sea_orm::DbErr> {
    let urls: Vec<String> =
        posts.iter().flat_map(|p| [p.featured_image.clone(), p.social_image.clone()]).flatten().collect();
    blog_images::find_many(db, &urls).await
}

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/blog", get(index))
        .route("/blog/{slug}", get(show))
        .route("/admin/blog/{id}/preview", get(preview))
        .route("/media/blog/{file}", get(media))
}

/// A picture with what the browser needs to pick a size and reserve its box.
#[derive(Debug, Clone)]
pub struct ImageView {
    pub src: String,
    pub srcset: Option<String>,
    pub width: Option<u32>,
    pub height: Option<u32>,
}

impl ImageView {
    /// An uploaded picture gets its widths and size; another URL is used as it is.
    pub fn new(url: &str, images: &HashMap<String, StoredImage>) -> Option<Self> {
        let url = safe_image_url(url)?;
        match blog_images::key_of(&url).and_then(|k| images.get(k)) {
            Some(img) => Some(Self {
                src: img.url.clone(),
                srcset: Some(img.srcset.clone()),
                width: Some(img.width),
                height: Some(img.height),
            }),
            None => Some(Self { src: url, srcset: None, width: None, height: None }),
        }
    }
}

/// A post as a card or article header shows it.
#[derive(Debug, Clone)]
pub struct PostView {
    pub href: String,
    pub title: String,
    pub excerpt: String,
    pub category: String,
    pub image: Option<ImageView>,
    pub date_iso: String,
    pub date_human: String,
    pub read_time: u32,
    pub author: String,
    pub tags: Vec<String>,
}

impl PostView {
    pub fn from_model(p: &blog_post::Model, default_author: &str, images: &HashMap<String, StoredImage>) -> Self {
        // The date readers see is the publication date; a draft shows when it was started.
        let date = p.published_at.unwrap_or(p.created_at);
        Self {
            href: format!("/blog/{}", p.slug),
            title: p.title.clone(),
            excerpt: blog::excerpt(p),
            category: p.category.clone(),
            image: p.featured_image.as_deref().and_then(|u| ImageView::new(u, images)),
            date_iso: date.to_rfc3339(),
            date_human: date.format("%B %-d, %Y").to_string(),
            read_time: blog::read_time_minutes(&p.content),
            author: p.author_name.clone().filter(|a| !a.trim().is_empty()).unwrap_or_else(|| default_author.to_owned()),
            tags: p.tags.split(',').map(str::trim).filter(|t| !t.is_empty()).map(str::to_owned).collect(),
        }
    }

    /// The first letter of the category, shown on cards without an image.
    pub fn monogram(&self) -> String {
        self.category
            .chars()
            .next()
            .or(self.title.chars().next())
            .map(|c| c.to_uppercase().collect())
            .unwrap_or_default()
    }

    /// A stable colour variant (0-5) per category for cards without an image.
    pub fn tone(&self) -> u32 {
        self.category.bytes().fold(0u32, |a, b| a.wrapping_mul(31).wrapping_add(b as u32)) % 6
    }
}

/// Images only from http(s) or this site; anything else (javascript:, data:) is dropped.
fn safe_image_url(url: &str) -> Option<String> {
    let u = url.trim();
    let ok = u.starts_with("https://") || u.starts_with("http://") || (u.starts_with('/') && !u.starts_with("//"));
    (ok && !u.contains('"')).then(|| u.to_owned())
}

#[derive(Debug, Deserialize, Default)]
pub struct BlogPageParams {
    pub page: Option<String>,
    pub search: Option<String>,
    pub category: Option<String>,
    pub tag: Option<String>,
}

pub struct CategoryLink {
    pub label: String,
    pub href: String,
    pub current: bool,
}

pub struct PageLink {
    pub number: u64,
    pub url: String,
    pub current: bool,
    /// A "…" between distant page numbers.
    pub gap: bool,
}

#[derive(Template, WebTemplate)]
#[template(path = "blog/index.html")]
pub struct BlogIndexPage {
    pub ctx: PageCtx,
    pub search: String,
    pub category: String,
    pub tag: String,
    pub categories: Vec<CategoryLink>,
    pub featured: Option<PostView>,
    pub posts: Vec<PostView>,
    pub total: u64,
    pub page: u64,
    pub pages: Vec<PageLink>,
    pub prev: Option<String>,
    pub next: Option<String>,
    pub failed: bool,
    pub retry_url: String,
}

impl BlogIndexPage {
    pub fn filtered(&self) -> bool {
        !self.search.is_empty() || !self.category.is_empty() || !self.tag.is_empty()
    }
}

/// `/blog?search=&category=&tag=&page=`, every link keeping the other filters.
fn list_url(search: &str, category: &str, tag: &str, page: u64) -> String {
    let mut q = url::form_urlencoded::Serializer::new(String::new());
    if !search.is_empty() {
        q.append_pair("search", search);
    }
    if !category.is_empty() {
        q.append_pair("category", category);
    }
    if !tag.is_empty() {
        q.append_pair("tag", tag);
    }
    if page > 1 {
        q.append_pair("page", &page.to_string());
    }
    let q = q.finish();
    if q.is_empty() { "/blog".into() } else { format!("/blog?{q}") }
}

/// The filter buttons after "All" (SPEC §2: "All plus categories present on the loaded
/// page"): the categories of the posts shown, once each whatever their case, sorted, plus the
/// chosen one even when no post of it is shown (so it can be seen as chosen).
fn page_categories<'a>(shown: impl Iterator<Item = &'a str>, chosen: &'a str) -> Vec<String> {
    let mut cats: Vec<String> =
        shown.chain(std::iter::once(chosen)).map(str::trim).filter(|c| !c.is_empty()).map(str::to_owned).collect();
    cats.sort_by_key(|c| c.to_lowercase());
    cats.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
    cats
}

/// Page numbers to show: all when there are few, else the ends and the neighbourhood of
/// the current page with gaps.
fn page_numbers(current: u64, last: u64) -> Vec<(u64, bool)> {
    if last <= 7 {
        return (1..=last).map(|n| (n, false)).collect();
    }
    let mut out = Vec::new();
    let mut prev = 0;
    for n in 1..=last {
        if n == 1 || n == last || n.abs_diff(current) <= 1 {
            if prev != 0 && n > prev + 1 {
                out.push((0, true));
            }
            out.push((n, false));
            prev = n;
        }
    }
    out
}

async fn index(State(state): State<AppState>, ctx: PageCtx, Query(p): Query<BlogPageParams>) -> AppResult<Response> {
    let clean = |s: Option<String>| s.map(|s| s.trim().chars().take(100).collect::<String>()).unwrap_or_default();
    let search = clean(p.search);
    let category = clean(p.category);
    let tag = clean(p.tag);
    let page = p.page.as_deref().and_then(|s| s.trim().parse::<u64>().ok()).filter(|n| *n >= 1).unwrap_or(1);
    let author = default_author(&ctx.site.name);
    let site_name = ctx.site.name.clone();

    let q = ListQuery {
        offset: (page - 1).saturating_mul(PAGE_SIZE),
        limit: PAGE_SIZE,
        tag: Some(tag.clone()),
        category: Some(category.clone()),
        search: Some(search.clone()),
    };
    let loaded = async {
        let (posts, total) = blog::list(&state.db, &q).await?;
        let images = images_of(&state.db, &posts).await?;
        Ok::<_, sea_orm::DbErr>((posts, total, images))
    }
    .await;

    let (posts, total, images, failed) = match loaded {
        Ok((posts, total, images)) => (posts, total, images, false),
        Err(e) => {
            tracing::error!(error = %e, "blog list could not be loaded");
            (Vec::new(), 0, HashMap::new(), true)
        }
    };
    let cats = page_categories(posts.iter().map(|p| p.category.as_str()), &category);
    let mut views: Vec<PostView> = posts.iter().map(|p| PostView::from_model(p, &author, &images)).collect();
    let featured = if page == 1 && !views.is_empty() { Some(views.remove(0)) } else { None };
    let last = total.div_ceil(PAGE_SIZE).max(1);
    let pages = page_numbers(page.min(last), last)
        .into_iter()
        .map(|(n, gap)| PageLink { number: n, url: list_url(&search, &category, &tag, n), current: n == page, gap })
        .collect();
    let prev = (page > 1 && page <= last).then(|| list_url(&search, &category, &tag, page - 1));
    let next = (page < last).then(|| list_url(&search, &category, &tag, page + 1));
    let mut categories =
        vec![CategoryLink { label: "All".into(), href: list_url(&search, "", &tag, 1), current: category.is_empty() }];
    categories.extend(cats.into_iter().map(|c| CategoryLink {
        current: c.eq_ignore_ascii_case(&category),
        href: list_url(&search, &c, &tag, 1),
        label: c,
    }));

    let mut ctx = ctx.with_page_meta(Page::Blog);
    if !category.is_empty() {
        ctx.meta.title = format!("{category} Articles");
    } else if page > 1 {
        ctx.meta.title = format!("Blog - Page {page}");
    }
    ctx.meta.canonical = format!("{}{}", ctx.site.origin, list_url("", &category, &tag, page));
    // The admin's overrides describe the blog's front page, not a category or page 3.
    if !category.is_empty() || !tag.is_empty() || !search.is_empty() || page > 1 {
        ctx = ctx.without_overrides();
    }
    if !search.is_empty() {
        // Search result pages are not worth indexing.
        ctx.meta.noindex = true;
    }
    if featured.is_some() || !views.is_empty() {
        let items: Vec<_> = featured
            .iter()
            .chain(views.iter())
            .enumerate()
            .map(|(i, v)| json!({"@type": "ListItem", "position": i + 1, "url": format!("{}{}", ctx.site.origin, v.href), "name": v.title}))
            .collect();
        let blog_url = format!("{}/blog", ctx.site.origin);
        ctx = ctx.with_json_ld(&json!({
            "@context": "https://schema.org",
            "@type": "Blog",
            "name": format!("{site_name} Blog"),
            "url": blog_url,
            "blogPost": { "@type": "ItemList", "itemListElement": items },
        }));
    }
    let retry_url = list_url(&search, &category, &tag, page);
    let status = if failed { StatusCode::SERVICE_UNAVAILABLE } else { StatusCode::OK };
    let body = BlogIndexPage {
        ctx,
        search,
        category,
        tag,
        categories,
        featured,
        posts: views,
        total,
        page,
        pages,
        prev,
        next,
        failed,
        retry_url,
    };
    Ok((status, body).into_response())
}

#[derive(Template, WebTemplate)]
#[template(path = "blog/show.html")]
pub struct BlogShowPage {
    pub ctx: PageCtx,
    pub post: PostView,
    /// Sanitised HTML of the article body.
    pub body_html: String,
    pub related: Vec<PostView>,
    /// Set on an admin's preview: what the banner says about the post's state.
    pub preview: Option<PreviewNote>,
}

async fn show(State(state): State<AppState>, ctx: PageCtx, Path(slug): Path<String>) -> AppResult<Response> {
    let Some(model) = blog::find_published(&state.db, &slug).await? else {
        // A renamed post keeps its old address.
        return match blog::redirect_for(&state.db, &slug).await? {
            Some(current) => Ok((
                StatusCode::MOVED_PERMANENTLY,
                [(
                    header::LOCATION,
                    HeaderValue::from_str(&format!("/blog/{current}")).map_err(|e| AppError::Internal(e.into()))?,
                )],
            )
                .into_response()),
            None => Err(AppError::NotFound),
        };
    };
    Ok(article(&state, ctx, model, None).await?.into_response())
}

pub struct PreviewNote {
    pub text: String,
    pub edit_url: String,
}

/// The article page of `model`, as visitors get it (or as a preview for an admin).
async fn article(
    state: &AppState,
    ctx: PageCtx,
    model: blog_post::Model,
    preview: Option<PreviewNote>,
) -> AppResult<BlogShowPage> {
    let author = default_author(&ctx.site.name);
    let related_models = if preview.is_some() { Vec::new() } else { blog::related(&state.db, &model, 3).await? };
    let mut with_images = related_models.clone();
    with_images.push(model.clone());
    let images = images_of(&state.db, &with_images).await?;
    let post = PostView::from_model(&model, &author, &images);
    let related = related_models.iter().map(|p| PostView::from_model(p, &author, &images)).collect();
    let body_html = blog::render_markdown(&model.content);
    let origin = ctx.site.origin.clone();
    let url = format!("{origin}{}", post.href);
    let absolute = |i: &str| if i.starts_with('/') { format!("{origin}{i}") } else { i.to_owned() };
    let settings = state.settings().await?;
    let meta = blog::post_meta(&model, &ctx.site.name);
    let mut ctx = ctx.titled(post.title.clone(), meta.description.clone());
    ctx.meta.title = meta.title;
    ctx.meta.full_title = true;
    ctx.meta.canonical = url.clone();
    ctx.meta.og_type = "article";
    // Social image: the post's own, else its picture, else the site's default.
    let social = model
        .social_image
        .as_deref()
        .and_then(|u| ImageView::new(u, &images))
        .or_else(|| post.image.clone())
        .map(|i| absolute(&i.src))
        .or_else(|| {
            Some(settings.text("seo_default_image").trim().to_owned()).filter(|s| !s.is_empty()).map(|s| absolute(&s))
        });
    ctx.meta.og_image = social;
    if model.noindex || preview.is_some() {
        ctx.meta.noindex = true;
    }
    let publisher = json!({ "@type": "Organization", "name": ctx.site.company_name, "url": ctx.site.company_url });
    let published = model.published_at.unwrap_or(model.created_at);
    let mut article = json!({
        "@context": "https://schema.org",
        "@type": "Article",
        "headline": post.title,
        "description": ctx.meta.description,
        "datePublished": published.to_rfc3339(),
        "dateModified": blog::last_modified(&model).to_rfc3339(),
        "author": if model.author_name.as_deref().is_some_and(|a| !a.trim().is_empty()) {
            json!({ "@type": "Person", "name": post.author })
        } else {
            json!({ "@type": "Organization", "name": post.author })
        },
        "publisher": publisher,
        "mainEntityOfPage": { "@type": "WebPage", "@id": url },
        "url": url,
        "articleSection": post.category,
        "keywords": post.tags.join(", "),
        "wordCount": model.content.split_whitespace().count(),
        "timeRequired": format!("PT{}M", post.read_time),
        "inLanguage": "en",
    });
    if let Some(img) = &ctx.meta.og_image {
        article["image"] = json!([img]);
    }
    let ctx = ctx.with_json_ld(&article).with_json_ld(&json!({
        "@context": "https://schema.org",
        "@type": "BreadcrumbList",
        "itemListElement": [
            { "@type": "ListItem", "position": 1, "name": "Home", "item": format!("{origin}/") },
            { "@type": "ListItem", "position": 2, "name": "Blog", "item": format!("{origin}/blog") },
            { "@type": "ListItem", "position": 3, "name": post.title, "item": url },
        ],
    }));
    Ok(BlogShowPage { ctx, post, body_html, related, preview })
}

/// An admin's look at any post, draft or not, exactly as it will render; never cached,
/// never indexed. Anyone else is sent to `/admin`.
async fn preview(
    State(state): State<AppState>,
    ctx: PageCtx,
    _: AdminPage,
    Path(id): Path<i64>,
) -> AppResult<Response> {
    let model = blog_post::Entity::find_by_id(id).one(&state.db).await?.ok_or(AppError::NotFound)?;
    let status = crate::services::blog_admin::PostStatus::of(&model, chrono::Utc::now());
    let note = match status {
        crate::services::blog_admin::PostStatus::Draft => {
            "Preview of a draft: visitors cannot see this post.".to_owned()
        }
        crate::services::blog_admin::PostStatus::Scheduled => format!(
            "Preview of a scheduled post: it goes live on {}.",
            model.published_at.map(|d| d.format("%B %-d, %Y at %H:%M UTC").to_string()).unwrap_or_default()
        ),
        crate::services::blog_admin::PostStatus::Published => "Preview: this post is published.".to_owned(),
    };
    let note = PreviewNote { text: note, edit_url: format!("/admin/blog/{id}") };
    let page = article(&state, ctx, model, Some(note)).await?;
    let mut res = page.into_response();
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("private, no-store"));
    Ok(res)
}

/// `/media/blog/{key}-{width}.jpg`: names never change, so browsers and CDNs keep them a year.
async fn media(State(state): State<AppState>, Path(file): Path<String>) -> AppResult<Response> {
    if !blog_images::is_file_name(&file) {
        return Err(AppError::NotFound);
    }
    let path = blog_images::dir(&state.config.data_dir).join(&file);
    let bytes = match tokio::fs::read(&path).await {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(AppError::NotFound),
        Err(e) => return Err(AppError::Internal(e.into())),
    };
    Ok((
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("image/jpeg")),
            (header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=31536000, immutable")),
        ],
        bytes,
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_numbers_collapse_with_gaps() {
        assert_eq!(page_numbers(1, 3), vec![(1, false), (2, false), (3, false)]);
        let p = page_numbers(5, 10);
        let shown: Vec<u64> = p.iter().map(|(n, _)| *n).collect();
        assert_eq!(shown, vec![1, 0, 4, 5, 6, 0, 10]);
    }

    #[test]
    fn list_urls_keep_filters_and_drop_page_one() {
        assert_eq!(list_url("", "", "", 1), "/blog");
        assert_eq!(list_url("a b", "Guides", "", 2), "/blog?search=a+b&category=Guides&page=2");
    }

    #[test]
    fn unsafe_image_urls_are_dropped() {
        assert_eq!(safe_image_url("javascript:alert(1)"), None);
        assert_eq!(safe_image_url("//evil.example/x.png"), None);
        assert_eq!(safe_image_url("/assets/x.png").as_deref(), Some("/assets/x.png"));
    }
}
