//! Push notifications: `/api/notifications/*`, `/api/user/notification-preferences`, and
//! what we send to a push service (a local fake standing in for FCM / Mozilla autopush),
//! plus `/sw.js` and the web app manifest.
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jwt_simple::prelude::*;
use sea_orm::{EntityTrait, PaginatorTrait};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::accounts::register;
use crate::support::TestApp;

/// A browser's side of a subscription: its ECDH key pair and auth secret, so the test can
/// decrypt what the server sent exactly as the browser would.
struct Browser {
    keys: Box<dyn ece::LocalKeyPair>,
    auth: [u8; 16],
    endpoint: String,
}

impl Browser {
    fn new(endpoint: String) -> Self {
        let (keys, auth) = ece::generate_keypair_and_auth_secret().expect("ece keys");
        Self { keys, auth, endpoint }
    }
    fn subscription(&self) -> Value {
        json!({
            "endpoint": self.endpoint,
            "expirationTime": null,
            "keys": {
                "p256dh": URL_SAFE_NO_PAD.encode(self.keys.pub_as_raw().unwrap()),
                "auth": URL_SAFE_NO_PAD.encode(self.auth),
            }
        })
    }
    fn decrypt(&self, body: &[u8]) -> Value {
        let plain = ece::decrypt(&self.keys.raw_components().unwrap(), &self.auth, body).expect("decrypts");
        serde_json::from_slice(&plain).expect("JSON payload")
    }
}

/// The push service fakes listen on 127.0.0.1 over plain http: allowed only here.
async fn push_app() -> TestApp {
    TestApp::with_env([("REELFIND_PUSH_ALLOW_HTTP", "true"), ("REELFIND_OUTBOUND_ALLOW_PRIVATE", "true")]).await
}

async fn subscribe(app: &TestApp, browser: &Browser) -> crate::support::TestResponse {
    app.post_json(
        "/api/notifications/subscribe",
        &json!({"subscription": browser.subscription(), "deviceInfo": {"userAgent": "Test", "platform": "Linux"}}),
    )
    .await
}

#[tokio::test]
async fn signed_out_gets_401_everywhere() {
    let app = push_app().await;
    for path in
        ["/api/notifications/status", "/api/notifications/vapid-public-key", "/api/user/notification-preferences"]
    {
        assert_eq!(app.get(path).await.status, 401, "{path}");
    }
    for path in [
        "/api/notifications/subscribe",
        "/api/notifications/unsubscribe",
        "/api/notifications/test",
        "/api/user/notification-preferences",
    ] {
        let res = app.post_json(path, &json!({})).await;
        assert_eq!(res.status, 401, "{path}");
        assert_eq!(res.json()["error"], "Not authenticated");
    }
}

#[tokio::test]
async fn cross_origin_subscribe_is_refused() {
    let app = push_app().await;
    register(&app, "olga", "secret1").await;
    let browser = Browser::new("https://push.example/sub/1".into());
    let req = axum::http::Request::post("/api/notifications/subscribe")
        .header("content-type", "application/json")
        .header("origin", "https://evil.example")
        .body(axum::body::Body::from(json!({"subscription": browser.subscription()}).to_string()))
        .unwrap();
    assert_eq!(app.send(req).await.status, 403);
    assert_eq!(app.get("/api/notifications/status").await.json()["subscriptionCount"], 0);
}

#[tokio::test]
async fn vapid_key_is_generated_once_and_kept() {
    let app = push_app().await;
    register(&app, "vera", "secret1").await;
    let first = app.get("/api/notifications/vapid-public-key").await;
    assert_eq!(first.status, 200);
    let key = first.json()["publicKey"].as_str().unwrap().to_owned();
    let raw = URL_SAFE_NO_PAD.decode(&key).unwrap();
    assert_eq!((raw.len(), raw[0]), (65, 4), "uncompressed P-256 point");
    assert_eq!(app.get("/api/notifications/vapid-public-key").await.json()["publicKey"], key);

    // A second node on the same database (a new AppState) reads the same key.
    let config = reelfind::config::Config::from_env(&reelfind::config::Env::from_pairs([(
        "REELFIND_DATA_DIR",
        app.data_dir().display().to_string(),
    )]))
    .unwrap();
    let other = reelfind::state::AppState::new(app.db.clone(), config).unwrap();
    assert_eq!(other.vapid().await.unwrap().public_key, key);

    // The private key never leaves through the settings API.
    let settings = app.get("/api/settings").await.json();
    assert!(settings.get("vapid_private_key").is_none(), "{settings}");
}

