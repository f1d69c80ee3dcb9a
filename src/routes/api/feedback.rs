//! "Was this right?" (`POST /api/identification/{id}/feedback`) and the title search it
//! offers (`GET /api/titles/search`). The rule lives in `services::feedback`; the results
//! rewritten to a corrected title in `identify::memory::correct`.
use axum::Json;
use axum::extract::{Path, Query, State};
use hmac::{Hmac, Mac};
use sea_orm::EntityTrait;
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use tokio::time::Instant;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{AppError, AppResult, ErrorBody};
use crate::identify::engine::TitleKind;
use crate::identify::memory::correct;
use crate::identify::metadata::{Cache, TitleHit, Tmdb};
use crate::identify::result::IdentificationResult;
use crate::middleware::auth::{ClientAddr, RequireUser};
use crate::routes::extract::JsonBody;
use crate::services::feedback::{self, FEEDBACK_ADDR, FEEDBACK_USER, TITLE_SEARCH_USER, Title, Verdict, VoteError};
use crate::services::throttle::address_subject;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(give_feedback)).routes(routes!(search_titles))
}

/// The answer to "Was this right?".
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct FeedbackBody {
    /// `right` or `wrong`.
    verdict: String,
    /// With `wrong`: the right title's catalog (TMDB) id, from `GET /api/titles/search`.
    /// Leave it out for "I don't know".
    tmdb_id: Option<i64>,
    /// With `tmdbId`: `movie` (default) or `tv`.
    #[serde(rename = "type")]
    media_type: Option<String>,
}

/// What a vote did.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct FeedbackAnswer {
    /// `right` or `wrong`, as recorded.
    verdict: String,
    /// Your identification now: corrected to the title you picked (`correction.by` is
    /// `you`), else as it was.
    result: IdentificationResult,
    /// The remembered answer changed because of this vote (the corrections rule): its title now.
    memory_changed_to: Option<Title>,
}

const ALREADY: &str = "You have already said whether this answer was right.";
const NOT_YOURS: &str = "No identification of yours has this id.";
const NO_CATALOG: &str =
    "Title search is unavailable: the server has no movie database key (TMDB_READ_TOKEN or TMDB_API_KEY).";

fn throttled(d: &crate::services::throttle::Decision) -> AppError {
    AppError::throttled("Too many answers to \"Was this right?\". Please wait a while before sending more.", d)
}

/// A keyed digest of the network `addr` is on (IPv4 address, IPv6 /64): votes from one
/// network are not independent; the address is not kept.
fn origin(state: &AppState, addr: Option<std::net::IpAddr>) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(&state.keys.vote_origin).expect("HMAC takes any key length");
    mac.update(address_subject(addr).as_bytes());
    hex::encode(&mac.finalize().into_bytes()[..16])
}

fn tmdb(state: &AppState, settings: &crate::services::settings::SettingsMap) -> Option<Tmdb> {
    Tmdb::from_config(&state.config.identify, settings, &state.http, Cache::new(state.db.clone()))
}

/// Was this right?
///
/// Say whether one of your identifications named the right title: `right`, or `wrong` with
/// the right title's `tmdbId` and `type` (from `GET /api/titles/search`), or `wrong` alone
/// for "I don't know". One answer per identification. Picking a title corrects your own
/// result at once; what the server remembers for everyone changes only by the corrections
/// rule (`src/identify/README.md`, "The answer memory"). Counts toward your rate limits (30 an hour).
#[utoipa::path(post, path = "/identification/{id}/feedback", tag = "identify",
    params(("id" = String, Path, description = "The identification id")), request_body = FeedbackBody,
    security(("session" = []), ("apiKey" = [])),
    responses(
        (status = 200, description = "Recorded; your result as it is now", body = FeedbackAnswer),
        (status = 400, description = "A verdict other than right or wrong, a title with right, or a type other than movie or tv", body = ErrorBody),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 404, description = "Not an identification of yours", body = ErrorBody),
        (status = 409, description = "You already answered for this identification", body = ErrorBody),
        (status = 422, description = "The movie database has no such title", body = ErrorBody),
        (status = 429, description = "Too many answers; see `Retry-After`", body = ErrorBody),
        (status = 503, description = "Title search is not configured (no TMDB key)", body = ErrorBody),
    ))]
