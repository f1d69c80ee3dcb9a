//! What a share link shows: the public shape for everyone but the owner, nothing once the
//! owner stopped sharing, and no identification ids on the home page.
use chrono::Utc;
use reelfind::entities::identification;
use sea_orm::{ActiveModelTrait, Set};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::identify_support::*;
use crate::support::TestApp;

const TRANSCRIPT: &str = "Meet me at the docks at midnight, bring the money.";

/// A stored result with everything private a result can carry.
fn full_result(id: &str) -> Value {
    json!({
        "identificationId": id, "id": 603, "tmdbId": 603, "title": "The Matrix", "year": "1999", "type": "movie",
        "confidence": 0.91, "confidenceScore": 0.91, "genres": ["Action"], "description": "A hacker learns the truth.",
        "posterUrl": "https://image.tmdb.org/t/p/w500/matrix.jpg",
        "streamingPlatforms": {"flatrate": [{"name": "Netflix"}], "rent": [], "buy": []},
        "audioAnalysisResults": {"requested": true, "hasAudio": true, "transcribed": true, "transcript": TRANSCRIPT,
                                 "engine": "openai:gpt-4o-mini-transcribe", "summary": "Speech was transcribed."},
        "reasons": [format!("dialogue: {TRANSCRIPT}")],
        "engine": "ensemble", "mode": "ensemble", "model": "gpt-4.1-mini",
        "engineVotes": [{"engine": "openai", "title": "The Matrix", "ms": 900, "agreed": true}],
        "timestamp": {"from": 12.0, "at": 13.5, "to": 15.0},
        "previewUrl": "/api/library/preview/home-videos-wedding-2019.mkv",
        "timings": {"totalMs": 1234}, "createdAt": Utc::now().to_rfc3339()
    })
}

async fn store(app: &TestApp, owner: Option<i64>) -> String {
    let id = reelfind::identify::store::new_id();
    identification::ActiveModel {
        id: Set(id.clone()),
        user_id: Set(owner),
        title: Set("The Matrix".into()),
        year: Set(Some("1999".into())),
        media_type: Set("movie".into()),
        poster_url: Set(None),
        confidence: Set(0.91),
        rating: Set(Some(8.2)),
        engine: Set("ensemble".into()),
        mode: Set("ensemble".into()),
        content_hash: Set("0".repeat(64)),
        result: Set(full_result(&id).to_string()),
        total_ms: Set(1234),
        created_at: Set(Utc::now()),
        shared: Set(true),
        memory_id: Set(None),
    }
    .insert(&app.db)
    .await
    .unwrap();
    id
}

fn assert_public(text: &str) {
    for private in [
        "docks at midnight",
        "transcript",
        "audioAnalysisResults",
        "engineVotes",
        "reasons",
        "wedding-2019",
        "previewUrl",
        "gpt-4.1-mini",
        "timings",
        "userId",
        "owner-olivia",
    ] {
        assert!(!text.contains(private), "{private} reached a public view: {text}");
    }
}

#[tokio::test]
async fn others_see_the_public_shape_and_the_owner_sees_everything() {
    let app = TestApp::new().await;
    let owner = app.register("owner-olivia", "secret1").await.json()["id"].as_i64().unwrap();
    let id = store(&app, Some(owner)).await;

    let mine = app.get(&format!("/api/identification/{id}")).await;
    assert_eq!(mine.status, 200);
    let m = mine.json();
    assert_eq!(m["audioAnalysisResults"]["transcript"], TRANSCRIPT, "the owner keeps their full result");
    assert_eq!((m["isOwner"].clone(), m["shared"].clone()), (json!(true), json!(true)));

    app.clear_cookies();
    let public = app.get(&format!("/api/identification/{id}")).await;
    assert_eq!(public.status, 200);
    assert_public(&public.text());
    let p = public.json();
    assert_eq!(p["title"], "The Matrix");
    assert_eq!(p["streamingPlatforms"]["flatrate"][0]["name"], "Netflix");
    assert_eq!(p["confidenceScore"], 0.91);
    assert!(p.get("isOwner").is_none());

    let page = app.get(&format!("/shared/{id}")).await;
    assert_eq!(page.status, 200);
    assert_public(&page.text());
    assert_eq!(page.select_text("h1").unwrap(), "The Matrix (1999)");

    // Someone else signed in sees the public shape too.
    app.register("mallory", "secret1").await;
    assert_public(&app.get(&format!("/api/identification/{id}")).await.text());
}

