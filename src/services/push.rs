//! Web push notifications (SPEC sections 6 and 7): the VAPID key, each person's browser
//! subscriptions, their notification preferences, and sending.
//!
//! **Key.** `VAPID_PRIVATE_KEY` when set; otherwise a key generated once and stored in the
//! settings table (`vapid_private_key`, never shown by `/api/settings` or the admin), so
//! every node on one database signs with the same key and browsers' subscriptions stay
//! valid across restarts. Changing the key invalidates every subscription.
//!
//! **Sending.** web-push builds the request (aes128gcm body encrypted to the browser's
//! keys, VAPID `Authorization` whose JWT audience is the endpoint's origin, `TTL`); the
//! strict client for user-chosen URLs (`outbound`) sends it: an endpoint is a URL a browser
//! chose, so no redirect is followed and no non-public address is reached, however the name
//! resolves. A push service answering 404 or 410 has forgotten the subscription, so we
//! delete it.
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::Utc;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, Set};
use serde::{Deserialize, Serialize};
use web_push::{ContentEncoding, PartialVapidSignatureBuilder, SubscriptionInfo, VapidSignatureBuilder};

use crate::entities::{notification_preference, push_subscription, setting};
use crate::outbound::{self, OutboundError, Scheme, StrictClient};

/// Settings row holding the generated VAPID private key.
pub const VAPID_SETTING: &str = "vapid_private_key";
/// How long a push service keeps an undelivered message: one day.
pub const PUSH_TTL_SECS: u32 = 86_400;
/// Longest endpoint URL accepted (the column's size).
pub const MAX_ENDPOINT_LEN: usize = 2048;
/// Longest device description kept, as JSON text.
pub const MAX_DEVICE_INFO_LEN: usize = 1000;
/// Subscriptions one person may keep (one per browser; old ones are replaced by the browser).
pub const MAX_SUBSCRIPTIONS_PER_USER: u64 = 20;

/// The server's VAPID identity.
#[derive(Clone)]
pub struct Vapid {
    builder: PartialVapidSignatureBuilder,
    /// Uncompressed P-256 public key, base64url: `applicationServerKey` for the browser.
    pub public_key: String,
}

impl Vapid {
    /// From a raw private key in base64url.
    pub fn from_private_key(encoded: &str) -> Result<Self, web_push::WebPushError> {
        let builder = VapidSignatureBuilder::from_base64_no_sub(encoded.trim())?;
        let public_key = URL_SAFE_NO_PAD.encode(builder.get_public_key());
        Ok(Self { builder, public_key })
    }
}

