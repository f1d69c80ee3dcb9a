//! `/admin/testimonials`: the dashboard's Reviews tab. Server HTML with plain forms: the
//! queue filtered by state (pending first), and per review Approve (feature on the home
//! page), Hide, Back to pending and Delete.
use askama::Template;
use askama_web::WebTemplate;
use axum::Form;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use serde::Deserialize;

use crate::error::AppResult;
use crate::routes::admin::AdminPage;
use crate::routes::api::admin::testimonials::{moderation_error, status_filter};
use crate::services::testimonials::{self, ModerationList};
use crate::state::AppState;
use crate::views::PageCtx;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/testimonials", get(page))
        .route("/admin/testimonials/{id}", post(moderate))
        .route("/admin/testimonials/{id}/delete", post(delete))
}

const PAGE_SIZE: u64 = 50;

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct ReviewsQuery {
    status: Option<String>,
    page: Option<u64>,
    done: Option<String>,
}

#[derive(Template, WebTemplate)]
#[template(path = "admin/testimonials.html")]
pub struct ReviewsPage {
    ctx: PageCtx,
    tab: &'static str,
    /// The filter in effect: `pending`, `featured`, `hidden` or `all`.
    status: &'static str,
    list: ModerationList,
    page: u64,
    prev: Option<String>,
    next: Option<String>,
    notice: Option<String>,
}

fn list_url(status: &str, page: u64) -> String {
    if page > 1 {
        format!("/admin/testimonials?status={status}&page={page}")
    } else {
        format!("/admin/testimonials?status={status}")
    }
}

async fn page(
    ctx: PageCtx,
    _: AdminPage,
    State(state): State<AppState>,
    Query(q): Query<ReviewsQuery>,
) -> AppResult<ReviewsPage> {
    // The queue is what needs attention, so it is the default view.
    let status = match q.status.as_deref() {
        None => Some(testimonials::PENDING),
        Some(s) => status_filter(Some(s))?,
    };
    let page = q.page.unwrap_or(1).max(1);
    let list = testimonials::moderation_list(&state.db, status, (page - 1) * PAGE_SIZE, PAGE_SIZE).await?;
    let label = status.unwrap_or("all");
    let prev = (page > 1).then(|| list_url(label, page - 1));
    let next = (page * PAGE_SIZE < list.total).then(|| list_url(label, page + 1));
    let notice = match q.done.as_deref() {
        Some("featured") => Some("Review approved: the home page shows it.".to_owned()),
        Some("hidden") => Some("Review hidden from the home page.".to_owned()),
        Some("pending") => Some("Review moved back to the queue.".to_owned()),
        Some("deleted") => Some("Review deleted.".to_owned()),
        _ => None,
    };
    Ok(ReviewsPage {
        ctx: ctx.titled("Reviews", "").noindex(),
        tab: "testimonials",
        status: label,
        list,
        page,
        prev,
        next,
        notice,
    })
}

#[derive(Deserialize)]
pub struct ModerateForm {
    status: String,
    /// The filter to come back to.
    #[serde(default)]
    back: String,
}

fn back_to(back: &str, done: &str) -> String {
    let status = status_filter(Some(back)).ok().flatten().unwrap_or("all");
    format!("/admin/testimonials?status={status}&done={done}")
}

async fn moderate(
    AdminPage(me): AdminPage,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Form(f): Form<ModerateForm>,
) -> AppResult<Response> {
    testimonials::moderate(&state.db, id, &f.status, me.id).await.map_err(moderation_error)?;
    tracing::info!(admin = me.id, testimonial = id, status = %f.status, "review moderated");
    Ok(Redirect::to(&back_to(&f.back, f.status.trim())).into_response())
}

#[derive(Deserialize)]
pub struct DeleteForm {
    #[serde(default)]
    back: String,
}

async fn delete(
    AdminPage(me): AdminPage,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Form(f): Form<DeleteForm>,
) -> AppResult<Response> {
    testimonials::delete(&state.db, id).await.map_err(moderation_error)?;
    tracing::info!(admin = me.id, testimonial = id, "review deleted");
    Ok(Redirect::to(&back_to(&f.back, "deleted")).into_response())
}
