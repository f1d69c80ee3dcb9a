//! `/api/admin/corrections`: the Corrections queue (401 signed out, 403 non-admin). Disputed
//! remembered answers with the engine's title, the titles people proposed and the counts;
//! accept one (the memory and the linked results change, the answer is pinned) or reject
//! one (its votes stop counting).
use axum::Json;
use axum::extract::{Path, State};
use sea_orm::EntityTrait;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{AppError, AppResult, ErrorBody};
use crate::identify::memory::correct;
use crate::middleware::auth::RequireAdmin;
use crate::routes::extract::JsonBody;
use crate::services::feedback::{self, Disputed};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(index)).routes(routes!(decide))
}

/// How many disputed answers the queue lists.
pub const QUEUE_SIZE: usize = 100;

/// List disputed answers
///
/// Administrators only. Remembered answers people said were wrong, the most recently
/// disputed first (at most 100): the engine's title, confirmations, the titles proposed
/// instead with how many people (and what weight) named each, and "I don't know" votes.
#[utoipa::path(get, path = "/admin/corrections", tag = "admin", security(("session" = [])),
    responses((status = 200, description = "The Corrections queue", body = Vec<Disputed>),
        (status = 401, description = "Not signed in", body = ErrorBody), (status = 403, description = "Not an administrator", body = ErrorBody)))]
async fn index(State(state): State<AppState>, _admin: RequireAdmin) -> AppResult<Json<Vec<Disputed>>> {
    Ok(Json(feedback::disputed(&state.db, QUEUE_SIZE).await?))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DecideBody {
    /// `accept` or `reject`.
    pub action: String,
    /// The proposed title's catalog id.
    pub tmdb_id: i64,
    /// `movie` or `tv`.
    #[serde(rename = "type")]
    pub media_type: String,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Decided {
    /// The remembered answer's title now.
    pub title: String,
    /// Identifications rewritten to it.
    pub rewritten: usize,
}

/// Accept or reject a correction
///
/// Administrators only. `accept` makes the proposed title the remembered answer (and
/// rewrites the linked results of everyone who did not say otherwise); `reject` makes its
/// votes stop counting. Either pins the answer: the people's rule no longer flips it.
#[utoipa::path(post, path = "/admin/corrections/{id}", tag = "admin", security(("session" = [])),
    params(("id" = i64, Path, description = "The remembered answer's id")), request_body = DecideBody,
    responses((status = 200, description = "Decided", body = Decided),
        (status = 400, description = "Unknown action, or a title nobody proposed", body = ErrorBody),
        (status = 404, description = "No such remembered answer", body = ErrorBody),
        (status = 401, description = "Not signed in", body = ErrorBody), (status = 403, description = "Not an administrator", body = ErrorBody)))]
async fn decide(
    State(state): State<AppState>,
    RequireAdmin(me): RequireAdmin,
    Path(id): Path<i64>,
    JsonBody(body): JsonBody<DecideBody>,
) -> AppResult<Json<Decided>> {
    Ok(Json(decide_correction(&state, me.id, id, &body).await?))
}

/// The decision of [`decide`], shared with the studio page's form.
pub async fn decide_correction(state: &AppState, admin: i64, id: i64, body: &DecideBody) -> AppResult<Decided> {
    let gone = || AppError::NotFoundMsg("No such remembered answer.".into());
    let key = (body.tmdb_id, body.media_type.trim().to_owned());
    if !matches!(key.1.as_str(), "movie" | "tv") {
        return Err(AppError::BadRequest("type must be \"movie\" or \"tv\".".into()));
    }
    let rewritten = match body.action.trim() {
        "accept" => {
            let title = feedback::named_title(&state.db, id, &key)
                .await?
                .ok_or_else(|| AppError::BadRequest("Nobody proposed this title for this answer.".into()))?;
            let changed = feedback::accept(&state.db, id, &title).await?.ok_or_else(gone)?;
            match changed {
                Some((from, to)) => {
                    let settings = state.settings().await?;
                    correct::apply(state.identify_deps(), &settings, id, &from, &to, "admin").await?
                }
                None => 0,
            }
        }
        "reject" => {
            if !feedback::reject(&state.db, id, key.0, &key.1).await? {
                return Err(gone());
            }
            0
        }
        _ => return Err(AppError::BadRequest("action must be \"accept\" or \"reject\".".into())),
    };
    let row = crate::entities::remembered_answer::Entity::find_by_id(id).one(&state.db).await?.ok_or_else(gone)?;
    tracing::info!(admin, memory = id, action = %body.action, rewritten, "correction decided");
    Ok(Decided { title: row.title, rewritten })
}