/// A fresh private key: 32 random bytes that form a valid P-256 scalar.
pub fn generate_private_key() -> String {
    loop {
        let bytes: [u8; 32] = rand::random();
        let encoded = URL_SAFE_NO_PAD.encode(bytes);
        // Fails only for zero or a value >= the group order (about 2^-32 of draws).
        if VapidSignatureBuilder::from_base64_no_sub(&encoded).is_ok() {
            return encoded;
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PushError {
    #[error("{0}")]
    Invalid(String),
    #[error("No active subscription found")]
    NoSubscription,
    /// The account was deleted while the request ran.
    #[error("{}", crate::error_code::NOT_AUTHENTICATED)]
    Gone,
    #[error("the stored VAPID key ({VAPID_SETTING}) is not a usable P-256 key")]
    BadStoredKey,
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
}

/// The configured key, or the stored one, creating and storing it the first time. When two
/// nodes race, the first insert wins and both read it back.
pub async fn load_or_create_vapid(db: &impl ConnectionTrait, configured: Option<&str>) -> Result<Vapid, PushError> {
    if let Some(key) = configured {
        return Vapid::from_private_key(key).map_err(|_| PushError::BadStoredKey);
    }
    if let Some(row) = setting::Entity::find_by_id(VAPID_SETTING.to_owned()).one(db).await? {
        return Vapid::from_private_key(&row.value).map_err(|_| PushError::BadStoredKey);
    }
    let row = setting::ActiveModel {
        key: Set(VAPID_SETTING.to_owned()),
        value: Set(generate_private_key()),
        updated_at: Set(Utc::now()),
    };
    setting::Entity::insert(row)
        .on_conflict(OnConflict::column(setting::Column::Key).do_nothing().to_owned())
        .exec_without_returning(db)
        .await?;
    let stored = setting::Entity::find_by_id(VAPID_SETTING.to_owned())
        .one(db)
        .await?
        .ok_or_else(|| sea_orm::DbErr::RecordNotFound(VAPID_SETTING.into()))?;
    tracing::info!("generated a VAPID key for push notifications (kept in the settings table)");
    Vapid::from_private_key(&stored.value).map_err(|_| PushError::BadStoredKey)
}

/// A browser's `PushSubscription.toJSON()`.
#[derive(Debug, Clone, Deserialize, Default, utoipa::ToSchema, serde::Serialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SubscriptionJson {
    pub endpoint: String,
    #[schema(value_type = Option<f64>)]
    pub expiration_time: Option<serde_json::Value>,
    pub keys: KeysJson,
}

#[derive(Debug, Clone, Deserialize, Default, utoipa::ToSchema, serde::Serialize)]
#[serde(default)]
pub struct KeysJson {
    pub p256dh: String,
    pub auth: String,
}

/// A subscription that passed [`validate_subscription`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidSubscription {
    pub endpoint: String,
    pub p256dh: String,
    pub auth: String,
}

fn decode_key(value: &str) -> Option<Vec<u8>> {
    let v = value.trim().trim_end_matches('=');
    URL_SAFE_NO_PAD.decode(v).ok()
}

/// Checks what a browser sent: an https endpoint (http too when `allow_http`, for a local
/// push service in tests) on a public host (any host with `allow_private`), a 65-byte
/// uncompressed P-256 public key and a 16-byte auth secret, both base64url. Keys are stored
/// without padding. (Names are checked again, resolved, when a notification is sent.)
pub fn validate_subscription(
    sub: &SubscriptionJson,
    allow_http: bool,
    allow_private: bool,
) -> Result<ValidSubscription, PushError> {
    let endpoint = sub.endpoint.trim();
    if endpoint.is_empty() {
        return Err(PushError::Invalid("subscription.endpoint is required".into()));
    }
    if endpoint.len() > MAX_ENDPOINT_LEN {
        return Err(PushError::Invalid(format!("subscription.endpoint must be at most {MAX_ENDPOINT_LEN} characters")));
    }
    let scheme = if allow_http { Scheme::HttpOrHttps } else { Scheme::HttpsOnly };
    let url = match outbound::StrictClient::check_url_with(endpoint, scheme, allow_private) {
        Ok(u) => u,
        Err(OutboundError::NotPublic) => {
            return Err(PushError::Invalid("subscription.endpoint must be a public push service".into()));
        }
        Err(_) => return Err(PushError::Invalid("subscription.endpoint must be an https URL".into())),
    };
    // Names that only mean something inside a network are refused before any lookup.
    if !allow_private && is_internal_name(&url) {
        return Err(PushError::Invalid("subscription.endpoint must be a public push service".into()));
    }
    let p256dh = decode_key(&sub.keys.p256dh).filter(|k| k.len() == 65 && k[0] == 4).ok_or_else(|| {
        PushError::Invalid("subscription.keys.p256dh must be a base64url P-256 public key (65 bytes)".into())
    })?;
    let auth = decode_key(&sub.keys.auth)
        .filter(|k| k.len() == 16)
        .ok_or_else(|| PushError::Invalid("subscription.keys.auth must be a base64url secret of 16 bytes".into()))?;
    Ok(ValidSubscription {
        endpoint: endpoint.to_owned(),
        p256dh: URL_SAFE_NO_PAD.encode(p256dh),
        auth: URL_SAFE_NO_PAD.encode(auth),
    })
}

fn is_internal_name(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost"
                || d.ends_with(".localhost")
                || d.ends_with(".local")
                || d.ends_with(".internal")
                || !d.contains('.')
        }
        _ => false,
    }
}

