//! A person's own account: forgotten and changed passwords, sessions with an absolute
//! lifetime, their data, deletion; and names unique whatever their case.
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, header};
use chrono::Utc;
use reelfind::entities::{
    collection_item, identification, push_subscription, session, single_use_token as password_reset_token, user,
};
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, Set};
use serde_json::{Value, json};

use crate::accounts::{login, register};
use crate::accounts_mail::fake_smtp;
use crate::support::{ORIGIN, TestApp, TestResponse};

/// The token of the `/reset-password/{token}` link in a raw message.
fn reset_token(raw: &str) -> String {
    let joined = raw.replace("=\r\n", "").replace("=\n", "");
    let at = joined.find("/reset-password/").expect("a reset link") + "/reset-password/".len();
    joined[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').collect()
}

fn form(path: &str, body: &str) -> Request<Body> {
    Request::post(path)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(body.to_owned()))
        .unwrap()
}

/// Sends with exactly this session cookie (a second browser of the same person); the jar
/// of the first browser is left as it was.
async fn with_session(app: &TestApp, token: &str, mut req: Request<Body>) -> TestResponse {
    let saved = app.cookie("reelfind_session");
    req.headers_mut().insert(header::COOKIE, format!("reelfind_session={token}").parse().unwrap());
    req.headers_mut().insert(header::ORIGIN, ORIGIN.parse().unwrap());
    let res = app.send(req).await;
    app.clear_cookies();
    if let Some(t) = saved {
        app.set_cookie("reelfind_session", &t);
    }
    res
}

async fn second_browser(app: &TestApp, username: &str, password: &str) -> String {
    let mine = app.cookie("reelfind_session");
    app.clear_cookies();
    assert_eq!(login(app, username, password).await.status, 200);
    let other = app.cookie("reelfind_session").unwrap();
    app.clear_cookies();
    if let Some(t) = mine {
        // Back to the first browser.
        app.set_cookie("reelfind_session", &t);
    }
    other
}

#[tokio::test]
async fn forgot_password_mails_a_single_use_link_over_smtp() {
    let (port, mut inbox) = fake_smtp().await;
    let app = TestApp::with_env([("SMTP_URL", format!("smtp://127.0.0.1:{port}"))]).await;
    // With SMTP, new accounts must verify first; a user made by the admin is verified.
    reelfind::services::users::create(
        &app.db,
        reelfind::services::users::NewUser {
            username: "rosa",
            email: "rosa@example.com",
            password: Some("old-secret"),
            role: user::Role::User,
            email_verified: true,
        },
    )
    .await
    .unwrap();
    assert_eq!(login(&app, "rosa", "old-secret").await.status, 200);
    let old_session = app.cookie("reelfind_session").unwrap();
    app.clear_cookies();

    let known = app.post_json("/api/forgot-password", &json!({"email": "Rosa@Example.com"})).await;
    assert_eq!(known.status, 200, "{}", known.text());
    let unknown = app.post_json("/api/forgot-password", &json!({"email": "nobody@example.com"})).await;
    assert_eq!((unknown.status, unknown.json()), (known.status, known.json()), "the same answer either way");

    let mail = tokio::time::timeout(Duration::from_secs(10), inbox.recv()).await.expect("mail in time").unwrap();
    assert_eq!(mail.rcpt_to, vec!["<rosa@example.com>".to_owned()]);
    assert!(mail.data.contains("Subject: Reset your Reelfind password"), "{}", mail.data);
    let token = reset_token(&mail.data);
    assert!(token.len() >= 43);
    assert!(tokio::time::timeout(Duration::from_millis(500), inbox.recv()).await.is_err(), "no mail for nobody@");
    let stored = password_reset_token::Entity::find()
        .filter(password_reset_token::Column::Purpose.eq("reset_password"))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_ne!(stored.token_hash, token, "stored hashed");

    // The page shows a form for a good link.
    let page = app.get(&format!("/reset-password/{token}")).await;
    assert_eq!(page.status, 200);
    assert_eq!(page.select_attr("form input[name=token]", "value").as_deref(), Some(token.as_str()));

    let weak = app.post_json("/api/reset-password", &json!({"token": token, "password": "123"})).await;
    assert_eq!(weak.status, 400);
    assert_eq!(weak.json()["error"], "Password must be at least 6 characters long");
    let res = app.post_json("/api/reset-password", &json!({"token": token, "password": "new-secret"})).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let again = app.post_json("/api/reset-password", &json!({"token": token, "password": "third-secret"})).await;
    assert_eq!(again.status, 400, "the link works once");
    assert!(again.json()["error"].as_str().unwrap().contains("already been used"));
    let page = app.get(&format!("/reset-password/{token}")).await;
    assert!(page.select_text(".auth-alert").unwrap().contains("invalid"));
    assert_eq!(page.count("form input[name=token]"), 0);

    assert_eq!(login(&app, "rosa", "old-secret").await.status, 401);
    assert_eq!(login(&app, "rosa", "new-secret").await.status, 200);
    let old = with_session(&app, &old_session, Request::get("/api/user").body(Body::empty()).unwrap()).await;
    assert_eq!(old.status, 401, "every session ended with the reset");
}

