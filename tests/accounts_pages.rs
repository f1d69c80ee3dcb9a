//! The account pages: server HTML with island mounts and working no-JavaScript forms.
use axum::body::Body;
use axum::http::{Request, header};

use crate::accounts::register;
use crate::support::{TestApp, TestResponse};

async fn post_form(app: &TestApp, path: &str, body: &str) -> TestResponse {
    app.send(
        Request::post(path)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ACCEPT, "text/html")
            .body(Body::from(body.to_owned()))
            .unwrap(),
    )
    .await
}

#[tokio::test]
async fn auth_page_for_visitors_and_redirect_for_members() {
    let app = TestApp::new().await;
    let res = app.get("/auth").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.count("[data-island=AuthScreen]"), 1);
    assert_eq!(res.select_attr("meta[name=robots]", "content").as_deref(), Some("noindex"));
    assert_eq!(res.count("form[action='/api/login'] input[name=username]"), 1);
    assert_eq!(res.count("form[action='/api/register'] input[name=confirmPassword]"), 1);
    assert!(res.select_attr("[data-island=AuthScreen]", "data-props").unwrap().contains("\"googleEnabled\":false"));
    let res = app.get("/auth?error=google_unavailable").await;
    assert_eq!(
        res.select_text("[role=alert]").as_deref(),
        Some("Authentication Error Google authentication is currently unavailable. Please try again later.")
    );
    register(&app, "una", "secret1").await;
    let res = app.get("/auth").await;
    assert_eq!(res.status, 303);
    assert_eq!(res.header("location").as_deref(), Some("/"));
}

#[tokio::test]
async fn forms_work_without_javascript() {
    let app = TestApp::new().await;
    let res = post_form(
        &app,
        "/api/register",
        "username=vera&email=vera%40example.com&password=secret1&confirmPassword=other1",
    )
    .await;
    assert_eq!(res.header("location").as_deref(), Some("/auth?tab=signup&error=mismatch"));
    let res =
        post_form(&app, "/api/register", "username=vera&email=vera%40example.com&password=123&confirmPassword=123")
            .await;
    assert_eq!(res.header("location").as_deref(), Some("/auth?tab=signup&error=weak"));
    let res = post_form(
        &app,
        "/api/register",
        "username=vera&email=vera%40example.com&password=secret1&confirmPassword=secret1",
    )
    .await;
    assert_eq!(res.header("location").as_deref(), Some("/"));
    assert_eq!(app.get("/api/user").await.json()["username"], "vera");
    // The header's Logout form.
    let res = post_form(&app, "/api/logout", "").await;
    assert_eq!(res.status, 303);
    assert_eq!(res.header("location").as_deref(), Some("/"));
    assert_eq!(app.get("/api/user").await.status, 401);
    let res = post_form(&app, "/api/login", "username=vera&password=nope-nope&from=%2Fauth").await;
    assert_eq!(res.header("location").as_deref(), Some("/auth?error=invalid"));
    // `next` must be a local path.
    let res = post_form(&app, "/api/login", "username=vera&password=secret1&next=%2F%2Fevil.example").await;
    assert_eq!(res.header("location").as_deref(), Some("/"));

    // With verification required, the form lands on the pending page.
    app.clear_cookies();
    app.state.settings.set(&app.db, "require_email_verification", "true").await.unwrap();
    let res = post_form(
        &app,
        "/api/register",
        "username=walt&email=walt%40example.com&password=secret1&confirmPassword=secret1",
    )
    .await;
    assert_eq!(res.header("location").as_deref(), Some("/email-verification-pending?email=walt%40example.com"));
    let res = post_form(&app, "/api/resend-verification", "email=walt%40example.com").await;
    assert_eq!(res.header("location").as_deref(), Some("/email-verification-pending?email=walt%40example.com&sent=1"));
    let res = post_form(&app, "/api/resend-verification", "email=walt%40example.com").await;
    assert_eq!(
        res.header("location").as_deref(),
        Some("/email-verification-pending?email=walt%40example.com&error=cooldown")
    );
}

#[tokio::test]
async fn profile_page() {
    let app = TestApp::new().await;
    let res = app.get("/profile").await;
    assert_eq!(res.status, 200);
    assert!(res.text().contains("Please log in to view your profile."));
    assert_eq!(res.count("[data-island=Profile]"), 0);
    register(&app, "xena", "secret1").await;
    let res = app.get("/profile").await;
    assert_eq!(res.count("[data-island=Profile]"), 1);
    assert_eq!(res.select_text(".profile-name").as_deref(), Some("xena"));
    assert_eq!(res.select_text(".profile-avatar").as_deref(), Some("X"));
    assert_eq!(res.select_text(".profile-bio").as_deref(), Some("Movie enthusiast"));
    assert!(res.text().contains("xena@example.com"));
}

#[tokio::test]
async fn verification_pages() {
    let app = TestApp::new().await;
    for (path, to) in
        [("/verify-email", "/auth"), ("/email-verification", "/auth"), ("/email-verification-pending", "/auth")]
    {
        let res = app.get(path).await;
        assert_eq!(res.status, 303, "{path}");
        assert_eq!(res.header("location").as_deref(), Some(to), "{path}");
    }
    let res = app.get("/verify-email/abc").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.count("[data-island=VerifyEmail]"), 1);
    assert!(res.select_attr("[data-island=VerifyEmail]", "data-props").unwrap().contains("\"token\":\"abc\""));
    let res = app.get("/verify-email/abc?confirm=1").await;
    assert_eq!(res.select_text("h1").as_deref(), Some("Verification Failed"));
    assert!(res.text().contains("Contact support"));

    app.state.settings.set(&app.db, "require_email_verification", "true").await.unwrap();
    register(&app, "yuri", "secret1").await;
    let outbox = app.data_dir().join("outbox");
    let mail = std::fs::read_dir(&outbox).unwrap().next().unwrap().unwrap().path();
    let token = crate::accounts_mail::link_token(&std::fs::read_to_string(mail).unwrap());
    let res = app.get(&format!("/email-verification?token={token}&confirm=1")).await;
    assert_eq!(res.select_text("h1").as_deref(), Some("Email Verified!"));
    assert_eq!(res.select_attr("a.btn-primary", "href").as_deref(), Some("/auth"));

    let res = app.get("/email-verification-pending?email=yuri%40example.com").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.count("[data-island=PendingVerification]"), 1);
    assert!(res.select_text("main").unwrap().contains("yuri@example.com"));
}
