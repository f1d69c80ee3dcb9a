//! `/admin/library`: the dashboard's Library tab. Server HTML with plain forms (works without
//! JavaScript), like the rest of the dashboard: a table of the indexed videos, and for the one
//! picked with `?edit={id}` a form that posts to `/admin/library/{id}`.
use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use serde::Deserialize;

use crate::error::{AppError, AppResult};
use crate::library::edit::{AdminVideo, EditError, MAX_EPISODE, MAX_SEASON, MetaPatch, YEARS};
use crate::routes::admin::AdminPage;
use crate::state::AppState;
use crate::views::PageCtx;

pub fn router() -> Router<AppState> {
    Router::new().route("/admin/library", get(page)).route("/admin/library/{id}", post(save))
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct LibraryQuery {
    edit: Option<u32>,
    saved: Option<u32>,
}

/// The edit form's values, as text (so a refused value is shown back as typed).
#[derive(Clone, Default)]
pub struct EditForm {
    pub id: u32,
    pub file: String,
    pub title: String,
    pub year: String,
    pub show: String,
    pub season: String,
    pub episode: String,
}

impl From<&AdminVideo> for EditForm {
    fn from(v: &AdminVideo) -> Self {
        let s = |x: Option<u32>| x.map(|n| n.to_string()).unwrap_or_default();
        Self {
            id: v.id,
            file: v.file.clone(),
            title: v.title.clone(),
            year: v.year.map(|y| y.to_string()).unwrap_or_default(),
            show: v.show.clone().unwrap_or_default(),
            season: s(v.season),
            episode: s(v.episode),
        }
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "admin/library.html")]
pub struct LibraryPage {
    ctx: PageCtx,
    tab: &'static str,
    videos: Vec<AdminVideo>,
    /// Total length of the indexed videos, in words.
    length: String,
    /// Which backend holds the frame hashes and how many: "local, 1,234 entries".
    index: String,
    form: Option<EditForm>,
    notice: Option<String>,
    error: Option<String>,
    years: (i32, i32),
    max_season: u32,
    max_episode: u32,
}

/// The indexed videos, and which backend holds their hashes with how many entries.
async fn videos(state: &AppState) -> AppResult<(Vec<AdminVideo>, String)> {
    let library = state.library.clone();
    tokio::task::spawn_blocking(move || {
        let videos = library.list().iter().map(AdminVideo::from).collect();
        (
            videos,
            format!(
                "{}, {} entries, catalog in the {}",
                library.backend().kind(),
                library.frame_count(),
                library.catalog_place()
            ),
        )
    })
    .await
    .map_err(|e| AppError::Internal(e.into()))
}

fn render(
    ctx: PageCtx,
    (videos, index): (Vec<AdminVideo>, String),
    form: Option<EditForm>,
    notice: Option<String>,
    error: Option<String>,
) -> LibraryPage {
    let seconds: f64 = videos.iter().map(|v| v.duration).sum();
    LibraryPage {
        ctx: ctx.titled("Library", "").noindex(),
        tab: "library",
        videos,
        length: if seconds < 3600.0 {
            let minutes = (seconds / 60.0).ceil();
            format!("{minutes:.0} minute{}", if minutes == 1.0 { "" } else { "s" })
        } else {
            format!("{:.1} hours", seconds / 3600.0)
        },
        index,
        form,
        notice,
        error,
        years: (*YEARS.start(), *YEARS.end()),
        max_season: MAX_SEASON,
        max_episode: MAX_EPISODE,
    }
}

async fn page(
    ctx: PageCtx,
    _: AdminPage,
    State(state): State<AppState>,
    Query(q): Query<LibraryQuery>,
) -> AppResult<Response> {
    let videos = videos(&state).await?;
    let form = match q.edit {
        None => None,
        Some(id) => match videos.0.iter().find(|v| v.id == id) {
            Some(v) => Some(EditForm::from(v)),
            None => {
                let err = Some(EditError::NotFound.to_string());
                return Ok((StatusCode::NOT_FOUND, render(ctx, videos, None, None, err)).into_response());
            }
        },
    };
    let notice = q
        .saved
        .and_then(|id| videos.0.iter().find(|v| v.id == id))
        .map(|v| format!("Saved: {}.", v.show.as_deref().unwrap_or(&v.title)));
    Ok(render(ctx, videos, form, notice, None).into_response())
}

/// The form post: every field is sent; an empty one clears it (the title cannot be empty).
async fn save(
    ctx: PageCtx,
    AdminPage(me): AdminPage,
    State(state): State<AppState>,
    Path(id): Path<u32>,
    body: axum::body::Bytes,
) -> AppResult<Response> {
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(&body).into_owned().collect();
    let field = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.trim().to_owned()).unwrap_or_default();
    let mut form = EditForm {
        id,
        file: String::new(),
        title: field("title"),
        year: field("year"),
        show: field("show"),
        season: field("season"),
        episode: field("episode"),
    };
    let number = |label: &str, v: &str| -> Result<Option<i64>, String> {
        if v.is_empty() {
            return Ok(None);
        }
        v.parse::<i64>().map(Some).map_err(|_| format!("{label} must be a whole number."))
    };
    let parsed = (|| -> Result<MetaPatch, String> {
        let count = |label: &str, v: &str| -> Result<Option<u32>, String> {
            number(label, v)?.map(|n| u32::try_from(n).map_err(|_| format!("{label} cannot be negative."))).transpose()
        };
        Ok(MetaPatch {
            title: Some(form.title.clone()),
            year: Some(
                number("Year", &form.year)?
                    .map(|y| i32::try_from(y).map_err(|_| "Year is out of range.".to_owned()))
                    .transpose()?,
            ),
            show: Some(Some(form.show.clone())),
            season: Some(count("Season", &form.season)?),
            episode: Some(count("Episode", &form.episode)?),
        })
    })();
    let result = match parsed {
        Err(m) => Err(EditError::Invalid(m)),
        Ok(patch) => {
            let library = state.library.clone();
            tokio::task::spawn_blocking(move || library.edit_meta(id, &patch))
                .await
                .map_err(|e| AppError::Internal(e.into()))?
        }
    };
    match result {
        Ok(_) => {
            tracing::info!(admin = me.id, video = id, "library video edited from the dashboard");
            Ok(Redirect::to(&format!("/admin/library?saved={id}")).into_response())
        }
        Err(EditError::Io(e)) => Err(AppError::Internal(e)),
        Err(e) => {
            let status = if matches!(e, EditError::NotFound) { StatusCode::NOT_FOUND } else { StatusCode::BAD_REQUEST };
            let videos = videos(&state).await?;
            let form = match videos.0.iter().find(|v| v.id == id) {
                Some(v) => {
                    form.file = v.file.clone();
                    Some(form)
                }
                None => None,
            };
            Ok((status, render(ctx, videos, form, None, Some(e.to_string()))).into_response())
        }
    }
}