#[tokio::test]
async fn configured_vapid_key_wins() {
    let private = "IQ9Ur0ykXoHS9gzfYX0aBjy9lvdrjx_PFUXmie9YRcY";
    let app = TestApp::with_env([("VAPID_PRIVATE_KEY", private)]).await;
    register(&app, "carl", "secret1").await;
    let key = app.get("/api/notifications/vapid-public-key").await.json()["publicKey"].as_str().unwrap().to_owned();
    let expected = ES256KeyPair::from_bytes(&URL_SAFE_NO_PAD.decode(private).unwrap())
        .unwrap()
        .public_key()
        .public_key()
        .to_bytes_uncompressed();
    assert_eq!(URL_SAFE_NO_PAD.decode(key).unwrap(), expected);
}

#[tokio::test]
async fn subscribe_validates_and_counts() {
    let app = TestApp::new().await; // https endpoints only
    register(&app, "sam", "secret1").await;
    let good = Browser::new("https://fcm.googleapis.com/fcm/send/abc".into());
    let mut sub = good.subscription();

    let cases: Vec<(Value, &str)> = vec![
        (json!({}), "subscription is required"),
        (json!({"subscription": {"endpoint": "http://fcm.googleapis.com/x", "keys": sub["keys"]}}), "https URL"),
        (json!({"subscription": {"endpoint": "not a url", "keys": sub["keys"]}}), "https URL"),
        (
            json!({"subscription": {"endpoint": good.endpoint, "keys": {"p256dh": "AAAA", "auth": sub["keys"]["auth"]}}}),
            "p256dh",
        ),
        (
            json!({"subscription": {"endpoint": good.endpoint, "keys": {"p256dh": sub["keys"]["p256dh"], "auth": "short"}}}),
            "auth",
        ),
        (json!({"subscription": sub, "deviceInfo": "Linux"}), "deviceInfo must be an object"),
    ];
    for (body, needle) in cases {
        let res = app.post_json("/api/notifications/subscribe", &body).await;
        assert_eq!(res.status, 422, "{body}: {}", res.text());
        assert!(res.json()["error"].as_str().unwrap().contains(needle), "{body}: {}", res.text());
    }
    assert_eq!(
        app.get("/api/notifications/status").await.json(),
        json!({"isSubscribed": false, "subscriptionCount": 0})
    );

    let res = subscribe(&app, &good).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["subscriptionCount"], 1);
    // The same browser subscribing again updates its row instead of adding one.
    sub["keys"]["auth"] = json!(URL_SAFE_NO_PAD.encode([7u8; 16]));
    let res = app.post_json("/api/notifications/subscribe", &json!({"subscription": sub})).await;
    assert_eq!(res.json()["subscriptionCount"], 1);
    let status = app.get(&format!("/api/notifications/status?endpoint={}", good.endpoint)).await.json();
    assert_eq!(status, json!({"isSubscribed": true, "subscriptionCount": 1}));
    let other = app.get("/api/notifications/status?endpoint=https://fcm.googleapis.com/fcm/send/other").await.json();
    assert_eq!(other["isSubscribed"], false);

    // Unsubscribe removes only that endpoint; a second time removes nothing.
    let res = app.post_json("/api/notifications/unsubscribe", &json!({"endpoint": good.endpoint})).await;
    assert_eq!(res.json()["removed"], 1);
    let res = app.post_json("/api/notifications/unsubscribe", &json!({"endpoint": good.endpoint})).await;
    assert_eq!(res.json()["removed"], 0);
    assert_eq!(app.post_json("/api/notifications/unsubscribe", &json!({})).await.status, 422);
    assert_eq!(app.get("/api/notifications/status").await.json()["subscriptionCount"], 0);
}

