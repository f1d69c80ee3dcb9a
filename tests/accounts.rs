//! Accounts: registration, sign-in, sessions, the Origin check and login throttling.
use axum::body::Body;
use axum::http::{Request, header};
use reelfind::entities::session;
use sea_orm::{ActiveModelTrait, EntityTrait, PaginatorTrait, Set};
use serde_json::{Value, json};

use crate::support::{ORIGIN, TestApp};

/// The older spelling of [`TestApp::register`]; new tests call the method.
pub async fn register(app: &TestApp, username: &str, password: &str) -> crate::support::TestResponse {
    app.register(username, password).await
}

/// The older spelling of [`TestApp::sign_in`]; new tests call the method.
pub async fn login(app: &TestApp, username: &str, password: &str) -> crate::support::TestResponse {
    app.sign_in(username, password).await
}

/// Status of a request sent with exactly this session token (or none), outside the jar.
async fn with_cookie(app: &TestApp, method: &str, path: &str, token: Option<&str>) -> u16 {
    use tower::ServiceExt;
    let mut b = Request::builder().method(method).uri(path).header(header::ORIGIN, ORIGIN);
    if let Some(t) = token {
        b = b.header(header::COOKIE, format!("reelfind_session={t}"));
    }
    app.router.clone().oneshot(b.body(Body::empty()).unwrap()).await.unwrap().status().as_u16()
}

fn session_set_cookie(res: &crate::support::TestResponse) -> String {
    res.headers
        .get_all(header::SET_COOKIE)
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .find(|v| v.starts_with("reelfind_session="))
        .expect("a session Set-Cookie")
}

#[tokio::test]
async fn register_signs_in_with_a_safe_cookie() {
    let app = TestApp::new().await;
    let res = register(&app, "alice", "secret1").await;
    assert_eq!(res.status, 201, "{}", res.text());
    let user = res.json();
    assert_eq!(user["username"], "alice");
    assert_eq!(user["email"], "alice@example.com");
    assert_eq!(user["role"], "user");
    assert_eq!(user["isAdmin"], false);
    assert_eq!(user["emailVerified"], false);
    assert!(user["id"].is_i64());
    assert!(user["createdAt"].as_str().unwrap().starts_with("20"));
    assert!(user.get("passwordHash").is_none() && user.get("password_hash").is_none());

    let cookie = session_set_cookie(&res);
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Lax"), "{cookie}");
    assert!(cookie.contains("Path=/"), "{cookie}");
    assert!(!cookie.contains("Secure"), "plain http must not set Secure: {cookie}");
    let token = app.cookie("reelfind_session").unwrap();
    assert!(token.len() >= 43, "32 random bytes: {token}");
    // Only the hash is stored.
    let rows = session::Entity::find().all(&app.db).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_ne!(rows[0].id, token);
    assert_eq!(rows[0].id.len(), 64);

    let me = app.get("/api/user").await;
    assert_eq!(me.status, 200);
    assert_eq!(me.json()["username"], "alice");
}

#[tokio::test]
async fn cookie_is_secure_behind_https() {
    let app = TestApp::with_env([("REELFIND_PUBLIC_URL", "https://reelfind.example")]).await;
    let req = Request::post("/api/register")
        .header(header::ORIGIN, "https://reelfind.example")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(json!({"username": "sam", "email": "sam@example.com", "password": "secret1"}).to_string()))
        .unwrap();
    let res = app.send(req).await;
    assert_eq!(res.status, 201, "{}", res.text());
    assert!(session_set_cookie(&res).contains("; Secure"));
    // The http origin of the default tests is another origin here.
    let res = register(&app, "tom", "secret1").await;
    assert_eq!(res.status, 403);
}

#[tokio::test]
async fn registration_rules() {
    let app = TestApp::new().await;
    for body in [
        json!({ "username": "", "email": "a@example.com", "password": "secret1" }),
        json!({ "username": "bob", "email": " ", "password": "secret1" }),
        json!({ "username": "bob", "email": "a@example.com" }),
        json!({}),
    ] {
        let res = app.post_json("/api/register", &body).await;
        assert_eq!(res.status, 400, "{body}");
        assert_eq!(res.json()["error"], "Please fill in all required fields");
    }
    let res = app
        .post_json("/api/register", &json!({"username": "bob", "email": "b@example.com", "password": "12345"}))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["error"], "Password must be at least 6 characters long");
    let res = app.post_json("/api/register", &json!({"username": "bob", "email": "nope", "password": "123456"})).await;
    assert_eq!(res.status, 400);
    let res = app
        .send(
            Request::post("/api/register")
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from("{not json"))
                .unwrap(),
        )
        .await;
    assert_eq!(res.status, 400);
    assert!(res.json()["error"].as_str().unwrap().starts_with("Invalid request body"));
    assert_eq!(reelfind::entities::user::Entity::find().count(&app.db).await.unwrap(), 0, "nothing left behind");

    assert_eq!(register(&app, "bob", "secret1").await.status, 201);
    app.clear_cookies();
    let res = app
        .post_json("/api/register", &json!({"username": "BOB", "email": "other@example.com", "password": "secret1"}))
        .await;
    assert_eq!(res.status, 409);
    assert_eq!(res.json()["error"], "Username is already taken");
    let res = app
        .post_json("/api/register", &json!({"username": "bobby", "email": "Bob@Example.com", "password": "secret1"}))
        .await;
    assert_eq!(res.status, 409);
    assert_eq!(res.json()["error"], "An account with this email already exists");
    assert!(app.cookie("reelfind_session").is_none());
}

