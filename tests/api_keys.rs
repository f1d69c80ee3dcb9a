//! API keys (issue 14): made, listed and revoked by a signed-in person; a keyed request
//! needs no cookie and no Origin, reaches only its owner's identifications and quota, is
//! refused at once once revoked, and counts against a quota it can see.
use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, Request, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::accounts::{login, register};
use crate::admin::make_admin;
use crate::identify_support::{Upload, answer, jpeg, openai_fake, tmdb_fake};
use crate::support::{TestApp, TestResponse};

/// Sends `req` as a program would: the key in `Authorization`, no cookie, no Origin.
pub async fn keyed_on(router: &axum::Router, key: &str, mut req: Request<Body>) -> TestResponse {
    req.headers_mut().insert(header::AUTHORIZATION, format!("Bearer {key}").parse().unwrap());
    let res = router.clone().oneshot(req).await.expect("router is infallible");
    let status = res.status();
    let headers = res.headers().clone();
    let body = res.into_body().collect().await.expect("body").to_bytes();
    TestResponse { status, headers, body }
}

pub async fn keyed(app: &TestApp, key: &str, req: Request<Body>) -> TestResponse {
    keyed_on(&app.router, key, req).await
}

pub fn get(path: &str) -> Request<Body> {
    Request::get(path).body(Body::empty()).unwrap()
}

fn put_json_req(path: &str, body: &Value) -> Request<Body> {
    with_method(Method::PUT, path, body.clone())
}