#[tokio::test]
async fn people_cannot_touch_each_others_subscriptions() {
    let app = push_app().await;
    register(&app, "anna", "secret1").await;
    let browser = Browser::new("https://push.example/anna".into());
    subscribe(&app, &browser).await;
    app.post_json("/api/logout", &json!({})).await;
    app.clear_cookies();
    register(&app, "bert", "secret1").await;
    assert_eq!(app.get("/api/notifications/status").await.json()["subscriptionCount"], 0);
    let res = app.post_json("/api/notifications/unsubscribe", &json!({"endpoint": browser.endpoint})).await;
    assert_eq!(res.json()["removed"], 0, "bert cannot remove anna's subscription");
    assert_eq!(reelfind::entities::push_subscription::Entity::find().count(&app.db).await.unwrap(), 1);
    // Test with no subscriptions: the SPEC's message.
    let res = app.post_json("/api/notifications/test", &json!({"type": "test"})).await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["error"], "No active subscription found");
    assert_eq!(res.json()["code"], "not_found");
}

#[tokio::test]
async fn test_notification_is_encrypted_and_signed_for_the_push_service() {
    let push = MockServer::start().await;
    Mock::given(method("POST")).and(path("/push/device-1")).respond_with(ResponseTemplate::new(201)).mount(&push).await;
    let app = push_app().await;
    register(&app, "nina", "secret1").await;
    let browser = Browser::new(format!("{}/push/device-1", push.uri()));
    assert_eq!(subscribe(&app, &browser).await.status, 200);
    let public_key =
        app.get("/api/notifications/vapid-public-key").await.json()["publicKey"].as_str().unwrap().to_owned();

    let res = app.post_json("/api/notifications/test", &json!({"type": "test"})).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"success": true}));

    let requests = push.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1);
    let req = &requests[0];
    assert_eq!(req.method.as_str(), "POST");
    let h = |name: &str| req.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    assert_eq!(h("content-encoding"), "aes128gcm");
    assert_eq!(h("ttl"), "86400");
    assert_eq!(h("content-type"), "application/octet-stream");

    // Authorization: vapid t=<JWT>, k=<our public key>; the JWT is signed by that key, its
    // audience is the push service's origin (with the port), and it names a subject.
    let auth = h("authorization");
    let rest = auth.strip_prefix("vapid t=").unwrap_or_else(|| panic!("{auth}"));
    let (token, k) = rest.split_once(", k=").unwrap();
    assert_eq!(k, public_key);
    let verifier = ES256PublicKey::from_bytes(&URL_SAFE_NO_PAD.decode(k).unwrap()).unwrap();
    let claims = verifier
        .verify_token::<serde_json::Map<String, Value>>(
            token,
            Some(VerificationOptions {
                allowed_audiences: Some(HashSet::from_strings(&[push.uri()])),
                ..Default::default()
            }),
        )
        .expect("JWT signed by the advertised key, for the push service's origin");
    assert_eq!(claims.subject.as_deref(), Some("mailto:support@localhost"));
    assert!(claims.expires_at.is_some());

    // The body is not the plain JSON, and the browser's keys decrypt it to the notification.
    assert!(!String::from_utf8_lossy(&req.body).contains("Test Notification"));
    let note = browser.decrypt(&req.body);
    assert_eq!(note["title"], "Test Notification");
    assert_eq!(note["url"], "/pwa-settings");
    assert!(note["body"].as_str().unwrap().contains("Reelfind"), "{note}");

    let row = reelfind::entities::push_subscription::Entity::find().one(&app.db).await.unwrap().unwrap();
    assert!(row.last_success_at.is_some());
    assert_eq!(row.device_info.as_deref(), Some(r#"{"platform":"Linux","userAgent":"Test"}"#));

    // Welcome, and unknown types.
    let res = app.post_json("/api/notifications/test", &json!({"type": "welcome"})).await;
    assert_eq!(res.status, 200);
    let requests = push.received_requests().await.unwrap();
    assert_eq!(browser.decrypt(&requests[1].body)["title"], "Welcome to Reelfind!");
    let res = app.post_json("/api/notifications/test", &json!({"type": "spam"})).await;
    assert_eq!(res.status, 422);
    assert_eq!(res.json()["error"], "type must be one of: test, welcome");
}

#[tokio::test]
async fn vapid_subject_comes_from_env_or_contact_email() {
    let push = MockServer::start().await;
    Mock::given(method("POST")).respond_with(ResponseTemplate::new(201)).mount(&push).await;
    let app = TestApp::with_env([
        ("REELFIND_PUSH_ALLOW_HTTP", "true"),
        ("REELFIND_OUTBOUND_ALLOW_PRIVATE", "true"),
        ("VAPID_SUBJECT", "https://ops.example/contact"),
    ])
    .await;
    register(&app, "zed", "secret1").await;
    subscribe(&app, &Browser::new(format!("{}/p/1", push.uri()))).await;
    app.post_json("/api/notifications/test", &json!({})).await;
    let req = &push.received_requests().await.unwrap()[0];
    let auth = req.headers.get("authorization").unwrap().to_str().unwrap();
    let token = auth.strip_prefix("vapid t=").unwrap().split(',').next().unwrap();
    let claims: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(token.split('.').nth(1).unwrap()).unwrap()).unwrap();
    assert_eq!(claims["sub"], "https://ops.example/contact");
}

