//! `GET /api/testimonials/featured` and `POST /api/testimonials` (SPEC section 7).
use axum::Json;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{AppError, AppResult, ErrorBody};
use crate::middleware::auth::MaybeUser;
use crate::routes::extract::JsonBody;
use crate::services::testimonials::{self, ModerationItem, NewTestimonial, TestimonialError, TestimonialView};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(featured)).routes(routes!(create))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FeaturedParams {
    pub limit: Option<u64>,
}

/// The newest featured reviews (default 6, at most 24). An empty list when there are none.
#[utoipa::path(get, path = "/testimonials/featured", tag = "site", params(FeaturedParams),
    responses((status = 200, description = "Featured reviews", body = Vec<TestimonialView>)))]
async fn featured(
    State(state): State<AppState>,
    Query(p): Query<FeaturedParams>,
) -> AppResult<Json<Vec<TestimonialView>>> {
    let limit = p.limit.unwrap_or(testimonials::DEFAULT_FEATURED);
    Ok(Json(testimonials::featured(&state.db, limit).await?))
}

/// Stores a review by the signed-in user as pending; 201 with the stored testimonial and
/// its `status`. It reaches the home page only once an admin features it.
#[utoipa::path(post, path = "/testimonials", tag = "site", request_body = NewTestimonial,
    security(("session" = [])),
    responses(
        (status = 201, description = "The review, pending moderation", body = ModerationItem),
        (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 404, description = "No such identification", body = ErrorBody),
        (status = 409, description = "Already reviewed", body = ErrorBody),
    ))]
async fn create(
    State(state): State<AppState>,
    MaybeUser(user): MaybeUser,
    // Read after the sign-in check: a signed-out person is told to sign in, whatever they sent.
    body: Result<JsonBody<NewTestimonial>, AppError>,
) -> AppResult<(StatusCode, Json<ModerationItem>)> {
    let Some(user) = user else {
        return Err(AppError::Unauthorized("Sign in required - Please sign in to submit a review".into()));
    };
    let JsonBody(input) = body?;
    match testimonials::create(&state.db, user.id, &user.username, input).await {
        Ok(t) => Ok((StatusCode::CREATED, Json(t))),
        Err(TestimonialError::Db(e)) => Err(e.into()),
        Err(e @ TestimonialError::TooMany) => Err(AppError::TooManyRequests(e.to_string())),
        Err(e @ TestimonialError::UnknownIdentification) => Err(AppError::NotFoundMsg(e.to_string())),
        Err(e @ TestimonialError::NotYourIdentification) => Err(AppError::Forbidden(e.to_string())),
        Err(e @ TestimonialError::AlreadyReviewed) => Err(AppError::Conflict(e.to_string())),
        Err(e) => Err(AppError::BadRequest(e.to_string())),
    }
}
