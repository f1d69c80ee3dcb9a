//! `/api/collections/items`: the signed-in person's saved titles (SPEC section 7,
//! "Add to Collection"). Only one's own items can be seen or removed; another person's
//! item id answers 404, exactly like an id that never existed.
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{delete, get};
use axum::{Json, Router};
use serde_json::{Value, json};

use super::accounts::json_body;
use crate::auth::{CurrentUser, MaybeUser};
use crate::error::{AppError, AppResult};
use crate::services::collections::{self, Added, CollectionError, CollectionItemView, NewItem};
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route("/collections/items", get(index).post(create)).route("/collections/items/{id}", delete(destroy))
}

/// The 401 the result view turns into its "Sign in Required" toast.
fn signed_in(user: Option<CurrentUser>) -> AppResult<CurrentUser> {
    user.ok_or_else(|| AppError::Unauthorized("Sign in Required - Please sign in to use your collection".into()))
}

impl From<CollectionError> for AppError {
    fn from(e: CollectionError) -> Self {
        match e {
            CollectionError::Invalid(m) => AppError::Unprocessable(m),
            e @ CollectionError::Full => AppError::Conflict(e.to_string()),
            CollectionError::Db(e) => e.into(),
        }
    }
}

/// `GET /api/collections/items`: `{items, total}`, newest first.
async fn index(State(state): State<AppState>, MaybeUser(user): MaybeUser) -> AppResult<Json<Value>> {
    let user = signed_in(user)?;
    let items = collections::list(&state.db, user.id).await?;
    Ok(Json(json!({ "total": items.len(), "items": items })))
}

/// `POST /api/collections/items` {title, year, posterUrl, tmdbId}: 201 with the new item,
/// or 200 with the item already saved for the same title.
async fn create(
    State(state): State<AppState>,
    MaybeUser(user): MaybeUser,
    body: Result<Json<NewItem>, JsonRejection>,
) -> AppResult<(StatusCode, Json<CollectionItemView>)> {
    let user = signed_in(user)?;
    let input = json_body(body)?;
    Ok(match collections::add(&state.db, user.id, input).await? {
        Added::Created(item) => (StatusCode::CREATED, Json(item)),
        Added::Existing(item) => (StatusCode::OK, Json(item)),
    })
}

/// `DELETE /api/collections/items/{id}`: removes one of the caller's items.
async fn destroy(
    State(state): State<AppState>,
    MaybeUser(user): MaybeUser,
    Path(id): Path<String>,
) -> AppResult<Json<Value>> {
    let user = signed_in(user)?;
    let id: i64 = id.parse().map_err(|_| AppError::NotFound)?;
    if !collections::remove(&state.db, user.id, id).await? {
        return Err(AppError::NotFoundMsg("This title is not in your collection".into()));
    }
    Ok(Json(json!({ "deleted": true, "id": id })))
}