#[tokio::test]
async fn gone_subscriptions_are_removed_and_others_kept() {
    let push = MockServer::start().await;
    Mock::given(method("POST")).and(path("/gone")).respond_with(ResponseTemplate::new(410)).mount(&push).await;
    Mock::given(method("POST")).and(path("/missing")).respond_with(ResponseTemplate::new(404)).mount(&push).await;
    Mock::given(method("POST")).and(path("/flaky")).respond_with(ResponseTemplate::new(500)).mount(&push).await;
    Mock::given(method("POST")).and(path("/ok")).respond_with(ResponseTemplate::new(201)).mount(&push).await;
    let app = push_app().await;
    register(&app, "gina", "secret1").await;
    for p in ["gone", "missing", "flaky", "ok"] {
        assert_eq!(subscribe(&app, &Browser::new(format!("{}/{p}", push.uri()))).await.status, 200);
    }
    let res = app.post_json("/api/notifications/test", &json!({"type": "test"})).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"success": true}), "how each push service answered is not told");
    assert_eq!(push.received_requests().await.unwrap().len(), 4);
    let left: Vec<String> = reelfind::entities::push_subscription::Entity::find()
        .all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.endpoint.rsplit('/').next().unwrap().to_owned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(left, ["flaky", "ok"]);
}

#[tokio::test]
async fn only_gone_subscriptions_answer_no_active_subscription_and_failures_answer_502() {
    let push = MockServer::start().await;
    Mock::given(method("POST")).and(path("/gone")).respond_with(ResponseTemplate::new(410)).mount(&push).await;
    Mock::given(method("POST")).and(path("/down")).respond_with(ResponseTemplate::new(503)).mount(&push).await;
    let app = push_app().await;
    register(&app, "hugo", "secret1").await;
    subscribe(&app, &Browser::new(format!("{}/gone", push.uri()))).await;
    let res = app.post_json("/api/notifications/test", &json!({"type": "test"})).await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["error"], "No active subscription found");
    assert_eq!(app.get("/api/notifications/status").await.json()["subscriptionCount"], 0);

    subscribe(&app, &Browser::new(format!("{}/down", push.uri()))).await;
    let res = app.post_json("/api/notifications/test", &json!({"type": "test"})).await;
    assert_eq!(res.status, 502);
    assert_eq!(
        res.json(),
        json!({"error": "The test notification could not be delivered. Please try again later.",
               "message": "The test notification could not be delivered. Please try again later.",
               "code": "delivery_failed"})
    );
    assert_eq!(app.get("/api/notifications/status").await.json()["subscriptionCount"], 1, "kept for a retry");
}

