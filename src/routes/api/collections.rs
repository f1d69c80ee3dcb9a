//! `/api/collections/items`: the signed-in person's saved titles (SPEC section 7,
//! "Add to Collection"). Only one's own items can be seen or removed; another person's
//! item id answers 404, exactly like an id that never existed.
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;

use crate::routes::extract::JsonBody;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{AppError, AppResult, ErrorBody};
use crate::middleware::auth::MaybeUser;
use crate::services::collections::{self, Added, CollectionError, CollectionItemView, NewItem};
use crate::services::users::CurrentUser;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(index, create)).routes(routes!(destroy))
}

#[derive(serde::Serialize, utoipa::ToSchema)]
struct ItemList {
    total: usize,
    items: Vec<CollectionItemView>,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
struct Removed {
    deleted: bool,
    id: i64,
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

/// List your saved titles
///
/// The titles in your collection, newest first, with their count.
#[utoipa::path(get, path = "/collections/items", tag = "collections", security(("session" = [])),
    responses((status = 200, description = "Your saved titles, newest first", body = ItemList), (status = 401, description = "Not signed in", body = ErrorBody)))]
async fn index(State(state): State<AppState>, MaybeUser(user): MaybeUser) -> AppResult<Json<ItemList>> {
    let user = signed_in(user)?;
    let items = collections::list(&state.db, user.id).await?;
    Ok(Json(ItemList { total: items.len(), items }))
}

/// Save a title
///
/// Adds a title (`title`, `year`, `posterUrl`, `tmdbId`) to your collection: 201 with the new
/// item, or 200 with the item you had already saved for the same title.
#[utoipa::path(post, path = "/collections/items", tag = "collections", security(("session" = [])), request_body = NewItem,
    responses((status = 201, description = "Saved", body = CollectionItemView),
        (status = 200, description = "Already saved: the existing item", body = CollectionItemView), (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 409, description = "The collection is full", body = ErrorBody),
        (status = 422, description = "A field is refused", body = ErrorBody)))]
async fn create(
    State(state): State<AppState>,
    MaybeUser(user): MaybeUser,
    // Read after the sign-in check, so a signed-out request hears that first.
    body: Result<JsonBody<NewItem>, AppError>,
) -> AppResult<(StatusCode, Json<CollectionItemView>)> {
    let user = signed_in(user)?;
    let JsonBody(input) = body?;
    Ok(match collections::add(&state.db, user.id, input).await? {
        Added::Created(item) => (StatusCode::CREATED, Json(item)),
        Added::Existing(item) => (StatusCode::OK, Json(item)),
    })
}

/// Remove a saved title
///
/// Removes one title from your collection.
#[utoipa::path(delete, path = "/collections/items/{id}", tag = "collections", security(("session" = [])),
    params(("id" = String, Path, description = "The item's id")),
    responses((status = 200, description = "Removed", body = Removed), (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 404, description = "Not in your collection", body = ErrorBody)))]
async fn destroy(
    State(state): State<AppState>,
    MaybeUser(user): MaybeUser,
    Path(id): Path<String>,
) -> AppResult<Json<Removed>> {
    let user = signed_in(user)?;
    let id: i64 = id.parse().map_err(|_| AppError::NotFound)?;
    if !collections::remove(&state.db, user.id, id).await? {
        return Err(AppError::NotFoundMsg("This title is not in your collection".into()));
    }
    Ok(Json(Removed { deleted: true, id }))
}
