//! The identification API: `POST /api/identify`, `GET /api/identification/{id}`, history,
//! and analytics events (SPEC section 7).
use std::net::IpAddr;

use axum::extract::{DefaultBodyLimit, FromRef, FromRequestParts, Multipart, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use sea_orm::EntityTrait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::time::Instant;

use crate::auth::{MaybeUser, RequireUser};
use crate::entities::user;
use crate::error::{AppError, AppResult};
use crate::identify::engine::Mode;
use crate::identify::guard::{check_guest, record_guest};
use crate::identify::pipeline::{self, deadline_secs, timeout_error};
use crate::identify::result::IdentificationResult;
use crate::identify::store::{self, HistoryItem, TopItem};
use crate::identify::upload::{UploadRules, WorkDir, read_form};
use crate::services::settings::SettingsExt;
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        // The size cap is enforced while streaming (413 with the SPEC's text), not by the
        // default 2 MB body limit.
        .route("/identify", post(identify).layer(DefaultBodyLimit::disable()))
        .route("/identification/{id}", get(show))
        .route("/history", get(history).delete(clear_history))
        .route("/history/top-confident", get(top_confident))
        .route("/analytics/track", post(track).layer(DefaultBodyLimit::max(16 * 1024)))
}

/// The client's address: the socket peer, or behind a trusted proxy the last
/// `X-Forwarded-For` entry (`REELFIND_TRUST_PROXY`, see `auth::client_addr`).
pub struct ClientAddr(pub Option<IpAddr>);

impl<S> FromRequestParts<S> for ClientAddr
where
    S: Send + Sync,
    AppState: FromRef<S>,
{
    type Rejection = std::convert::Infallible;
    async fn from_request_parts(parts: &mut Parts, s: &S) -> Result<Self, Self::Rejection> {
        let state = AppState::from_ref(s);
        Ok(Self(crate::auth::client_addr(&state.config, &parts.extensions, &parts.headers).parse().ok()))
    }
}

/// `POST /api/identify` (multipart: file, mode, useAudioAnalysis, useEnhancedAnalysis).
async fn identify(
    State(state): State<AppState>,
    MaybeUser(user): MaybeUser,
    ClientAddr(addr): ClientAddr,
    headers: HeaderMap,
    multipart: Multipart,
) -> AppResult<Response> {
    let started = Instant::now();
    let settings = state.settings().await?;
    let config = &state.config;

    let guest_id = if user.is_none() { state.identify.guest_from_cookie(config, &headers) } else { None };
    let rate_key = match (&user, addr, &guest_id) {
        (Some(u), _, _) => format!("user:{}", u.id),
        (None, Some(ip), _) => format!("addr:{ip}"),
        (None, None, Some(g)) => format!("guest:{g}"),
        (None, None, None) => "anonymous".into(),
    };
    state.identify.check_rate(rate_key)?;
    if user.is_none() {
        check_guest(&state.db, guest_id.as_deref(), addr).await?;
    }

    // Everything this request writes lives in `work` and is deleted when it drops, on
    // every path (answer, error, panic, client gone).
    let work = WorkDir::new(&config.data_dir).map_err(|e| AppError::Internal(e.into()))?;
    let max_mb = settings.max_file_size_mb();
    let rules = UploadRules { max_bytes: max_mb * 1024 * 1024, max_mb, allowed: settings.allowed_file_types() };
    let upload_limit = started + std::time::Duration::from_secs(config.identify.timeout_secs * 2);
    let form = tokio::time::timeout_at(upload_limit, read_form(multipart, &work, &rules)).await.map_err(|_| {
        AppError::with_body(
            StatusCode::REQUEST_TIMEOUT,
            "Upload timed out. Please try a smaller file or check your connection.",
            serde_json::json!({}),
        )
    })??;
    let mode: Mode = form.mode.parse().map_err(|_| {
        AppError::BadRequest(format!(
            "Unknown AI engine \"{}\". Choose one of auto, google, openai, xai, anthropic, ensemble, library.",
            form.mode.chars().take(40).collect::<String>()
        ))
    })?;
    let upload_ms = started.elapsed().as_millis() as u64;

    let user_default = match &user {
        Some(u) => user::Entity::find_by_id(u.id).one(&state.db).await?.and_then(|u| u.default_ai_model),
        None => None,
    };
    let secs = deadline_secs(&state, form.upload.kind, form.use_audio_analysis);
    let deadline = started + std::time::Duration::from_secs(secs);
    let req = pipeline::Request {
        upload: &form.upload,
        work: &work,
        mode,
        use_audio: form.use_audio_analysis,
        enhanced: form.use_enhanced_analysis,
        user_id: user.as_ref().map(|u| u.id),
        user_default,
        started,
        deadline,
        upload_ms,
    };
    let result = tokio::time::timeout_at(deadline, async {
        match pipeline::reuse(&state, &req).await? {
            Some(r) => Ok(r),
            None => pipeline::run(&state, &settings, req).await,
        }
    })
    .await
    .map_err(|_| timeout_error(secs))??;
    drop(work);

    let mut res = Json(&result).into_response();
    if user.is_none() {
        let id = guest_id.clone().unwrap_or_else(store::new_id);
        record_guest(&state.db, &id, addr).await?;
        if guest_id.is_none() {
            if let Ok(v) = HeaderValue::from_str(&state.identify.guest_cookie(config, &id)) {
                res.headers_mut().append(header::SET_COOKIE, v);
            }
        }
    }
    Ok(res)
}