#[tokio::test]
async fn a_push_endpoint_that_redirects_to_127_0_0_1_is_never_followed() {
    let inside = MockServer::start().await;
    Mock::given(method("POST")).respond_with(ResponseTemplate::new(201)).mount(&inside).await;
    let push = MockServer::start().await;
    for status in [301, 302, 307, 308] {
        Mock::given(method("POST"))
            .and(path(format!("/r{status}")))
            .respond_with(
                ResponseTemplate::new(status).insert_header("location", format!("{}/admin/secret", inside.uri())),
            )
            .mount(&push)
            .await;
    }
    let app = push_app().await;
    register(&app, "rita", "secret1").await;
    for status in [301, 302, 307, 308] {
        subscribe(&app, &Browser::new(format!("{}/r{status}", push.uri()))).await;
    }
    let res = app.post_json("/api/notifications/test", &json!({"type": "test"})).await;
    assert_eq!(res.status, 502, "{}", res.text());
    assert_eq!(push.received_requests().await.unwrap().len(), 4);
    assert!(inside.received_requests().await.unwrap().is_empty(), "no redirect was followed");
}

#[tokio::test]
async fn without_the_local_testing_flag_loopback_endpoints_are_never_reached() {
    let inside = MockServer::start().await;
    Mock::given(method("POST")).respond_with(ResponseTemplate::new(201)).mount(&inside).await;
    let app = TestApp::with_env([("REELFIND_PUSH_ALLOW_HTTP", "true")]).await;
    register(&app, "sven", "secret1").await;
    // Written as an address, it is refused when the browser sends it.
    let res = subscribe(&app, &Browser::new(format!("{}/x", inside.uri()))).await;
    assert_eq!(res.status, 422);
    assert_eq!(res.json()["error"], "subscription.endpoint must be a public push service");
    // A stored endpoint whose name resolves to this machine is refused when sending.
    let port = inside.address().port();
    let me = reelfind::entities::user::Entity::find().one(&app.db).await.unwrap().unwrap();
    let b = Browser::new(format!("http://localhost:{port}/x"));
    let sub = b.subscription();
    use sea_orm::{ActiveModelTrait, Set};
    reelfind::entities::push_subscription::ActiveModel {
        user_id: Set(me.id),
        endpoint: Set(b.endpoint.clone()),
        p256dh: Set(sub["keys"]["p256dh"].as_str().unwrap().to_owned()),
        auth: Set(sub["keys"]["auth"].as_str().unwrap().to_owned()),
        device_info: Set(None),
        created_at: Set(chrono::Utc::now()),
        last_success_at: Set(None),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .unwrap();
    let res = app.post_json("/api/notifications/test", &json!({"type": "test"})).await;
    assert_eq!(res.status, 502, "{}", res.text());
    assert!(inside.received_requests().await.unwrap().is_empty(), "localhost was never contacted");
}

#[tokio::test]
async fn test_notifications_are_throttled() {
    let push = MockServer::start().await;
    Mock::given(method("POST")).respond_with(ResponseTemplate::new(201)).mount(&push).await;
    let app = push_app().await;
    register(&app, "tess", "secret1").await;
    subscribe(&app, &Browser::new(format!("{}/t", push.uri()))).await;
    let mut statuses = Vec::new();
    for _ in 0..6 {
        statuses.push(app.post_json("/api/notifications/test", &json!({"type": "test"})).await.status.as_u16());
    }
    assert_eq!(statuses, vec![200, 200, 200, 200, 200, 429]);
    assert_eq!(push.received_requests().await.unwrap().len(), 5);
}

#[tokio::test]
async fn deleting_a_user_deletes_their_subscriptions_and_preferences() {
    let app = push_app().await;
    register(&app, "dora", "secret1").await;
    subscribe(&app, &Browser::new("https://push.example/dora".into())).await;
    app.post_json("/api/user/notification-preferences", &json!({"pushNotifications": true})).await;
    reelfind::entities::user::Entity::delete_many().exec(&app.db).await.unwrap();
    assert_eq!(reelfind::entities::push_subscription::Entity::find().count(&app.db).await.unwrap(), 0);
    assert_eq!(reelfind::entities::notification_preference::Entity::find().count(&app.db).await.unwrap(), 0);
}

#[tokio::test]
async fn notification_preferences_round_trip() {
    let app = push_app().await;
    register(&app, "pia", "secret1").await;
    let defaults = json!({"pushNotifications": false, "emailNotifications": false, "onboardingComplete": false});
    assert_eq!(app.get("/api/user/notification-preferences").await.json(), defaults);
    let body = json!({"pushNotifications": true, "emailNotifications": false, "onboardingComplete": true});
    let res = app.post_json("/api/user/notification-preferences", &body).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), body);
    // Missing fields keep their value; wrong types are refused.
    let res = app.post_json("/api/user/notification-preferences", &json!({"emailNotifications": true})).await;
    assert_eq!(res.json(), json!({"pushNotifications": true, "emailNotifications": true, "onboardingComplete": true}));
    let res = app.post_json("/api/user/notification-preferences", &json!({"pushNotifications": "yes"})).await;
    assert_eq!(res.status, 422);
    assert_eq!(res.json()["error"], "pushNotifications must be true or false");
}

