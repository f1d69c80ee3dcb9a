//! What a person does with their own account: change the password, take their data out,
//! delete the account. Every function acts on the user id the caller took from the session.
use chrono::Utc;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, Set,
};
use serde_json::{Value, json};

use crate::entities::{
    analytics_event, api_key, api_quota, blog_post, collection_item, identification, notification_preference,
    push_subscription, session, testimonial, user,
};
use crate::services::single_use_tokens::{self, Purpose};
use crate::services::{credentials, users};

#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    #[error("Your current password is not correct")]
    WrongPassword,
    #[error("{0}")]
    Invalid(String),
    #[error("Your account signs in with Google and has no password yet. Use \"Forgot password\" to set one.")]
    NoPassword,
    #[error("You are the only administrator. Make another account an administrator before deleting yours.")]
    LastAdmin,
    #[error("{}", crate::error_code::NOT_AUTHENTICATED)]
    Gone,
    #[error("password hashing failed")]
    Hash,
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
}

/// Checks `current` and sets `new`; every other session of the account ends (the one of
/// `keep_token` stays), and its API keys and push subscriptions with them
/// ([`credentials::revoke_all`]). Returns what ended.
pub async fn change_password(
    db: &DatabaseConnection,
    user_id: i64,
    current: &str,
    new: &str,
    keep_token: Option<&str>,
) -> Result<credentials::Revoked, AccountError> {
    let u = user::Entity::find_by_id(user_id).one(db).await?.ok_or(AccountError::Gone)?;
    if u.password_hash.is_none() {
        return Err(AccountError::NoPassword);
    }
    if current.len() > users::MAX_PASSWORD_LEN || !users::check_password(current, Some(&u)).await {
        return Err(AccountError::WrongPassword);
    }
    users::check_new_password(new).map_err(AccountError::Invalid)?;
    let hash = users::hash_password_blocking(new).await.map_err(|_| AccountError::Hash)?;
    let txn = crate::db::begin_write(db).await?;
    let mut active: user::ActiveModel = u.into();
    active.password_hash = Set(Some(hash));
    active.updated_at = Set(Utc::now());
    active.update(&txn).await?;
    let ended = credentials::revoke_all(&txn, user_id, keep_token).await?;
    // A reset link mailed earlier must not undo this change.
    single_use_tokens::forget(&txn, user_id, Purpose::ResetPassword).await?;
    txn.commit().await?;
    Ok(ended)
}

/// Deletes the account and every row that is the person's: sessions, tokens, history (and
/// so its share links), collection, reviews, push subscriptions, preferences, analytics
/// events. Content they wrote for the site as an admin (blog posts) stays, without their
/// name on it. The last administrator cannot leave. One transaction.
pub async fn delete(db: &DatabaseConnection, user_id: i64) -> Result<(), AccountError> {
    let txn = crate::db::begin_write(db).await?;
    if !users::lock(&txn, user_id).await? {
        return Err(AccountError::Gone);
    }
    let u = user::Entity::find_by_id(user_id).one(&txn).await?.ok_or(AccountError::Gone)?;
    if u.role.is_admin() {
        // Lock every admin row, so two admins deleting themselves at once take turns and
        // the second sees that it would be the last.
        user::Entity::update_many()
            .col_expr(user::Column::UpdatedAt, Expr::col(user::Column::UpdatedAt))
            .filter(user::Column::Role.eq(user::Role::Admin))
            .exec(&txn)
            .await?;
        let admins = user::Entity::find().filter(user::Column::Role.eq(user::Role::Admin)).count(&txn).await?;
        if admins <= 1 {
            return Err(AccountError::LastAdmin);
        }
    }
    session::Entity::delete_many().filter(session::Column::UserId.eq(user_id)).exec(&txn).await?;
    api_key::Entity::delete_many().filter(api_key::Column::UserId.eq(user_id)).exec(&txn).await?;
    api_quota::Entity::delete_by_id(user_id).exec(&txn).await?;
    single_use_tokens::forget_all(&txn, user_id).await?;
    push_subscription::Entity::delete_many().filter(push_subscription::Column::UserId.eq(user_id)).exec(&txn).await?;
    notification_preference::Entity::delete_many()
        .filter(notification_preference::Column::UserId.eq(user_id))
        .exec(&txn)
        .await?;
    collection_item::Entity::delete_many().filter(collection_item::Column::UserId.eq(user_id)).exec(&txn).await?;
    testimonial::Entity::delete_many().filter(testimonial::Column::UserId.eq(user_id)).exec(&txn).await?;
    identification::Entity::delete_many().filter(identification::Column::UserId.eq(user_id)).exec(&txn).await?;
    analytics_event::Entity::delete_many().filter(analytics_event::Column::UserId.eq(user_id)).exec(&txn).await?;
    testimonial::Entity::update_many()
        .col_expr(testimonial::Column::ModeratedBy, Expr::value(Option::<i64>::None))
        .filter(testimonial::Column::ModeratedBy.eq(user_id))
        .exec(&txn)
        .await?;
    for col in [blog_post::Column::CreatedBy, blog_post::Column::UpdatedBy] {
        blog_post::Entity::update_many()
            .col_expr(col, Expr::value(Option::<i64>::None))
            .filter(col.eq(user_id))
            .exec(&txn)
            .await?;
    }
    user::Entity::delete_by_id(user_id).exec(&txn).await?;
    // Their featured reviews leave the home page.
    crate::services::content_version::bump(&txn).await?;
    txn.commit().await?;
    tracing::info!(user_id, "account deleted by its owner");
    Ok(())
}

