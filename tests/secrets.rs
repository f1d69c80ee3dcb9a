//! Keys never reach the log or a stored error, even when a provider quotes them back or a
//! transport error names a URL with a key in its query; and a model's IMDb id cannot steer
//! the keyed catalog request.
use serde_json::json;
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::identify_support::*;
use crate::server::{Client, Server};

const KEYS: [(&str, &str); 6] = [
    ("OPENAI_API_KEY", "sk-openai-live-5f1e9c0d7b3a2468"),
    ("ANTHROPIC_API_KEY", "sk-ant-live-a8c7e6d5f4b3a291"),
    ("GEMINI_API_KEY", "AIzaGeminiLive-77ab55cd33ef11"),
    ("XAI_API_KEY", "xai-live-0b1c2d3e4f5a6b7c8d"),
    ("TMDB_API_KEY", "tmdb3live9f8e7d6c5b4a3210"),
    ("OMDB_API_KEY", "omdblive1357"),
];

/// Answers 401 quoting whatever credential came with the request, as careless APIs do.
fn echo_credentials(req: &Request) -> ResponseTemplate {
    let mut seen = String::new();
    for h in ["authorization", "x-api-key", "x-goog-api-key"] {
        if let Some(v) = req.headers.get(h) {
            seen.push_str(v.to_str().unwrap_or(""));
            seen.push(' ');
        }
    }
    ResponseTemplate::new(401)
        .set_body_json(json!({"error": {"message": format!("Incorrect API key provided: {seen}")}}))
}

/// A listener that accepts connections and drops them: a transport error whose text names
/// the URL (with OMDb's key in the query).
async fn hang_up_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            drop(socket);
        }
    });
    format!("http://{addr}/")
}

#[tokio::test]
async fn configured_keys_never_appear_in_the_log_after_provider_errors() {
    let openai = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_completion(&json!({"candidates": [{
            "media_type": "movie", "title": "The Matrix", "year": 1999, "season": null, "episode": null,
            "confidence": 0.9, "imdb_id": "tt0133093", "evidence": [], "fun_facts": []}]}))))
        .up_to_n_times(1)
        .mount(&openai)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_completion(&answer(
            "Echo Title",
            2001,
            "movie",
            0.9,
        ))))
        .mount(&openai)
        .await;
    let failing = MockServer::start().await;
    Mock::given(method("POST")).respond_with(echo_credentials).mount(&failing).await;
    let tmdb = tmdb_fake().await;
    Mock::given(method("GET"))
        .and(path("/3/find/tt0133093"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"movie_results": [
            {"id": 603, "title": "The Matrix", "release_date": "1999-03-31", "popularity": 80.5}], "tv_results": []})))
        .mount(&tmdb)
        .await;
    // A catalog error that quotes the whole request, query string (and key) included.
    Mock::given(method("GET"))
        .and(path("/3/search/movie"))
        .and(query_param("query", "Echo Title"))
        .respond_with(|req: &Request| {
            ResponseTemplate::new(500)
                .set_body_json(json!({"status_message": format!("Internal error for {}", req.url)}))
        })
        .with_priority(1)
        .mount(&tmdb)
        .await;

    let dir = tempfile::tempdir().unwrap();
    let mut env: Vec<(&str, String)> = KEYS.iter().map(|(k, v)| (*k, (*v).to_owned())).collect();
    env.extend([
        ("REELFIND_DATA_DIR", dir.path().join("data").display().to_string()),
        ("OPENAI_BASE_URL", format!("{}/v1", openai.uri())),
        ("ANTHROPIC_BASE_URL", failing.uri()),
        ("GEMINI_BASE_URL", format!("{}/v1beta", failing.uri())),
        ("XAI_BASE_URL", format!("{}/v1", failing.uri())),
        ("TMDB_BASE_URL", format!("{}/3", tmdb.uri())),
        ("OMDB_BASE_URL", hang_up_server().await),
        ("REELFIND_SECRET_KEY", "s".repeat(40)),
    ]);
    let mut server = Server::start("keys", dir.path(), &env).await;
    let mut me = Client::new(&server.origin);
    let (status, body) = me
        .post_json("/api/register", &json!({"username": "kim", "email": "kim@example.com", "password": "secret1"}))
        .await;
    assert_eq!(status, 201, "{body}");
    let mut answers = Vec::new();
    for (i, w) in [320u32, 321].into_iter().enumerate() {
        let (status, body) = me.identify(jpeg(w, 200), "scene.jpg", "image/jpeg", "ensemble").await;
        assert_eq!(status, 200, "upload {i}: {body}");
        answers.push(body);
    }
    server.stop();
    let log = server.log_text();

    // The errors did happen (and were logged), so the test is not vacuous.
    assert!(log.contains("provider answered with an error"), "{log}");
    assert!(log.contains("OMDb failed") || log.contains("provider request failed"), "{log}");
    assert!(log.contains("TMDB search failed"), "{log}");
    assert!(log.contains("[redacted]"), "providers quoted keys back, and they were scrubbed: {log}");
    for (name, key) in KEYS {
        assert!(!log.contains(key), "{name} reached the log");
        for a in &answers {
            assert!(!a.contains(key), "{name} reached an answer (stored engine errors)");
        }
    }
}

#[tokio::test]
async fn a_crafted_imdb_id_cannot_steer_the_catalog_request() {
    let openai = openai_fake(&json!({"candidates": [{
        "media_type": "movie", "title": "The Matrix", "year": 1999, "season": null, "episode": null,
        "confidence": 0.9, "imdb_id": "tt0133093/../../account/1?x=", "evidence": [], "fun_facts": []}]}))
    .await;
    let tmdb = tmdb_fake().await;
    let app = crate::support::TestApp::with_env([
        ("OPENAI_API_KEY", "k".to_owned()),
        ("OPENAI_BASE_URL", format!("{}/v1", openai.uri())),
        ("TMDB_READ_TOKEN", "t".to_owned()),
        ("TMDB_BASE_URL", format!("{}/3", tmdb.uri())),
    ])
    .await;
    let res = upload(&app, Upload::image(jpeg(300, 200), "openai")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["title"], "The Matrix");
    let paths: Vec<String> = tmdb.received_requests().await.unwrap().iter().map(|r| r.url.path().to_owned()).collect();
    assert!(paths.iter().all(|p| !p.contains("account") && !p.contains("/find/")), "{paths:?}");
    assert!(paths.contains(&"/3/search/movie".to_owned()), "{paths:?}");
}
