//! `/api/admin/blog`: the studio's blog API (401 signed out, 403 non-admin).
//!
//! | call | what |
//! |---|---|
//! | `GET /api/admin/blog?status=&search=&category=&offset=&limit=` | posts with status, counts, categories |
//! | `POST /api/admin/blog` | create (201) |
//! | `GET /api/admin/blog/{id}` | one post for the editor, with its `version` |
//! | `PUT /api/admin/blog/{id}` | save; body carries the `version` it loaded; 409 when stale |
//! | `DELETE /api/admin/blog/{id}` | delete (204) |
//! | `POST /api/admin/blog/preview` | `{content}` → sanitised HTML as the article page renders it |
//! | `POST /api/admin/blog/images` | multipart `file` → re-encoded picture with its widths |
use axum::Json;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::StatusCode;
use serde::Deserialize;

use crate::routes::extract::JsonBody;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{AppError, AppResult, ErrorBody};
use crate::middleware::auth::RequireAdmin;
use crate::routes::multipart::{BodyFault, BodyLimits, FormError, MeteredForm};
use crate::services::blog_admin::{self, AdminList, AdminListQuery, AdminPost, BlogAdminError, PostInput, Preview};
use crate::services::blog_images::{self, ImageError, StoredImage};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    let (schemas, paths, images) = routes!(upload_image);
    OpenApiRouter::new()
        .routes(routes!(index, create))
        .routes(routes!(preview))
        // The picture plus multipart framing; the service refuses anything larger.
        .routes((schemas, paths, images.layer(DefaultBodyLimit::max(blog_images::MAX_BYTES + 64 * 1024))))
        .routes(routes!(show, update, destroy))
}

/// The multipart body of an image upload.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
struct ImageUpload {
    /// JPEG, PNG, WebP or GIF.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
}

pub fn blog_error(e: BlogAdminError) -> AppError {
    match e {
        BlogAdminError::Invalid(m) => AppError::BadRequest(m),
        BlogAdminError::NotFound => AppError::NotFoundMsg(e.to_string()),
        BlogAdminError::Stale { ref by, ref at, current_version } => AppError::EditConflict {
            message: e.to_string(),
            updated_by: by.clone(),
            updated_at: at.clone(),
            current_version,
        },
        BlogAdminError::Db(e) => e.into(),
    }
}

pub fn image_error(e: ImageError) -> AppError {
    match e {
        ImageError::TooLarge => AppError::PayloadTooLarge(e.to_string()),
        ImageError::NotAnImage | ImageError::Corrupt | ImageError::Dimensions(_) => {
            AppError::Unprocessable(e.to_string())
        }
        ImageError::Io(e) => AppError::Internal(e.into()),
        ImageError::Db(e) => e.into(),
    }
}

#[utoipa::path(get, path = "/admin/blog", tag = "admin", security(("session" = [])), params(AdminListQuery),
    responses((status = 200, description = "Posts with their status, counts and categories", body = AdminList), (status = 401, description = "Not signed in", body = ErrorBody), (status = 403, description = "Not an administrator", body = ErrorBody)))]
async fn index(
    State(state): State<AppState>,
    _admin: RequireAdmin,
    Query(q): Query<AdminListQuery>,
) -> AppResult<Json<AdminList>> {
    Ok(Json(blog_admin::list(&state.db, &q).await.map_err(blog_error)?))
}

#[utoipa::path(post, path = "/admin/blog", tag = "admin", security(("session" = [])), request_body = PostInput,
    responses((status = 201, description = "Created", body = AdminPost), (status = 400, description = "A field is refused", body = ErrorBody), (status = 401, description = "Not signed in", body = ErrorBody), (status = 403, description = "Not an administrator", body = ErrorBody)))]
async fn create(
    State(state): State<AppState>,
    RequireAdmin(me): RequireAdmin,
    JsonBody(body): JsonBody<PostInput>,
) -> AppResult<(StatusCode, Json<AdminPost>)> {
    let post = blog_admin::create(&state.db, me.id, body).await.map_err(blog_error)?;
    tracing::info!(admin = me.id, post = post.id, status = post.status.as_str(), "blog post created");
    Ok((StatusCode::CREATED, Json(post)))
}

#[utoipa::path(get, path = "/admin/blog/{id}", tag = "admin", security(("session" = [])), params(("id" = i64, Path, description = "The post id")),
    responses((status = 200, description = "The post for the editor, with its version", body = AdminPost),
        (status = 404, description = "No such post", body = ErrorBody), (status = 401, description = "Not signed in", body = ErrorBody), (status = 403, description = "Not an administrator", body = ErrorBody)))]
async fn show(State(state): State<AppState>, _admin: RequireAdmin, Path(id): Path<i64>) -> AppResult<Json<AdminPost>> {
    Ok(Json(blog_admin::get(&state.db, id).await.map_err(blog_error)?))
}