/// The device description kept beside a subscription: a JSON object, at most
/// [`MAX_DEVICE_INFO_LEN`] characters once serialised.
pub fn validate_device_info(info: Option<&serde_json::Value>) -> Result<Option<String>, PushError> {
    match info {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(v @ serde_json::Value::Object(_)) => {
            let text = v.to_string();
            if text.len() > MAX_DEVICE_INFO_LEN {
                return Err(PushError::Invalid(format!(
                    "deviceInfo must be at most {MAX_DEVICE_INFO_LEN} characters of JSON"
                )));
            }
            Ok(Some(text))
        }
        Some(_) => Err(PushError::Invalid("deviceInfo must be an object".into())),
    }
}

/// Stores a subscription for `user_id`. The same endpoint seen again (the browser
/// re-subscribed, or another account signed in on it) is updated and moves to this user.
/// Runs in one transaction under the person's row lock, so parallel subscribes cannot pass
/// the cap together.
pub async fn subscribe(
    db: &sea_orm::DatabaseConnection,
    user_id: i64,
    sub: &ValidSubscription,
    device_info: Option<String>,
) -> Result<(), PushError> {
    let txn = crate::db::begin_write(db).await?;
    if !crate::services::users::lock(&txn, user_id).await? {
        return Err(PushError::Gone);
    }
    let existing = push_subscription::Entity::find()
        .filter(push_subscription::Column::Endpoint.eq(&sub.endpoint))
        .one(&txn)
        .await?;
    if let Some(row) = existing {
        let mut row: push_subscription::ActiveModel = row.into();
        row.user_id = Set(user_id);
        row.p256dh = Set(sub.p256dh.clone());
        row.auth = Set(sub.auth.clone());
        row.device_info = Set(device_info);
        row.update(&txn).await?;
        txn.commit().await?;
        return Ok(());
    }
    if count(&txn, user_id).await? >= MAX_SUBSCRIPTIONS_PER_USER {
        return Err(PushError::Invalid(format!(
            "At most {MAX_SUBSCRIPTIONS_PER_USER} devices can receive notifications; turn them off on a device you no longer use"
        )));
    }
    let row = push_subscription::ActiveModel {
        user_id: Set(user_id),
        endpoint: Set(sub.endpoint.clone()),
        p256dh: Set(sub.p256dh.clone()),
        auth: Set(sub.auth.clone()),
        device_info: Set(device_info),
        created_at: Set(Utc::now()),
        last_success_at: Set(None),
        ..Default::default()
    };
    // Another person's concurrent subscribe of the same endpoint may have inserted it
    // meanwhile: keep one.
    push_subscription::Entity::insert(row)
        .on_conflict(OnConflict::column(push_subscription::Column::Endpoint).do_nothing().to_owned())
        .exec_without_returning(&txn)
        .await?;
    txn.commit().await?;
    Ok(())
}

/// Deletes this user's subscription with `endpoint`; the number removed (0 or 1).
pub async fn unsubscribe(db: &impl ConnectionTrait, user_id: i64, endpoint: &str) -> Result<u64, PushError> {
    let res = push_subscription::Entity::delete_many()
        .filter(push_subscription::Column::UserId.eq(user_id))
        .filter(push_subscription::Column::Endpoint.eq(endpoint.trim()))
        .exec(db)
        .await?;
    Ok(res.rows_affected)
}

pub async fn count(db: &impl ConnectionTrait, user_id: i64) -> Result<u64, sea_orm::DbErr> {
    push_subscription::Entity::find().filter(push_subscription::Column::UserId.eq(user_id)).count(db).await
}

