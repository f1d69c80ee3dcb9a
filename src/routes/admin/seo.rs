//! `/admin/seo`: the dashboard's Search appearance tab. Server HTML with plain forms:
//! per-page title and description overrides (blank falls back to the page's own text),
//! the default social image (uploaded and re-encoded like blog pictures), site-verification
//! tags, robots rules, and the checks of every public page and published post.
use std::collections::BTreeMap;

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use serde::Deserialize;

use crate::entities::blog_post;
use crate::error::{AppError, AppResult};
use crate::routes::admin::AdminPage;
use crate::routes::api::admin::blog::image_error;
use crate::services::admin::{self as admin_service, UpdateError};
use crate::services::seo::{self, SeoRow};
use crate::services::settings::{SettingsExt, SettingsMap};
use crate::services::{blog, blog_images};
use crate::state::AppState;
use crate::views::page_meta::{Page, PageMeta, page_meta};
use crate::views::{PageCtx, Site};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/seo", get(page).post(save))
        .route("/admin/seo/image", post(upload_image).layer(DefaultBodyLimit::max(blog_images::MAX_BYTES + 64 * 1024)))
}

/// One page's override fields in the form.
pub struct OverrideRow {
    pub key: &'static str,
    pub path: &'static str,
    pub label: &'static str,
    pub title: String,
    pub description: String,
    /// What the page says without an override (shown as the placeholder).
    pub default_title: String,
    pub default_description: String,
}

pub struct VerificationRow {
    pub key: &'static str,
    pub label: &'static str,
    pub meta_name: &'static str,
    pub value: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "admin/seo.html")]