#[tokio::test]
async fn reset_links_expire_and_requests_are_throttled() {
    let app = TestApp::new().await;
    register(&app, "sam", "secret1").await;
    app.clear_cookies();
    let token = reelfind::services::password_reset::issue(&app.db, user_id(&app, "sam").await).await.unwrap();
    let row = password_reset_token::Entity::find()
        .filter(password_reset_token::Column::Purpose.eq("reset_password"))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    let mut active: password_reset_token::ActiveModel = row.into();
    active.expires_at = Set(Utc::now() - chrono::Duration::seconds(1));
    active.update(&app.db).await.unwrap();
    let res = app.post_json("/api/reset-password", &json!({"token": token, "password": "new-secret"})).await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["error"], "This password reset link has expired. Please request a new one.");
    assert_eq!(login(&app, "sam", "secret1").await.status, 200);
    app.clear_cookies();

    // The admin's cleanup sweeps the expired link; a live one stays.
    let live = reelfind::services::password_reset::issue(&app.db, user_id(&app, "sam").await).await.unwrap();
    reelfind::services::admin::purge_expired(&app.db).await.unwrap();
    let left = password_reset_token::Entity::find()
        .filter(password_reset_token::Column::Purpose.eq("reset_password"))
        .all(&app.db)
        .await
        .unwrap();
    assert_eq!(left.len(), 1, "only the live link is left");
    assert!(reelfind::services::password_reset::check(&app.db, &live).await.is_ok(), "the live link still works");

    // Five requests per client address in 15 minutes, whatever the addresses asked for.
    let mut statuses = Vec::new();
    for i in 0..6 {
        statuses.push(
            app.post_json("/api/forgot-password", &json!({"email": format!("x{i}@example.com")})).await.status.as_u16(),
        );
    }
    assert_eq!(statuses, vec![200, 200, 200, 200, 200, 429]);
    assert_eq!(app.post_json("/api/forgot-password", &json!({"email": ""})).await.status, 400);
}

async fn user_id(app: &TestApp, name: &str) -> i64 {
    user::Entity::find().filter(user::Column::Username.eq(name)).one(&app.db).await.unwrap().unwrap().id
}