#[utoipa::path(put, path = "/admin/blog/{id}", tag = "admin", security(("session" = [])), params(("id" = i64, Path, description = "The post id")), request_body = PostInput,
    responses((status = 200, description = "Saved", body = AdminPost), (status = 400, description = "A field is refused", body = ErrorBody),
        (status = 404, description = "No such post", body = ErrorBody),
        (status = 409, description = "Someone saved it since (`currentVersion`, `updatedBy`, `updatedAt`)", body = ErrorBody), (status = 401, description = "Not signed in", body = ErrorBody), (status = 403, description = "Not an administrator", body = ErrorBody)))]
async fn update(
    State(state): State<AppState>,
    RequireAdmin(me): RequireAdmin,
    Path(id): Path<i64>,
    JsonBody(body): JsonBody<PostInput>,
) -> AppResult<Json<AdminPost>> {
    let post = blog_admin::update(&state.db, id, me.id, body).await.map_err(blog_error)?;
    tracing::info!(admin = me.id, post = id, version = post.version, status = post.status.as_str(), "blog post saved");
    Ok(Json(post))
}

#[utoipa::path(delete, path = "/admin/blog/{id}", tag = "admin", security(("session" = [])), params(("id" = i64, Path, description = "The post id")),
    responses((status = 204, description = "Deleted"), (status = 404, description = "No such post", body = ErrorBody), (status = 401, description = "Not signed in", body = ErrorBody), (status = 403, description = "Not an administrator", body = ErrorBody)))]
async fn destroy(
    State(state): State<AppState>,
    RequireAdmin(me): RequireAdmin,
    Path(id): Path<i64>,
) -> AppResult<StatusCode> {
    blog_admin::delete(&state.db, id).await.map_err(blog_error)?;
    tracing::info!(admin = me.id, post = id, "blog post deleted");
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct PreviewBody {
    #[serde(default)]
    pub content: String,
}

#[utoipa::path(post, path = "/admin/blog/preview", tag = "admin", security(("session" = [])), request_body = PreviewBody,
    responses((status = 200, description = "Sanitised HTML as the article page renders it", body = Preview),
        (status = 400, description = "Too long", body = ErrorBody), (status = 401, description = "Not signed in", body = ErrorBody), (status = 403, description = "Not an administrator", body = ErrorBody)))]
async fn preview(_admin: RequireAdmin, JsonBody(body): JsonBody<PreviewBody>) -> AppResult<Json<Preview>> {
    if body.content.len() > blog_admin::MAX_CONTENT {
        return Err(AppError::BadRequest("The article is too long to preview".into()));
    }
    Ok(Json(blog_admin::preview(&body.content)))
}

/// Upload a blog image
///
/// Administrators only. Send a picture (JPEG, PNG, WebP or GIF, at most 10 MB and 40 megapixels)
/// as the multipart field `file`; its name and declared type are not trusted, the content
/// is. It is re-encoded and stored at several widths (up to 1600 px) for articles; the
/// answer gives its URLs and widths. 422 when the file is not a usable picture.
#[utoipa::path(post, path = "/admin/blog/images", tag = "admin", security(("session" = [])),
    request_body(content = ImageUpload, content_type = "multipart/form-data"),
    responses((status = 201, description = "The re-encoded picture and its widths", body = StoredImage),
        (status = 400, description = "No file", body = ErrorBody), (status = 413, description = "Too large", body = ErrorBody),
        (status = 422, description = "Not a picture", body = ErrorBody), (status = 401, description = "Not signed in", body = ErrorBody), (status = 403, description = "Not an administrator", body = ErrorBody)))]
async fn upload_image(
    State(state): State<AppState>,
    RequireAdmin(me): RequireAdmin,
    req: axum::extract::Request,
) -> AppResult<(StatusCode, Json<StoredImage>)> {
    let limits = BodyLimits::upload(blog_images::MAX_BYTES as u64);
    let mut multipart = MeteredForm::new(req, limits).await.map_err(multipart_error)?;
    let mut bytes: Option<Vec<u8>> = None;
    while let Some(mut field) = multipart.next_field().await.map_err(multipart_error)? {
        if field.name() != Some("file") {
            continue;
        }
        let mut buf = Vec::new();
        while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
            if buf.len() + chunk.len() > blog_images::MAX_BYTES {
                return Err(image_error(ImageError::TooLarge));
            }
            buf.extend_from_slice(&chunk);
        }
        bytes = Some(buf);
        break;
    }
    let bytes =
        bytes.filter(|b| !b.is_empty()).ok_or_else(|| AppError::BadRequest("Choose an image to upload".into()))?;
    let stored = blog_images::store(&state.db, &state.config.data_dir, bytes, me.id).await.map_err(image_error)?;
    tracing::info!(admin = me.id, image = stored.id, bytes = stored.bytes, "blog image stored");
    Ok((StatusCode::CREATED, Json(stored)))
}

fn multipart_error(e: FormError) -> AppError {
    match e {
        FormError::Body(BodyFault::TooLarge) => image_error(ImageError::TooLarge),
        FormError::NotMultipart => AppError::BadRequest("Expected a multipart upload with a \"file\" field".into()),
        FormError::Body(f) => AppError::BadRequest(format!("The upload was interrupted: {f}")),
        FormError::Parse(e) => AppError::BadRequest(format!("The upload was interrupted: {}", e.body_text())),
    }
}