pub const GONE: &str = "This shared identification link is no longer available";

/// `GET /api/identification/{id}`: a stored result, for `/?id=` and shared links.
async fn show(State(state): State<AppState>, Path(id): Path<String>) -> AppResult<Json<IdentificationResult>> {
    let r = store::find(&state.db, &id).await?.ok_or_else(|| AppError::NotFoundMsg(GONE.into()))?;
    Ok(Json(r))
}

#[derive(Deserialize)]
pub struct PageQuery {
    page: Option<u64>,
    limit: Option<u64>,
    /// Part of the title to look for.
    search: Option<String>,
    /// `movie` or `tv` (`all` or absent: both).
    #[serde(rename = "type")]
    media_type: Option<String>,
    /// `newest` (default), `oldest`, `rating`, `confidence`.
    sort: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryPage {
    items: Vec<HistoryItem>,
    /// How many match the search and type filter (what the pages count).
    total: u64,
    /// How many the person has in all.
    total_all: u64,
    page: u64,
    limit: u64,
}

/// `GET /api/history?page=&limit=20[&search=&type=&sort=]`: the caller's identifications,
/// newest first unless another order is asked for.
async fn history(
    State(state): State<AppState>,
    RequireUser(user): RequireUser,
    Query(q): Query<PageQuery>,
) -> AppResult<Json<HistoryPage>> {
    let page = q.page.unwrap_or(1).max(1);
    let limit = q.limit.unwrap_or(20).clamp(1, 100);
    let filter = store::HistoryFilter {
        search: q.search.map(|s| s.chars().take(200).collect::<String>()).filter(|s| !s.trim().is_empty()),
        media_type: q.media_type.filter(|t| t == "movie" || t == "tv"),
        sort: q.sort.as_deref().map(store::HistorySort::parse).unwrap_or_default(),
    };
    let (items, total, total_all) = store::history(&state.db, user.id, &filter, page, limit).await?;
    Ok(Json(HistoryPage { items, total, total_all, page, limit }))
}

/// `DELETE /api/history`: deletes the caller's identifications (their share links too).
async fn clear_history(State(state): State<AppState>, RequireUser(user): RequireUser) -> AppResult<Json<Value>> {
    let deleted = store::clear_history(&state.db, user.id).await?;
    Ok(Json(serde_json::json!({"success": true, "deleted": deleted})))
}

/// `GET /api/history/top-confident`: at most 3 recent confident identifications, no personal data.
async fn top_confident(State(state): State<AppState>) -> AppResult<Json<Vec<TopItem>>> {
    Ok(Json(store::top_confident(&state.db, 3).await?))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrackBody {
    action: String,
    #[serde(default)]
    resource_type: Option<Value>,
    #[serde(default)]
    resource_id: Option<Value>,
    #[serde(default)]
    metadata: Option<Value>,
}

const MAX_METADATA: usize = 4096;

fn bounded(v: Option<Value>, max: usize) -> Option<String> {
    let s = match v? {
        Value::String(s) => s,
        Value::Null => return None,
        other => other.to_string(),
    };
    let s: String = s.trim().chars().take(max).collect();
    (!s.is_empty()).then_some(s)
}

/// `POST /api/analytics/track`: stores one event (bounded sizes); 204.
async fn track(
    State(state): State<AppState>,
    MaybeUser(user): MaybeUser,
    ClientAddr(addr): ClientAddr,
    body: Result<Json<TrackBody>, axum::extract::rejection::JsonRejection>,
) -> AppResult<StatusCode> {
    let Json(body) = body.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            AppError::PayloadTooLarge("Analytics event too large.".into())
        } else {
            AppError::BadRequest(e.body_text())
        }
    })?;
    let action = body.action.trim();
    if action.is_empty()
        || action.len() > 64
        || !action.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
    {
        return Err(AppError::BadRequest("action must be 1-64 letters, digits, '_', '-' or '.'".into()));
    }
    // Abuse guard: analytics share the identify limiter's spirit but with a larger budget.
    let key = match (&user, addr) {
        (Some(u), _) => format!("analytics:user:{}", u.id),
        (None, Some(ip)) => format!("analytics:addr:{ip}"),
        _ => "analytics:anonymous".into(),
    };
    state.identify.check_analytics_rate(key)?;
    let metadata = body.metadata.filter(|m| m.is_object()).map(|m| m.to_string()).filter(|m| m.len() <= MAX_METADATA);
    store::track(
        &state.db,
        store::Event {
            action: action.to_owned(),
            resource_type: bounded(body.resource_type, 64),
            resource_id: bounded(body.resource_id, 128),
            metadata,
            user_id: user.map(|u| u.id),
        },
    )
    .await?;
    Ok(StatusCode::NO_CONTENT)
}