#[tokio::test]
async fn without_javascript_the_reset_form_works_too() {
    let app = TestApp::new().await;
    register(&app, "tina", "secret1").await;
    app.clear_cookies();
    let res = app.send(form("/api/forgot-password", "email=tina%40example.com")).await;
    assert_eq!(res.status, 303);
    assert_eq!(res.header("location").unwrap(), "/forgot-password?sent=1&email=tina%40example.com");
    let page = app.get("/forgot-password?sent=1&email=tina%40example.com").await;
    assert!(page.select_text(".auth-alert").unwrap().contains("Check your email"));
    // The outbox holds the mail (sent in the background).
    let mut token = None;
    for _ in 0..100 {
        if let Ok(d) = std::fs::read_dir(app.data_dir().join("outbox"))
            && let Some(f) = d.filter_map(|e| e.ok()).next()
        {
            token = Some(reset_token(&std::fs::read_to_string(f.path()).unwrap()));
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let token = token.expect("a reset mail in the outbox");
    let res =
        app.send(form("/api/reset-password", &format!("token={token}&password=newpass1&confirmPassword=other1"))).await;
    assert_eq!(res.header("location").unwrap(), format!("/reset-password/{token}?error=password_mismatch"));
    let res = app
        .send(form("/api/reset-password", &format!("token={token}&password=newpass1&confirmPassword=newpass1")))
        .await;
    assert_eq!(res.header("location").unwrap(), "/auth?notice=password_reset");
    let page = app.get("/auth?notice=password_reset").await;
    assert!(page.text().contains("Sign in with your new password."));
    assert_eq!(login(&app, "tina", "newpass1").await.status, 200);
}

#[tokio::test]
async fn changing_the_password_needs_the_current_one_and_ends_other_sessions() {
    let app = TestApp::new().await;
    register(&app, "uma", "secret1").await;
    let other = second_browser(&app, "uma", "secret1").await;
    let wrong = app
        .post_json("/api/account/password", &json!({"currentPassword": "nope-nope", "newPassword": "better-secret"}))
        .await;
    assert_eq!(wrong.status, 401);
    assert_eq!(wrong.json()["error"], "Your current password is not correct");
    let mismatch = app
        .post_json(
            "/api/account/password",
            &json!({"currentPassword": "secret1", "newPassword": "better-secret", "confirmPassword": "other"}),
        )
        .await;
    assert_eq!(mismatch.status, 400);
    let res = app
        .post_json("/api/account/password", &json!({"currentPassword": "secret1", "newPassword": "better-secret"}))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["signedOutSessions"], 1);
    assert_eq!(app.get("/api/user").await.status, 200, "this browser stays signed in");
    let gone = with_session(&app, &other, Request::get("/api/user").body(Body::empty()).unwrap()).await;
    assert_eq!(gone.status, 401, "the other browser is signed out");
    app.clear_cookies();
    assert_eq!(login(&app, "uma", "secret1").await.status, 401);
    assert_eq!(login(&app, "uma", "better-secret").await.status, 200);
    // Wrong current passwords are throttled per account.
    let mut last = 0;
    for _ in 0..9 {
        last = app
            .post_json("/api/account/password", &json!({"currentPassword": "guess-guess", "newPassword": "x-secret"}))
            .await
            .status
            .as_u16();
    }
    assert_eq!(last, 429);
}

#[tokio::test]
async fn people_see_their_sessions_and_sign_out_elsewhere() {
    let app = TestApp::new().await;
    register(&app, "vic", "secret1").await;
    let other = second_browser(&app, "vic", "secret1").await;
    let third = second_browser(&app, "vic", "secret1").await;
    let list = app.get("/api/account/sessions").await;
    assert_eq!(list.status, 200);
    let items = list.json();
    let items = items.as_array().unwrap();
    assert_eq!(items.len(), 3);
    assert_eq!(items.iter().filter(|s| s["current"] == true).count(), 1);
    let text = list.text();
    assert!(!text.contains(&other) && !text.contains(&app.cookie("reelfind_session").unwrap()), "no tokens");
    // End one other session by its id.
    let other_id = {
        let hash = reelfind::services::sessions::hash_token(&other);
        hash[..16].to_owned()
    };
    let res = app.delete(&format!("/api/account/sessions/{other_id}")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(with_session(&app, &other, Request::get("/api/user").body(Body::empty()).unwrap()).await.status, 401);
    // Someone else cannot end it.
    register(&app, "wes", "secret1").await;
    let third_id = reelfind::services::sessions::hash_token(&third)[..16].to_owned();
    assert_eq!(app.delete(&format!("/api/account/sessions/{third_id}")).await.status, 404);
    assert_eq!(with_session(&app, &third, Request::get("/api/user").body(Body::empty()).unwrap()).await.status, 200);
    app.clear_cookies();
    assert_eq!(login(&app, "vic", "secret1").await.status, 200);
    // Now: the first browser, the third, and this new sign-in.
    let res = app.post_json("/api/account/sessions/revoke-others", &json!({})).await;
    assert_eq!(res.json()["signedOutSessions"], 2);
    assert_eq!(with_session(&app, &third, Request::get("/api/user").body(Body::empty()).unwrap()).await.status, 401);
    let left = app.get("/api/account/sessions").await;
    assert_eq!(left.json().as_array().map(Vec::len), Some(1), "{}", left.text());
}

#[tokio::test]
async fn sessions_end_at_their_absolute_lifetime_however_busy() {
    let app = TestApp::new().await;
    register(&app, "xena", "secret1").await;
    let row = session::Entity::find().one(&app.db).await.unwrap().unwrap();
    let mut active: session::ActiveModel = row.into();
    // Used an hour ago (the idle expiry is far away), but begun 91 days ago.
    active.created_at = Set(Utc::now() - chrono::Duration::days(91));
    active.last_seen_at = Set(Utc::now() - chrono::Duration::hours(2));
    active.update(&app.db).await.unwrap();
    let res = app.get("/api/user").await;
    assert_eq!(res.status, 401);
    assert!(res.header("set-cookie").unwrap().contains("Max-Age=0"));
    assert_eq!(session::Entity::find().count(&app.db).await.unwrap(), 0);

    // Near the end, the refreshed cookie lasts only until the absolute end.
    assert_eq!(login(&app, "xena", "secret1").await.status, 200);
    let row = session::Entity::find().one(&app.db).await.unwrap().unwrap();
    let mut active: session::ActiveModel = row.into();
    active.created_at = Set(Utc::now() - chrono::Duration::days(89));
    active.last_seen_at = Set(Utc::now() - chrono::Duration::hours(2));
    active.update(&app.db).await.unwrap();
    let res = app.get("/api/user").await;
    assert_eq!(res.status, 200);
    let cookie = res.header("set-cookie").unwrap();
    let max_age: i64 = cookie.split("Max-Age=").nth(1).unwrap().split(';').next().unwrap().parse().unwrap();
    assert!((86_000..=86_400).contains(&max_age), "{cookie}");
}

async fn seed_data(app: &TestApp, user_id: i64) {
    identification::ActiveModel {
        id: Set(reelfind::identify::store::new_id()),
        user_id: Set(Some(user_id)),
        title: Set("Heat".into()),
        year: Set(Some("1995".into())),
        media_type: Set("movie".into()),
        poster_url: Set(None),
        confidence: Set(0.8),
        rating: Set(None),
        engine: Set("openai".into()),
        mode: Set("auto".into()),
        content_hash: Set("1".repeat(64)),
        result: Set(json!({"title": "Heat", "audioAnalysisResults": {"transcript": "my own words"}}).to_string()),
        total_ms: Set(100),
        created_at: Set(Utc::now()),
        shared: Set(true),
        memory_id: Set(None),
    }
    .insert(&app.db)
    .await
    .unwrap();
    collection_item::ActiveModel {
        user_id: Set(user_id),
        tmdb_id: Set(Some(949)),
        title: Set("Heat".into()),
        year: Set(Some("1995".into())),
        poster_url: Set(None),
        dedupe_key: Set("tmdb:949".into()),
        created_at: Set(Utc::now()),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .unwrap();
    push_subscription::ActiveModel {
        user_id: Set(user_id),
        endpoint: Set(format!("https://push.example/{user_id}")),
        p256dh: Set("key".into()),
        auth: Set("auth-secret-value".into()),
        device_info: Set(Some(r#"{"platform":"Linux"}"#.into())),
        created_at: Set(Utc::now()),
        last_success_at: Set(None),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .unwrap();
}

#[tokio::test]
async fn the_export_holds_the_persons_data_and_no_secrets() {
    let app = TestApp::new().await;
    let id = register(&app, "yara", "secret1").await.json()["id"].as_i64().unwrap();
    seed_data(&app, id).await;
    let res = app.get("/api/account/export").await;
    assert_eq!(res.status, 200);
    assert!(res.header("content-disposition").unwrap().starts_with("attachment; filename=\"reelfind-data-yara-"));
    assert_eq!(res.header("cache-control").as_deref(), Some("no-store"));
    let data: Value = res.json();
    assert_eq!(data["account"]["username"], "yara");
    assert_eq!(data["account"]["email"], "yara@example.com");
    assert_eq!(data["identifications"][0]["result"]["audioAnalysisResults"]["transcript"], "my own words");
    assert_eq!(data["collection"][0]["title"], "Heat");
    assert_eq!(data["pushDevices"][0]["deviceInfo"]["platform"], "Linux");
    assert_eq!(data["sessions"].as_array().unwrap().len(), 1);
    let text = res.text();
    assert!(
        !text.contains("argon2")
            && !text.contains("auth-secret-value")
            && !text.contains(&app.cookie("reelfind_session").unwrap())
    );
    app.clear_cookies();
    assert_eq!(app.get("/api/account/export").await.status, 401);
}

#[tokio::test]
async fn deleting_the_account_needs_the_password_and_removes_the_persons_rows() {
    let app = TestApp::new().await;
    let id = register(&app, "zoe", "secret1").await.json()["id"].as_i64().unwrap();
    seed_data(&app, id).await;
    let other = register_elsewhere(&app, "bystander").await;
    seed_data(&app, other).await;

    let wrong = app.post_json("/api/account/delete", &json!({"password": "not-it"})).await;
    assert_eq!(wrong.status, 401);
    let missing = app.post_json("/api/account/delete", &json!({})).await;
    assert_eq!(missing.status, 400);
    let res = app.post_json("/api/account/delete", &json!({"password": "secret1"})).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert!(res.header("set-cookie").unwrap().contains("Max-Age=0"));
    assert!(user::Entity::find_by_id(id).one(&app.db).await.unwrap().is_none());
    for (table, n) in [
        (
            "identifications",
            identification::Entity::find().filter(identification::Column::UserId.eq(id)).count(&app.db).await.unwrap(),
        ),
        (
            "collection",
            collection_item::Entity::find()
                .filter(collection_item::Column::UserId.eq(id))
                .count(&app.db)
                .await
                .unwrap(),
        ),
        (
            "push",
            push_subscription::Entity::find()
                .filter(push_subscription::Column::UserId.eq(id))
                .count(&app.db)
                .await
                .unwrap(),
        ),
        ("sessions", session::Entity::find().filter(session::Column::UserId.eq(id)).count(&app.db).await.unwrap()),
    ] {
        assert_eq!(n, 0, "{table} rows left");
    }
    assert_eq!(identification::Entity::find().count(&app.db).await.unwrap(), 1, "other people's rows stay");
    assert_eq!(login(&app, "zoe", "secret1").await.status, 401);
}

async fn register_elsewhere(app: &TestApp, name: &str) -> i64 {
    let mine = app.cookie("reelfind_session");
    app.clear_cookies();
    let id = register(app, name, "secret1").await.json()["id"].as_i64().unwrap();
    app.clear_cookies();
    if let Some(t) = mine {
        app.set_cookie("reelfind_session", &t);
    }
    id
}

#[tokio::test]
async fn the_last_admin_cannot_delete_their_account() {
    let app = TestApp::new().await;
    for name in ["ada", "bea"] {
        reelfind::services::users::create(
            &app.db,
            reelfind::services::users::NewUser {
                username: name,
                email: &format!("{name}@example.com"),
                password: Some("secret1"),
                role: user::Role::Admin,
                email_verified: true,
            },
        )
        .await
        .unwrap();
    }
    assert_eq!(login(&app, "ada", "secret1").await.status, 200);
    assert_eq!(app.post_json("/api/account/delete", &json!({"password": "secret1"})).await.status, 200);
    app.clear_cookies();
    assert_eq!(login(&app, "bea", "secret1").await.status, 200);
    let res = app.post_json("/api/account/delete", &json!({"password": "secret1"})).await;
    assert_eq!(res.status, 409);
    assert_eq!(
        res.json()["error"],
        "You are the only administrator. Make another account an administrator before deleting yours."
    );
    assert!(user::Entity::find().filter(user::Column::Username.eq("bea")).one(&app.db).await.unwrap().is_some());
}

#[tokio::test]
async fn google_only_accounts_confirm_with_their_username_soon_after_signing_in() {
    let app = TestApp::new().await;
    let u = reelfind::services::users::create(
        &app.db,
        reelfind::services::users::NewUser {
            username: "gwen",
            email: "gwen@example.com",
            password: None,
            role: user::Role::User,
            email_verified: true,
        },
    )
    .await
    .unwrap();
    let token = reelfind::services::sessions::create(&app.db, u.id, None).await.unwrap();
    let res = with_session(&app, &token, post("/api/account/delete", &json!({"confirm": "someone"}))).await;
    assert_eq!(res.status, 400);
    // A session begun long ago must sign in again first.
    let row = session::Entity::find().one(&app.db).await.unwrap().unwrap();
    let mut active: session::ActiveModel = row.into();
    active.created_at = Set(Utc::now() - chrono::Duration::minutes(30));
    active.update(&app.db).await.unwrap();
    let res = with_session(&app, &token, post("/api/account/delete", &json!({"confirm": "gwen"}))).await;
    assert_eq!(res.status, 403);
    assert!(res.json()["error"].as_str().unwrap().contains("sign in again with Google"));
    let fresh = reelfind::services::sessions::create(&app.db, u.id, None).await.unwrap();
    let res = with_session(&app, &fresh, post("/api/account/delete", &json!({"confirm": "gwen"}))).await;
    assert_eq!(res.status, 200, "{}", res.text());
    // Changing a password it does not have points to the reset.
    assert!(user::Entity::find_by_id(u.id).one(&app.db).await.unwrap().is_none());
}

fn post(path: &str, body: &Value) -> Request<Body> {
    Request::post(path).header(header::CONTENT_TYPE, "application/json").body(Body::from(body.to_string())).unwrap()
}

#[tokio::test]
async fn the_account_page_works_without_javascript() {
    let app = TestApp::new().await;
    assert_eq!(app.get("/account").await.header("location").as_deref(), Some("/auth"));
    register(&app, "hal", "secret1").await;
    let page = app.get("/account").await;
    assert_eq!(page.status, 200);
    assert_eq!(page.select_text("h1").unwrap(), "Account settings");
    assert_eq!(page.count(".session-item"), 1);
    assert_eq!(page.select_text(".session-current").as_deref(), Some("This device"));
    let res = app
        .send(form(
            "/api/account/password",
            "currentPassword=wrong-one&newPassword=next-secret&confirmPassword=next-secret",
        ))
        .await;
    assert_eq!(res.header("location").as_deref(), Some("/account?error=wrong_password"));
    let page = app.get("/account?error=wrong_password").await;
    assert_eq!(page.select_text("[role=alert]").unwrap(), "Your current password is not correct");
    let res = app
        .send(form(
            "/api/account/password",
            "currentPassword=secret1&newPassword=next-secret&confirmPassword=next-secret",
        ))
        .await;
    assert_eq!(res.header("location").as_deref(), Some("/account?notice=password_changed"));
    let res = app.send(form("/api/account/delete", "password=next-secret")).await;
    assert_eq!(res.header("location").as_deref(), Some("/auth?notice=deleted"));
    assert_eq!(app.get("/api/user").await.status, 401);
    let auth = app.get("/auth?notice=deleted").await;
    assert!(auth.text().contains("Your account and its data have been deleted."));
    assert_eq!(app.get("/profile").await.select_text("main p").as_deref(), Some("Please log in to view your profile."));
}

#[tokio::test]
async fn names_and_addresses_are_unique_whatever_their_case() {
    let app = TestApp::new().await;
    register(&app, "Ivan", "secret1").await;
    app.clear_cookies();
    let res = register(&app, "ivan", "secret1").await;
    assert_eq!(res.status, 409);
    // Even written past the code's own check, the database refuses a case variant.
    let now = Utc::now();
    let row = |username: &str, email: &str| user::ActiveModel {
        username: Set(username.into()),
        username_key: Set(reelfind::services::users::username_key(username)),
        email: Set(email.into()),
        password_hash: Set(None),
        role: Set(user::Role::User),
        email_verified: Set(false),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    };
    assert!(row("IVAN", "other@example.com").insert(&app.db).await.is_err());
    assert!(row("ivan2", "IVAN@example.com").insert(&app.db).await.is_err());
    assert!(row("ivan2", "ivan2@example.com").insert(&app.db).await.is_ok());
}

#[tokio::test]
async fn a_profile_save_is_all_or_nothing() {
    let app = TestApp::new().await;
    register(&app, "jon", "secret1").await;
    let req = Request::put("/api/profiles/me")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(json!({"displayName": "Jon S", "bio": "hi", "defaultAiModel": "skynet"}).to_string()))
        .unwrap();
    let res = app.send(req).await;
    assert_eq!(res.status, 400);
    let me = app.get("/api/profiles/me").await.json();
    assert_eq!(me["profile"]["displayName"], Value::Null, "nothing was saved");
    let req = Request::put("/api/profiles/me")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(json!({"displayName": "Jon S", "bio": "hi", "defaultAiModel": "openai"}).to_string()))
        .unwrap();
    assert_eq!(app.send(req).await.status, 200);
    assert_eq!(app.get("/api/profiles/preferences").await.json()["defaultAiModel"], "openai");
    assert_eq!(app.get("/api/profiles/me").await.json()["profile"]["displayName"], "Jon S");
}

/// Links mailed before the two token tables became one keep working after the migration,
/// each for its own purpose only, and the old tables are gone.
#[tokio::test]
async fn mailed_links_survive_the_single_use_token_migration() {
    use migration::{Migrator, MigratorTrait};
    use reelfind::services::sessions::hash_token;
    use reelfind::services::{password_reset, verification};
    use sea_orm::ConnectionTrait;

    let (test_db, ada) = crate::support::db_before_migration("m20261203_100000_single_use_tokens").await;
    let db = test_db.conn.clone();
    for (table, token) in [("email_verification_tokens", "verify-me"), ("password_reset_tokens", "reset-me")] {
        db.execute_unprepared(&format!(
            "INSERT INTO {table} (user_id, token_hash, created_at, expires_at) \
             VALUES ({ada}, '{}', '2026-01-01T00:00:00Z', '2999-01-01T00:00:00Z')",
            hash_token(token)
        ))
        .await
        .unwrap();
    }
    Migrator::up(&db, None).await.unwrap();
    for table in ["email_verification_tokens", "password_reset_tokens"] {
        assert!(db.execute_unprepared(&format!("SELECT 1 FROM {table}")).await.is_err(), "{table} is dropped");
    }
    assert_eq!(password_reset_token::Entity::find().count(&db).await.unwrap(), 2);
    // Each link opens its own door only.
    assert!(matches!(password_reset::check(&db, "verify-me").await, Err(password_reset::ResetError::Invalid)));
    assert!(password_reset::check(&db, "reset-me").await.is_ok());
    assert!(matches!(verification::verify(&db, "reset-me").await, Err(verification::VerifyError::Invalid)));
    assert!(verification::verify(&db, "verify-me").await.unwrap().email_verified);
    assert!(matches!(verification::verify(&db, "verify-me").await, Err(verification::VerifyError::Invalid)), "used up");
    let (u, _) = password_reset::reset(&db, "reset-me", "a-new-secret").await.unwrap();
    assert_eq!(u.id, ada);
    assert_eq!(password_reset_token::Entity::find().count(&db).await.unwrap(), 0);
}