fn with_method(method: Method, path: &str, body: Value) -> Request<Body> {
    Request::builder()
        .method(method)
        .uri(path)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

/// Makes a key in the signed-in person's session; returns (id, key).
pub async fn new_key(app: &TestApp, name: &str) -> (i64, String) {
    let res = app.post_json("/api/keys", &json!({"name": name})).await;
    assert_eq!(res.status, 201, "{}", res.text());
    let b = res.json();
    (b["id"].as_i64().unwrap(), b["key"].as_str().unwrap().to_owned())
}

async fn engines_app() -> (TestApp, wiremock::MockServer, wiremock::MockServer) {
    let openai = openai_fake(&answer("The Matrix", 1999, "movie", 0.82)).await;
    let tmdb = tmdb_fake().await;
    let app = TestApp::with_env([
        ("OPENAI_API_KEY", "sk-test".to_owned()),
        ("OPENAI_BASE_URL", format!("{}/v1", openai.uri())),
        ("TMDB_READ_TOKEN", "tmdb-token".to_owned()),
        ("TMDB_BASE_URL", format!("{}/3", tmdb.uri())),
    ])
    .await;
    (app, openai, tmdb)
}

#[tokio::test]
async fn a_key_is_shown_once_stored_hashed_listed_by_prefix_and_revoked() {
    let app = TestApp::new().await;
    // Signed out: no keys.
    assert_eq!(app.get("/api/keys").await.status, 401);
    assert_eq!(app.post_json("/api/keys", &json!({"name": "x"})).await.status, 401);

    assert_eq!(register(&app, "alice", "secret1").await.status, 201);
    for bad in [json!({"name": ""}), json!({"name": "   "}), json!({"name": "x".repeat(81)}), json!({})] {
        let res = app.post_json("/api/keys", &bad).await;
        assert_eq!(res.status, 400, "{bad}: {}", res.text());
        assert!(res.json()["error"].as_str().unwrap().contains("name"), "{}", res.text());
    }
    let res = app.post_json("/api/keys", &json!({"name": "  Home script "})).await;
    assert_eq!(res.status, 201, "{}", res.text());
    let made = res.json();
    let key = made["key"].as_str().unwrap();
    assert!(key.starts_with("rf_") && key.len() == 43, "{key}");
    assert_eq!(made["name"], "Home script");
    assert_eq!(made["prefix"], &key[..11]);

    // The table holds the hash, never the key.
    use reelfind::entities::api_key;
    use sea_orm::EntityTrait;
    let rows = api_key::Entity::find().all(&app.db).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_ne!(rows[0].key_hash, key);
    assert_eq!(rows[0].key_hash.len(), 64);
    assert!(!rows[0].key_hash.contains(&key[3..]));

    // Listed without the secret.
    let list = app.get("/api/keys").await;
    assert_eq!(list.status, 200);
    let keys = list.json()["keys"].clone();
    assert_eq!(keys.as_array().unwrap().len(), 1);
    assert_eq!(keys[0]["prefix"], &key[..11]);
    assert!(keys[0].get("key").is_none(), "{keys}");
    assert!(!list.text().contains(key));
    assert!(keys[0]["lastUsedAt"].is_null());

    // Used once: the list says when.
    assert_eq!(keyed(&app, key, get("/api/history")).await.status, 200);
    assert!(app.get("/api/keys").await.json()["keys"][0]["lastUsedAt"].is_string());

    // Another person cannot see or revoke it.
    let id = made["id"].as_i64().unwrap();
    app.clear_cookies();
    assert_eq!(register(&app, "bob", "secret1").await.status, 201);
    assert_eq!(app.get("/api/keys").await.json()["keys"], json!([]));
    assert_eq!(app.delete(&format!("/api/keys/{id}")).await.status, 404);
    assert_eq!(keyed(&app, key, get("/api/history")).await.status, 200, "still alive");

    // Its owner revokes it: gone from the list, and refused.
    app.clear_cookies();
    assert_eq!(login(&app, "alice", "secret1").await.status, 200);
    let res = app.delete(&format!("/api/keys/{id}")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(app.get("/api/keys").await.json()["keys"], json!([]));
    assert_eq!(app.delete(&format!("/api/keys/{id}")).await.status, 404, "revoked once");
}

#[tokio::test]
async fn at_the_key_limit_the_answer_names_the_limit_not_the_hourly_budget() {
    let app = TestApp::new().await;
    assert_eq!(register(&app, "alice", "secret1").await.status, 201);
    for i in 0..reelfind::services::api_keys::MAX_KEYS {
        new_key(&app, &format!("key {i}")).await;
    }
    // The 21st within the hour: both limits are met, and the one that matters is said.
    let res = app.post_json("/api/keys", &json!({"name": "one more"})).await;
    assert_eq!(res.status, 409, "{}", res.text());
    assert!(res.json()["error"].as_str().unwrap().contains("20"), "{}", res.text());
}

#[tokio::test]
async fn key_management_needs_the_session_and_the_origin_check() {
    let app = TestApp::new().await;
    assert_eq!(register(&app, "alice", "secret1").await.status, 201);
    // Another site cannot make a key with the person's cookie.
    let mut req = with_method(Method::POST, "/api/keys", json!({"name": "evil"}));
    req.headers_mut().insert(header::ORIGIN, "https://evil.example".parse().unwrap());
    assert_eq!(app.send(req).await.status, 403);
    assert_eq!(app.get("/api/keys").await.json()["keys"], json!([]));
}

#[tokio::test]
async fn a_key_works_without_cookie_or_origin_and_reaches_only_its_owners_data() {
    let (app, _openai, _tmdb) = engines_app().await;
    // Bob has a (shared) identification.
    assert_eq!(register(&app, "bob", "secret1").await.status, 201);
    let res = app.send(Upload::image(jpeg(640, 360), "openai").request()).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let bobs = res.json()["identificationId"].as_str().unwrap().to_owned();
    assert_eq!(res.json()["shared"], true);
    let bob_cookie = app.cookie("reelfind_session").unwrap();

    // Alice is an administrator with a key.
    app.clear_cookies();
    make_admin(&app, "alice").await;
    let (_, key) = new_key(&app, "CI").await;
    app.clear_cookies();

    // Identify with the key alone: no cookie, no Origin.
    let res = keyed(&app, &key, Upload::image(jpeg(640, 360), "openai").request()).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["title"], "The Matrix");
    assert!(res.header("set-cookie").is_none(), "a keyed answer sets no cookie");
    assert!(res.header("ratelimit-remaining").is_some());
    let hers = res.json()["identificationId"].as_str().unwrap().to_owned();

    // Her history and her result, not Bob's (not even his shared link).
    let res = keyed(&app, &key, get("/api/history")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let items = res.json()["items"].clone();
    assert_eq!(items.as_array().unwrap().len(), 1, "{items}");
    assert_eq!(items[0]["id"], hers.as_str(), "{items}");
    let res = keyed(&app, &key, get(&format!("/api/identification/{hers}"))).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["isOwner"], true);
    assert_eq!(keyed(&app, &key, get(&format!("/api/identification/{bobs}"))).await.status, 404);

    // A cookie that comes along with the key is ignored: the key is the caller.
    let mut req = get("/api/history");
    req.headers_mut().insert(header::COOKIE, format!("reelfind_session={bob_cookie}").parse().unwrap());
    let res = keyed(&app, &key, req).await;
    assert_eq!(res.json()["items"][0]["id"], hers.as_str());

    // Nothing else, admin or not: 403 (and an unsafe one from another site too).
    for (method, path, body) in [
        (Method::GET, "/api/admin/settings", json!(null)),
        (Method::PUT, "/api/admin/settings", json!({"site_name": "Pwned"})),
        (Method::GET, "/api/admin/users", json!(null)),
        (Method::GET, "/api/admin/api-quotas", json!(null)),
        (Method::GET, "/api/keys", json!(null)),
        (Method::POST, "/api/keys", json!({"name": "more"})),
        (Method::DELETE, "/api/keys/1", json!(null)),
        (Method::DELETE, "/api/history", json!(null)),
        (Method::PUT, &format!("/api/identification/{hers}/sharing"), json!({"shared": false})),
        (Method::POST, "/api/account/password", json!({"currentPassword": "admin-pass", "newPassword": "x1234567"})),
        (Method::POST, "/api/account/delete", json!({"password": "admin-pass"})),
        (Method::GET, "/api/account/export", json!(null)),
        (Method::GET, "/api/user", json!(null)),
        (Method::PUT, "/api/profiles/me", json!({"bio": "x"})),
        (Method::POST, "/api/logout", json!(null)),
        (Method::GET, "/admin", json!(null)),
    ] {
        let mut req = with_method(method.clone(), path, body);
        req.headers_mut().insert(header::ORIGIN, "https://evil.example".parse().unwrap());
        let res = keyed(&app, &key, req).await;
        assert_eq!(res.status, 403, "{method} {path}: {}", res.text());
    }
    // Her identification is still there and still shared; the site name unchanged.
    let res = keyed(&app, &key, get(&format!("/api/identification/{hers}"))).await;
    assert_eq!(res.json()["shared"], true);
    assert_ne!(app.state.settings().await.unwrap()["site_name"], "Pwned");
}

#[tokio::test]
async fn bad_and_revoked_keys_are_refused_at_once_on_every_node() {
    let app = TestApp::new().await;
    assert_eq!(register(&app, "alice", "secret1").await.status, 201);
    let (id, key) = new_key(&app, "laptop").await;
    // A second node on the same database (its own settings cache, its own everything).
    let node_b = reelfind::app::build_router(
        reelfind::state::AppState::new(app.db.clone(), (*app.state.config).clone()).unwrap(),
    );
    assert_eq!(keyed(&app, &key, get("/api/history")).await.status, 200);
    assert_eq!(keyed_on(&node_b, &key, get("/api/history")).await.status, 200);

    for bad in ["rf_nope", "", "rf_0123456789012345678901234567890123456789", &key[..42]] {
        let res = keyed(&app, bad, get("/api/history")).await;
        assert_eq!(res.status, 401, "{bad}");
        assert_eq!(res.json()["error"], "Invalid or revoked API key");
        assert_eq!(res.header("www-authenticate").as_deref(), Some("Bearer"));
    }

    // Revoked on node A, refused by both nodes on the very next request.
    assert_eq!(app.delete(&format!("/api/keys/{id}")).await.status, 200);
    for router in [&app.router, &node_b] {
        let res = keyed_on(router, &key, get("/api/history")).await;
        assert_eq!(res.status, 401, "{}", res.text());
        assert_eq!(res.json()["error"], "Invalid or revoked API key");
        let res = keyed_on(router, &key, Upload::image(jpeg(64, 64), "openai").request()).await;
        assert_eq!(res.status, 401);
    }
}

#[tokio::test]
async fn quota_headers_count_down_and_a_429_carries_retry_after() {
    let app = TestApp::new().await;
    make_admin(&app, "root").await;
    let res = app.send(put_json_req("/api/admin/settings", &json!({"api_quota_per_minute": "3"}))).await;
    assert_eq!(res.status, 200, "{}", res.text());
    for bad in
        [json!({"api_quota_per_minute": "0"}), json!({"api_quota_per_day": "x"}), json!({"api_quota_concurrent": "-1"})]
    {
        assert_eq!(app.send(put_json_req("/api/admin/settings", &bad)).await.status, 400, "{bad}");
    }
    app.clear_cookies();
    assert_eq!(register(&app, "alice", "secret1").await.status, 201);
    let (key_id, key) = new_key(&app, "a").await;
    let (_, key2) = new_key(&app, "b").await;

    let mut remaining = Vec::new();
    for _ in 0..3 {
        let res = keyed(&app, &key, get("/api/history")).await;
        assert_eq!(res.status, 200);
        assert_eq!(res.header("ratelimit-limit").as_deref(), Some("3"));
        let reset: u64 = res.header("ratelimit-reset").unwrap().parse().unwrap();
        assert!((1..=60).contains(&reset), "{reset}");
        remaining.push(res.header("ratelimit-remaining").unwrap());
    }
    assert_eq!(remaining, ["2", "1", "0"]);
    // The person's second key shares the count: making keys buys no requests.
    let res = keyed(&app, &key2, get("/api/history")).await;
    assert_eq!(res.status, 429, "{}", res.text());
    let retry: u64 = res.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    assert_eq!(res.header("ratelimit-remaining").as_deref(), Some("0"));
    assert_eq!(res.json()["retryAfter"], retry);
    assert!(res.json()["error"].as_str().unwrap().contains("minute"), "{}", res.text());
    assert_eq!(res.json()["code"], "quota_per_minute", "a client can tell which limit it met");

    // Reading the quota is free and says the same.
    let res = keyed(&app, &key, get("/api/me/quota")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let q = res.json();
    assert_eq!(q["perMinute"]["limit"], 3);
    assert_eq!(q["perMinute"]["used"], 3);
    assert_eq!(q["perMinute"]["remaining"], 0);
    assert!(q["perMinute"]["resetAt"].is_string());
    assert_eq!(q["perDay"]["limit"], 1000);
    assert_eq!(q["perDay"]["used"], 3, "the refused request took nothing");
    assert_eq!(q["concurrent"]["limit"], 2);
    assert_eq!(q["concurrent"]["inUse"], 0, "every slot was given back");
    assert_eq!(res.header("ratelimit-remaining").as_deref(), Some("0"));
    // The same from the person's session (the Profile shows it).
    assert_eq!(app.get("/api/me/quota").await.json()["perMinute"]["used"], 3);

    // The admin gives this key its own allowance: counted on its own from now on.
    app.clear_cookies();
    assert_eq!(login(&app, "root", "admin-pass").await.status, 200);
    let res = app
        .send(put_json_req(&format!("/api/admin/api-keys/{key_id}/quota"), &json!({"perMinute": 5, "perDay": null})))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        app.send(put_json_req(&format!("/api/admin/api-keys/{key_id}/quota"), &json!({"perMinute": 0}))).await.status,
        400
    );
    let overview = app.get("/api/admin/api-quotas").await.json();
    assert_eq!(overview["defaults"]["perMinute"], 3);
    let listed = overview["keys"].as_array().unwrap().iter().find(|k| k["id"] == key_id).unwrap().clone();
    assert_eq!(listed["perMinute"], 5);
    assert_eq!(listed["username"], "alice");
    let res = keyed(&app, &key, get("/api/history")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.header("ratelimit-limit").as_deref(), Some("5"));
    assert_eq!(res.header("ratelimit-remaining").as_deref(), Some("4"));
    assert_eq!(
        keyed(&app, &key2, get("/api/history")).await.status,
        429,
        "the other key still shares the person's count"
    );

    // A per-person override lifts the person's keys; the daily quota shows in the headers
    // once it is the tighter one.
    let alice_id = reelfind::services::users::find_by_username(&app.db, "alice").await.unwrap().unwrap().id;
    let res = app
        .send(put_json_req(&format!("/api/admin/users/{alice_id}/api-quota"), &json!({"perMinute": 100, "perDay": 6})))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = keyed(&app, &key2, get("/api/history")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.header("ratelimit-limit").as_deref(), Some("6"));
    assert_eq!(res.header("ratelimit-remaining").as_deref(), Some("1"), "the day count is shared: 3 + 1 + this one");
    assert_eq!(keyed(&app, &key2, get("/api/history")).await.status, 200);
    let res = keyed(&app, &key2, get("/api/history")).await;
    assert_eq!(res.status, 429, "{}", res.text());
    assert_eq!(res.json()["code"], "quota_per_day");
}

#[tokio::test]
async fn a_concurrent_slot_is_given_back_when_the_client_goes_away() {
    let app = TestApp::new().await;
    make_admin(&app, "root").await;
    let res = app.send(put_json_req("/api/admin/settings", &json!({"api_quota_concurrent": "1"}))).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let (_, key) = new_key(&app, "slow").await;

    // An upload that never finishes holds the one slot...
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<bytes::Bytes, std::io::Error>>(1);
    let boundary = "b0undary";
    tx.send(Ok(bytes::Bytes::from(format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n"
    ))))
    .await
    .unwrap();
    let req = Request::post("/api/identify")
        .header(header::CONTENT_TYPE, format!("multipart/form-data; boundary={boundary}"))
        .body(Body::from_stream(tokio_stream_from(rx)))
        .unwrap();
    let router = app.router.clone();
    let key2 = key.clone();
    let pending = tokio::spawn(async move { keyed_on(&router, &key2, req).await });
    let in_use =
        || async { keyed(&app, &key, get("/api/me/quota")).await.json()["concurrent"]["inUse"].as_u64().unwrap() };
    let mut waited = 0;
    while in_use().await == 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        waited += 1;
        assert!(waited < 250, "the upload never took its slot");
    }
    // ... so a second request at the same time is refused with Retry-After ...
    let res = keyed(&app, &key, get("/api/history")).await;
    assert_eq!(res.status, 429, "{}", res.text());
    assert_eq!(res.header("retry-after").as_deref(), Some("1"));
    assert!(res.json()["error"].as_str().unwrap().contains("at once"));
    assert_eq!(res.json()["code"], "quota_concurrent");
    // ... until the client goes away (its request future is dropped): the slot comes back.
    pending.abort();
    drop(tx);
    let mut waited = 0;
    while in_use().await != 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        waited += 1;
        assert!(waited < 250, "the slot was never given back");
    }
    assert_eq!(keyed(&app, &key, get("/api/history")).await.status, 200);
}

