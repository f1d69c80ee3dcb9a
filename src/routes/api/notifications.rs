//! Push notifications and notification preferences (SPEC section 7), all for the signed-in
//! person only (401 otherwise):
//!
//! * `GET  /api/notifications/vapid-public-key` → `{publicKey}`
//! * `GET  /api/notifications/status[?endpoint=]` → `{isSubscribed, subscriptionCount}`;
//!   with `endpoint`, `isSubscribed` says whether that browser's subscription is stored
//! * `POST /api/notifications/subscribe` `{subscription, deviceInfo}`
//! * `POST /api/notifications/unsubscribe` `{endpoint}`
//! * `POST /api/notifications/test` `{type: "test" | "welcome"}` → `{success}`; 5 per 10
//!   minutes a person (429), 502 when no device accepted it (never how a push service answered)
//! * `GET|POST /api/user/notification-preferences` `{pushNotifications, emailNotifications, onboardingComplete}`
use axum::Json;
use axum::extract::{Query, State};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{AppError, AppResult, ErrorBody, ErrorCode};
use crate::middleware::auth::RequireUser;
use crate::routes::extract::JsonBody;
use crate::services::account_limits;
use crate::services::push::{self, Preferences, PushError, SubscriptionJson};
use crate::state::AppState;
use crate::views::Site;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(vapid_public_key))
        .routes(routes!(status))
        .routes(routes!(subscribe))
        .routes(routes!(unsubscribe))
        .routes(routes!(test))
        .routes(routes!(preferences, set_preferences))
}

/// The answer of subscribe, unsubscribe and test.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct PushAnswer {
    success: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    is_subscribed: Option<bool>,
    /// Whether unsubscribe found the endpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    removed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    subscription_count: Option<u64>,
}

impl From<PushError> for AppError {
    fn from(e: PushError) -> Self {
        match e {
            PushError::Invalid(m) => AppError::Unprocessable(m),
            PushError::Gone => AppError::NotAuthenticated,
            PushError::NoSubscription => AppError::NotFoundMsg(e.to_string()),
            PushError::BadStoredKey => AppError::Internal(anyhow::anyhow!(e)),
            PushError::Db(e) => e.into(),
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct PublicKey {
    public_key: String,
}

#[utoipa::path(get, path = "/notifications/vapid-public-key", tag = "profile", security(("session" = [])),
    responses((status = 200, description = "The server's VAPID public key", body = PublicKey), (status = 401, description = "Not signed in", body = ErrorBody)))]
async fn vapid_public_key(State(state): State<AppState>, RequireUser(_me): RequireUser) -> AppResult<Json<PublicKey>> {
    Ok(Json(PublicKey { public_key: state.vapid().await?.public_key.clone() }))
}

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(default)]
struct StatusQuery {
    endpoint: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Status {
    is_subscribed: bool,
    subscription_count: u64,
}

#[utoipa::path(get, path = "/notifications/status", tag = "profile", security(("session" = [])), params(StatusQuery),
    responses((status = 200, description = "Subscription state", body = Status), (status = 401, description = "Not signed in", body = ErrorBody)))]
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

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(default, rename_all = "camelCase")]
struct SubscribeBody {
    subscription: Option<SubscriptionJson>,
    /// Free-form description of the device (bounded), shown in the list of devices.
    #[schema(value_type = Option<Object>)]
    device_info: Option<Value>,
}

#[utoipa::path(post, path = "/notifications/subscribe", tag = "profile", security(("session" = [])), request_body = SubscribeBody,
    responses((status = 200, description = "Stored", body = PushAnswer), (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 422, description = "Invalid subscription", body = ErrorBody)))]
async fn subscribe(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    JsonBody(body): JsonBody<SubscribeBody>,
) -> AppResult<Json<PushAnswer>> {
    let sub = body.subscription.ok_or_else(|| AppError::Unprocessable("subscription is required".into()))?;
    let sub =
        push::validate_subscription(&sub, state.config.push.allow_http_endpoints, state.config.outbound_allow_private)?;
    let device = push::validate_device_info(body.device_info.as_ref())?;
    push::subscribe(&state.db, me.id, &sub, device).await?;
    let count = push::count(&state.db, me.id).await?;
    Ok(Json(PushAnswer { success: true, is_subscribed: Some(true), removed: None, subscription_count: Some(count) }))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(default)]
struct UnsubscribeBody {
    endpoint: String,
}

#[utoipa::path(post, path = "/notifications/unsubscribe", tag = "profile", security(("session" = [])), request_body = UnsubscribeBody,
    responses((status = 200, description = "Removed (or was not there)", body = PushAnswer), (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 422, description = "No endpoint", body = ErrorBody)))]