#[tokio::test]
async fn a_real_clip_with_speech_shares_no_transcript() {
    let openai = openai_fake(&answer("The Matrix", 1999, "movie", 0.9)).await;
    Mock::given(method("POST"))
        .and(path("/v1/audio/transcriptions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"text": TRANSCRIPT})))
        .mount(&openai)
        .await;
    let app =
        TestApp::with_env([("OPENAI_API_KEY", "k".to_owned()), ("OPENAI_BASE_URL", format!("{}/v1", openai.uri()))])
            .await;
    let clip = mp4(app.data_dir(), 3, true);
    let res = app.upload(&Upload::video(clip, "openai", true)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["audioAnalysisResults"]["transcript"], TRANSCRIPT, "the person who uploaded sees it");
    let id = res.json()["identificationId"].as_str().unwrap().to_owned();
    app.clear_cookies();
    let shared = app.get(&format!("/api/identification/{id}")).await;
    assert_eq!(shared.status, 200);
    assert_public(&shared.text());
    assert_public(&app.get(&format!("/shared/{id}")).await.text());
}

#[tokio::test]
async fn the_owner_can_stop_sharing_and_the_link_answers_404() {
    let app = TestApp::new().await;
    let owner = app.register("owner-olivia", "secret1").await.json()["id"].as_i64().unwrap();
    let id = store(&app, Some(owner)).await;
    let res = app.send(put_json(&format!("/api/identification/{id}/sharing"), &json!({"shared": false}))).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"shared": false}));
    assert_eq!(app.get(&format!("/api/identification/{id}")).await.json()["shared"], false, "the owner still sees it");
    assert_eq!(app.get(&format!("/shared/{id}")).await.status, 200);

    let owner_cookies = app.cookie("reelfind_session").unwrap();
    app.clear_cookies();
    let gone = app.get(&format!("/api/identification/{id}")).await;
    assert_eq!(gone.status, 404);
    assert_eq!(gone.json()["error"], "This shared identification link is no longer available");
    let page = app.get(&format!("/shared/{id}")).await;
    assert_eq!(page.status, 404);
    assert_eq!(page.select_text("main .lead").unwrap(), "This shared identification link is no longer available.");
    assert_public(&page.text());
    let top = app.get("/api/history/top-confident").await;
    assert_eq!(top.json(), json!([]), "an unshared identification is not featured");

    // Nobody else can turn sharing back on (or find out the id exists).
    app.register("mallory", "secret1").await;
    let res = app.send(put_json(&format!("/api/identification/{id}/sharing"), &json!({"shared": true}))).await;
    assert_eq!(res.status, 404);
    app.clear_cookies();
    let res = app.send(put_json(&format!("/api/identification/{id}/sharing"), &json!({"shared": true}))).await;
    assert_eq!(res.status, 401);

    // The owner shares it again.
    let mut req = put_json(&format!("/api/identification/{id}/sharing"), &json!({"shared": true}));
    req.headers_mut().insert("cookie", format!("reelfind_session={owner_cookies}").parse().unwrap());
    assert_eq!(app.send(req).await.status, 200);
    app.clear_cookies();
    assert_eq!(app.get(&format!("/api/identification/{id}")).await.status, 200);
}

#[tokio::test]
async fn the_home_page_list_hands_out_no_identification_ids() {
    let app = TestApp::new().await;
    let id = store(&app, None).await;
    let top = app.get("/api/history/top-confident").await;
    assert_eq!(top.status, 200);
    let text = top.text();
    assert!(!text.contains(&id), "{text}");
    assert_public(&text);
    assert_eq!(top.json()[0]["title"], "The Matrix");
}

fn put_json(path: &str, body: &Value) -> axum::http::Request<axum::body::Body> {
    axum::http::Request::put(path)
        .header("content-type", "application/json")
        .body(axum::body::Body::from(body.to_string()))
        .unwrap()
}
