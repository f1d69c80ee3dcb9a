//! Roles: admin APIs answer 403 to non-admins, admin pages redirect them to /admin.
use axum::body::Body;
use axum::http::{Request, header};
use reelfind::services::users::{self, NewUser};
use serde_json::json;

use crate::profiles::put_json;
use crate::support::{TestApp, TestResponse};

/// The older spelling of [`TestApp::admin`]; new tests call the method.
pub async fn make_admin(app: &TestApp, username: &str) {
    app.admin(username).await
}

/// Sends a form as a browser would (urlencoded, with the session and our Origin).
pub async fn post_form(app: &TestApp, path: &str, body: &str) -> TestResponse {
    app.send(
        Request::post(path)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(body.to_owned()))
            .unwrap(),
    )
    .await
}

const APIS: &[(&str, &str)] = &[
    ("GET", "/api/admin/settings"),
    ("PUT", "/api/admin/settings"),
    ("GET", "/api/admin/users"),
    ("GET", "/api/admin/data-integrity"),
];
const PAGES: &[(&str, &str)] = &[
    ("GET", "/admin/dashboard"),
    ("GET", "/admin/seo"),
    ("GET", "/admin/data-integrity"),
    ("POST", "/admin/settings"),
    ("POST", "/admin/data-integrity/purge"),
];

async fn call(app: &TestApp, method: &str, path: &str) -> TestResponse {
    let mut b = Request::builder().method(method).uri(path);
    if method != "GET" {
        b = b.header(header::CONTENT_TYPE, "application/json");
    }
    app.send(b.body(Body::from(if method == "GET" { "" } else { "{}" })).unwrap()).await
}

#[tokio::test]
async fn non_admins_are_refused_everywhere() {
    let app = TestApp::new().await;
    for (m, p) in APIS {
        let res = call(&app, m, p).await;
        assert_eq!(res.status, 401, "{m} {p} signed out");
    }
    for (m, p) in PAGES {
        let res = call(&app, m, p).await;
        assert_eq!(res.status, 303, "{m} {p}");
        assert_eq!(res.header("location").as_deref(), Some("/admin"));
    }
    app.register("user1", "secret1").await;
    for (m, p) in APIS {
        let res = call(&app, m, p).await;
        assert_eq!(res.status, 403, "{m} {p} as a user");
        assert_eq!(res.json()["error"], "Admin access required");
    }
    for (m, p) in PAGES {
        let res = call(&app, m, p).await;
        assert_eq!(res.status, 303, "{m} {p}");
        assert_eq!(res.header("location").as_deref(), Some("/admin"));
    }
    // Nothing changed through the refused calls.
    let res = put_json(&app, "/api/admin/settings", &json!({"max_file_size": 99})).await;
    assert_eq!(res.status, 403);
    assert_eq!(app.get("/api/settings").await.json()["max_file_size"], "10");
    // The admin login page is open and says who is signed in.
    let res = app.get("/admin").await;
    assert_eq!(res.status, 200);
    assert!(res.text().contains("not an administrator"));
    assert_eq!(res.count("form[action='/api/login'] input[name=password]"), 1);
}

#[tokio::test]
async fn admin_reads_and_changes_settings() {
    let app = TestApp::new().await;
    app.admin("root").await;
    let res = app.get("/api/admin/settings").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["max_file_size"], "10");
    let res = put_json(
        &app,
        "/api/admin/settings",
        &json!({"max_file_size": 25, "allowed_engines": "google,library", "require_email_verification": true, "site_name": "Scene Finder"}),
    )
    .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let public = app.get("/api/settings").await.json();
    assert_eq!(public["max_file_size"], "25");
    assert_eq!(public["allowed_engines"], "google,library");
    assert_eq!(public["require_email_verification"], "true");
    assert_eq!(public["site_name"], "Scene Finder");

    // One bad value and nothing is written.
    let res = put_json(&app, "/api/admin/settings", &json!({"site_name": "Other", "max_file_size": "lots"})).await;
    assert_eq!(res.status, 400);
    assert!(res.json()["error"].as_str().unwrap().starts_with("Maximum file size"));
    let res = put_json(&app, "/api/admin/settings", &json!({"github_url": "javascript:alert(1)"})).await;
    assert_eq!(res.status, 400);
    let res = put_json(&app, "/api/admin/settings", &json!({"made_up": "x"})).await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["error"], "Unknown setting: made_up");
    assert_eq!(app.get("/api/settings").await.json()["site_name"], "Scene Finder");

    let users = app.get("/api/admin/users").await.json();
    assert_eq!(users["total"], 1);
    assert_eq!(users["admins"], 1);
    assert_eq!(users["users"][0]["username"], "root");
    assert!(users["users"][0].get("passwordHash").is_none());
    let integrity = app.get("/api/admin/data-integrity").await.json();
    assert_eq!(integrity["sessions"], 1);
}

