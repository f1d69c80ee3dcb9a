//! Google sign-in against a local fake of Google's token and userinfo endpoints.
use base64::Engine;
use reelfind::entities::user;
use sea_orm::{EntityTrait, PaginatorTrait};
use serde_json::json;
use sha2::{Digest, Sha256};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::accounts::{login, register};
use crate::support::TestApp;

struct FakeGoogle {
    server: MockServer,
}

impl FakeGoogle {
    /// Token endpoint answers an access token; userinfo answers `profile` for that token.
    async fn start(profile: serde_json::Value) -> Self {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/token"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "access_token": "fake-access-token",
                "token_type": "Bearer",
                "expires_in": 3599,
                "scope": "openid email profile",
            })))
            .mount(&server)
            .await;
        Mock::given(method("GET"))
            .and(path("/userinfo"))
            .and(header("authorization", "Bearer fake-access-token"))
            .respond_with(ResponseTemplate::new(200).set_body_json(profile))
            .mount(&server)
            .await;
        Self { server }
    }

    async fn app(&self) -> TestApp {
        let base = self.server.uri();
        TestApp::with_env([
            ("GOOGLE_CLIENT_ID", "client-123.apps.example".to_owned()),
            ("GOOGLE_CLIENT_SECRET", "shh-secret".to_owned()),
            ("GOOGLE_AUTH_URL", format!("{base}/auth")),
            ("GOOGLE_TOKEN_URL", format!("{base}/token")),
            ("GOOGLE_USERINFO_URL", format!("{base}/userinfo")),
        ])
        .await
    }

    /// The form fields of every token request received so far.
    async fn token_requests(&self) -> Vec<Vec<(String, String)>> {
        self.server
            .received_requests()
            .await
            .unwrap()
            .into_iter()
            .filter(|r| r.url.path() == "/token")
            .map(|r| url::form_urlencoded::parse(&r.body).into_owned().collect())
            .collect()
    }
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// Follows `/api/auth/google` to the fake's auth URL and returns its query.
async fn begin(app: &TestApp, fake: &FakeGoogle) -> Vec<(String, String)> {
    let res = app.get("/api/auth/google").await;
    assert_eq!(res.status, 303, "{}", res.text());
    let location = res.header("location").unwrap();
    assert!(location.starts_with(&format!("{}/auth?", fake.server.uri())), "{location}");
    let cookie = res.header("set-cookie").unwrap();
    assert!(
        cookie.starts_with("reelfind_oauth_state=") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax")
    );
    url::Url::parse(&location).unwrap().query_pairs().into_owned().collect()
}

#[tokio::test]
async fn full_round_trip_creates_and_signs_in() {
    let fake = FakeGoogle::start(json!({
        "sub": "google-sub-1", "email": "Ada@Example.com", "email_verified": true,
        "name": "Ada Lovelace", "picture": "https://example.com/ada.png"
    }))
    .await;
    let app = fake.app().await;
    let q = begin(&app, &fake).await;
    assert_eq!(field(&q, "response_type"), Some("code"));
    assert_eq!(field(&q, "client_id"), Some("client-123.apps.example"));
    assert_eq!(field(&q, "redirect_uri"), Some("http://localhost:3000/api/auth/google/callback"));
    assert_eq!(field(&q, "code_challenge_method"), Some("S256"));
    assert!(field(&q, "scope").unwrap().contains("email"));
    let state = field(&q, "state").unwrap().to_owned();
    let challenge = field(&q, "code_challenge").unwrap().to_owned();

    // Google sends the browser back with a code and our state.
    let res = app.get(&format!("/api/auth/google/callback?code=the-code&state={state}")).await;
    assert_eq!(res.status, 303);
    assert_eq!(res.header("location").as_deref(), Some("/"));
    assert!(app.cookie("reelfind_session").is_some());
    assert!(app.cookie("reelfind_oauth_state").is_none(), "state cookie cleared");

    let me = app.get("/api/user").await.json();
    assert_eq!(me["username"], "ada.lovelace");
    assert_eq!(me["email"], "ada@example.com");
    assert_eq!(me["emailVerified"], true);
    assert_eq!(me["displayName"], "Ada Lovelace");
    assert_eq!(me["profilePicture"], "https://example.com/ada.png");

    // What our client sent to the token endpoint: the code, the PKCE verifier matching the
    // challenge, and the client credentials.
    let sent = fake.token_requests().await;
    assert_eq!(sent.len(), 1);
    let form = &sent[0];
    assert_eq!(field(form, "grant_type"), Some("authorization_code"));
    assert_eq!(field(form, "code"), Some("the-code"));
    assert_eq!(field(form, "client_id"), Some("client-123.apps.example"));
    assert_eq!(field(form, "client_secret"), Some("shh-secret"));
    assert_eq!(field(form, "redirect_uri"), Some("http://localhost:3000/api/auth/google/callback"));
    let verifier = field(form, "code_verifier").expect("PKCE verifier sent");
    let derived = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    assert_eq!(derived, challenge);

    // The state is single-use.
    app.clear_cookies();
    let res = app.get(&format!("/api/auth/google/callback?code=the-code&state={state}")).await;
    assert_eq!(res.header("location").as_deref(), Some("/auth?error=google_failed"));

    // Signing in again finds the same account (by Google id), a second name is not made.
    app.clear_cookies();
    let q = begin(&app, &fake).await;
    let state = field(&q, "state").unwrap().to_owned();
    app.get(&format!("/api/auth/google/callback?code=c2&state={state}")).await;
    assert_eq!(app.get("/api/user").await.json()["username"], "ada.lovelace");
    assert_eq!(user::Entity::find().count(&app.db).await.unwrap(), 1);
}

