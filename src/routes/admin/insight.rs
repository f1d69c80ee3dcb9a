//! `/admin/insight`: the dashboard's Insight tab. The server computes the figures of the
//! chosen period (7, 30 or 90 days) and hands them to the `Insight` island, which draws the
//! charts (Chart.js, loaded only on this page); the key totals are server HTML too. The
//! retention form changes `analytics_retention_days` and applies it at once.
use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::AppResult;
use crate::routes::admin::AdminPage;
use crate::services::admin::{self as admin_service, UpdateError};
use crate::services::analytics::{self, RETENTION_KEY};
use crate::services::insight::{self, Insight, PERIODS};
use crate::state::AppState;
use crate::views::{Island, PageCtx};

pub fn router() -> Router<AppState> {
    Router::new().route("/admin/insight", get(page)).route("/admin/insight/retention", post(save_retention))
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct InsightQuery {
    days: Option<i64>,
    saved: Option<u64>,
}

/// Props of the `Insight` island: the figures it charts.
#[derive(Serialize, TS)]
pub struct InsightProps<'a> {
    data: &'a Insight,
}

#[derive(Template, WebTemplate)]
#[template(path = "admin/insight.html")]
pub struct InsightPage {
    ctx: PageCtx,
    tab: &'static str,
    data: Insight,
    island: Island,
    periods: [i64; 3],
    retention_value: String,
    notice: Option<String>,
    error: Option<String>,
}

async fn render(
    ctx: PageCtx,
    state: &AppState,
    days: i64,
    retention_value: Option<String>,
    notice: Option<String>,
    error: Option<String>,
) -> AppResult<InsightPage> {
    let settings = state.settings().await?;
    let retention = analytics::retention_days(&settings);
    let data = insight::load(&state.db, days, retention).await?;
    let island = Island::new("Insight", &InsightProps { data: &data });
    Ok(InsightPage {
        ctx: ctx.titled("Insight", "").noindex(),
        tab: "insight",
        data,
        island,
        periods: PERIODS,
        retention_value: retention_value.unwrap_or_else(|| retention.to_string()),
        notice,
        error,
    })
}

async fn page(
    ctx: PageCtx,
    _: AdminPage,
    State(state): State<AppState>,
    Query(q): Query<InsightQuery>,
) -> AppResult<InsightPage> {
    let notice = q.saved.map(|n| match n {
        0 => "Retention saved.".to_owned(),
        1 => "Retention saved; 1 older event was deleted.".to_owned(),
        n => format!("Retention saved; {n} older events were deleted."),
    });
    render(ctx, &state, insight::period(q.days), None, notice, None).await
}

#[derive(Deserialize)]
pub struct RetentionForm {
    retention_days: String,
    #[serde(default)]
    days: Option<i64>,
}

/// Saves the retention and deletes what it no longer allows, at once (other nodes apply it
/// within their hourly sweep; none of them keeps serving deleted events).
async fn save_retention(
    ctx: PageCtx,
    AdminPage(me): AdminPage,
    State(state): State<AppState>,
    axum::Form(form): axum::Form<RetentionForm>,
) -> AppResult<Response> {
    let days = insight::period(form.days);
    let changes = [(RETENTION_KEY.to_owned(), form.retention_days.clone())].into_iter().collect();
    match admin_service::update_settings(&state.db, &state.settings, &changes).await {
        Ok(()) => {
            let settings = state.settings().await?;
            let deleted = analytics::sweep(&state.db, analytics::retention_days(&settings)).await?;
            tracing::info!(admin = me.id, deleted, "analytics retention changed");
            Ok(Redirect::to(&format!("/admin/insight?days={days}&saved={deleted}")).into_response())
        }
        Err(UpdateError::Invalid(m)) => {
            let page = render(ctx, &state, days, Some(form.retention_days), None, Some(m)).await?;
            Ok((StatusCode::BAD_REQUEST, page).into_response())
        }
        Err(UpdateError::Db(e)) => Err(e.into()),
    }
}
