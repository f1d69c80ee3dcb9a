//! The OpenAPI document (`/api/openapi.json`) and the one error shape of `/api`.
use axum::body::Body;
use axum::extract::MatchedPath;
use axum::http::{Method, Request};
use http_body_util::BodyExt;
use reelfind::error::ErrorCode;
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::support::TestApp;

const METHODS: [&str; 5] = ["get", "put", "post", "delete", "patch"];

async fn document(app: &TestApp) -> Value {
    let res = app.get("/api/openapi.json").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.header("content-type").as_deref(), Some("application/json"));
    res.json()
}

/// Every `$ref` in `v`, e.g. `#/components/schemas/ErrorBody`.
fn refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref") {
                out.push(r.clone());
            }
            m.values().for_each(|v| refs(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[tokio::test]
async fn the_document_is_openapi_3_1_and_self_consistent() {
    let app = TestApp::new().await;
    let doc = document(&app).await;
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["title"], "Reelfind API");
    // Every reference points at a component. (CI also checks the whole document against the
    // OpenAPI 3.1 schema with openapi-spec-validator, see .ci/fuzz-api.)
    let mut all = Vec::new();
    refs(&doc, &mut all);
    assert!(!all.is_empty());
    for r in all {
        let name = r.strip_prefix("#/components/schemas/").unwrap_or_else(|| panic!("unexpected $ref {r}"));
        assert!(doc["components"]["schemas"][name].is_object(), "{r} does not resolve");
    }
    // Every operation: a tag, at least one success answer, and the error body for the rest.
    let mut operations = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        assert!(path.starts_with("/api/"), "{path}");
        for m in METHODS {
            let Some(op) = item.get(m) else { continue };
            operations += 1;
            assert!(op["tags"].as_array().is_some_and(|t| !t.is_empty()), "{m} {path} has no tag");
            let responses = op["responses"].as_object().unwrap();
            assert!(responses.keys().any(|s| s.starts_with('2') || s.starts_with('3')), "{m} {path}: no success");
            assert_eq!(
                responses["default"]["content"]["application/json"]["schema"]["$ref"], "#/components/schemas/ErrorBody",
                "{m} {path}"
            );
        }
    }
    assert!(operations >= 50, "only {operations} operations documented");
    // The error codes are listed, all of them.
    let codes: Vec<&str> = doc["components"]["schemas"]["ErrorCode"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let expected: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(codes.len(), expected.len());
    for c in expected {
        assert!(codes.contains(&c), "{c} missing from the ErrorCode schema");
    }
    let required = &doc["components"]["schemas"]["ErrorBody"]["required"];
    assert_eq!(required, &json!(["error", "message", "code"]));
}

/// Each documented operation reaches a handler registered for exactly that path and method
/// (the router is the one the app serves, built with the document in one step).
#[tokio::test]
async fn every_documented_operation_is_routed_and_every_route_documented() {
    let app = TestApp::new().await;
    let (router, doc) = reelfind::routes::api::openapi::split();
    let doc = serde_json::to_value(doc).unwrap();
    let router = router
        .layer(axum::middleware::from_fn(|req: Request<Body>, next: axum::middleware::Next| async move {
            let matched = req.extensions().get::<MatchedPath>().map(|m| m.as_str().to_owned()).unwrap_or_default();
            let mut res = next.run(req).await;
            res.headers_mut().insert("x-matched", matched.parse().unwrap());
            res
        }))
        .with_state(app.state.clone());
    let mut seen = 0;
    let param = regex::Regex::new(r"\{[^}]+\}").unwrap();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for m in METHODS {
            if item.get(m).is_none() {
                continue;
            }
            let concrete = param.replace_all(path, "1").into_owned();
            let req = Request::builder()
                .method(Method::from_bytes(m.to_uppercase().as_bytes()).unwrap())
                .uri(&concrete)
                .body(Body::empty())
                .unwrap();
            let res = router.clone().oneshot(req).await.unwrap();
            let matched = res.headers().get("x-matched").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
            assert_ne!(res.status(), 405, "{m} {path} is documented but not routed for that method");
            assert_eq!(matched, *path, "{m} {path} reached {matched:?}");
            let _ = res.into_body().collect().await;
            seen += 1;
        }
    }
    assert!(seen >= 50);
    // The other direction: API modules add routes only with `routes!`, which documents them;
    // a bare `.route(` or a plain axum `Router` would serve an undocumented route.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/routes/api");
    let bad = regex::Regex::new(r"\.route\(|\.route_service\(|\.nest_service\(|(^|[^A-Za-z])Router::new\(").unwrap();
    let mut files = Vec::new();
    let mut dirs = vec![dir];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() { dirs.push(path) } else { files.push(path) }
        }
    }
    assert!(files.iter().any(|f| f.ends_with("admin/blog.rs")), "the walk reaches the folders: {files:?}");
    for path in files {
        let src = std::fs::read_to_string(&path).unwrap();
        let hits = src.lines().filter(|l| !l.trim_start().starts_with("//") && bad.is_match(l)).count();
        assert_eq!(hits, 0, "{} registers a route with {bad}: use utoipa_axum::routes! instead", path.display());
    }
}