#[tokio::test]
async fn state_must_match_this_browser() {
    let fake = FakeGoogle::start(json!({"sub": "s2", "email": "bo@example.com", "email_verified": true})).await;
    let app = fake.app().await;
    let q = begin(&app, &fake).await;
    let state = field(&q, "state").unwrap().to_owned();
    let res = app.get("/api/auth/google/callback?code=x&state=forged-state").await;
    assert_eq!(res.header("location").as_deref(), Some("/auth?error=google_failed"));
    assert!(fake.token_requests().await.is_empty(), "no code redeemed for a forged state");
    // A different browser (no state cookie) cannot complete someone else's sign-in.
    app.clear_cookies();
    let res = app.get(&format!("/api/auth/google/callback?code=x&state={state}")).await;
    assert_eq!(res.header("location").as_deref(), Some("/auth?error=google_failed"));
    assert!(app.cookie("reelfind_session").is_none());
    // The user cancelled at Google.
    let res = app.get("/api/auth/google/callback?error=access_denied").await;
    assert_eq!(res.header("location").as_deref(), Some("/auth?error=google_failed"));
}

#[tokio::test]
async fn unverified_google_email_is_refused() {
    let fake = FakeGoogle::start(json!({"sub": "s3", "email": "eve@example.com", "email_verified": false})).await;
    let app = fake.app().await;
    let q = begin(&app, &fake).await;
    let state = field(&q, "state").unwrap().to_owned();
    let res = app.get(&format!("/api/auth/google/callback?code=x&state={state}")).await;
    assert_eq!(res.header("location").as_deref(), Some("/auth?error=google_failed"));
    assert_eq!(user::Entity::find().count(&app.db).await.unwrap(), 0);
}

#[tokio::test]
async fn existing_account_is_linked_and_a_squatter_locked_out() {
    let fake =
        FakeGoogle::start(json!({"sub": "s4", "email": "vic@example.com", "email_verified": "true", "name": "Vic"}))
            .await;
    let app = fake.app().await;
    // Someone registered vic@example.com with their own password, never verifying it.
    register(&app, "vic", "squatter1").await;
    let squatter = app.cookie("reelfind_session").unwrap();
    // ...and made an API key with it.
    let (_, key) = crate::api_keys::new_key(&app, "squatter's").await;
    app.clear_cookies();
    let q = begin(&app, &fake).await;
    let state = field(&q, "state").unwrap().to_owned();
    app.get(&format!("/api/auth/google/callback?code=x&state={state}")).await;
    let me = app.get("/api/user").await.json();
    assert_eq!(me["username"], "vic");
    assert_eq!(me["emailVerified"], true);
    assert_eq!(user::Entity::find().count(&app.db).await.unwrap(), 1);
    // The squatter's password and session no longer work.
    app.clear_cookies();
    assert_eq!(login(&app, "vic", "squatter1").await.status, 401);
    let req = axum::http::Request::get("/api/user")
        .header("cookie", format!("reelfind_session={squatter}"))
        .body(axum::body::Body::empty())
        .unwrap();
    assert_eq!(app.send(req).await.status, 401);
    // Nor does the key made with them.
    assert_eq!(crate::api_keys::keyed(&app, &key, crate::api_keys::get("/api/history")).await.status, 401);
}

#[tokio::test]
async fn without_credentials_the_button_explains() {
    let app = TestApp::new().await;
    let res = app.get("/api/auth/google").await;
    assert_eq!(res.status, 303);
    assert_eq!(res.header("location").as_deref(), Some("/auth?error=google_unavailable"));
    let res = app.get("/api/auth/google/callback?code=x&state=y").await;
    assert_eq!(res.header("location").as_deref(), Some("/auth?error=google_unavailable"));
}
