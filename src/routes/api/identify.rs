//! The identification API: `POST /api/identify`, `GET /api/identification/{id}`, history,
//! and analytics events (SPEC section 7).
use axum::Json;
use axum::extract::{DefaultBodyLimit, Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::time::Instant;

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::identify_errors::timeout_error;
use super::identify_form::{form_error, read_form};
use crate::error::{AppError, AppResult, ErrorBody, ErrorCode};
use crate::identify::admission::Refused;
use crate::identify::engine::Mode;
use crate::identify::guard::reserve_guest;
use crate::identify::pipeline::{self, deadline_secs};
use crate::identify::public::PublicResult;
use crate::identify::result::IdentificationResult;
use crate::identify::runs;
use crate::identify::store::{self, HistoryItem, TopItem};
use crate::identify::upload::{UploadRules, WorkDir};
use crate::middleware::auth::{ClientAddr, MaybeUser, RequireUser};
use crate::middleware::drain;
use crate::routes::extract::JsonBody;
use crate::routes::multipart::{BodyLimits, MeteredForm};
use crate::services::analytics;
use crate::services::settings::SettingsExt;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    // The size cap (the site's file limit plus a small allowance, on the raw body) is
    // enforced while streaming (413 with the SPEC's text), not by the default 2 MB body limit.
    let (s1, p1, identify) = routes!(identify);
    let (s2, p2, track) = routes!(track);
    OpenApiRouter::new()
        .routes((s1, p1, identify.layer(DefaultBodyLimit::disable())))
        .routes(routes!(show))
        .routes(routes!(set_sharing))
        .routes(routes!(history, clear_history))
        .routes(routes!(top_confident))
        .routes((s2, p2, track.layer(DefaultBodyLimit::max(16 * 1024))))
}

/// The multipart form of `POST /api/identify`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct IdentifyUpload {
    /// The screenshot or clip (JPEG, PNG, WebP, GIF, MP4, WebM, MOV... as the site allows).
    /// Send this or `url`.
    #[schema(value_type = Option<String>, format = Binary)]
    file: Option<Vec<u8>>,
    /// Instead of `file`: a public http(s) address of the image or clip. The server fetches
    /// it (no redirects, public addresses only; 422 otherwise) and checks it like an upload.
    #[schema(max_length = 2048)]
    url: Option<String>,
    /// List the best N candidates with their scores (0-10, default 0: no list).
    #[schema(minimum = 0, maximum = 10)]
    candidates: Option<u8>,
    /// `auto` (default), `google`, `openai`, `xai`, `anthropic`, `ensemble` or `library`.
    mode: Option<String>,
    /// Clips: also listen to the soundtrack (default true).
    use_audio_analysis: Option<bool>,
    /// Clips: look at more frames (default true).
    use_enhanced_analysis: Option<bool>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct SharingState {
    shared: bool,
}

#[derive(Serialize, utoipa::ToSchema)]
struct Cleared {
    success: bool,
    /// How many identifications were deleted.
    deleted: u64,
}

/// A result as someone who is not its owner sees it, or as its owner does. Only names the
/// schema for the OpenAPI document; no value of it is ever built (hence the allows).
#[derive(Serialize, utoipa::ToSchema)]
#[serde(untagged)]
#[allow(dead_code, clippy::large_enum_variant)]
enum AnyResult {
    Owner(OwnerResult),
    Public(PublicResult),
}

/// Identify a scene
///
/// Send a screenshot or a short clip as `file`, or a public address of one as `url`, and
/// get the film or TV episode it comes from, with details, cast and where to watch it.
/// `mode` picks the engine (default `auto`); `candidates=N` also lists the best N titles
/// with their scores. A long clip can take a couple of minutes.
#[utoipa::path(post, path = "/identify", tag = "identify",
    request_body(content = IdentifyUpload, content_type = "multipart/form-data"),
    security((), ("session" = []), ("apiKey" = [])),
    responses(
        (status = 200, description = "Identified: the stored result (signed in: with `shared` and `isOwner`)", body = AnyResult),
        (status = 400, description = "No file or url, two files, a file and a url, a url that cannot be used, unreadable upload or unknown engine (see `code`)", body = ErrorBody),
        (status = 401, description = "An API key that is unknown or revoked", body = ErrorBody),
        (status = 403, description = "Guests have used their free identifications (`sign_in_required`), or the engine is disabled", body = ErrorBody),
        (status = 404, description = "The scene could not be identified (`no_match`)", body = ErrorBody),
        (status = 408, description = "The upload took too long", body = ErrorBody),
        (status = 413, description = "Over the file-size limit (`file_too_large`)", body = ErrorBody),
        (status = 422, description = "Not an image or video the site accepts (`invalid_file_format`), or a url that is private or could not be fetched", body = ErrorBody),
        (status = 429, description = "Rate limited; see `Retry-After`", body = ErrorBody,
            headers(("retry-after" = u64, description = "Seconds to wait"))),
        (status = 502, description = "The AI engine failed", body = ErrorBody),
        (status = 503, description = "Busy (`server_busy`, see `Retry-After`), no engine configured (`engine_unavailable`), or the Library's index does not answer (`library_unavailable`, see `Retry-After`)", body = ErrorBody),
        (status = 504, description = "Timed out", body = ErrorBody),
    ))]
