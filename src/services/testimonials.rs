//! Testimonials: reviews that signed-in people write after an identification, their
//! moderation, and the featured ones the home page shows. Nothing here is ever made up: an
//! empty table means an empty list.
//!
//! A review names at most one identification, and only one from the reviewer's own
//! history; its movie title is then the identification's, not what the client claims.
//! Every new review waits as `pending` until an admin features or hides it.
use std::collections::HashMap;

use chrono::{Duration, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
    Set,
};
use serde::{Deserialize, Serialize};

use crate::entities::{identification, testimonial, user};

pub const DEFAULT_FEATURED: u64 = 6;
pub const MAX_FEATURED: u64 = 24;
pub const MAX_REVIEW_CHARS: usize = 1000;
pub const MAX_TITLE_CHARS: usize = 200;
/// A person may post at most this many reviews in a day (spam brake).
pub const DAILY_LIMIT: u64 = 10;

/// A testimonial as the API and the home page show it (SPEC section 3).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
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
#[derive(Debug, Clone, Deserialize, Default, utoipa::ToSchema)]
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
    #[error("Identification not found - You can only review an identification from your history")]
    UnknownIdentification,
    #[error("Not your identification - You can only review an identification from your history")]
    NotYourIdentification,
    #[error("Already reviewed - You have already shared your experience with this identification")]
    AlreadyReviewed,
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
}

/// Moderation states. New reviews are `pending`; only `featured` ones are public.
pub const PENDING: &str = "pending";
pub const FEATURED: &str = "featured";
pub const HIDDEN: &str = "hidden";
pub const STATUSES: &[&str] = &[PENDING, FEATURED, HIDDEN];

/// Featured (approved) testimonials, newest first, at most `limit` (clamped to 1..=24).
pub async fn featured(db: &impl ConnectionTrait, limit: u64) -> Result<Vec<TestimonialView>, sea_orm::DbErr> {
    let rows = testimonial::Entity::find()
        .filter(testimonial::Column::Status.eq(FEATURED))
        .order_by_desc(testimonial::Column::CreatedAt)
        .order_by_desc(testimonial::Column::Id)
        .limit(limit.clamp(1, MAX_FEATURED))
        .all(db)
        .await?;
    let names = display_names(db, rows.iter().map(|t| t.user_id)).await?;
    Ok(rows
        .into_iter()
        .map(|t| {
            let name = names.get(&t.user_id).cloned().unwrap_or_else(|| "Anonymous".into());
            view(t, name)
        })
        .collect())
}

/// Whether the home page shows a review by this person (their name is on it).
pub async fn has_featured(db: &impl ConnectionTrait, user_id: i64) -> Result<bool, sea_orm::DbErr> {
    Ok(testimonial::Entity::find()
        .filter(testimonial::Column::UserId.eq(user_id))
        .filter(testimonial::Column::Status.eq(FEATURED))
        .count(db)
        .await?
        > 0)
}

/// The name each user shows to others: the display name, else the username.
async fn display_names(
    db: &impl ConnectionTrait,
    ids: impl Iterator<Item = i64>,
) -> Result<HashMap<i64, String>, sea_orm::DbErr> {
    let mut ids: Vec<i64> = ids.collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    Ok(user::Entity::find()
        .filter(user::Column::Id.is_in(ids))
        .all(db)
        .await?
        .into_iter()
        .map(|u| (u.id, u.display_name.filter(|d| !d.trim().is_empty()).unwrap_or(u.username)))
        .collect())
}

/// Validates and stores a review by `user_id` (SPEC section 5: text trimmed, rating 1 to 5)
/// as `pending`. A referenced identification must exist and belong to `user_id`. The daily
/// limit and the one review per identification are checked and the row written in one
/// transaction under the person's row lock, so parallel posts take turns and cannot pass
/// either rule together; a unique index on (person, identification) backs the second.
pub async fn create(
    db: &sea_orm::DatabaseConnection,
    user_id: i64,
    user_name: &str,
    input: NewTestimonial,
) -> Result<ModerationItem, TestimonialError> {
    let review = input.review.as_deref().unwrap_or("").trim().to_owned();
    if review.is_empty() {
        return Err(TestimonialError::ReviewRequired);
    }
    if review.chars().count() > MAX_REVIEW_CHARS {
        return Err(TestimonialError::ReviewTooLong);
    }
    let rating = parse_rating(input.rating.as_ref())?;
    let mut movie_title = input
        .movie_title
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.chars().take(MAX_TITLE_CHARS).collect::<String>());
    let identification_id = match input.identification_id {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(s)) => Some(s.trim().to_owned()).filter(|s| !s.is_empty()),
        Some(_) => return Err(TestimonialError::UnknownIdentification),
    };
    let txn = crate::db::begin_write(db).await?;
    if !crate::services::users::lock(&txn, user_id).await? {
        return Err(TestimonialError::Db(sea_orm::DbErr::RecordNotFound("the account is gone".into())));
    }
    let db = &txn;
    if let Some(id) = &identification_id {
        let found = if crate::services::identification_ids::valid_id(id) {
            identification::Entity::find_by_id(id.clone()).one(db).await?
        } else {
            None
        };
        let Some(found) = found else { return Err(TestimonialError::UnknownIdentification) };
        if found.user_id != Some(user_id) {
            return Err(TestimonialError::NotYourIdentification);
        }
        let reviewed = testimonial::Entity::find()
            .filter(testimonial::Column::UserId.eq(user_id))
            .filter(testimonial::Column::IdentificationId.eq(id.clone()))
            .count(db)
            .await?;
        if reviewed > 0 {
            return Err(TestimonialError::AlreadyReviewed);
        }
        // The title the identification found, not whatever the client says it was.
        movie_title = Some(found.title.chars().take(MAX_TITLE_CHARS).collect());
    }

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
        status: Set(PENDING.to_owned()),
        moderated_at: Set(None),
        moderated_by: Set(None),
        created_at: Set(Utc::now()),
        ..Default::default()
    }
    .insert(db)
    .await
    .map_err(|e| match e.sql_err() {
        Some(sea_orm::SqlErr::UniqueConstraintViolation(_)) => TestimonialError::AlreadyReviewed,
        _ => e.into(),
    })?;
    txn.commit().await?;
    Ok(ModerationItem {
        status: row.status.clone(),
        user_id,
        moderated_at: None,
        moderated_by: None,
        testimonial: view(row, user_name.to_owned()),
    })
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

