//! Testimonials: reviews that signed-in people write after an identification, and the
//! featured ones the home page shows. Nothing here is ever made up: an empty table means
//! an empty list.
use std::collections::HashMap;

use chrono::{Duration, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
    Set,
};
use serde::{Deserialize, Serialize};

use crate::entities::{testimonial, user};

pub const DEFAULT_FEATURED: u64 = 6;
pub const MAX_FEATURED: u64 = 24;
pub const MAX_REVIEW_CHARS: usize = 1000;
pub const MAX_TITLE_CHARS: usize = 200;
/// A person may post at most this many reviews in a day (spam brake).
pub const DAILY_LIMIT: u64 = 10;

/// A testimonial as the API and the home page show it (SPEC section 3).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TestimonialView {
    pub id: i64,
    pub rating: i32,
    pub review: String,
    pub user_name: String,
    pub movie_title: Option<String>,
    pub identification_id: Option<String>,
    pub created_at: chrono::DateTime<Utc>,
}

impl TestimonialView {
    /// "★★★★☆" for the rating.
    pub fn stars(&self) -> String {
        let r = self.rating.clamp(0, 5) as usize;
        format!("{}{}", "★".repeat(r), "☆".repeat(5 - r))
    }

    /// The first letter of the name, for the avatar circle.
    pub fn initial(&self) -> String {
        self.user_name.chars().next().map(|c| c.to_uppercase().collect()).unwrap_or_else(|| "?".into())
    }
}

/// The body of `POST /api/testimonials`.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct NewTestimonial {
    pub rating: Option<serde_json::Value>,
    pub review: Option<String>,
    pub movie_title: Option<String>,
    pub identification_id: Option<serde_json::Value>,
}

#[derive(Debug, thiserror::Error)]
pub enum TestimonialError {
    #[error("Review required - Please write a review before submitting")]
    ReviewRequired,
    #[error("Review too long - Please keep your review under {MAX_REVIEW_CHARS} characters")]
    ReviewTooLong,
    #[error("Invalid rating - Please choose a rating from 1 to 5 stars")]
    InvalidRating,
    #[error("Too many reviews - Please try again tomorrow")]
    TooMany,
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
}

/// Featured testimonials, newest first, at most `limit` (clamped to 1..=24).
pub async fn featured(db: &impl ConnectionTrait, limit: u64) -> Result<Vec<TestimonialView>, sea_orm::DbErr> {
    let rows = testimonial::Entity::find()
        .filter(testimonial::Column::Featured.eq(true))
        .order_by_desc(testimonial::Column::CreatedAt)
        .order_by_desc(testimonial::Column::Id)
        .limit(limit.clamp(1, MAX_FEATURED))
        .all(db)
        .await?;
    let ids: Vec<i64> = rows.iter().map(|t| t.user_id).collect();
    let names: HashMap<i64, String> = if ids.is_empty() {
        HashMap::new()
    } else {
        user::Entity::find()
            .filter(user::Column::Id.is_in(ids))
            .all(db)
            .await?
            .into_iter()
            .map(|u| (u.id, u.display_name.filter(|d| !d.trim().is_empty()).unwrap_or(u.username)))
            .collect()
    };
    Ok(rows
        .into_iter()
        .map(|t| {
            let name = names.get(&t.user_id).cloned().unwrap_or_else(|| "Anonymous".into());
            view(t, name)
        })
        .collect())
}

/// Validates and stores a review by `user_id` (SPEC section 5: text trimmed, rating 1 to 5).
pub async fn create(
    db: &impl ConnectionTrait,
    user_id: i64,
    user_name: &str,
    input: NewTestimonial,
) -> Result<TestimonialView, TestimonialError> {
    let review = input.review.as_deref().unwrap_or("").trim().to_owned();
    if review.is_empty() {
        return Err(TestimonialError::ReviewRequired);
    }
    if review.chars().count() > MAX_REVIEW_CHARS {
        return Err(TestimonialError::ReviewTooLong);
    }
    let rating = parse_rating(input.rating.as_ref())?;
    let movie_title = input
        .movie_title
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.chars().take(MAX_TITLE_CHARS).collect::<String>());
    let identification_id = match input.identification_id {
        Some(serde_json::Value::String(s)) => Some(s.trim().to_owned()),
        Some(serde_json::Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
    .filter(|s| !s.is_empty())
    .map(|s| s.chars().take(64).collect::<String>());

    let since = Utc::now() - Duration::hours(24);
    let recent = testimonial::Entity::find()
        .filter(testimonial::Column::UserId.eq(user_id))
        .filter(testimonial::Column::CreatedAt.gt(since))
        .count(db)
        .await?;
    if recent >= DAILY_LIMIT {
        return Err(TestimonialError::TooMany);
    }

    let row = testimonial::ActiveModel {
        user_id: Set(user_id),
        rating: Set(rating),
        review: Set(review),
        movie_title: Set(movie_title),
        identification_id: Set(identification_id),
        featured: Set(true),
        created_at: Set(Utc::now()),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(view(row, user_name.to_owned()))
}

/// Rating 1 to 5; absent means the default 5 (SPEC section 9). Accepts `4` or `"4"`.
fn parse_rating(v: Option<&serde_json::Value>) -> Result<i32, TestimonialError> {
    let n = match v {
        None | Some(serde_json::Value::Null) => return Ok(5),
        Some(serde_json::Value::Number(n)) => n.as_f64(),
        Some(serde_json::Value::String(s)) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    match n {
        Some(n) if n.fract() == 0.0 && (1.0..=5.0).contains(&n) => Ok(n as i32),
        _ => Err(TestimonialError::InvalidRating),
    }
}

fn view(t: testimonial::Model, user_name: String) -> TestimonialView {
    TestimonialView {
        id: t.id,
        rating: t.rating,
        review: t.review,
        user_name,
        movie_title: t.movie_title,
        identification_id: t.identification_id,
        created_at: t.created_at,
    }
}