async fn error_of(res: crate::support::TestResponse) -> (u16, Value) {
    assert_eq!(res.header("content-type").as_deref(), Some("application/json"), "{}", res.text());
    let v = res.json();
    assert!(v["error"].is_string() && v["message"].is_string() && v["code"].is_string(), "{v}");
    assert_eq!(v["error"], v["message"]);
    (res.status.as_u16(), v)
}

#[tokio::test]
async fn errors_have_one_shape_with_a_stable_code() {
    let app = TestApp::new().await;
    let (s, v) = error_of(app.get("/api/nope").await).await;
    assert_eq!((s, v["code"].as_str()), (404, Some("not_found")));
    let (s, v) = error_of(app.get("/api/user").await).await;
    assert_eq!((s, v["code"].as_str()), (401, Some("not_authenticated")));
    assert_eq!(v["error"], "Not authenticated");
    // Framework refusals too: an unknown method, a malformed query, a wrong Content-Type.
    let (s, v) = error_of(app.send(Request::patch("/api/history").body(Body::empty()).unwrap()).await).await;
    assert_eq!((s, v["code"].as_str()), (405, Some("method_not_allowed")));
    let (s, v) = error_of(app.get("/api/blog?limit=lots").await).await;
    assert_eq!((s, v["code"].as_str()), (400, Some("invalid_request")));
    assert!(v["message"].as_str().unwrap().contains("limit"), "{v}");
    let res = app
        .send(Request::post("/api/login").header("content-type", "application/json").body(Body::from("{")).unwrap())
        .await;
    let (s, v) = error_of(res).await;
    assert_eq!((s, v["code"].as_str()), (400, Some("invalid_body")));
    let res = app.post_json("/api/login", &json!({"username": "nobody", "password": "wrong-password"})).await;
    let (s, v) = error_of(res).await;
    assert_eq!((s, v["code"].as_str()), (401, Some("invalid_credentials")));
    assert_eq!(v["error"], "Invalid username or password");
    // A write from another origin with a session cookie: the CSRF guard's refusal.
    crate::accounts::register(&app, "coder", "password123").await;
    let res = app
        .send(Request::post("/api/logout").header("origin", "https://evil.example").body(Body::empty()).unwrap())
        .await;
    let (s, v) = error_of(res).await;
    assert_eq!((s, v["code"].as_str()), (403, Some("cross_origin_refused")));
    let (s, v) = error_of(app.get("/api/admin/users").await).await;
    assert_eq!((s, v["code"].as_str()), (403, Some("admin_required")));
    let (s, v) = error_of(
        app.post_json(
            "/api/account/password",
            &json!({
                "currentPassword": "password123", "newPassword": "abcdefgh", "confirmPassword": "abcdefgX"
            }),
        )
        .await,
    )
    .await;
    assert_eq!((s, v["code"].as_str()), (400, Some("password_mismatch")));
    let (s, v) = error_of(
        app.post_json(
            "/api/account/password",
            &json!({
                "currentPassword": "not-it", "newPassword": "abcdefgh"
            }),
        )
        .await,
    )
    .await;
    assert_eq!((s, v["code"].as_str()), (401, Some("wrong_password")));
    let (s, v) = error_of(
        app.post_json(
            "/api/account/password",
            &json!({
                "currentPassword": "password123", "newPassword": "abc"
            }),
        )
        .await,
    )
    .await;
    assert_eq!((s, v["code"].as_str()), (400, Some("weak_password")));
    // The HTML form of the same page gets the same code in its redirect.
    let res = app
        .send(
            Request::post("/api/account/password")
                .header("content-type", "application/x-www-form-urlencoded")
                .body(Body::from("currentPassword=not-it&newPassword=abcdefgh"))
                .unwrap(),
        )
        .await;
    assert_eq!(res.header("location").as_deref(), Some("/account?error=wrong_password"));
    let (s, v) = error_of(
        app.post_json(
            "/api/register",
            &json!({
                "username": "coder", "email": "other@example.com", "password": "password123"
            }),
        )
        .await,
    )
    .await;
    assert_eq!((s, v["code"].as_str()), (409, Some("already_registered")));
}

#[test]
fn every_code_is_snake_case_unique_and_described() {
    let mut seen = std::collections::HashSet::new();
    for c in ErrorCode::ALL {
        let s = c.as_str();
        assert!(s.chars().all(|ch| ch.is_ascii_lowercase() || ch == '_'), "{s}");
        assert!(seen.insert(s), "{s} twice");
        assert_eq!(serde_json::to_value(c).unwrap(), json!(s));
        assert!(c.describe().len() > 10);
    }
}

/// Found by the fuzzer (`.ci/fuzz-api`): offsets past what SQL's signed 64-bit integers
/// hold failed the query (500), and a huge history page overflowed (a panic, 500).
#[tokio::test]
async fn huge_offsets_and_pages_are_empty_pages_not_errors() {
    let app = TestApp::new().await;
    let res = app.get("/api/blog?offset=18446744073709551615&limit=5").await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["posts"], json!([]));
    crate::accounts::register(&app, "pager", "password123").await;
    let res = app.get("/api/history?page=18446744073709551615&limit=100").await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["items"], json!([]));
}
