//! The answer memory and "Was this right?" (issue 41), with the provider fakes: an answer
//! remembered from one person's upload answers another person's re-encoded, resized and
//! cropped copy with no engine call; another film's frame is not answered from memory; one
//! correction does not flip a remembered answer, two independent ones do; the admin's
//! Corrections queue; two nodes on one database share the memory. On SQLite, and on
//! PostgreSQL with `TEST_DATABASE_URL`.
use std::io::Cursor;
use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, header};
use image::DynamicImage;
use sea_orm::EntityTrait;
use serde_json::{Value, json};
use tower::ServiceExt;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::identify_support::{Upload, answer, openai_fake, tmdb_fake};
use crate::library::{demo_clip, ffmpeg, second_film};
use crate::support::{ORIGIN, Person, TestApp, TestResponse};

struct Fixture {
    app: TestApp,
    openai: MockServer,
    _tmdb: MockServer,
}

/// An app whose OpenAI fake says "The Matrix" and whose TMDB fake also knows Heat (949).
async fn fixture() -> Fixture {
    let openai = openai_fake(&answer("The Matrix", 1999, "movie", 0.9)).await;
    let tmdb = tmdb_fake().await;
    Mock::given(method("GET"))
        .and(path("/3/movie/949"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": 949, "imdb_id": "tt0113277", "title": "Heat", "original_title": "Heat",
            "overview": "Obsessive master thief Neil McCauley leads a top-notch crew.", "release_date": "1995-12-15",
            "runtime": 170, "genres": [{"id": 80, "name": "Crime"}], "poster_path": "/heat.jpg", "vote_average": 7.9,
            "credits": {"cast": [{"id": 1158, "name": "Al Pacino", "character": "Hanna", "order": 0}], "crew": []},
            "videos": {"results": []}, "watch/providers": {"results": {}}, "recommendations": {"results": []},
            "external_ids": {"imdb_id": "tt0113277"}, "release_dates": {"results": []}
        })))
        .mount(&tmdb)
        .await;
    Mock::given(method("GET"))
        .and(path("/3/search/multi"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"page": 1, "total_pages": 1, "total_results": 3, "results": [
            {"media_type": "movie", "id": 949, "title": "Heat", "release_date": "1995-12-15", "poster_path": "/heat.jpg", "popularity": 40.0},
            {"media_type": "person", "id": 1158, "name": "Al Pacino"},
            {"media_type": "tv", "id": 7777, "name": "Heat Wave", "first_air_date": "2009-05-01", "poster_path": null}
        ]})))
        .mount(&tmdb)
        .await;
    let app = TestApp::with_env([
        ("OPENAI_API_KEY", "sk-test".to_owned()),
        ("OPENAI_BASE_URL", format!("{}/v1", openai.uri())),
        ("TMDB_READ_TOKEN", "tmdb-token".to_owned()),
        ("TMDB_BASE_URL", format!("{}/3", tmdb.uri())),
    ])
    .await;
    Fixture { app, openai, _tmdb: tmdb }
}

impl Fixture {
    async fn engine_calls(&self) -> usize {
        self.openai.received_requests().await.unwrap_or_default().len()
    }
}

/// The frame of `video` at `at` seconds, as ffmpeg decodes it.
fn frame_of(video: &std::path::Path, at: f64) -> DynamicImage {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("frame.png");
    ffmpeg(&["-ss", &at.to_string(), "-i", video.to_str().unwrap(), "-frames:v", "1", out.to_str().unwrap()]);
    image::open(&out).unwrap()
}

fn jpeg(img: &DynamicImage, quality: u8) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    let enc = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality);
    img.to_rgb8().write_with_encoder(enc).unwrap();
    out.into_inner()
}

/// The same picture cut by 5% (from the right and the bottom), resized to 70% and
/// re-encoded as a lower-quality JPEG: a copy of a copy, as people share screenshots.
/// (`quality` makes each copy's bytes its own: byte-identical files are reused, not looked up.)
fn shared_copy(img: &DynamicImage, quality: u8) -> Vec<u8> {
    let (w, h) = (img.width(), img.height());
    let cropped = img.crop_imm(0, 0, w * 95 / 100, h * 95 / 100);
    let small = cropped.resize_exact(
        cropped.width() * 7 / 10,
        cropped.height() * 7 / 10,
        image::imageops::FilterType::Triangle,
    );
    jpeg(&small, quality)
}