pub struct SeoPageView {
    ctx: PageCtx,
    tab: &'static str,
    overrides: Vec<OverrideRow>,
    verifications: Vec<VerificationRow>,
    default_image: String,
    robots: String,
    default_robots: &'static str,
    rows: Vec<SeoRow>,
    warnings: usize,
    title_max: usize,
    description_max: usize,
    notice: Option<String>,
    error: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct SeoQuery {
    saved: Option<String>,
    error: Option<String>,
}

/// Every public page and every published post, each from the same function its page uses
/// (`views::page_meta`, `blog::post_meta`) with the admin's overrides applied, and their
/// warnings.
async fn check_rows(state: &AppState, settings: &SettingsMap) -> AppResult<Vec<SeoRow>> {
    let site = Site::from_settings(settings, &state.config.origin());
    let mut rows = Vec::new();
    for p in seo::PAGES {
        let own = own_meta(p, &site);
        let (title, description) = seo::overrides(settings, p.path);
        rows.push(SeoRow {
            kind: "page",
            path: p.path.to_owned(),
            label: p.label.to_owned(),
            status: 200,
            title: title.unwrap_or_else(|| own.document_title(&site.name)),
            description: description.unwrap_or(own.description),
            noindex: own.noindex,
            edit_url: None,
            warnings: Vec::new(),
        });
    }
    use sea_orm::{EntityTrait, QueryFilter, QueryOrder};
    let posts = blog_post::Entity::find()
        .filter(blog::visible())
        .order_by_desc(blog_post::Column::PublishedAt)
        .all(&state.db)
        .await?;
    let site = settings.text("site_name").trim();
    let site = if site.is_empty() { "Reelfind" } else { site };
    for p in posts {
        let meta = blog::post_meta(&p, site);
        rows.push(SeoRow {
            kind: "post",
            path: format!("/blog/{}", p.slug),
            label: p.title.clone(),
            status: 200,
            title: meta.title,
            description: meta.description,
            noindex: p.noindex,
            edit_url: Some(format!("/admin/blog/{}", p.id)),
            warnings: Vec::new(),
        });
    }
    seo::check(&mut rows);
    Ok(rows)
}

/// What `page` says of itself without the admin's overrides.
fn own_meta(page: &seo::SeoPage, site: &Site) -> PageMeta {
    match Page::from_key(page.key) {
        Some(p) => page_meta(p, site),
        // Every key has its metadata (a unit test of `views::page_meta` holds them together).
        None => {
            PageMeta { title: page.label.to_owned(), full_title: false, description: String::new(), noindex: false }
        }
    }
}

async fn build(
    ctx: PageCtx,
    state: &AppState,
    notice: Option<String>,
    error: Option<String>,
    typed: Option<&BTreeMap<String, String>>,
) -> AppResult<SeoPageView> {
    let settings = state.settings().await?;
    let value = |k: &str| typed.and_then(|t| t.get(k)).cloned().unwrap_or_else(|| settings.text(k).to_owned());
    let rows = check_rows(state, &settings).await?;
    let site = Site::from_settings(&settings, &state.config.origin());
    let mut overrides = Vec::new();
    for p in seo::PAGES {
        // The page's own text is the placeholder while no override is stored.
        let (tk, dk) = (seo::title_key(p.key), seo::description_key(p.key));
        let own = own_meta(p, &site);
        let (ot, od) = (settings.text(&tk).trim().is_empty(), settings.text(&dk).trim().is_empty());
        overrides.push(OverrideRow {
            key: p.key,
            path: p.path,
            label: p.label,
            title: value(&tk),
            description: value(&dk),
            default_title: if ot { own.document_title(&site.name) } else { String::new() },
            default_description: if od { own.description } else { String::new() },
        });
    }
    let verifications = seo::VERIFICATIONS
        .iter()
        .map(|(key, label, meta_name)| VerificationRow { key, label, meta_name, value: value(key) })
        .collect();
    let warnings = rows.iter().filter(|r| !r.warnings.is_empty()).count();
    Ok(SeoPageView {
        ctx: ctx.titled("Search appearance", "").noindex(),
        tab: "seo",
        overrides,
        verifications,
        default_image: value(seo::DEFAULT_IMAGE_KEY),
        robots: value(seo::ROBOTS_KEY),
        default_robots: seo::DEFAULT_ROBOTS,
        rows,
        warnings,
        title_max: seo::TITLE_MAX,
        description_max: seo::DESCRIPTION_MAX,
        notice,
        error,
    })
}

async fn page(
    ctx: PageCtx,
    _: AdminPage,
    State(state): State<AppState>,
    Query(q): Query<SeoQuery>,
) -> AppResult<SeoPageView> {
    let notice = match q.saved.as_deref() {
        Some("image") => Some("Default social image uploaded.".to_owned()),
        Some(_) => Some("Search appearance saved.".to_owned()),
        None => None,
    };
    build(ctx, &state, notice, q.error, None).await
}

/// Saves every SEO field of the form (all are validated before any is stored).
async fn save(
    ctx: PageCtx,
    AdminPage(me): AdminPage,
    State(state): State<AppState>,
    body: axum::body::Bytes,
) -> AppResult<Response> {
    let changes: BTreeMap<String, String> =
        url::form_urlencoded::parse(&body).into_owned().filter(|(k, _)| seo::is_seo_key(k)).collect();
    match admin_service::update_settings(&state.db, &state.settings, &changes).await {
        Ok(()) => {
            tracing::info!(admin = me.id, keys = changes.len(), "search appearance saved");
            Ok(Redirect::to("/admin/seo?saved=1").into_response())
        }
        Err(UpdateError::Invalid(m)) => {
            let page = build(ctx, &state, None, Some(m), Some(&changes)).await?;
            Ok((StatusCode::BAD_REQUEST, page).into_response())
        }
        Err(UpdateError::Db(e)) => Err(e.into()),
    }
}

/// The default social image: uploaded, re-encoded, stored as a setting.
async fn upload_image(
    AdminPage(me): AdminPage,
    State(state): State<AppState>,
    req: axum::extract::Request,
) -> AppResult<Response> {
    let fail = |m: String| Ok(Redirect::to(&format!("/admin/seo?error={}", urlencode(&m))).into_response());
    let limits = crate::routes::multipart::BodyLimits::upload(blog_images::MAX_BYTES as u64);
    let Ok(mut multipart) = crate::routes::multipart::MeteredForm::new(req, limits).await else {
        return fail("Choose an image to upload".into());
    };
    let mut bytes = Vec::new();
    loop {
        match multipart.next_field().await {
            Ok(Some(mut field)) if field.name() == Some("file") => loop {
                match field.chunk().await {
                    Ok(Some(c)) if bytes.len() + c.len() <= blog_images::MAX_BYTES => bytes.extend_from_slice(&c),
                    Ok(Some(_)) => return fail(blog_images::ImageError::TooLarge.to_string()),
                    Ok(None) => break,
                    Err(_) => return fail(blog_images::ImageError::TooLarge.to_string()),
                }
            },
            Ok(Some(_)) => continue,
            Ok(None) => break,
            Err(_) => return fail(blog_images::ImageError::TooLarge.to_string()),
        }
        if !bytes.is_empty() {
            break;
        }
    }
    if bytes.is_empty() {
        return fail("Choose an image to upload".into());
    }
    let stored = match blog_images::store(&state.db, &state.config.data_dir, bytes, me.id).await {
        Ok(s) => s,
        Err(e) => {
            let err = image_error(e);
            if matches!(err, AppError::Internal(_)) {
                return Err(err);
            }
            return fail(err.to_string());
        }
    };
    // The widest file (up to 1200 px) suits link previews.
    state.settings.set(&state.db, seo::DEFAULT_IMAGE_KEY, &stored.url).await?;
    tracing::info!(admin = me.id, image = stored.id, "default social image set");
    Ok(Redirect::to("/admin/seo?saved=image").into_response())
}

fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}