async fn identify(
    State(state): State<AppState>,
    MaybeUser(user): MaybeUser,
    ClientAddr(addr): ClientAddr,
    headers: HeaderMap,
    body: Request,
) -> AppResult<Response> {
    let started = Instant::now();
    let user_id = user.as_ref().map(|u| u.id);
    let request = identify_request(State(state.clone()), MaybeUser(user), ClientAddr(addr), headers, body);
    let (res, runs) = runs::collect(request).await;
    let outcome = match &res {
        Ok(r) => r.extensions().get::<analytics::Identified>().cloned().map(Ok).unwrap_or(Err("failed")),
        Err(e) => Err(analytics::failure_outcome(e.status().as_u16(), e.code() == ErrorCode::SignInRequired)),
    };
    analytics::record_identification(&state.db, user_id, outcome, &runs, started.elapsed().as_millis() as i64).await;
    res
}

/// The identification (multipart: file, mode, useAudioAnalysis, useEnhancedAnalysis).
async fn identify_request(
    State(state): State<AppState>,
    MaybeUser(user): MaybeUser,
    ClientAddr(addr): ClientAddr,
    headers: HeaderMap,
    body: Request,
) -> AppResult<Response> {
    let started = Instant::now();
    let settings = state.settings().await?;
    let config = &state.config;

    let admitted = async {
        crate::identify::guard::check_rate(&state.db, config, user.as_ref().map(|u| u.id), addr).await?;
        // A guest's free identification is reserved before the work and given back if it fails.
        AppResult::Ok(match &user {
            None => Some(reserve_guest(&state.db, crate::middleware::auth::guest_id(&state, &headers), addr).await?),
            Some(_) => None,
        })
    };
    let guest = match admitted.await {
        Ok(guest) => guest,
        Err(e) => {
            // Read away raw and bounded (never parsed), so the client can read the refusal.
            drain::request(body).await;
            return Err(e);
        }
    };
    let outcome = run_identify(&state, &settings, user.as_ref(), addr, body, started).await;
    let result = match outcome {
        Ok(r) => r,
        Err(e) => {
            if let Some(g) = guest {
                g.release().await;
            }
            return Err(e);
        }
    };
    let identified = analytics::Identified {
        id: result.identification_id.clone(),
        engine: result.engine.clone(),
        cached: result.reused,
        saved_engine: result.from_memory.as_ref().map(|m| m.engine.clone()),
    };
    let mut res = match &user {
        Some(_) => Json(OwnerResult { result, shared: true, is_owner: true, feedback: None }).into_response(),
        None => Json(&result).into_response(),
    };
    res.extensions_mut().insert(identified);
    if let Some(g) = guest {
        if g.new_cookie {
            res.headers_mut().append(header::SET_COOKIE, crate::middleware::auth::guest_cookie(&state, &g.guest_id));
        }
        g.commit();
    }
    Ok(res)
}

