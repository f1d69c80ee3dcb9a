//! `GET /api/testimonials/featured` and `POST /api/testimonials` (SPEC section 7).
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;

use crate::auth::MaybeUser;
use crate::error::{AppError, AppResult};
use crate::services::testimonials::{self, NewTestimonial, TestimonialError, TestimonialView};
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route("/testimonials/featured", get(featured)).route("/testimonials", post(create))
}

#[derive(Debug, Deserialize)]
pub struct FeaturedParams {
    pub limit: Option<u64>,
}

/// The newest featured reviews (default 6, at most 24). An empty list when there are none.
async fn featured(
    State(state): State<AppState>,
    Query(p): Query<FeaturedParams>,
) -> AppResult<Json<Vec<TestimonialView>>> {
    let limit = p.limit.unwrap_or(testimonials::DEFAULT_FEATURED);
    Ok(Json(testimonials::featured(&state.db, limit).await?))
}

/// Stores a review by the signed-in user; 201 with the stored testimonial.
async fn create(
    State(state): State<AppState>,
    MaybeUser(user): MaybeUser,
    body: Result<Json<NewTestimonial>, axum::extract::rejection::JsonRejection>,
) -> AppResult<(StatusCode, Json<TestimonialView>)> {
    let Some(user) = user else {
        return Err(AppError::Unauthorized("Sign in required - Please sign in to submit a review".into()));
    };
    let Json(input) = body.map_err(|e| AppError::BadRequest(format!("Invalid review: {}", e.body_text())))?;
    match testimonials::create(&state.db, user.id, &user.username, input).await {
        Ok(t) => Ok((StatusCode::CREATED, Json(t))),
        Err(TestimonialError::Db(e)) => Err(e.into()),
        Err(e @ TestimonialError::TooMany) => Err(AppError::TooManyRequests(e.to_string())),
        Err(e) => Err(AppError::BadRequest(e.to_string())),
    }
}