#[tokio::test]
async fn service_worker_and_manifest_are_served_from_the_root() {
    let app = TestApp::new().await;
    let manifest = app.get("/manifest.webmanifest").await;
    assert_eq!(manifest.status, 200);
    assert_eq!(manifest.header("content-type").as_deref(), Some("application/manifest+json"));
    let m = manifest.json();
    assert_eq!(m["name"], "Reelfind");
    assert_eq!(m["start_url"], "/?source=pwa");
    assert_eq!(m["display"], "standalone");
    for icon in m["icons"].as_array().unwrap() {
        let src = icon["src"].as_str().unwrap();
        let res = app.get(src).await;
        assert_eq!(res.status, 200, "{src}");
        if let Some((w, _)) = icon["sizes"].as_str().unwrap().split_once('x') {
            // PNG width lives at bytes 16..20 of the IHDR chunk.
            let width = u32::from_be_bytes(res.body[16..20].try_into().unwrap());
            assert_eq!(width.to_string(), w, "{src}");
        }
    }

    let page = app.get("/pwa-settings").await;
    assert_eq!(page.select_attr("link[rel=manifest]", "href").as_deref(), Some("/manifest.webmanifest"));
    assert!(page.select_attr("meta[name=theme-color]", "content").is_some());

    let offline = app.get("/offline").await;
    assert_eq!(offline.status, 200);
    assert_eq!(offline.select_text("h1").as_deref(), Some("You're offline"));

    // /sw.js needs the islands build; when it exists it is served from the root, uncached,
    // with its precache list.
    let sw = app.get("/sw.js").await;
    if app.state.assets.url("sw.js").is_some() {
        assert_eq!(sw.status, 200);
        assert_eq!(sw.header("cache-control").as_deref(), Some("no-cache"));
        assert!(sw.header("content-type").unwrap().starts_with("text/javascript"));
        let first = sw.text().lines().next().unwrap().to_owned();
        assert!(first.starts_with("self.__REELFIND_SW__ = "), "{first}");
        let prelude: Value =
            serde_json::from_str(first.trim_start_matches("self.__REELFIND_SW__ = ").trim_end_matches(';')).unwrap();
        let precache: Vec<&str> = prelude["precache"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert!(precache.contains(&"/offline"));
        assert!(precache.contains(&app.state.assets.url("runtime.js").unwrap()));
        assert!(!precache.iter().any(|p| p.starts_with("/api/")));
    } else {
        assert_eq!(sw.status, 404);
    }
}
