//! `/api/admin/library`: the indexed videos, and `PATCH /api/admin/library/{id}` to correct a
//! video's title, year, show, season and episode. Admin only ([`RequireAdmin`]: 401 signed
//! out, 403 non-admin); unsafe methods pass the Origin check like every other route.
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::routing::{get, patch};
use axum::{Json, Router};
use serde::Serialize;
use serde_json::{Map, Value};

use super::accounts::json_body;
use crate::auth::RequireAdmin;
use crate::error::{AppError, AppResult};
use crate::library::edit::{AdminVideo, EditError, MetaPatch};
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route("/admin/library", get(list)).route("/admin/library/{id}", patch(edit))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LibraryList {
    pub videos: Vec<AdminVideo>,
    /// Seconds of video indexed, and bytes of the picture and sound index files.
    pub total_seconds: f64,
    pub index_bytes: u64,
    pub audio_bytes: u64,
}

async fn list(State(state): State<AppState>, _: RequireAdmin) -> AppResult<Json<LibraryList>> {
    let library = state.library.clone();
    let out = tokio::task::spawn_blocking(move || {
        let videos: Vec<AdminVideo> = library.list().iter().map(AdminVideo::from).collect();
        LibraryList {
            total_seconds: (videos.iter().map(|v| v.duration).sum::<f64>() * 100.0).round() / 100.0,
            videos,
            index_bytes: library.index_bytes(),
            audio_bytes: library.audio_bytes(),
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

async fn edit(
    State(state): State<AppState>,
    RequireAdmin(me): RequireAdmin,
    Path(id): Path<u32>,
    body: Result<Json<Map<String, Value>>, JsonRejection>,
) -> AppResult<Json<AdminVideo>> {
    let patch = patch_from_json(&json_body(body)?)?;
    let library = state.library.clone();
    let video = tokio::task::spawn_blocking(move || library.edit_meta(id, &patch))
        .await
        .map_err(|e| AppError::Internal(e.into()))?
        .map_err(edit_error)?;
    tracing::info!(admin = me.id, video = id, "library video edited");
    Ok(Json(AdminVideo::from(&video)))
}