fn scene() -> DynamicImage {
    frame_of(&demo_clip(), 2.6)
}

async fn identify(app: &TestApp, who: &Person, bytes: Vec<u8>, mode: &str) -> Value {
    let res = app.send_as(Some(who), Upload::image(bytes, mode).request()).await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()
}

fn from(addr: &str, mut req: Request<Body>) -> Request<Body> {
    let a: SocketAddr = format!("{addr}:40000").parse().unwrap();
    req.extensions_mut().insert(ConnectInfo(a));
    req
}

fn feedback_request(id: &str, body: &Value) -> Request<Body> {
    Request::post(format!("/api/identification/{id}/feedback"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

async fn vote(app: &TestApp, who: &Person, id: &str, body: Value, addr: &str) -> TestResponse {
    app.send_as(Some(who), from(addr, feedback_request(id, &body))).await
}

/// The identification `id` as its owner `who` reads it.
async fn shown(app: &TestApp, who: &Person, id: &str) -> Value {
    app.send_as(Some(who), Request::get(format!("/api/identification/{id}")).body(Body::empty()).unwrap()).await.json()
}

fn id_of(r: &Value) -> String {
    r["identificationId"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_shared_copy_of_an_identified_scene_is_answered_from_memory_without_an_engine() {
    let f = fixture().await;
    let (ada, bob) = (f.app.person("ada").await, f.app.person("bob").await);
    let still = scene();
    let first = identify(&f.app, &ada, jpeg(&still, 92), "auto").await;
    assert_eq!((first["title"].as_str(), first["engine"].as_str()), (Some("The Matrix"), Some("openai")));
    assert!(first["fromMemory"].is_null());
    assert_eq!(f.engine_calls().await, 1);

    // Someone else, a re-encoded, resized, 5% cropped copy, in auto: no request reaches the engine.
    let again = identify(&f.app, &bob, shared_copy(&still, 61), "auto").await;
    assert_eq!(f.engine_calls().await, 1, "the memory answered");
    assert_eq!(again["engine"], "memory");
    assert_eq!(again["title"], "The Matrix");
    assert_eq!(again["tmdbId"], 603);
    assert_eq!(again["fromMemory"]["confirmations"], 0);
    assert_eq!(again["fromMemory"]["engine"], "openai");
    // The same full result from the catalog.
    assert_eq!(again["cast"][0]["name"], "Keanu Reeves");
    assert_eq!(again["streamingPlatforms"]["flatrate"][0]["name"], "Netflix");

    // A mirrored copy too.
    let mirrored = identify(&f.app, &bob, jpeg(&still.fliph(), 80), "auto").await;
    assert_eq!((mirrored["engine"].as_str(), f.engine_calls().await), (Some("memory"), 1));

    // An engine chosen by name is still asked.
    let named = identify(&f.app, &bob, shared_copy(&still, 62), "openai").await;
    assert_eq!((named["engine"].as_str(), f.engine_calls().await), (Some("openai"), 2));

    // What is remembered: the answer and hashes, no picture, file name or person.
    let rows = reelfind::entities::remembered_answer::Entity::find().all(&f.app.db).await.unwrap();
    assert_eq!(rows.len(), 1, "one answer, remembered once");
    assert_eq!((rows[0].tmdb_id, rows[0].title.as_str(), rows[0].engine.as_str()), (603, "The Matrix", "openai"));
    let hashes = reelfind::entities::remembered_hash::Entity::find().all(&f.app.db).await.unwrap();
    assert_eq!(hashes.len(), 2, "a still: its whole picture and its centre window");
}

#[tokio::test]
async fn another_films_frame_is_not_answered_from_memory() {
    let f = fixture().await;
    let (ada, bob) = (f.app.person("ada").await, f.app.person("bob").await);
    identify(&f.app, &ada, jpeg(&scene(), 92), "auto").await;
    for at in [0.5, 1.7, 3.4, 4.6] {
        let other = identify(&f.app, &bob, jpeg(&frame_of(second_film(), at), 85), "auto").await;
        assert_eq!(other["engine"], "openai", "a frame of another film at {at} s is asked of the engine");
    }
    assert_eq!(f.engine_calls().await, 5);
    // A different moment of the same clip is another scene too.
    let later = identify(&f.app, &bob, jpeg(&frame_of(&demo_clip(), 0.4), 85), "auto").await;
    assert_eq!(later["engine"], "openai");
}

#[tokio::test]
async fn one_correction_does_not_flip_a_remembered_answer_and_two_independent_ones_do() {
    let f = fixture().await;
    let app = &f.app;
    let [ada, bob, carl, dan, eve] = [
        app.person("ada").await,
        app.person("bob").await,
        app.person("carl").await,
        app.person("dan").await,
        app.person("eve").await,
    ];
    let still = scene();
    let first = identify(app, &ada, jpeg(&still, 92), "auto").await;
    let by_bob = identify(app, &bob, shared_copy(&still, 63), "auto").await;
    let by_carl = identify(app, &carl, jpeg(&still, 70), "auto").await;
    assert_eq!((by_bob["engine"].as_str(), by_carl["engine"].as_str()), (Some("memory"), Some("memory")));
    assert_eq!(f.engine_calls().await, 1);

    // Bob says it is Heat: his own result shows Heat at once; the memory does not flip.
    let res =
        vote(app, &bob, &id_of(&by_bob), json!({"verdict": "wrong", "tmdbId": 949, "type": "movie"}), "203.0.113.1")
            .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["result"]["title"], "Heat");
    assert_eq!(body["result"]["correction"]["by"], "you");
    assert_eq!(body["result"]["correction"]["previousTitle"], "The Matrix");
    assert!(body["memoryChangedTo"].is_null(), "one person flips nothing");
    let history = app.send_as(Some(&bob), Request::get("/api/history").body(Body::empty()).unwrap()).await.json();
    assert_eq!(history["items"][0]["title"], "Heat");
    assert_eq!(history["items"][0]["fullResult"]["feedback"], "wrong");
    // Twice: refused.
    let again = vote(app, &bob, &id_of(&by_bob), json!({"verdict": "right"}), "203.0.113.1").await;
    assert_eq!(again.status, 409, "{}", again.text());
    // An unanswered doubt: the engines look again (an engine call, never a wrong answer).
    let by_dan = identify(app, &dan, shared_copy(&still, 64), "auto").await;
    assert_eq!((by_dan["engine"].as_str(), by_dan["title"].as_str()), (Some("openai"), Some("The Matrix")));
    assert_eq!(f.engine_calls().await, 2);

    // A second person on another network says Heat too: it flips.
    let res =
        vote(app, &carl, &id_of(&by_carl), json!({"verdict": "wrong", "tmdbId": 949, "type": "movie"}), "198.51.100.7")
            .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["memoryChangedTo"]["title"], "Heat");
    let memory = reelfind::entities::remembered_answer::Entity::find().one(&app.db).await.unwrap().unwrap();
    assert_eq!((memory.tmdb_id, memory.title.as_str(), memory.standing), (949, "Heat", true));
    // Ada's result (she said nothing) follows; so does Dan's (linked to the same answer).
    let ada_now = shown(app, &ada, &id_of(&first)).await;
    assert_eq!(ada_now["title"], "Heat");
    assert_eq!(ada_now["correction"]["by"], "people");
    // The next person is answered Heat from memory, confirmed by the two.
    let by_eve = identify(app, &eve, shared_copy(&still, 65), "auto").await;
    assert_eq!((by_eve["engine"].as_str(), by_eve["title"].as_str()), (Some("memory"), Some("Heat")));
    assert_eq!(by_eve["fromMemory"]["confirmations"], 2);
    assert_eq!(f.engine_calls().await, 2);
    // Their corrections were accepted: "Sharp Eye".
    let earned = reelfind::services::achievements::award(&app.db, bob.id).await.unwrap();
    assert!(earned.iter().any(|e| e.key == "accepted_correction"), "{earned:?}");
}

#[tokio::test]
async fn two_accounts_on_one_network_do_not_flip_an_answer() {
    let f = fixture().await;
    let app = &f.app;
    let [ada, bob, bob2] = [app.person("ada").await, app.person("bob").await, app.person("bobtwo").await];
    let still = scene();
    identify(app, &ada, jpeg(&still, 92), "auto").await;
    for who in [&bob, &bob2] {
        // The same bytes as the first one's: never answered with what that person picked.
        let r = identify(app, who, shared_copy(&still, 66), "auto").await;
        assert_eq!(r["title"], "The Matrix");
        let res = vote(app, who, &id_of(&r), json!({"verdict": "wrong", "tmdbId": 949}), "203.0.113.9").await;
        assert_eq!(res.status, 200, "{}", res.text());
        assert!(res.json()["memoryChangedTo"].is_null());
    }
    let memory = reelfind::entities::remembered_answer::Entity::find().one(&app.db).await.unwrap().unwrap();
    assert_eq!(memory.title, "The Matrix");
}

#[tokio::test]
async fn feedback_is_checked_and_the_title_search_lists_movies_and_shows() {
    let f = fixture().await;
    let app = &f.app;
    let [ada, bob] = [app.person("ada").await, app.person("bob").await];
    let r = identify(app, &ada, jpeg(&scene(), 92), "auto").await;
    let id = id_of(&r);
    let bad = vote(app, &ada, &id, json!({"verdict": "maybe"}), "203.0.113.1").await;
    assert_eq!(bad.status, 400);
    let bad = vote(app, &ada, &id, json!({"verdict": "right", "tmdbId": 949}), "203.0.113.1").await;
    assert_eq!(bad.status, 400);
    let bad = vote(app, &ada, &id, json!({"verdict": "wrong", "tmdbId": 949, "type": "book"}), "203.0.113.1").await;
    assert_eq!(bad.status, 400);
    let signed_out = app.send_as(None, feedback_request(&id, &json!({"verdict": "right"}))).await;
    assert_eq!(signed_out.status, 401);
    let not_hers = vote(app, &bob, &id, json!({"verdict": "right"}), "203.0.113.2").await;
    assert_eq!(not_hers.status, 404, "{}", not_hers.text());
    let unknown_title = vote(app, &ada, &id, json!({"verdict": "wrong", "tmdbId": 123456}), "203.0.113.1").await;
    assert!(matches!(unknown_title.status.as_u16(), 422 | 502), "{}", unknown_title.text());
    let ok = vote(app, &ada, &id, json!({"verdict": "right"}), "203.0.113.1").await;
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert_eq!(ok.json()["result"]["title"], "The Matrix");
    let memory = reelfind::entities::remembered_answer::Entity::find().one(&app.db).await.unwrap().unwrap();
    assert_eq!(memory.supporters, 1);
    assert_eq!(shown(app, &ada, &id).await["feedback"], "right");

    let search = |q: &str| Request::get(format!("/api/titles/search?q={q}")).body(Body::empty()).unwrap();
    let hits = app.send_as(Some(&ada), search("heat")).await;
    assert_eq!(hits.status, 200, "{}", hits.text());
    let hits = hits.json();
    assert_eq!(hits.as_array().unwrap().len(), 2, "people are left out: {hits}");
    assert_eq!(hits[0]["tmdbId"], 949);
    assert_eq!(hits[0]["year"], "1995");
    assert!(hits[0]["posterUrl"].as_str().unwrap().ends_with("/w92/heat.jpg"));
    assert_eq!(hits[1]["type"], "tv");
    assert_eq!(app.send_as(Some(&ada), search("h")).await.status, 400);
    assert_eq!(app.send_as(None, search("heat")).await.status, 401);
}

#[tokio::test]
async fn votes_and_title_searches_count_toward_a_persons_limits() {
    let f = fixture().await;
    let app = &f.app;
    let ada = app.person("ada").await;
    let id = id_of(&identify(app, &ada, jpeg(&scene(), 92), "auto").await);
    // One vote an identification: the first is taken, the repeats are refused, and every one
    // counts toward the 30 an hour (a refused repeat is still a try).
    let first = vote(app, &ada, &id, json!({"verdict": "right"}), "203.0.113.1").await;
    assert_eq!(first.status, 200, "{}", first.text());
    for n in 2..=reelfind::services::feedback::FEEDBACK_USER.max {
        let again = vote(app, &ada, &id, json!({"verdict": "right"}), "203.0.113.1").await;
        assert_eq!(again.status, 409, "vote {n}: {}", again.text());
    }
    let over = vote(app, &ada, &id, json!({"verdict": "right"}), "203.0.113.1").await;
    assert_eq!(over.status, 429, "{}", over.text());
    assert_eq!(over.json()["code"], "rate_limited");
    let retry: u64 = over.header("retry-after").expect("Retry-After").parse().expect("seconds");
    assert!((1..=3600).contains(&retry), "Retry-After {retry}");

    let search = || Request::get("/api/titles/search?q=heat").body(Body::empty()).unwrap();
    for n in 1..=reelfind::services::feedback::TITLE_SEARCH_USER.max {
        let hits = app.send_as(Some(&ada), search()).await;
        assert_eq!(hits.status, 200, "search {n}: {}", hits.text());
    }
    let over = app.send_as(Some(&ada), search()).await;
    assert_eq!(over.status, 429, "{}", over.text());
    assert!(over.header("retry-after").is_some());
    // Another person is not held by ada's count.
    let bob = app.person("bob").await;
    assert_eq!(app.send_as(Some(&bob), search()).await.status, 200);
}

#[tokio::test]
async fn the_corrections_queue_lists_disputed_answers_and_an_accepted_one_changes_them() {
    let f = fixture().await;
    let app = &f.app;
    let [ada, bob] = [app.person("ada").await, app.person("bob").await];
    let still = scene();
    let first = identify(app, &ada, jpeg(&still, 92), "auto").await;
    let by_bob = identify(app, &bob, shared_copy(&still, 67), "auto").await;
    vote(app, &bob, &id_of(&by_bob), json!({"verdict": "wrong", "tmdbId": 949, "type": "movie"}), "203.0.113.1").await;
    app.admin("root").await;
    let queue = app.get("/api/admin/corrections").await;
    assert_eq!(queue.status, 200, "{}", queue.text());
    let queue = queue.json();
    assert_eq!(queue[0]["title"], "The Matrix");
    assert_eq!(queue[0]["engine"], "openai");
    assert_eq!(queue[0]["proposals"][0]["title"], "Heat");
    assert_eq!(queue[0]["proposals"][0]["people"], 1);
    let page = app.get("/admin/corrections").await;
    assert_eq!(page.status, 200);
    assert!(page.text().contains("Heat"));
    let memory_id = queue[0]["memoryId"].as_i64().unwrap();
    let res = app
        .post_json(
            &format!("/api/admin/corrections/{memory_id}"),
            &json!({"action": "accept", "tmdbId": 949, "type": "movie"}),
        )
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["title"], "Heat");
    let ada_now = shown(app, &ada, &id_of(&first)).await;
    assert_eq!((ada_now["title"].as_str(), ada_now["correction"]["by"].as_str()), (Some("Heat"), Some("admin")));
    let memory =
        reelfind::entities::remembered_answer::Entity::find_by_id(memory_id).one(&app.db).await.unwrap().unwrap();
    assert!(memory.pinned);
    // A title nobody proposed cannot be accepted; non-admins cannot decide.
    let res = app
        .post_json(
            &format!("/api/admin/corrections/{memory_id}"),
            &json!({"action": "accept", "tmdbId": 1, "type": "movie"}),
        )
        .await;
    assert_eq!(res.status, 400);
    let req = Request::post(format!("/api/admin/corrections/{memory_id}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(json!({"action": "reject", "tmdbId": 949, "type": "movie"}).to_string()))
        .unwrap();
    assert_eq!(app.send_as(Some(&bob), req).await.status, 403);
    // Insight counts the answer from memory and the feedback.
    let insight = app.get("/api/admin/insight?days=7").await.json();
    assert_eq!(insight["memory"]["answered"], 1, "{insight}");
    assert_eq!(insight["memory"]["callsSaved"], 1);
    assert!(insight["memory"]["savedUsd"].as_f64().unwrap() > 0.0);
    assert_eq!(insight["feedback"][0]["engine"], "memory");
    assert_eq!(insight["feedback"][0]["corrected"], 1);
}

#[tokio::test]
async fn two_nodes_on_one_database_share_the_memory() {
    let f = fixture().await;
    let app = &f.app;
    let [ada, bob, carl] = [app.person("ada").await, app.person("bob").await, app.person("carl").await];
    // A second node: its own state (its own copy of the memory), the same database.
    let node_b = reelfind::app::build_router(
        reelfind::state::AppState::new(app.db.clone(), (*app.state.config).clone()).expect("second node"),
    );
    let on_b = |who: &Person, mut req: Request<Body>| {
        let cookie = format!("{}={}", reelfind::middleware::auth::SESSION_COOKIE, who.session());
        req.headers_mut().insert(header::COOKIE, cookie.parse().unwrap());
        req.headers_mut().insert(header::ORIGIN, ORIGIN.parse().unwrap());
        node_b.clone().oneshot(req)
    };
    // On the Library's Milvus pass both nodes search one `{NAME}_memory` collection; else each
    // keeps its own copy of the rows.
    let on_milvus = std::env::var("TEST_LIBRARY_INDEX").is_ok_and(|v| v == "milvus");
    assert_eq!(app.state.memory.is_shared(), on_milvus);
    let still = scene();
    // Node B reads the memory once before anything is remembered (its copy starts empty).
    let before = on_b(&carl, Upload::image(jpeg(&frame_of(second_film(), 1.0), 85), "auto").request()).await.unwrap();
    assert_eq!(before.status(), 200);
    identify(app, &ada, jpeg(&still, 92), "auto").await;
    tokio::time::sleep(reelfind::identify::memory::REFRESH_EVERY).await;
    let res = on_b(&bob, Upload::image(shared_copy(&still, 68), "auto").request()).await.unwrap();
    assert_eq!(res.status(), 200);
    let body: Value =
        serde_json::from_slice(&axum::body::to_bytes(res.into_body(), usize::MAX).await.unwrap()).unwrap();
    assert_eq!((body["engine"].as_str(), body["title"].as_str()), (Some("memory"), Some("The Matrix")));
    assert_eq!(f.engine_calls().await, 2, "node A's answer, and node B's first (another film)");
}

#[tokio::test]
async fn a_clip_reencoded_smaller_is_answered_from_memory_by_its_frames() {
    let f = fixture().await;
    let (ada, bob) = (f.app.person("ada").await, f.app.person("bob").await);
    let dir = tempfile::tempdir().unwrap();
    let smaller = dir.path().join("smaller.mp4");
    ffmpeg(&[
        "-i",
        demo_clip().to_str().unwrap(),
        "-vf",
        "scale=-2:360",
        "-c:v",
        "libx264",
        "-crf",
        "30",
        "-an",
        smaller.to_str().unwrap(),
    ]);
    let first =
        f.app.send_as(Some(&ada), Upload::video(std::fs::read(demo_clip()).unwrap(), "auto", false).request()).await;
    assert_eq!(first.status, 200, "{}", first.text());
    assert_eq!(first.json()["engine"], "openai");
    let hashes = reelfind::entities::remembered_hash::Entity::find().all(&f.app.db).await.unwrap();
    assert!(hashes.len() >= 4, "a clip's frames are remembered: {}", hashes.len());
    let again =
        f.app.send_as(Some(&bob), Upload::video(std::fs::read(&smaller).unwrap(), "auto", false).request()).await;
    assert_eq!(again.status, 200, "{}", again.text());
    assert_eq!((again.json()["engine"].as_str(), again.json()["title"].as_str()), (Some("memory"), Some("The Matrix")));
    assert_eq!(f.engine_calls().await, 1);
}
