//! `/api/keys`: a signed-in person's API keys (session and Origin check like every account
//! route; a request made with a key gets 403 here, see `api_keys::keyed_route`).
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{AppError, AppResult, ErrorBody};
use crate::middleware::auth::RequireUser;
use crate::routes::extract::JsonBody;
use crate::services::api_keys::{self, CreatedKey, KeyError, KeyView};
use crate::services::throttle::Limit;
use crate::state::AppState;

/// Keys made per person per hour: a person never needs more, and a loop making and revoking
/// keys cannot grow the table without end.
const CREATE_LIMIT: Limit = Limit::new("api-key-create", 20, Duration::from_secs(3600));

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list, create)).routes(routes!(revoke))
}

/// `POST /api/keys` body.
#[derive(Deserialize, Serialize, utoipa::ToSchema)]
pub struct CreateKeyBody {
    /// What the key is for, e.g. "Home server script" (1-80 characters).
    #[schema(min_length = 1, max_length = 80)]
    pub name: String,
}

/// `GET /api/keys` answer.
#[derive(Serialize, Deserialize, utoipa::ToSchema)]
pub struct KeyList {
    pub keys: Vec<KeyView>,
}

impl From<KeyError> for AppError {
    fn from(e: KeyError) -> Self {
        match e {
            KeyError::BadName => AppError::BadRequest(e.to_string()),
            KeyError::TooMany => AppError::Conflict(e.to_string()),
            KeyError::Db(e) => e.into(),
        }
    }
}

/// List your API keys
///
/// Your keys that still work, newest first, each with its name, visible prefix, when it was
/// made and when it was last used. The secret part of a key is never shown again.
#[utoipa::path(get, path = "/keys", tag = "profile", security(("session" = [])),
    responses((status = 200, description = "Your live API keys, newest first (never the secrets)", body = KeyList),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 403, description = "Asked with an API key: keys cannot manage keys", body = ErrorBody)))]
async fn list(State(state): State<AppState>, RequireUser(me): RequireUser) -> AppResult<Json<KeyList>> {
    Ok(Json(KeyList { keys: api_keys::list(&state.db, me.id).await? }))
}

/// Create an API key
///
/// Makes a key with the name you give (what it is for). The answer is the only place the
/// whole key (`key`) ever appears: store it safely. At most 20 live keys, and 20 new keys
/// an hour. Usually done on the website: Profile, API keys.
#[utoipa::path(post, path = "/keys", tag = "profile", security(("session" = [])), request_body = CreateKeyBody,
    responses((status = 201, description = "The new key, with its secret `key` shown this once", body = CreatedKey),
        (status = 400, description = "No usable name", body = ErrorBody),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 403, description = "From another origin, or asked with an API key", body = ErrorBody),
        (status = 409, description = "Already 20 live keys", body = ErrorBody),
        (status = 429, description = "Too many keys made in the last hour", body = ErrorBody,
            headers(("retry-after" = u64, description = "Seconds to wait")))))]
async fn create(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    JsonBody(body): JsonBody<CreateKeyBody>,
) -> AppResult<(StatusCode, Json<CreatedKey>)> {
    api_keys::clean_name(&body.name)?;
    // A person at the key limit hears that (409), not the hourly limit the same attempts
    // would also meet; a refused attempt then costs none of the hour's budget.
    if api_keys::live_count(&state.db, me.id).await? >= api_keys::MAX_KEYS {
        return Err(KeyError::TooMany.into());
    }
    let d = CREATE_LIMIT.consume(&state.db, &me.id.to_string()).await?;
    if !d.allowed {
        return Err(AppError::throttled("You made many API keys in the last hour. Please wait a while.", &d));
    }
    let created = api_keys::create(&state.db, me.id, &body.name).await?;
    tracing::info!(user_id = me.id, key_id = created.info.id, prefix = %created.info.prefix, "API key created");
    Ok((StatusCode::CREATED, Json(created)))
}

/// Revoke an API key
///
/// The key is refused from the next request on. 404 when you have no live key with this id.
#[utoipa::path(delete, path = "/keys/{id}", tag = "profile", security(("session" = [])),
    params(("id" = i64, Path, description = "The key's id")),
    responses((status = 200, description = "Revoked", body = Revoked),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 403, description = "From another origin, or asked with an API key", body = ErrorBody),
        (status = 404, description = "You have no such live key", body = ErrorBody)))]
async fn revoke(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    Path(id): Path<i64>,
) -> AppResult<Json<Revoked>> {
    if !api_keys::revoke(&state.db, me.id, id).await? {
        return Err(AppError::NotFoundMsg("No such API key".into()));
    }
    tracing::info!(user_id = me.id, key_id = id, "API key revoked");
    Ok(Json(Revoked { revoked: true, id }))
}

#[derive(Serialize, Deserialize, utoipa::ToSchema)]
pub struct Revoked {
    pub revoked: bool,
    pub id: i64,
}