/// Everything stored about the person, as one JSON document (`GET /api/account/export`).
/// Secrets are left out: the password hash, session tokens and push encryption keys.
pub async fn export(db: &DatabaseConnection, user_id: i64) -> Result<Value, AccountError> {
    let u = user::Entity::find_by_id(user_id).one(db).await?.ok_or(AccountError::Gone)?;
    let sessions = session::Entity::find()
        .filter(session::Column::UserId.eq(user_id))
        .order_by_desc(session::Column::LastSeenAt)
        .all(db)
        .await?;
    let identifications = identification::Entity::find()
        .filter(identification::Column::UserId.eq(user_id))
        .order_by_desc(identification::Column::CreatedAt)
        .all(db)
        .await?;
    let collection = collection_item::Entity::find()
        .filter(collection_item::Column::UserId.eq(user_id))
        .order_by_desc(collection_item::Column::CreatedAt)
        .all(db)
        .await?;
    let reviews = testimonial::Entity::find()
        .filter(testimonial::Column::UserId.eq(user_id))
        .order_by_desc(testimonial::Column::CreatedAt)
        .all(db)
        .await?;
    let devices =
        push_subscription::Entity::find().filter(push_subscription::Column::UserId.eq(user_id)).all(db).await?;
    let prefs = notification_preference::Entity::find_by_id(user_id).one(db).await?;
    let events = analytics_event::Entity::find()
        .filter(analytics_event::Column::UserId.eq(user_id))
        .order_by_desc(analytics_event::Column::CreatedAt)
        .all(db)
        .await?;
    let json_or_text = |s: &str| serde_json::from_str::<Value>(s).unwrap_or_else(|_| json!(s));
    Ok(json!({
        "exportedAt": Utc::now(),
        "account": {
            "id": u.id,
            "username": u.username,
            "email": u.email,
            "emailVerified": u.email_verified,
            "role": u.role,
            "displayName": u.display_name,
            "bio": u.bio,
            "profilePicture": u.profile_picture,
            "defaultAiModel": u.default_ai_model,
            "signsInWithGoogle": u.google_sub.is_some(),
            "hasPassword": u.password_hash.is_some(),
            "createdAt": u.created_at,
            "updatedAt": u.updated_at,
        },
        "sessions": sessions.iter().map(|s| json!({
            "createdAt": s.created_at,
            "lastSeenAt": s.last_seen_at,
            "expiresAt": s.expires_at,
            "userAgent": s.user_agent,
        })).collect::<Vec<_>>(),
        "identifications": identifications.iter().map(|i| json!({
            "id": i.id,
            "createdAt": i.created_at,
            "shared": i.shared,
            "mode": i.mode,
            "result": json_or_text(&i.result),
        })).collect::<Vec<_>>(),
        "collection": collection.iter().map(|c| json!({
            "title": c.title,
            "year": c.year,
            "posterUrl": c.poster_url,
            "tmdbId": c.tmdb_id,
            "createdAt": c.created_at,
        })).collect::<Vec<_>>(),
        "reviews": reviews.iter().map(|t| json!({
            "rating": t.rating,
            "review": t.review,
            "movieTitle": t.movie_title,
            "identificationId": t.identification_id,
            "status": t.status,
            "createdAt": t.created_at,
        })).collect::<Vec<_>>(),
        "notificationPreferences": prefs.map(|p| json!({
            "pushNotifications": p.push_notifications,
            "emailNotifications": p.email_notifications,
            "onboardingComplete": p.onboarding_complete,
        })),
        "pushDevices": devices.iter().map(|d| json!({
            "endpoint": d.endpoint,
            "deviceInfo": d.device_info.as_deref().map(json_or_text),
            "createdAt": d.created_at,
            "lastSuccessAt": d.last_success_at,
        })).collect::<Vec<_>>(),
        "analyticsEvents": events.iter().map(|e| json!({
            "action": e.action,
            "resourceType": e.resource_type,
            "resourceId": e.resource_id,
            "metadata": e.metadata.as_deref().map(json_or_text),
            "createdAt": e.created_at,
        })).collect::<Vec<_>>(),
    }))
}
