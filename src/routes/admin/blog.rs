//! `/admin/blog`: the dashboard's Blog tab. The list is server HTML (search, status and
//! category filters as a plain GET form); the editor (`/admin/blog/new`, `/admin/blog/{id}`)
//! is the `BlogEditor` island, which talks to `/api/admin/blog`. Its live preview is
//! rendered by the server with the article page's own sanitiser.
use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::routing::get;
use serde::Serialize;
use ts_rs::TS;

use crate::error::AppResult;
use crate::routes::admin::AdminPage;
use crate::routes::api::admin::blog::blog_error;
use crate::routes::api::blog::default_author;
use crate::services::blog_admin::{self, AdminList, AdminListQuery, AdminPost};
use crate::services::blog_images;
use crate::services::seo::{DESCRIPTION_MAX, TITLE_MAX};
use crate::state::AppState;
use crate::views::{Island, PageCtx};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/blog", get(index))
        .route("/admin/blog/new", get(new_post))
        .route("/admin/blog/{id}", get(edit_post))
}

#[derive(Template, WebTemplate)]
#[template(path = "admin/blog.html")]
pub struct BlogListPage {
    ctx: PageCtx,
    tab: &'static str,
    list: AdminList,
    status: String,
    search: String,
    category: String,
}

async fn index(
    ctx: PageCtx,
    _: AdminPage,
    State(state): State<AppState>,
    Query(mut q): Query<AdminListQuery>,
) -> AppResult<BlogListPage> {
    q.limit = Some(200);
    let list = blog_admin::list(&state.db, &q).await.map_err(blog_error)?;
    Ok(BlogListPage {
        ctx: ctx.titled("Blog", "").noindex(),
        tab: "blog",
        list,
        status: q.status.unwrap_or_default(),
        search: q.search.unwrap_or_default(),
        category: q.category.unwrap_or_default(),
    })
}

/// Props of the `BlogEditor` island.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BlogEditorProps {
    /// The post to edit; `None` for a new one.
    post: Option<AdminPost>,
    categories: Vec<String>,
    default_author: String,
    site_name: String,
    origin: String,
    title_max: usize,
    description_max: usize,
    max_image_mb: usize,
}

#[derive(Template, WebTemplate)]
#[template(path = "admin/blog_editor.html")]
pub struct EditorPage {
    ctx: PageCtx,
    tab: &'static str,
    heading: String,
    editor: Island,
}

async fn editor(ctx: PageCtx, state: &AppState, post: Option<AdminPost>) -> AppResult<EditorPage> {
    let list = blog_admin::list(&state.db, &AdminListQuery { limit: Some(1), ..Default::default() })
        .await
        .map_err(blog_error)?;
    let heading = post.as_ref().map_or_else(|| "New post".to_owned(), |p| format!("Edit \u{201c}{}\u{201d}", p.title));
    let props = BlogEditorProps {
        post,
        categories: list.categories,
        default_author: default_author(&ctx.site.name),
        site_name: ctx.site.name.clone(),
        origin: ctx.site.origin.clone(),
        title_max: TITLE_MAX,
        description_max: DESCRIPTION_MAX,
        max_image_mb: blog_images::MAX_BYTES / 1024 / 1024,
    };
    Ok(EditorPage {
        ctx: ctx.titled(heading.clone(), "").noindex(),
        tab: "blog",
        heading,
        editor: Island::new("BlogEditor", &props),
    })
}

async fn new_post(ctx: PageCtx, _: AdminPage, State(state): State<AppState>) -> AppResult<EditorPage> {
    editor(ctx, &state, None).await
}

async fn edit_post(
    ctx: PageCtx,
    _: AdminPage,
    State(state): State<AppState>,
    Path(id): Path<i64>,
) -> AppResult<EditorPage> {
    let post = blog_admin::get(&state.db, id).await.map_err(blog_error)?;
    editor(ctx, &state, Some(post)).await
}