/// The work of one identification: upload, media, engines, catalog, storing.
async fn run_identify(
    state: &AppState,
    settings: &crate::services::settings::SettingsMap,
    user: Option<&crate::services::users::CurrentUser>,
    addr: Option<std::net::IpAddr>,
    body: Request,
    started: Instant,
) -> AppResult<IdentificationResult> {
    let config = &state.config;
    // A full node refuses at once (503, Retry-After), before reading an upload it could not
    // take. (Not drained: a full node sheds the load.)
    state.admission.has_room()?;
    // The upload is read first, holding only an upload place (a few per client address, a
    // bounded number per node), never a place of the media work: a client that sends slowly
    // keeps nobody else waiting, and one sending too slowly is cut off (408).
    let reading = state.admission.reading(addr)?;
    // Everything this request does stops when this token fires: the deadline, the client
    // going away (the handler is dropped, and the guard with it), or the server stopping.
    let cancel = state.admission.shutdown.child_token();
    let _stop_on_drop = cancel.clone().drop_guard();

    // Everything this request writes lives in `work` and is deleted when it drops, on
    // every path (answer, error, panic, client gone).
    let work = WorkDir::new(&config.data_dir).map_err(|e| AppError::Internal(e.into()))?;
    let max_mb = settings.max_file_size_mb();
    let rules = UploadRules { max_bytes: max_mb * 1024 * 1024, max_mb, allowed: settings.allowed_file_types() };
    let multipart =
        MeteredForm::new(body, BodyLimits::upload(rules.max_bytes)).await.map_err(|e| form_error(&rules, e))?;
    let upload_limit = started + std::time::Duration::from_secs(config.identify.timeout_secs * 2);
    let form = tokio::select! {
        form = tokio::time::timeout_at(upload_limit, read_form(multipart, &work, &rules, &state.outbound)) => form.map_err(|_| {
            AppError::UploadTimeout("Upload timed out. Please try a smaller file or check your connection.".into())
        })??,
        _ = cancel.cancelled() => return Err(Refused::Stopping.into()),
    };
    drop(reading);
    // On disk: now a place of the media work (503 with Retry-After when the node filled up
    // while the upload came).
    let ticket = state.admission.enter()?;
    let mode: Mode = form.mode.parse().map_err(|_| {
        AppError::BadRequest(format!(
            "Unknown AI engine \"{}\". Choose one of auto, google, openai, xai, anthropic, ensemble, library.",
            form.mode.chars().take(40).collect::<String>()
        ))
        .with_code(ErrorCode::UnknownEngine)
    })?;
    let upload_ms = started.elapsed().as_millis() as u64;

    let user_default = match &user {
        Some(u) => u.row(&state.db).await?.and_then(|u| u.default_ai_model),
        None => None,
    };
    let secs = deadline_secs(state.identify_deps(), form.upload.kind, form.use_audio_analysis);
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
        ticket,
        cancel: cancel.clone(),
    };
    let result = tokio::time::timeout_at(deadline, async {
        match pipeline::reuse(state.identify_deps(), &req).await? {
            Some(r) => Ok(r),
            None => pipeline::run(state.identify_deps(), settings, req).await,
        }
    })
    .await
    .map_err(|_| {
        // The work stops now, not when it would have finished.
        cancel.cancel();
        timeout_error(secs)
    })??;
    drop(work);
    let mut result = result;
    // The candidates list is opt-in (`candidates=N`); without it the answer has none.
    result.candidates.truncate(form.candidates);
    Ok(result)
}

pub const GONE: &str = "This shared identification link is no longer available";

/// The whole stored result, as its owner sees it, and whether its link is shared.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct OwnerResult {
    #[serde(flatten)]
    result: IdentificationResult,
    shared: bool,
    is_owner: bool,
    /// Your answer to "Was this right?" (`right`, `wrong`), once given.
    #[serde(skip_serializing_if = "Option::is_none")]
    feedback: Option<String>,
}

/// Read one identification
///
/// The stored result of an identification. Its owner gets all of it (with `shared` and
/// `isOwner`); anyone else a shared link's public part, or 404 once sharing stopped. With
/// an API key, only your own results.
#[utoipa::path(get, path = "/identification/{id}", tag = "identify", params(("id" = String, Path, description = "The identification id")),
    security((), ("session" = []), ("apiKey" = [])),
    responses((status = 200, description = "The owner's full result, or the public view of a shared one", body = AnyResult),
        (status = 404, description = "Unknown, or not shared with you", body = ErrorBody)))]
async fn show(
    State(state): State<AppState>,
    MaybeUser(me): MaybeUser,
    crate::middleware::api_keys::MaybeApiKey(key): crate::middleware::api_keys::MaybeApiKey,
    Path(id): Path<String>,
) -> AppResult<Response> {
    let gone = || AppError::NotFoundMsg(GONE.into());
    let stored = store::find(&state.db, &id).await?.ok_or_else(gone)?;
    if let Some(owner) = me.as_ref().map(|u| u.id).filter(|m| stored.is_owner(Some(*m))) {
        let shared = stored.shared;
        let feedback = crate::services::feedback::verdicts(&state.db, owner, vec![id.clone()]).await?.remove(&id);
        return Ok(Json(OwnerResult { result: stored.result, shared, is_owner: true, feedback }).into_response());
    }
    // A key reads its owner's results only, shared links of others included.
    if !stored.shared || key.is_some() {
        return Err(gone());
    }
    Ok(Json(PublicResult::from(stored.result)).into_response())
}