#[tokio::test]
async fn login_rules_and_user_endpoint() {
    let app = TestApp::new().await;
    let res = app.get("/api/user").await;
    assert_eq!(res.status, 401);
    assert_eq!(res.json()["error"], "Not authenticated");

    register(&app, "carol", "secret1").await;
    app.clear_cookies();

    for body in [json!({"username": "carol"}), json!({"password": "x"}), json!({"username": " ", "password": "x"})] {
        let res = app.post_json("/api/login", &body).await;
        assert_eq!(res.status, 400, "{body}");
        assert_eq!(res.json()["error"], "Please enter both username and password");
    }
    let wrong = login(&app, "carol", "wrong-pass").await;
    assert_eq!(wrong.status, 401);
    assert_eq!(wrong.json()["error"], "Invalid username or password");
    let unknown = login(&app, "nobody", "wrong-pass").await;
    assert_eq!(unknown.status, 401);
    assert_eq!(unknown.json(), wrong.json(), "unknown users get the same answer");
    assert!(app.cookie("reelfind_session").is_none());

    let ok = login(&app, "CAROL", "secret1").await;
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert_eq!(ok.json()["username"], "carol");
    assert!(session_set_cookie(&ok).contains("HttpOnly"));
    assert_eq!(app.get("/api/user").await.json()["email"], "carol@example.com");

    // The email works as a sign-in name too.
    app.clear_cookies();
    assert_eq!(login(&app, "carol@example.com", "secret1").await.status, 200);
}

#[tokio::test]
async fn login_rotates_and_logout_ends_the_session() {
    let app = TestApp::new().await;
    register(&app, "dave", "secret1").await;
    let first = app.cookie("reelfind_session").unwrap();
    let res = login(&app, "dave", "secret1").await;
    assert_eq!(res.status, 200);
    let second = app.cookie("reelfind_session").unwrap();
    assert_ne!(first, second, "a new token at login");
    assert_eq!(with_cookie(&app, "GET", "/api/user", Some(&first)).await, 401, "old session is gone");
    assert_eq!(with_cookie(&app, "GET", "/api/user", Some(&second)).await, 200);
    assert_eq!(session::Entity::find().count(&app.db).await.unwrap(), 1);

    let out = app.post_json("/api/logout", &json!({})).await;
    assert_eq!(out.status, 200);
    let cleared = session_set_cookie(&out);
    assert!(cleared.contains("Max-Age=0"), "{cleared}");
    assert!(app.cookie("reelfind_session").is_none());
    assert_eq!(with_cookie(&app, "GET", "/api/user", Some(&second)).await, 401, "old cookie is dead");
    assert_eq!(session::Entity::find().count(&app.db).await.unwrap(), 0);
    // Logging out again is harmless.
    assert_eq!(app.post_json("/api/logout", &json!({})).await.status, 200);
}

#[tokio::test]
async fn expired_session_is_refused_and_cleared() {
    let app = TestApp::new().await;
    register(&app, "erin", "secret1").await;
    let row = session::Entity::find().one(&app.db).await.unwrap().unwrap();
    let mut active: session::ActiveModel = row.into();
    active.expires_at = Set(chrono::Utc::now() - chrono::Duration::minutes(1));
    active.update(&app.db).await.unwrap();
    let res = app.get("/api/user").await;
    assert_eq!(res.status, 401);
    assert!(session_set_cookie(&res).contains("Max-Age=0"));
    assert_eq!(session::Entity::find().count(&app.db).await.unwrap(), 0);
}

#[tokio::test]
async fn session_slides_forward_after_an_hour() {
    let app = TestApp::new().await;
    register(&app, "fred", "secret1").await;
    let row = session::Entity::find().one(&app.db).await.unwrap().unwrap();
    let old_expiry = row.expires_at;
    let mut active: session::ActiveModel = row.into();
    active.last_seen_at = Set(chrono::Utc::now() - chrono::Duration::hours(2));
    active.update(&app.db).await.unwrap();
    let res = app.get("/api/user").await;
    assert_eq!(res.status, 200);
    assert!(session_set_cookie(&res).contains("Max-Age=2592000"));
    let row = session::Entity::find().one(&app.db).await.unwrap().unwrap();
    assert!(row.expires_at >= old_expiry);
    assert!(chrono::Utc::now() - row.last_seen_at < chrono::Duration::minutes(1));
    // Within the hour nothing is written and no cookie re-sent.
    let res = app.get("/api/user").await;
    assert!(res.header("set-cookie").is_none());
}