async fn unsubscribe(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    JsonBody(body): JsonBody<UnsubscribeBody>,
) -> AppResult<Json<PushAnswer>> {
    if body.endpoint.trim().is_empty() {
        return Err(AppError::Unprocessable("endpoint is required".into()));
    }
    let removed = push::unsubscribe(&state.db, me.id, &body.endpoint).await?;
    let count = push::count(&state.db, me.id).await?;
    Ok(Json(PushAnswer { success: true, is_subscribed: None, removed: Some(removed), subscription_count: Some(count) }))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(default)]
struct TestBody {
    #[serde(rename = "type")]
    kind: Option<String>,
}

/// Sends a test notification to the caller's devices: at most 5 tests in 10 minutes per
/// person, and an answer that says only whether it went out (never how a push service
/// answered, so the endpoint cannot be used to probe other hosts).
#[utoipa::path(post, path = "/notifications/test", tag = "profile", security(("session" = [])), request_body = TestBody,
    responses((status = 200, description = "Sent to at least one device", body = PushAnswer), (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 404, description = "No device subscribed", body = ErrorBody),
        (status = 429, description = "Too many tests", body = ErrorBody),
        (status = 502, description = "No device accepted it", body = ErrorBody)))]
async fn test(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    JsonBody(body): JsonBody<TestBody>,
) -> AppResult<Json<PushAnswer>> {
    let settings = state.settings().await?;
    let site = Site::from_settings(&settings, &state.config.origin());
    let note = push::test_notification(body.kind.as_deref().unwrap_or("test"), &site.name)?;
    let budget = account_limits::PUSH_TEST.consume(&state.db, &me.id.to_string()).await?;
    if !budget.allowed {
        return Err(AppError::throttled(
            "Too many test notifications. Please wait a few minutes and try again.",
            &budget,
        ));
    }
    let subject = state.config.push.vapid_subject.clone().unwrap_or_else(|| format!("mailto:{}", site.contact_email));
    let vapid = state.vapid().await?;
    let transport = push::Transport { client: &state.outbound, allow_http: state.config.push.allow_http_endpoints };
    let report = push::send_to_user(&state.db, transport, vapid, &subject, me.id, &note).await?;
    if report.sent == 0 {
        if report.failed == 0 {
            // Every stored subscription had expired at the push service and is gone now.
            return Err(PushError::NoSubscription.into());
        }
        return Err(AppError::BadGateway(
            "The test notification could not be delivered. Please try again later.".into(),
        )
        .with_code(ErrorCode::DeliveryFailed));
    }
    Ok(Json(PushAnswer { success: true, is_subscribed: None, removed: None, subscription_count: None }))
}

#[utoipa::path(get, path = "/user/notification-preferences", tag = "profile", security(("session" = [])),
    responses((status = 200, description = "Notification preferences", body = Preferences), (status = 401, description = "Not signed in", body = ErrorBody)))]
async fn preferences(State(state): State<AppState>, RequireUser(me): RequireUser) -> AppResult<Json<Preferences>> {
    Ok(Json(push::preferences(&state.db, me.id).await?))
}

/// Missing fields keep their stored value, so the onboarding may send only what it knows.
#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(default, rename_all = "camelCase")]
struct PreferencesBody {
    #[schema(value_type = Option<bool>)]
    push_notifications: Option<Value>,
    #[schema(value_type = Option<bool>)]
    email_notifications: Option<Value>,
    #[schema(value_type = Option<bool>)]
    onboarding_complete: Option<Value>,
}

fn flag(name: &str, v: Option<Value>, current: bool) -> AppResult<bool> {
    match v {
        None | Some(Value::Null) => Ok(current),
        Some(Value::Bool(b)) => Ok(b),
        Some(_) => Err(AppError::Unprocessable(format!("{name} must be true or false"))),
    }
}

#[utoipa::path(post, path = "/user/notification-preferences", tag = "profile", security(("session" = [])), request_body = PreferencesBody,
    responses((status = 200, description = "The preferences now stored", body = Preferences), (status = 401, description = "Not signed in", body = ErrorBody),
        (status = 422, description = "A flag is not a boolean", body = ErrorBody)))]
async fn set_preferences(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    JsonBody(body): JsonBody<PreferencesBody>,
) -> AppResult<Json<Preferences>> {
    let current = push::preferences(&state.db, me.id).await?;
    let next = Preferences {
        push_notifications: flag("pushNotifications", body.push_notifications, current.push_notifications)?,
        email_notifications: flag("emailNotifications", body.email_notifications, current.email_notifications)?,
        onboarding_complete: flag("onboardingComplete", body.onboarding_complete, current.onboarding_complete)?,
    };
    push::set_preferences(&state.db, me.id, next).await?;
    Ok(Json(next))
}