fn tokio_stream_from(
    mut rx: tokio::sync::mpsc::Receiver<Result<bytes::Bytes, std::io::Error>>,
) -> impl futures::Stream<Item = Result<bytes::Bytes, std::io::Error>> {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

#[tokio::test]
async fn cors_answers_keyed_requests_from_allowed_origins_only() {
    let app = TestApp::new().await;
    make_admin(&app, "root").await;
    let res = app
        .send(put_json_req(
            "/api/admin/settings",
            &json!({"api_cors_origins": "https://app.example.com/, http://localhost:5173"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["api_cors_origins"], "https://app.example.com,http://localhost:5173");
    assert_eq!(
        app.send(put_json_req("/api/admin/settings", &json!({"api_cors_origins": "not an origin"}))).await.status,
        400
    );
    let (_, key) = new_key(&app, "web").await;
    app.clear_cookies();

    let preflight = |origin: &str, path: &str, headers: &str| {
        Request::builder()
            .method(Method::OPTIONS)
            .uri(path)
            .header(header::ORIGIN, origin)
            .header(header::ACCESS_CONTROL_REQUEST_METHOD, "POST")
            .header(header::ACCESS_CONTROL_REQUEST_HEADERS, headers)
            .body(Body::empty())
            .unwrap()
    };
    let res = app
        .router
        .clone()
        .oneshot(preflight("https://app.example.com", "/api/identify", "authorization"))
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    assert_eq!(res.headers()["access-control-allow-origin"], "https://app.example.com");
    assert!(res.headers().get("access-control-allow-credentials").is_none());
    let allowed = res.headers()["access-control-allow-headers"].to_str().unwrap().to_ascii_lowercase();
    assert!(allowed.contains("authorization"), "{allowed}");
    // Not for other origins, not for requests without a key, not for routes a key cannot use.
    for (origin, path, headers) in [
        ("https://evil.example", "/api/identify", "authorization"),
        ("https://app.example.com", "/api/identify", "content-type"),
        ("https://app.example.com", "/api/keys", "authorization"),
    ] {
        let res = app.router.clone().oneshot(preflight(origin, path, headers)).await.unwrap();
        assert!(res.headers().get("access-control-allow-origin").is_none(), "{origin} {path} {headers}");
    }

    // The keyed request itself: readable by that page, rate headers exposed.
    let mut req = get("/api/history");
    req.headers_mut().insert(header::ORIGIN, "https://app.example.com".parse().unwrap());
    let res = keyed(&app, &key, req).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.header("access-control-allow-origin").as_deref(), Some("https://app.example.com"));
    let exposed = res.header("access-control-expose-headers").unwrap().to_ascii_lowercase();
    assert!(exposed.contains("ratelimit-remaining") && exposed.contains("retry-after"), "{exposed}");
    // A cookie request from that origin gets no CORS headers.
    assert_eq!(register(&app, "alice", "secret1").await.status, 201);
    let mut req = get("/api/history");
    req.headers_mut().insert(header::ORIGIN, "https://app.example.com".parse().unwrap());
    let res = app.send(req).await;
    assert!(res.header("access-control-allow-origin").is_none());
}