#[tokio::test]
async fn cross_origin_unsafe_requests_are_refused() {
    let app = TestApp::new().await;
    register(&app, "gina", "secret1").await;
    let post = |origin: Option<&'static str>, referer: Option<&'static str>| {
        let mut b = Request::post("/api/logout");
        if let Some(o) = origin {
            b = b.header(header::ORIGIN, o);
        }
        if let Some(r) = referer {
            b = b.header(header::REFERER, r);
        }
        b.body(Body::empty()).unwrap()
    };
    // TestApp adds our own Origin only when none is set, so set a foreign one.
    let res = app.send(post(Some("https://evil.example"), None)).await;
    assert_eq!(res.status, 403);
    assert_eq!(res.json()["error"], "Cross-origin request refused");
    let res = app.send(post(Some("null"), None)).await;
    assert_eq!(res.status, 403);
    assert_eq!(app.get("/api/user").await.status, 200, "still signed in");

    // Without Origin, the Referer decides. The harness adds Origin, so go below it.
    let raw = |req: Request<Body>| async {
        use tower::ServiceExt;
        let res = app.router.clone().oneshot(req).await.unwrap();
        res.status()
    };
    let token = app.cookie("reelfind_session").unwrap();
    let cookie = format!("reelfind_session={token}");
    let req = Request::post("/api/logout")
        .header(header::COOKIE, &cookie)
        .header(header::REFERER, "https://evil.example/page")
        .body(Body::empty())
        .unwrap();
    assert_eq!(raw(req).await, 403);
    let req = Request::post("/api/logout")
        .header(header::COOKIE, &cookie)
        .header(header::REFERER, format!("{ORIGIN}/profile"))
        .body(Body::empty())
        .unwrap();
    assert_eq!(raw(req).await, 200, "same-origin Referer is enough");
    // Neither header: allowed only without a session cookie.
    register(&app, "gina2", "secret1").await;
    let token = app.cookie("reelfind_session").unwrap();
    let req = Request::post("/api/logout")
        .header(header::COOKIE, format!("reelfind_session={token}"))
        .body(Body::empty())
        .unwrap();
    assert_eq!(raw(req).await, 403);
    let req = Request::post("/api/login")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(json!({"username": "gina2", "password": "secret1"}).to_string()))
        .unwrap();
    assert_eq!(raw(req).await, 200, "a script without cookies may sign in");
    // Reads are never blocked.
    let req = Request::get("/api/settings").header(header::ORIGIN, "https://evil.example").body(Body::empty()).unwrap();
    assert_eq!(raw(req).await, 200);
}

#[tokio::test]
async fn repeated_failures_slow_down_then_429() {
    let app = TestApp::new().await;
    register(&app, "hank", "secret1").await;
    app.clear_cookies();
    let mut statuses = Vec::new();
    for _ in 0..8 {
        let res = login(&app, "hank", "bad-guess").await;
        statuses.push((res.status.as_u16(), res.text()));
    }
    assert!(statuses.iter().all(|(s, _)| *s == 401), "{statuses:?}");
    let res = login(&app, "hank", "bad-guess").await;
    assert_eq!(res.status, 429);
    assert_eq!(res.json()["error"], "Too many login attempts. Please wait a few minutes and try again.");
    // Even the right password waits now, and the answer for an unknown name looks the same.
    assert_eq!(login(&app, "Hank", "secret1").await.status, 429);
    for _ in 0..8 {
        login(&app, "ghost", "bad-guess").await;
    }
    let ghost = login(&app, "ghost", "bad-guess").await;
    assert_eq!(ghost.status, 429);
    assert_eq!(ghost.json()["error"], res.json()["error"]);
    assert!(ghost.header("retry-after").is_some());
    // Other accounts are unaffected (below the per-address limit).
    register(&app, "ivy", "secret1").await;
    app.clear_cookies();
    assert_eq!(login(&app, "ivy", "secret1").await.status, 200);
}

#[tokio::test]
async fn unverified_email_is_refused_when_the_admin_requires_it() {
    let app = TestApp::new().await;
    app.state.settings.set(&app.db, "require_email_verification", "true").await.unwrap();
    let res = register(&app, "jill", "secret1").await;
    assert_eq!(res.status, 201);
    assert_eq!(res.json(), json!({"emailVerificationRequired": true, "email": "jill@example.com", "username": "jill"}));
    assert!(app.cookie("reelfind_session").is_none(), "not signed in yet");
    let res = login(&app, "jill", "secret1").await;
    assert_eq!(res.status, 403);
    let body: Value = res.json();
    assert_eq!(body["emailVerificationRequired"], true);
    assert_eq!(body["email"], "jill@example.com");
    assert!(body["error"].as_str().unwrap().contains("verify"));
    // A wrong password still says only 401 (no hint that the account exists).
    assert_eq!(login(&app, "jill", "nope-nope").await.status, 401);
}
