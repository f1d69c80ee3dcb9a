//! `/admin/corrections`: the dashboard's Corrections tab. Server HTML with plain forms:
//! disputed remembered answers (the engine's title, confirmations, the titles people
//! proposed with their counts), and per proposal Accept or Reject.
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
use crate::routes::api::admin::corrections::{DecideBody, QUEUE_SIZE, decide_correction};
use crate::services::feedback::{self, Disputed};
use crate::state::AppState;
use crate::views::PageCtx;

pub fn router() -> Router<AppState> {
    Router::new().route("/admin/corrections", get(page)).route("/admin/corrections/{id}", post(decide))
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct CorrectionsQuery {
    done: Option<String>,
}

#[derive(Template, WebTemplate)]
#[template(path = "admin/corrections.html")]
pub struct CorrectionsPage {
    ctx: PageCtx,
    tab: &'static str,
    items: Vec<Disputed>,
    notice: Option<String>,
}

/// `0.5` as `½`, whole numbers without decimals.
pub fn weight_text(w: &f64) -> String {
    if (w.fract() - 0.5).abs() < 1e-9 {
        if *w < 1.0 { "½".into() } else { format!("{}½", w.trunc()) }
    } else {
        format!("{}", w.round())
    }
}

async fn page(
    ctx: PageCtx,
    _: AdminPage,
    State(state): State<AppState>,
    Query(q): Query<CorrectionsQuery>,
) -> AppResult<CorrectionsPage> {
    let items = feedback::disputed(&state.db, QUEUE_SIZE).await?;
    let notice = match q.done.as_deref() {
        Some("accept") => {
            Some("Correction accepted: the remembered answer and its results now show that title.".into())
        }
        Some("reject") => Some("Correction rejected: its votes no longer count.".into()),
        _ => None,
    };
    Ok(CorrectionsPage { ctx: ctx.titled("Corrections", "").noindex(), tab: "corrections", items, notice })
}

#[derive(Deserialize)]
pub struct DecideForm {
    action: String,
    tmdb_id: i64,
    media_type: String,
}

async fn decide(
    AdminPage(me): AdminPage,
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Form(f): Form<DecideForm>,
) -> AppResult<Response> {
    let body = DecideBody { action: f.action.clone(), tmdb_id: f.tmdb_id, media_type: f.media_type };
    decide_correction(&state, me.id, id, &body).await?;
    let done = if f.action == "accept" { "accept" } else { "reject" };
    Ok(Redirect::to(&format!("/admin/corrections?done={done}")).into_response())
}
