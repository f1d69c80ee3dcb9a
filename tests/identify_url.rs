//! Identify by URL (`url` instead of `file`, fetched with the strict outbound client) and
//! the opt-in `candidates` list (issue 14).
use axum::body::Body;
use axum::http::{Request, header};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::accounts::register;
use crate::api_keys::{keyed, new_key};
use crate::identify_support::{chat_completion, jpeg, leftovers, tmdb_fake};
use crate::support::TestApp;

/// A multipart `POST /api/identify` with these text fields (and no file).
pub fn form(fields: &[(&str, &str)]) -> Request<Body> {
    let boundary = "----reelfind-url-boundary";
    let mut body = String::new();
    for (name, value) in fields {
        body.push_str(&format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"));
    }
    body.push_str(&format!("--{boundary}--\r\n"));
    Request::post("/api/identify")
        .header(header::CONTENT_TYPE, format!("multipart/form-data; boundary={boundary}"))
        .body(Body::from(body))
        .unwrap()
}

/// An OpenAI fake answering with three candidates.
async fn openai_three() -> MockServer {
    let answer = json!({"candidates": [
        {"media_type": "movie", "title": "The Matrix", "year": 1999, "season": null, "episode": null,
         "confidence": 0.82, "imdb_id": null, "evidence": ["green code"], "fun_facts": []},
        {"media_type": "movie", "title": "Dark City", "year": 1998, "season": null, "episode": null,
         "confidence": 0.4, "imdb_id": null, "evidence": ["noir city"], "fun_facts": []},
        {"media_type": "movie", "title": "Equilibrium", "year": 2002, "season": null, "episode": null,
         "confidence": 0.2, "imdb_id": null, "evidence": [], "fun_facts": []}
    ]});
    let s = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_completion(&answer)))
        .mount(&s)
        .await;
    s
}

/// A "public" web server (a local fake; the app is told to allow private addresses, as
/// only tests ever are) serving an image, a text page, a redirect and a 404.
async fn web_fake() -> MockServer {
    let s = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/stills/scene.jpg"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(jpeg(640, 360), "image/jpeg"))
        .mount(&s)
        .await;
    Mock::given(method("GET"))
        .and(path("/lying.jpg"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(b"<html>not an image</html>".to_vec(), "image/jpeg"))
        .mount(&s)
        .await;
    Mock::given(method("GET"))
        .and(path("/moved.jpg"))
        .respond_with(ResponseTemplate::new(302).insert_header("location", "http://169.254.169.254/latest/meta-data"))
        .mount(&s)
        .await;
    Mock::given(method("GET"))
        .and(path("/huge.jpg"))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw([jpeg(64, 64), vec![0u8; 2 * 1024 * 1024]].concat(), "image/jpeg"),
        )
        .mount(&s)
        .await;
    s
}

async fn app(allow_private: bool, openai: &MockServer, tmdb: &MockServer) -> TestApp {
    TestApp::with_env([
        ("OPENAI_API_KEY", "sk-test".to_owned()),
        ("OPENAI_BASE_URL", format!("{}/v1", openai.uri())),
        ("TMDB_READ_TOKEN", "tmdb-token".to_owned()),
        ("TMDB_BASE_URL", format!("{}/3", tmdb.uri())),
        ("REELFIND_OUTBOUND_ALLOW_PRIVATE", allow_private.to_string()),
    ])
    .await
}

#[tokio::test]
async fn a_url_is_fetched_sniffed_and_identified_like_an_upload() {
    let (openai, tmdb, web) = (openai_three().await, tmdb_fake().await, web_fake().await);
    let app = app(true, &openai, &tmdb).await;
    assert_eq!(register(&app, "alice", "secret1").await.status, 201);
    let (_, key) = new_key(&app, "script").await;
    app.clear_cookies();

    let url = format!("{}/stills/scene.jpg", web.uri());
    let res = keyed(&app, &key, form(&[("url", &url), ("mode", "openai")])).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let r = res.json();
    assert_eq!(r["title"], "The Matrix");
    assert_eq!(r["mediaKind"], "image");
    assert!(r.get("candidates").is_none(), "candidates are opt-in: {r}");
    // The engine saw the fetched picture.
    let sent: Value = serde_json::from_slice(&openai.received_requests().await.unwrap()[0].body).unwrap();
    assert!(sent.to_string().contains("data:image/jpeg;base64,"), "the image went to the engine");
    assert!(leftovers(&app).is_empty(), "{:?}", leftovers(&app));

    // With candidates=2: the best two, scores descending, the winner first.
    let res = keyed(&app, &key, form(&[("url", &url), ("mode", "openai"), ("candidates", "2")])).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let c = res.json()["candidates"].clone();
    assert_eq!(c.as_array().unwrap().len(), 2, "{c}");
    assert_eq!(c[0]["title"], "The Matrix");
    assert_eq!(c[1]["title"], "Dark City");
    assert_eq!(c[1]["type"], "movie");
    assert_eq!(c[1]["year"], 1998);
    assert!(c[0]["confidence"].as_f64().unwrap() > c[1]["confidence"].as_f64().unwrap());
    for bad in ["11", "-1", "many"] {
        let res = keyed(&app, &key, form(&[("url", &url), ("candidates", bad)])).await;
        assert_eq!(res.status, 400, "{bad}: {}", res.text());
    }
}