#[derive(Deserialize, utoipa::ToSchema)]
struct SharingBody {
    shared: bool,
}

/// Share or stop sharing an identification
///
/// `{shared: true}` makes the identification's link readable by anyone who has it; `false`
/// stops that. Only its owner may; anyone else gets 404, whether or not the id exists.
#[utoipa::path(put, path = "/identification/{id}/sharing", tag = "identify", params(("id" = String, Path, description = "The identification id")), request_body = SharingBody,
    security(("session" = [])),
    responses((status = 200, description = "The sharing state now", body = SharingState), (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 404, description = "Not yours, or unknown", body = ErrorBody)))]
async fn set_sharing(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<SharingBody>,
) -> AppResult<Json<SharingState>> {
    if !store::set_shared(&state.db, &id, me.id, body.shared).await? {
        return Err(AppError::NotFoundMsg(GONE.into()));
    }
    Ok(Json(SharingState { shared: body.shared }))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
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

#[derive(Serialize, utoipa::ToSchema)]
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

/// List your identifications
///
/// Your past identifications, newest first unless `sort` asks for another order, a page
/// at a time (`page`, `limit`, default 20), optionally filtered by `search` and `type`.
#[utoipa::path(get, path = "/history", tag = "history", params(PageQuery),
    security(("session" = []), ("apiKey" = [])),
    responses((status = 200, description = "A page of your identifications", body = HistoryPage), (status = 401, description = "Not signed in", body = ErrorBody)))]
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

/// Clear your history
///
/// Deletes all of your identifications; their shared links stop working too.
#[utoipa::path(delete, path = "/history", tag = "history", security(("session" = [])),
    responses((status = 200, description = "Everything deleted (share links too)", body = Cleared), (status = 401, description = "Not signed in", body = ErrorBody)))]
async fn clear_history(State(state): State<AppState>, RequireUser(user): RequireUser) -> AppResult<Json<Cleared>> {
    let deleted = store::clear_history(&state.db, user.id).await?;
    Ok(Json(Cleared { success: true, deleted }))
}

/// Recent confident identifications
///
/// At most 3 recent identifications the engines were sure of, for the home page; no personal data.
#[utoipa::path(get, path = "/history/top-confident", tag = "history",
    responses((status = 200, description = "At most 3 recent confident identifications, no personal data", body = Vec<TopItem>)))]
async fn top_confident(State(state): State<AppState>) -> AppResult<Json<Vec<TopItem>>> {
    Ok(Json(store::top_confident(&state.db, 3).await?))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrackBody {
    action: String,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    resource_type: Option<Value>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    resource_id: Option<Value>,
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
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

/// Record a page event
///
/// Stores one usage event sent by the website (sizes are bounded). Answers 204.
#[utoipa::path(post, path = "/analytics/track", tag = "site", request_body = TrackBody,
    responses((status = 204, description = "Recorded"),
        (status = 400, description = "Bad action name", body = ErrorBody), (status = 413, description = "Too large", body = ErrorBody),
        (status = 429, description = "Too many events", body = ErrorBody)))]
async fn track(
    State(state): State<AppState>,
    MaybeUser(user): MaybeUser,
    ClientAddr(addr): ClientAddr,
    JsonBody(body): JsonBody<TrackBody>,
) -> AppResult<StatusCode> {
    let action = body.action.trim();
    if action.is_empty()
        || action.len() > 64
        || !action.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
    {
        return Err(AppError::BadRequest("action must be 1-64 letters, digits, '_', '-' or '.'".into()));
    }
    // Abuse guard: a budget per account or address in the shared throttle store.
    crate::identify::guard::check_analytics_rate(&state.db, user.as_ref().map(|u| u.id), addr).await?;
    if analytics::SERVER_ACTIONS.contains(&action) {
        return Err(AppError::BadRequest(format!("{action} events are recorded by the server")));
    }
    // Oversized metadata is dropped, the event kept.
    let metadata = body.metadata.filter(|m| m.to_string().len() <= MAX_METADATA);
    let public_host = state.config.public_url.host_str().unwrap_or("");
    let event = analytics::client_event(
        action,
        bounded(body.resource_type, 64),
        bounded(body.resource_id, 128),
        metadata.as_ref(),
        user.map(|u| u.id),
        public_host,
    );
    analytics::record(&state.db, event).await?;
    Ok(StatusCode::NO_CONTENT)
}