/// A review as the moderation queue shows it: the public view plus its state.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModerationItem {
    #[serde(flatten)]
    pub testimonial: TestimonialView,
    pub status: String,
    pub user_id: i64,
    pub moderated_at: Option<chrono::DateTime<Utc>>,
    pub moderated_by: Option<String>,
}

#[derive(Debug, Clone, Serialize, Default, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModerationCounts {
    pub pending: u64,
    pub featured: u64,
    pub hidden: u64,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModerationList {
    pub testimonials: Vec<ModerationItem>,
    pub total: u64,
    pub counts: ModerationCounts,
}

/// Reviews in `status` (any when `None`), oldest pending first so the queue is worked in
/// order; other states newest first.
pub async fn moderation_list(
    db: &impl ConnectionTrait,
    status: Option<&str>,
    offset: u64,
    limit: u64,
) -> Result<ModerationList, sea_orm::DbErr> {
    let mut q = testimonial::Entity::find();
    if let Some(s) = status {
        q = q.filter(testimonial::Column::Status.eq(s));
    }
    let total = q.clone().count(db).await?;
    q = if status == Some(PENDING) {
        q.order_by_asc(testimonial::Column::CreatedAt).order_by_asc(testimonial::Column::Id)
    } else {
        q.order_by_desc(testimonial::Column::CreatedAt).order_by_desc(testimonial::Column::Id)
    };
    let rows = q.offset(crate::db::sql_offset(offset)).limit(limit.clamp(1, 200)).all(db).await?;
    let names = display_names(db, rows.iter().flat_map(|t| std::iter::once(t.user_id).chain(t.moderated_by))).await?;
    let count = |s: &'static str| testimonial::Entity::find().filter(testimonial::Column::Status.eq(s)).count(db);
    let counts = ModerationCounts {
        pending: count(PENDING).await?,
        featured: count(FEATURED).await?,
        hidden: count(HIDDEN).await?,
    };
    let testimonials = rows
        .into_iter()
        .map(|t| ModerationItem {
            status: t.status.clone(),
            user_id: t.user_id,
            moderated_at: t.moderated_at,
            moderated_by: t.moderated_by.map(|id| names.get(&id).cloned().unwrap_or_else(|| format!("user {id}"))),
            testimonial: view(t.clone(), names.get(&t.user_id).cloned().unwrap_or_else(|| "Anonymous".into())),
        })
        .collect();
    Ok(ModerationList { testimonials, total, counts })
}

#[derive(Debug, thiserror::Error)]
pub enum ModerationError {
    #[error("Review not found")]
    NotFound,
    #[error("Unknown status - choose one of pending, featured or hidden")]
    BadStatus,
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
}

/// Moves a review to `status` (approve = `featured`, hide = `hidden`), noting who did it.
pub async fn moderate(db: &impl ConnectionTrait, id: i64, status: &str, admin_id: i64) -> Result<(), ModerationError> {
    let status = STATUSES.iter().find(|s| **s == status.trim()).ok_or(ModerationError::BadStatus)?;
    let res = testimonial::Entity::update_many()
        .col_expr(testimonial::Column::Status, sea_orm::sea_query::Expr::value(*status))
        .col_expr(testimonial::Column::ModeratedAt, sea_orm::sea_query::Expr::value(Utc::now()))
        .col_expr(testimonial::Column::ModeratedBy, sea_orm::sea_query::Expr::value(admin_id))
        .filter(testimonial::Column::Id.eq(id))
        .exec(db)
        .await?;
    if res.rows_affected == 0 {
        return Err(ModerationError::NotFound);
    }
    crate::services::content_version::bump(db).await?;
    Ok(())
}

/// Deletes a review for good (spam); hiding keeps it.
pub async fn delete(db: &impl ConnectionTrait, id: i64) -> Result<(), ModerationError> {
    let res = testimonial::Entity::delete_by_id(id).exec(db).await?;
    if res.rows_affected == 0 {
        return Err(ModerationError::NotFound);
    }
    crate::services::content_version::bump(db).await?;
    Ok(())
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