#[tokio::test]
async fn what_a_url_holds_is_checked_like_an_upload() {
    let (openai, tmdb, web) = (openai_three().await, tmdb_fake().await, web_fake().await);
    let app = app(true, &openai, &tmdb).await;
    assert_eq!(register(&app, "alice", "secret1").await.status, 201);
    let (_, key) = new_key(&app, "script").await;
    app.clear_cookies();
    let url = format!("{}/stills/scene.jpg", web.uri());

    // Refusals leave nothing behind.
    for (p, status, text) in [
        ("/lying.jpg", 422, "not an image or video"),
        ("/moved.jpg", 422, "redirect"),
        ("/missing.jpg", 422, "HTTP 404"),
    ] {
        let res = keyed(&app, &key, form(&[("url", &format!("{}{p}", web.uri()))])).await;
        assert_eq!(res.status, status, "{p}: {}", res.text());
        assert!(res.json()["error"].as_str().unwrap().contains(text), "{p}: {}", res.text());
    }
    // The upload size cap holds for URLs too.
    app.state.settings.set(&app.db, "max_file_size", "1").await.unwrap();
    let res = keyed(&app, &key, form(&[("url", &format!("{}/huge.jpg", web.uri()))])).await;
    assert_eq!(res.status, 413, "{}", res.text());
    assert_eq!(res.json()["error"], "File too large. Maximum allowed size is 1MB.");
    assert!(leftovers(&app).is_empty(), "{:?}", leftovers(&app));

    // A file and a url at once, or neither: 400.
    let res = keyed(&app, &key, form(&[("url", &url), ("file", "x")])).await;
    assert_eq!(res.status, 400, "{}", res.text());
    let res = keyed(&app, &key, form(&[("mode", "openai")])).await;
    assert_eq!(res.status, 400);
    assert!(res.json()["error"].as_str().unwrap().contains("url"), "{}", res.text());
}

#[tokio::test]
async fn private_and_local_addresses_are_refused() {
    let (openai, tmdb, web) = (openai_three().await, tmdb_fake().await, web_fake().await);
    // The production setting: only public addresses.
    let app = app(false, &openai, &tmdb).await;
    assert_eq!(register(&app, "alice", "secret1").await.status, 201);
    let port = web.address().port();
    for url in [
        format!("http://127.0.0.1:{port}/stills/scene.jpg"),
        format!("http://localhost:{port}/stills/scene.jpg"),
        "http://169.254.169.254/latest/meta-data/iam".to_owned(),
        "http://10.0.0.8/a.jpg".to_owned(),
        "http://[::1]/a.jpg".to_owned(),
        "http://[::ffff:192.168.1.1]/a.jpg".to_owned(),
        "http://2130706433/a.jpg".to_owned(),
    ] {
        let res = app.send(form(&[("url", &url), ("mode", "openai")])).await;
        assert_eq!(res.status, 422, "{url}: {}", res.text());
        assert_eq!(
            res.json()["error"],
            "The url points to a private, local or reserved address. Only public http(s) addresses can be fetched.",
            "{url}"
        );
    }
    assert!(web.received_requests().await.unwrap().is_empty(), "nothing reached the private server");
    for (url, text) in [
        ("ftp://example.com/a.jpg", "only http:// and https://"),
        ("https://user:pw@example.com/a.jpg", "user name or password"),
        ("not a url", "not a valid URL"),
    ] {
        let res = app.send(form(&[("url", url)])).await;
        assert_eq!(res.status, 400, "{url}: {}", res.text());
        assert!(res.json()["error"].as_str().unwrap().contains(text), "{url}: {}", res.text());
    }
    assert!(openai.received_requests().await.unwrap().is_empty(), "no engine was paid");
    assert!(leftovers(&app).is_empty());
}
