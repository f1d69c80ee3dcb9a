//! `/api/profiles/*`: each person reads and changes only their own profile.
use axum::body::Body;
use axum::http::{Request, header};
use serde_json::{Value, json};

use crate::accounts::register;
use crate::support::{TestApp, TestResponse};

pub async fn put_json(app: &TestApp, path: &str, body: &Value) -> TestResponse {
    app.send(
        Request::put(path).header(header::CONTENT_TYPE, "application/json").body(Body::from(body.to_string())).unwrap(),
    )
    .await
}

#[tokio::test]
async fn signed_out_gets_401() {
    let app = TestApp::new().await;
    for path in ["/api/profiles/me", "/api/profiles/preferences"] {
        let res = app.get(path).await;
        assert_eq!(res.status, 401, "{path}");
        assert_eq!(res.json()["error"], "Not authenticated");
        assert_eq!(put_json(&app, path, &json!({})).await.status, 401, "{path}");
    }
}

#[tokio::test]
async fn profile_defaults_and_updates() {
    let app = TestApp::new().await;
    register(&app, "paula", "secret1").await;
    let res = app.get("/api/profiles/me").await;
    assert_eq!(res.status, 200);
    let body = res.json();
    assert_eq!(body["profile"]["displayName"], Value::Null);
    assert_eq!(body["profile"]["bio"], "Movie enthusiast");
    assert_eq!(body["profile"]["profilePicture"], Value::Null);
    assert_eq!(body["profile"]["totalIdentifications"], 0);
    assert_eq!(body["profile"]["username"], "paula");
    assert_eq!(body["achievements"], json!([]));

    let res =
        put_json(&app, "/api/profiles/me", &json!({"displayName": "  Paula P. ", "bio": "Noir fan.\nAlso westerns."}))
            .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["profile"]["displayName"], "Paula P.");
    assert_eq!(app.get("/api/profiles/me").await.json()["profile"]["bio"], "Noir fan.\nAlso westerns.");

    let res = put_json(&app, "/api/profiles/me", &json!({"displayName": "x".repeat(51)})).await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["error"], "Display name must be at most 50 characters");
    let res = put_json(&app, "/api/profiles/me", &json!({"bio": "y".repeat(501)})).await;
    assert_eq!(res.status, 400);
    let res = put_json(&app, "/api/profiles/me", &json!({"displayName": "bad\u{0007}bell"})).await;
    assert_eq!(res.status, 400);
    assert_eq!(app.get("/api/profiles/me").await.json()["profile"]["displayName"], "Paula P.", "unchanged");

    // Blank clears back to the defaults.
    let res = put_json(&app, "/api/profiles/me", &json!({"displayName": "", "bio": " "})).await;
    assert_eq!(res.json()["profile"]["bio"], "Movie enthusiast");
}

#[tokio::test]
async fn preferences_validate_the_engine() {
    let app = TestApp::new().await;
    register(&app, "quinn", "secret1").await;
    assert_eq!(app.get("/api/profiles/preferences").await.json(), json!({"defaultAiModel": "auto"}));
    for model in ["auto", "google", "openai", "xai", "anthropic", "ensemble", "library"] {
        let res = put_json(&app, "/api/profiles/preferences", &json!({"defaultAiModel": model})).await;
        assert_eq!(res.status, 200, "{model}");
        assert_eq!(app.get("/api/profiles/preferences").await.json()["defaultAiModel"], model);
    }
    let res = put_json(&app, "/api/profiles/preferences", &json!({"defaultAiModel": "skynet"})).await;
    assert_eq!(res.status, 400);
    assert!(res.json()["error"].as_str().unwrap().starts_with("Default AI model must be one of"));
    assert_eq!(app.get("/api/profiles/preferences").await.json()["defaultAiModel"], "library");
}

/// Sends `req` as the holder of session `token` (a second browser on the same app).
async fn as_user(app: &TestApp, token: &str, req: axum::http::request::Builder, body: Option<Value>) -> TestResponse {
    let req = req
        .header(header::COOKIE, format!("reelfind_session={token}"))
        .header(header::CONTENT_TYPE, "application/json");
    app.send(req.body(body.map_or_else(Body::empty, |b| Body::from(b.to_string()))).unwrap()).await
}

#[tokio::test]
async fn one_person_cannot_touch_another_profile() {
    let app = TestApp::new().await;
    register(&app, "ruth", "secret1").await;
    let ruth = app.cookie("reelfind_session").unwrap();
    app.clear_cookies();
    register(&app, "sol", "secret1").await;
    let sol = app.cookie("reelfind_session").unwrap();
    app.clear_cookies();

    let res = as_user(&app, &sol, Request::put("/api/profiles/me"), Some(json!({"displayName": "Sol"}))).await;
    assert_eq!(res.json()["profile"]["username"], "sol");
    let res = as_user(&app, &ruth, Request::get("/api/profiles/me"), None).await;
    assert_eq!(res.json()["profile"]["username"], "ruth");
    assert_eq!(res.json()["profile"]["displayName"], Value::Null, "sol's change did not land on ruth");
    // No route addresses a profile by id or name; ids in the body are ignored.
    assert_eq!(as_user(&app, &ruth, Request::get("/api/profiles/2"), None).await.status, 404);
    assert_eq!(as_user(&app, &ruth, Request::get("/api/profiles/sol"), None).await.status, 404);
    let body = json!({"displayName": "Ruth", "userId": 2, "id": 2, "username": "sol"});
    let res = as_user(&app, &ruth, Request::put("/api/profiles/me"), Some(body)).await;
    assert_eq!(res.json()["profile"]["username"], "ruth");
    let body = json!({"defaultAiModel": "xai", "userId": 2});
    as_user(&app, &ruth, Request::put("/api/profiles/preferences"), Some(body)).await;
    let res = as_user(&app, &sol, Request::get("/api/profiles/me"), None).await;
    assert_eq!(res.json()["profile"]["displayName"], "Sol", "sol's profile is as sol left it");
    let res = as_user(&app, &sol, Request::get("/api/profiles/preferences"), None).await;
    assert_eq!(res.json()["defaultAiModel"], "auto");
}