#[tokio::test]
async fn admin_pages_render_and_the_form_saves() {
    let app = TestApp::new().await;
    app.register("zed", "secret1").await;
    app.clear_cookies();
    // The admin signs in through the admin login form.
    users::create(
        &app.db,
        NewUser {
            username: "boss",
            email: "boss@example.com",
            password: Some("admin-pass"),
            role: reelfind::entities::user::Role::Admin,
            email_verified: true,
        },
    )
    .await
    .unwrap();
    let res =
        post_form(&app, "/api/login", "username=boss&password=wrong&from=%2Fadmin&next=%2Fadmin%2Fdashboard").await;
    assert_eq!(res.header("location").as_deref(), Some("/admin?error=invalid"));
    let res = app.get("/admin?error=invalid").await;
    assert!(res.text().contains("Invalid username or password"));
    let res =
        post_form(&app, "/api/login", "username=boss&password=admin-pass&from=%2Fadmin&next=%2Fadmin%2Fdashboard")
            .await;
    assert_eq!(res.status, 303);
    assert_eq!(res.header("location").as_deref(), Some("/admin/dashboard"));
    assert_eq!(app.get("/admin").await.header("location").as_deref(), Some("/admin/dashboard"));

    let res = app.get("/admin/dashboard").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.select_text("h1").as_deref(), Some("Admin Dashboard"));
    assert_eq!(res.select_attr("input[name=max_file_size]", "value").as_deref(), Some("10"));
    assert_eq!(res.count("input[name=allowed_engines][checked]"), 6);
    let names = res.select_all_text(".users-table tbody td:first-child");
    assert!(names.contains(&"zed".to_owned()) && names.contains(&"boss".to_owned()), "{names:?}");

    let form = "max_file_size=50&allowed_file_types=jpg%2Cpng&site_name=Reelfind&allowed_engines=openai&allowed_engines=ensemble&ai_primary_model=openai&require_email_verification=true";
    let res = post_form(&app, "/admin/settings", form).await;
    assert_eq!(res.header("location").as_deref(), Some("/admin/dashboard?saved=1"));
    let s = app.get("/api/settings").await.json();
    assert_eq!(s["max_file_size"], "50");
    assert_eq!(s["allowed_engines"], "openai,ensemble");
    assert_eq!(s["ai_primary_model"], "openai");
    assert_eq!(s["require_email_verification"], "true");
    assert!(app.get("/admin/dashboard?saved=1").await.text().contains("Settings saved."));

    let res = post_form(&app, "/admin/settings", "max_file_size=0").await;
    assert_eq!(res.status, 400);
    assert!(res.select_text(".admin-error").unwrap().starts_with("Maximum file size"));
    assert_eq!(app.get("/api/settings").await.json()["max_file_size"], "50");

    let res = app.get("/admin/seo").await;
    assert_eq!(res.status, 200);
    let rows = res.select_all_text(".seo-table tbody td:first-child");
    assert!(rows.contains(&"/".to_owned()) && rows.contains(&"/auth".to_owned()), "{rows:?}");
    assert!(res.text().contains("Sign In or Sign Up"), "the /auth title is read from the page");

    let res = app.get("/admin/data-integrity").await;
    assert_eq!(res.status, 200);
    let res = post_form(&app, "/admin/data-integrity/purge", "").await;
    assert_eq!(res.header("location").as_deref(), Some("/admin/data-integrity?purged=0"));
}