async fn give_feedback(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    ClientAddr(addr): ClientAddr,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<FeedbackBody>,
) -> AppResult<Json<FeedbackAnswer>> {
    let right = match body.verdict.trim() {
        "right" => true,
        "wrong" => false,
        _ => return Err(AppError::BadRequest("verdict must be \"right\" or \"wrong\".".into())),
    };
    let kind = match body.media_type.as_deref().map(str::trim) {
        None | Some("movie") => TitleKind::Movie,
        Some("tv") => TitleKind::Tv,
        Some(_) => return Err(AppError::BadRequest("type must be \"movie\" or \"tv\".".into())),
    };
    if right && body.tmdb_id.is_some() {
        return Err(AppError::BadRequest(
            "A title goes with \"wrong\" only: \"right\" confirms the title shown.".into(),
        ));
    }
    let by_user = FEEDBACK_USER.consume(&state.db, &me.id.to_string()).await?;
    if !by_user.allowed {
        return Err(throttled(&by_user));
    }
    let by_addr = FEEDBACK_ADDR.consume(&state.db, &address_subject(addr)).await?;
    if !by_addr.allowed {
        return Err(throttled(&by_addr));
    }
    let settings = state.settings().await?;
    // The picked title as the catalog names it (never as the client spells it).
    let picked = match body.tmdb_id {
        Some(tmdb_id) if !right => {
            let tmdb = tmdb(&state, &settings).ok_or_else(|| AppError::ServiceUnavailable(NO_CATALOG.into()))?;
            let deadline = Instant::now() + std::time::Duration::from_secs(20);
            let d = tmdb.details(tmdb_id, kind, deadline).await.map_err(|e| match e {
                crate::identify::EngineError::Provider { status: 404, .. } => {
                    AppError::Unprocessable("The movie database has no such title.".into())
                }
                e => {
                    tracing::warn!(error = %e, "TMDB details for a picked title failed");
                    AppError::BadGateway("The movie database did not answer. Please try again.".into())
                }
            })?;
            let (name, date) = match kind {
                TitleKind::Movie => (d["title"].as_str(), d["release_date"].as_str()),
                TitleKind::Tv => (d["name"].as_str(), d["first_air_date"].as_str()),
            };
            let name = name
                .filter(|n| !n.trim().is_empty())
                .ok_or_else(|| AppError::Unprocessable("The movie database has no such title.".into()))?;
            Some(Title {
                tmdb_id,
                media_type: kind.as_str().into(),
                title: name.trim().into(),
                year: date.and_then(|d| d.get(..4)).map(str::to_owned),
            })
        }
        _ => None,
    };
    let voter_row = me.row(&state.db).await?.ok_or(AppError::NotAuthenticated)?;
    let verdict = if right { Verdict::Right } else { Verdict::Wrong(picked.clone()) };
    let voted =
        feedback::vote(&state.db, feedback::Voter { user: &voter_row, origin: origin(&state, addr) }, &id, verdict)
            .await
            .map_err(|e| match e {
                VoteError::NotFound => AppError::NotFoundMsg(NOT_YOURS.into()),
                VoteError::AlreadyVoted => AppError::Conflict(ALREADY.into()),
                VoteError::Db(e) => e.into(),
            })?;
    let deps = state.identify_deps();
    // Your own result shows your title at once.
    if let Some(title) = &picked {
        let fresh = correct::catalog_result(deps, &settings, title).await;
        if let Some(row) = crate::entities::identification::Entity::find_by_id(id.clone()).one(&state.db).await? {
            correct::rewrite(&state.db, row, &fresh, "you", Some(1.0)).await?;
        }
    }
    // The rule changed the remembered answer: everyone's linked results follow.
    let mut memory_changed_to = None;
    if let (Some(m), Some((from, to))) = (voted.memory_id, voted.flipped) {
        let n = correct::apply(deps, &settings, m, &from, &to, "people").await?;
        tracing::info!(memory = m, rewritten = n, "a remembered answer was corrected by people");
        memory_changed_to = Some(to);
    }
    let result = crate::identify::store::find(&state.db, &id).await?.map(|s| s.result).unwrap_or_default();
    Ok(Json(FeedbackAnswer { verdict: if right { "right" } else { "wrong" }.into(), result, memory_changed_to }))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct SearchQuery {
    /// Part of a movie's or show's title (2-100 characters).
    q: String,
}

/// Find a title
///
/// Movies and shows whose title matches `q`, as the movie database (TMDB) ranks them, with
/// posters and years: where "Was this right?" → No picks the right title from. Signed in
/// only, 30 searches a minute.
#[utoipa::path(get, path = "/titles/search", tag = "identify", params(SearchQuery),
    security(("session" = []), ("apiKey" = [])),
    responses(
        (status = 200, description = "At most 10 titles, best first", body = Vec<TitleHit>),
        (status = 400, description = "`q` shorter than 2 or longer than 100 characters", body = ErrorBody),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 429, description = "Too many searches; see `Retry-After`", body = ErrorBody),
        (status = 502, description = "The movie database did not answer", body = ErrorBody),
        (status = 503, description = "Title search is not configured (no TMDB key)", body = ErrorBody),
    ))]
async fn search_titles(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    Query(q): Query<SearchQuery>,
) -> AppResult<Json<Vec<TitleHit>>> {
    let query = q.q.trim();
    let len = query.chars().count();
    if !(2..=100).contains(&len) {
        return Err(AppError::BadRequest("Type 2 to 100 characters of the title.".into()));
    }
    let d = TITLE_SEARCH_USER.consume(&state.db, &me.id.to_string()).await?;
    if !d.allowed {
        return Err(AppError::throttled("Too many title searches. Please wait a moment.", &d));
    }
    let settings = state.settings().await?;
    let tmdb = tmdb(&state, &settings).ok_or_else(|| AppError::ServiceUnavailable(NO_CATALOG.into()))?;
    let deadline = Instant::now() + std::time::Duration::from_secs(10);
    let mut hits = tmdb.search_titles(query, deadline).await.map_err(|e| {
        tracing::warn!(error = %e, "TMDB title search failed");
        AppError::BadGateway("The movie database did not answer. Please try again.".into())
    })?;
    hits.truncate(10);
    Ok(Json(hits))
}
