//! `/api/admin/library`: the indexed videos, and `PATCH /api/admin/library/{id}` to correct a
//! video's title, year, show, season and episode. Admin only ([`RequireAdmin`]: 401 signed
//! out, 403 non-admin); unsafe methods pass the Origin check like every other route.
use axum::Json;
use axum::extract::{Path, State};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::routes::extract::JsonBody;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{AppError, AppResult, ErrorBody};
use crate::library::edit::{AdminVideo, EditError, MetaPatch};
use crate::middleware::auth::RequireAdmin;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list)).routes(routes!(edit))
}

/// The fields a PATCH may change; each left out keeps its value.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
struct VideoPatch {
    title: Option<String>,
    year: Option<Option<i32>>,
    show: Option<Option<String>>,
    season: Option<Option<u32>>,
    episode: Option<Option<u32>>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LibraryList {
    pub videos: Vec<AdminVideo>,
    /// Seconds of video indexed, and bytes of the picture and sound index files.
    pub total_seconds: f64,
    pub index_bytes: u64,
    pub audio_bytes: u64,
    /// Where the frame hashes live: `local` (segment files) or `milvus`.
    pub index_backend: &'static str,
    /// Where the catalog (videos, titles, edits) lives: `folder` (`catalog.json` beside the
    /// segment files) or `database` (shared by every node; with Milvus).
    pub catalog: &'static str,
    /// Entries the index holds (every tier).
    pub index_entries: u64,
}

#[utoipa::path(get, path = "/admin/library", tag = "admin", security(("session" = [])),
    responses((status = 200, description = "The indexed videos and index sizes", body = LibraryList), (status = 401, description = "Not signed in", body = ErrorBody), (status = 403, description = "Not an administrator", body = ErrorBody)))]
async fn list(State(state): State<AppState>, _admin: RequireAdmin) -> AppResult<Json<LibraryList>> {
    let library = state.library.clone();
    let out = tokio::task::spawn_blocking(move || {
        let videos: Vec<AdminVideo> = library.list().iter().map(AdminVideo::from).collect();
        LibraryList {
            total_seconds: (videos.iter().map(|v| v.duration).sum::<f64>() * 100.0).round() / 100.0,
            videos,
            index_bytes: library.index_bytes(),
            audio_bytes: library.audio_bytes(),
            index_backend: library.backend().kind(),
            catalog: library.catalog_place(),
            index_entries: library.frame_count(),
        }
    })
    .await
    .map_err(|e| AppError::Internal(e.into()))?;
    Ok(Json(out))
}

/// Reads the JSON body of a PATCH: only the five fields, each a value of its type or `null`
/// (the title cannot be `null`); fields left out keep their value.
pub fn patch_from_json(body: &Map<String, Value>) -> AppResult<MetaPatch> {
    let mut p = MetaPatch::default();
    let number = |k: &str, v: &Value| -> AppResult<Option<i64>> {
        match v {
            Value::Null => Ok(None),
            Value::Number(n) => n.as_i64().map(Some).ok_or_else(|| bad_number(k)),
            _ => Err(bad_number(k)),
        }
    };
    let count = |k: &str, v: &Value| -> AppResult<Option<u32>> {
        number(k, v)?.map(|n| u32::try_from(n).map_err(|_| bad_number(k))).transpose()
    };
    for (k, v) in body {
        match k.as_str() {
            "title" => match v {
                Value::String(s) => p.title = Some(s.clone()),
                _ => return Err(AppError::BadRequest("title must be a string.".into())),
            },
            "show" => match v {
                Value::String(s) => p.show = Some(Some(s.clone())),
                Value::Null => p.show = Some(None),
                _ => return Err(AppError::BadRequest("show must be a string or null.".into())),
            },
            "year" => p.year = Some(number(k, v)?.map(|y| i32::try_from(y).map_err(|_| bad_number(k))).transpose()?),
            "season" => p.season = Some(count(k, v)?),
            "episode" => p.episode = Some(count(k, v)?),
            other => return Err(AppError::BadRequest(format!("Unknown field: {other}"))),
        }
    }
    Ok(p)
}

fn bad_number(field: &str) -> AppError {
    AppError::BadRequest(format!("{field} must be a whole number or null."))
}

pub fn edit_error(e: EditError) -> AppError {
    match e {
        EditError::NotFound => AppError::NotFoundMsg(e.to_string()),
        EditError::Invalid(m) => AppError::BadRequest(m),
        EditError::Io(e) => AppError::Internal(e),
    }
}

#[utoipa::path(patch, path = "/admin/library/{id}", tag = "admin", security(("session" = [])),
    params(("id" = u32, Path, description = "The video id")), request_body = VideoPatch,
    responses((status = 200, description = "The video after the change", body = AdminVideo),
        (status = 400, description = "A field is refused", body = ErrorBody), (status = 404, description = "No such video", body = ErrorBody), (status = 401, description = "Not signed in", body = ErrorBody), (status = 403, description = "Not an administrator", body = ErrorBody)))]
async fn edit(
    State(state): State<AppState>,
    RequireAdmin(me): RequireAdmin,
    Path(id): Path<u32>,
    JsonBody(body): JsonBody<Map<String, Value>>,
) -> AppResult<Json<AdminVideo>> {
    let patch = patch_from_json(&body)?;
    let library = state.library.clone();
    let video = tokio::task::spawn_blocking(move || library.edit_meta(id, &patch))
        .await
        .map_err(|e| AppError::Internal(e.into()))?
        .map_err(edit_error)?;
    tracing::info!(admin = me.id, video = id, "library video edited");
    Ok(Json(AdminVideo::from(&video)))
}
