use crate::support::TestApp;

#[tokio::test]
async fn settings_have_documented_defaults() {
    let app = TestApp::new().await;
    let res = app.get("/api/settings").await;
    assert_eq!(res.status, 200);
    let s = res.json();
    assert_eq!(s["site_name"], "Reelfind");
    assert_eq!(s["site_description"], "Instantly identify movies and TV shows.");
    assert_eq!(s["max_file_size"], "10");
    assert_eq!(s["allowed_file_types"], "jpg,jpeg,png,webp,mp4,mov");
    assert_eq!(s["support_hours"], "Monday - Friday: 9:00 AM - 5:00 PM EST");
    assert_eq!(s["response_time"], "Within 24 hours");
}

#[tokio::test]
async fn stored_setting_overrides_default_and_secrets_stay_private() {
    let app = TestApp::new().await;
    app.state.settings.set(&app.db, "site_name", "Scenefinder").await.unwrap();
    app.state.settings.set(&app.db, "tmdb_api_key", "very-secret").await.unwrap();
    let s = app.get("/api/settings").await.json();
    assert_eq!(s["site_name"], "Scenefinder");
    assert!(s.get("tmdb_api_key").is_none());
    let home = app.get("/").await;
    assert!(home.select_text("title").unwrap().contains("Scenefinder"));
}

#[tokio::test]
async fn models_shape() {
    let app = TestApp::new().await;
    let m = app.get("/api/models").await.json();
    for engine in ["google", "openai", "xai", "anthropic", "ensemble"] {
        assert!(m["available"][engine].is_boolean(), "{engine} missing in {m}");
    }
    assert!(m["recommended"].is_string());
}

#[tokio::test]
async fn unknown_api_path_is_json_404() {
    let app = TestApp::new().await;
    let res = app.get("/api/nope").await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["error"], "Not found");
}

#[tokio::test]
async fn health() {
    let app = TestApp::new().await;
    let res = app.get("/healthz").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.text(), "ok");
    let res = app.get("/readyz").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.header("cache-control").as_deref(), Some("no-store"));
    let body = res.json();
    assert_eq!(body["status"], "ready");
    assert_eq!(body["checks"]["database"], "ok");
    assert_eq!(body["checks"]["library"], "ok");

    // Without its database the node is alive but not ready.
    app.db.clone().close().await.unwrap();
    let res = app.get("/healthz").await;
    assert_eq!((res.status.as_u16(), res.text().as_str()), (200, "ok"), "liveness needs no database");
    let res = app.get("/readyz").await;
    assert_eq!(res.status, 503);
    let body = res.json();
    assert_eq!(body["status"], "unavailable");
    assert_eq!(body["checks"]["database"], "the database does not answer");
}

/// PostgreSQL cannot store a NUL byte in text (SQLite can). Whatever route such text reaches,
/// the answer is the client's error (or a plain "no"), never a 500.
#[tokio::test]
async fn text_a_database_cannot_store_is_refused_as_input_not_a_server_error() {
    let app = TestApp::new().await;
    assert!(app.register("nulltester", "secret-pass-1").await.status.is_success());
    let res = app.get("/api/notifications/status?endpoint=https%3A%2F%2Fpush.example%2F%00x").await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["isSubscribed"], false);

    let writes = [
        ("/api/testimonials", serde_json::json!({"rating": 5, "review": "Great\u{0}film"})),
        ("/api/login", serde_json::json!({"username": "nul\u{0}ltester", "password": "secret-pass-1"})),
        (
            "/api/register",
            serde_json::json!({"username": "a\u{0}b", "email": "a\u{0}b@example.com", "password": "secret-pass-1"}),
        ),
        ("/api/forgot-password", serde_json::json!({"email": "x\u{0}@example.com"})),
    ];
    for (path, body) in writes {
        let res = app.post_json(path, &body).await;
        assert!(res.status.as_u16() < 500, "{path}: {} {}", res.status, res.text());
    }
}
