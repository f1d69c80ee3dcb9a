//! Push notifications and notification preferences (SPEC section 7), all for the signed-in
//! person only (401 otherwise):
//!
//! * `GET  /api/notifications/vapid-public-key` → `{publicKey}`
//! * `GET  /api/notifications/status[?endpoint=]` → `{isSubscribed, subscriptionCount}`;
//!   with `endpoint`, `isSubscribed` says whether that browser's subscription is stored
//! * `POST /api/notifications/subscribe` `{subscription, deviceInfo}`
//! * `POST /api/notifications/unsubscribe` `{endpoint}`
//! * `POST /api/notifications/test` `{type: "test" | "welcome"}` → `{success, sent, removed, failed}`
//! * `GET|POST /api/user/notification-preferences` `{pushNotifications, emailNotifications, onboardingComplete}`
use axum::extract::rejection::JsonRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::accounts::json_body;
use crate::auth::RequireUser;
use crate::error::{AppError, AppResult};
use crate::services::push::{self, Preferences, PushError, SubscriptionJson};
use crate::state::AppState;
use crate::views::Site;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/notifications/vapid-public-key", get(vapid_public_key))
        .route("/notifications/status", get(status))
        .route("/notifications/subscribe", post(subscribe))
        .route("/notifications/unsubscribe", post(unsubscribe))
        .route("/notifications/test", post(test))
        .route("/user/notification-preferences", get(preferences).post(set_preferences))
}

impl From<PushError> for AppError {
    fn from(e: PushError) -> Self {
        match e {
            PushError::Invalid(m) => AppError::Unprocessable(m),
            PushError::NoSubscription => AppError::NotFoundMsg(e.to_string()),
            PushError::BadStoredKey => AppError::Internal(anyhow::anyhow!(e)),
            PushError::Db(e) => e.into(),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PublicKey {
    public_key: String,
}

async fn vapid_public_key(State(state): State<AppState>, RequireUser(_): RequireUser) -> AppResult<Json<PublicKey>> {
    Ok(Json(PublicKey { public_key: state.vapid().await?.public_key.clone() }))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct StatusQuery {
    endpoint: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Status {
    is_subscribed: bool,
    subscription_count: u64,
}

async fn status(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    Query(q): Query<StatusQuery>,
) -> AppResult<Json<Status>> {
    let subscription_count = push::count(&state.db, me.id).await?;
    let is_subscribed = match q.endpoint.as_deref().filter(|e| !e.trim().is_empty()) {
        Some(endpoint) => push::has_endpoint(&state.db, me.id, endpoint).await?,
        None => subscription_count > 0,
    };
    Ok(Json(Status { is_subscribed, subscription_count }))
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct SubscribeBody {
    subscription: Option<SubscriptionJson>,
    device_info: Option<Value>,
}

async fn subscribe(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    body: Result<Json<SubscribeBody>, JsonRejection>,
) -> AppResult<Json<Value>> {
    let body = json_body(body)?;
    let sub = body.subscription.ok_or_else(|| AppError::Unprocessable("subscription is required".into()))?;
    let sub = push::validate_subscription(&sub, state.config.push.allow_http_endpoints)?;
    let device = push::validate_device_info(body.device_info.as_ref())?;
    push::subscribe(&state.db, me.id, &sub, device).await?;
    let count = push::count(&state.db, me.id).await?;
    Ok(Json(json!({"success": true, "isSubscribed": true, "subscriptionCount": count})))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct UnsubscribeBody {
    endpoint: String,
}

async fn unsubscribe(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    body: Result<Json<UnsubscribeBody>, JsonRejection>,
) -> AppResult<Json<Value>> {
    let body = json_body(body)?;
    if body.endpoint.trim().is_empty() {
        return Err(AppError::Unprocessable("endpoint is required".into()));
    }
    let removed = push::unsubscribe(&state.db, me.id, &body.endpoint).await?;
    let count = push::count(&state.db, me.id).await?;
    Ok(Json(json!({"success": true, "removed": removed, "subscriptionCount": count})))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct TestBody {
    #[serde(rename = "type")]
    kind: Option<String>,
}

async fn test(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    body: Result<Json<TestBody>, JsonRejection>,
) -> AppResult<Json<Value>> {
    let body = json_body(body)?;
    let settings = state.settings().await?;
    let site = Site::from_settings(&settings, &state.config.origin());
    let note = push::test_notification(body.kind.as_deref().unwrap_or("test"), &site.name)?;
    let subject = state.config.push.vapid_subject.clone().unwrap_or_else(|| format!("mailto:{}", site.contact_email));
    let vapid = state.vapid().await?;
    let report = push::send_to_user(&state.db, &state.http, vapid, &subject, me.id, &note).await?;
    if report.sent == 0 {
        if report.failed == 0 {
            // Every stored subscription had expired at the push service and is gone now.
            return Err(PushError::NoSubscription.into());
        }
        return Err(AppError::with_body(
            StatusCode::BAD_GATEWAY,
            "The push service did not accept the notification. Please try again later.",
            json!({"sent": 0, "removed": report.removed, "failed": report.failed}),
        ));
    }
    Ok(Json(json!({"success": true, "sent": report.sent, "removed": report.removed, "failed": report.failed})))
}

async fn preferences(State(state): State<AppState>, RequireUser(me): RequireUser) -> AppResult<Json<Preferences>> {
    Ok(Json(push::preferences(&state.db, me.id).await?))
}

/// Missing fields keep their stored value, so the onboarding may send only what it knows.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct PreferencesBody {
    push_notifications: Option<Value>,
    email_notifications: Option<Value>,
    onboarding_complete: Option<Value>,
}

fn flag(name: &str, v: Option<Value>, current: bool) -> AppResult<bool> {
    match v {
        None | Some(Value::Null) => Ok(current),
        Some(Value::Bool(b)) => Ok(b),
        Some(_) => Err(AppError::Unprocessable(format!("{name} must be true or false"))),
    }
}

async fn set_preferences(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    body: Result<Json<PreferencesBody>, JsonRejection>,
) -> AppResult<Json<Preferences>> {
    let body = json_body(body)?;
    let current = push::preferences(&state.db, me.id).await?;
    let next = Preferences {
        push_notifications: flag("pushNotifications", body.push_notifications, current.push_notifications)?,
        email_notifications: flag("emailNotifications", body.email_notifications, current.email_notifications)?,
        onboarding_complete: flag("onboardingComplete", body.onboarding_complete, current.onboarding_complete)?,
    };
    push::set_preferences(&state.db, me.id, next).await?;
    Ok(Json(next))
}