pub async fn has_endpoint(db: &impl ConnectionTrait, user_id: i64, endpoint: &str) -> Result<bool, sea_orm::DbErr> {
    // A stored endpoint is a validated URL: one with a NUL byte can't be ours (and
    // PostgreSQL would refuse to compare it at all).
    if endpoint.contains('\0') {
        return Ok(false);
    }
    Ok(push_subscription::Entity::find()
        .filter(push_subscription::Column::UserId.eq(user_id))
        .filter(push_subscription::Column::Endpoint.eq(endpoint.trim()))
        .count(db)
        .await?
        > 0)
}

/// The SPEC's notification preferences (`POST /api/user/notification-preferences`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, Default, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = NotificationPreferences)]
pub struct Preferences {
    pub push_notifications: bool,
    pub email_notifications: bool,
    pub onboarding_complete: bool,
}

pub async fn preferences(db: &impl ConnectionTrait, user_id: i64) -> Result<Preferences, sea_orm::DbErr> {
    Ok(notification_preference::Entity::find_by_id(user_id)
        .one(db)
        .await?
        .map(|p| Preferences {
            push_notifications: p.push_notifications,
            email_notifications: p.email_notifications,
            onboarding_complete: p.onboarding_complete,
        })
        .unwrap_or_default())
}

pub async fn set_preferences(db: &impl ConnectionTrait, user_id: i64, p: Preferences) -> Result<(), sea_orm::DbErr> {
    let row = notification_preference::ActiveModel {
        user_id: Set(user_id),
        push_notifications: Set(p.push_notifications),
        email_notifications: Set(p.email_notifications),
        onboarding_complete: Set(p.onboarding_complete),
        updated_at: Set(Utc::now()),
    };
    notification_preference::Entity::insert(row)
        .on_conflict(
            OnConflict::column(notification_preference::Column::UserId)
                .update_columns([
                    notification_preference::Column::PushNotifications,
                    notification_preference::Column::EmailNotifications,
                    notification_preference::Column::OnboardingComplete,
                    notification_preference::Column::UpdatedAt,
                ])
                .to_owned(),
        )
        .exec_without_returning(db)
        .await?;
    Ok(())
}

/// What a notification shows; the service worker reads these fields.
#[derive(Debug, Clone, Serialize)]
pub struct Notification {
    pub title: String,
    pub body: String,
    /// Opened (or focused) when the notification is clicked.
    pub url: String,
    /// Notifications with one tag replace each other.
    pub tag: String,
    pub icon: String,
}

/// The kinds of notification `POST /api/notifications/test` can send.
pub fn test_notification(kind: &str, site_name: &str) -> Result<Notification, PushError> {
    let icon = "/assets/icons/icon-192.png".to_owned();
    match kind {
        "test" => Ok(Notification {
            title: "Test Notification".into(),
            body: format!("Push notifications from {site_name} are working on this device."),
            url: "/pwa-settings".into(),
            tag: "reelfind-test".into(),
            icon,
        }),
        "welcome" => Ok(Notification {
            title: format!("Welcome to {site_name}!"),
            body: "Notifications are on. We'll tell you about new features and special offers.".into(),
            url: "/".into(),
            tag: "reelfind-welcome".into(),
            icon,
        }),
        _ => Err(PushError::Invalid("type must be one of: test, welcome".into())),
    }
}

/// The outcome of sending one notification to every device of a person.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SendReport {
    /// Push services that accepted the message.
    pub sent: usize,
    /// Subscriptions the push service no longer knows (404/410), now deleted.
    pub removed: usize,
    /// Other refusals and network failures (the subscription is kept).
    pub failed: usize,
}

enum Outcome {
    Sent,
    Gone,
    Failed,
}

/// How notifications go out: the strict client, and whether `http://` endpoints are allowed.
#[derive(Clone, Copy)]
pub struct Transport<'a> {
    pub client: &'a StrictClient,
    pub allow_http: bool,
}

