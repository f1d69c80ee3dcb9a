//! `GET /api/admin/insight?days=7|30|90`: the Insight tab's figures as JSON (admin only:
//! 401 signed out, 403 for others). Any other `days` means 30.
use axum::Json;
use axum::extract::{Query, State};
use serde::Deserialize;

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{AppResult, ErrorBody};
use crate::middleware::auth::RequireAdmin;
use crate::services::{analytics, insight};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(show))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct InsightQuery {
    days: Option<i64>,
}

#[utoipa::path(get, path = "/admin/insight", tag = "admin", security(("session" = [])), params(InsightQuery),
    responses((status = 200, description = "Usage figures over the period", body = insight::Insight), (status = 401, description = "Not signed in", body = ErrorBody), (status = 403, description = "Not an administrator", body = ErrorBody)))]
async fn show(
    State(state): State<AppState>,
    _admin: RequireAdmin,
    Query(q): Query<InsightQuery>,
) -> AppResult<Json<insight::Insight>> {
    let settings = state.settings().await?;
    let data = insight::load(&state.db, insight::period(q.days), analytics::retention_days(&settings)).await?;
    Ok(Json(data))
}