/// Sends `note` to every subscription of `user_id`.
pub async fn send_to_user(
    db: &impl ConnectionTrait,
    transport: Transport<'_>,
    vapid: &Vapid,
    subject: &str,
    user_id: i64,
    note: &Notification,
) -> Result<SendReport, PushError> {
    let subs = push_subscription::Entity::find().filter(push_subscription::Column::UserId.eq(user_id)).all(db).await?;
    if subs.is_empty() {
        return Err(PushError::NoSubscription);
    }
    let payload = serde_json::to_vec(note).map_err(|e| PushError::Invalid(e.to_string()))?;
    let mut report = SendReport::default();
    for sub in subs {
        match send_one(transport, vapid, subject, &sub, &payload).await {
            Outcome::Sent => {
                report.sent += 1;
                let mut row: push_subscription::ActiveModel = sub.into();
                row.last_success_at = Set(Some(Utc::now()));
                row.update(db).await?;
            }
            Outcome::Gone => {
                report.removed += 1;
                push_subscription::Entity::delete_by_id(sub.id).exec(db).await?;
            }
            Outcome::Failed => report.failed += 1,
        }
    }
    Ok(report)
}

/// The origin of a push endpoint (`https://fcm.googleapis.com`), the JWT audience RFC 8292 asks for.
fn audience(endpoint: &str) -> Option<String> {
    url::Url::parse(endpoint).ok().map(|u| u.origin().ascii_serialization()).filter(|o| o != "null")
}

async fn send_one(
    transport: Transport<'_>,
    vapid: &Vapid,
    subject: &str,
    sub: &push_subscription::Model,
    payload: &[u8],
) -> Outcome {
    let info = SubscriptionInfo::new(sub.endpoint.as_str(), sub.p256dh.as_str(), sub.auth.as_str());
    let Some(aud) = audience(&sub.endpoint) else { return Outcome::Gone };
    let built = (|| {
        let mut signature = vapid.builder.clone().add_sub_info(&info);
        signature.add_claim("sub", subject);
        signature.add_claim("aud", aud.as_str());
        let mut message = web_push::WebPushMessageBuilder::new(&info);
        message.set_ttl(PUSH_TTL_SECS);
        message.set_payload(ContentEncoding::Aes128Gcm, payload);
        message.set_vapid_signature(signature.build()?);
        message.build()
    })();
    let message = match built {
        Ok(m) => m,
        Err(e) => {
            tracing::warn!(subscription = sub.id, error = %e, "push message could not be built");
            return Outcome::Failed;
        }
    };
    let request = web_push::request_builder::build_request::<Vec<u8>>(message);
    let scheme = if transport.allow_http { Scheme::HttpOrHttps } else { Scheme::HttpsOnly };
    let mut outbound = match transport.client.request(reqwest::Method::POST, &sub.endpoint, scheme) {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(subscription = sub.id, error = %e, "push endpoint refused before sending");
            return Outcome::Failed;
        }
    };
    for (name, value) in request.headers() {
        // reqwest sets Content-Length from the body itself.
        if name.as_str().eq_ignore_ascii_case("content-length") {
            continue;
        }
        outbound = outbound.header(name.as_str(), value.as_bytes());
    }
    let (_, body) = request.into_parts();
    match transport.client.execute(outbound.body(body)).await {
        Ok(res) if res.status.is_success() => Outcome::Sent,
        Ok(res) if matches!(res.status.as_u16(), 404 | 410) => {
            tracing::info!(subscription = sub.id, status = %res.status, "push service forgot a subscription; removing it");
            Outcome::Gone
        }
        Ok(res) => {
            // A redirect is an answer too: never followed.
            let text = String::from_utf8_lossy(&res.body).chars().take(300).collect::<String>();
            tracing::warn!(subscription = sub.id, status = %res.status, body = %text, "push service refused a notification");
            Outcome::Failed
        }
        Err(e) => {
            tracing::warn!(subscription = sub.id, error = %e, "push service unreachable or refused");
            Outcome::Failed
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(endpoint: &str, p256dh: &str, auth: &str) -> SubscriptionJson {
        SubscriptionJson {
            endpoint: endpoint.into(),
            expiration_time: None,
            keys: KeysJson { p256dh: p256dh.into(), auth: auth.into() },
        }
    }

    const P256DH: &str = "BLMbF9ffKBiWQLCKvTHb6LO8Nb6dcUh6TItC455vu2kElga6PQvUmaFyCdykxY2nOSSL3yKgfbmFLRTUaGv4yV8";
    const AUTH: &str = "xS03Fi5ErfTNH_l9WHE9Ig";

    #[test]
    fn subscription_rules() {
        assert!(validate_subscription(&sub("https://push.example/x", P256DH, AUTH), false, false).is_ok());
        let padded =
            validate_subscription(&sub("https://push.example/x", P256DH, "xS03Fi5ErfTNH_l9WHE9Ig=="), false, false);
        assert_eq!(padded.unwrap().auth, AUTH);
        for (e, p, a, msg) in [
            ("", P256DH, AUTH, "endpoint is required"),
            ("http://push.example/x", P256DH, AUTH, "https URL"),
            ("ftp://push.example/x", P256DH, AUTH, "https URL"),
            ("https://u:p@push.example/x", P256DH, AUTH, "https URL"),
            ("https://push.example/x", "abc", AUTH, "p256dh"),
            ("https://push.example/x", &P256DH[..40], AUTH, "p256dh"),
            ("https://push.example/x", P256DH, "xS03Fi5E", "auth"),
            ("https://push.example/x", P256DH, "not base64!", "auth"),
            ("https://localhost/x", P256DH, AUTH, "public push service"),
            ("https://127.0.0.1:8443/x", P256DH, AUTH, "public push service"),
            ("https://10.1.2.3/x", P256DH, AUTH, "public push service"),
            ("https://192.168.1.1/x", P256DH, AUTH, "public push service"),
            ("https://169.254.169.254/latest", P256DH, AUTH, "public push service"),
            ("https://[::1]/x", P256DH, AUTH, "public push service"),
            ("https://[fd00::1]/x", P256DH, AUTH, "public push service"),
            ("https://metadata.google.internal/x", P256DH, AUTH, "public push service"),
            ("https://[::ffff:127.0.0.1]/x", P256DH, AUTH, "public push service"),
            ("https://100.64.1.1/x", P256DH, AUTH, "public push service"),
            ("https://0x7f000001/x", P256DH, AUTH, "public push service"),
            ("https://intranet/x", P256DH, AUTH, "public push service"),
        ] {
            let err = validate_subscription(&sub(e, p, a), false, false).unwrap_err().to_string();
            assert!(err.contains(msg), "{e} {p} {a}: {err}");
        }
        assert!(validate_subscription(&sub("http://127.0.0.1:9/x", P256DH, AUTH), true, true).is_ok());
        assert!(validate_subscription(&sub("http://push.example/x", P256DH, AUTH), true, false).is_ok());
    }

    #[test]
    fn generated_keys_work_and_audience_keeps_the_port() {
        let key = generate_private_key();
        let vapid = Vapid::from_private_key(&key).unwrap();
        assert_eq!(URL_SAFE_NO_PAD.decode(&vapid.public_key).unwrap().len(), 65);
        assert_eq!(audience("https://fcm.googleapis.com/fcm/send/abc").unwrap(), "https://fcm.googleapis.com");
        assert_eq!(audience("http://127.0.0.1:8123/push/1").unwrap(), "http://127.0.0.1:8123");
    }

    #[test]
    fn device_info_must_be_a_small_object() {
        assert_eq!(validate_device_info(None).unwrap(), None);
        assert!(validate_device_info(Some(&serde_json::json!({"platform": "Linux"}))).unwrap().is_some());
        assert!(validate_device_info(Some(&serde_json::json!("Linux"))).is_err());
        assert!(validate_device_info(Some(&serde_json::json!({"x": "y".repeat(2000)}))).is_err());
    }
}
