//! History, top-confident, shared links and analytics.
use axum::body::Body;
use axum::http::Request;
use sea_orm::EntityTrait;

use crate::identify_support::*;
use crate::support::{Person, TestApp, TestResponse};

/// Sends as a signed-in person (their own session).
async fn as_user(app: &TestApp, user: &Person, req: Request<Body>) -> TestResponse {
    app.send_as(Some(user), req).await
}

fn get(path: &str) -> Request<Body> {
    Request::get(path).body(Body::empty()).unwrap()
}

async fn app_with_openai(answer_json: serde_json::Value) -> (TestApp, wiremock::MockServer) {
    let openai = openai_fake(&answer_json).await;
    let app = TestApp::with_env([
        ("OPENAI_API_KEY".to_string(), "k".to_string()),
        ("OPENAI_BASE_URL".into(), format!("{}/v1", openai.uri())),
    ])
    .await;
    (app, openai)
}

#[tokio::test]
async fn signed_in_users_are_unlimited_and_get_a_private_history() {
    let (app, _openai) = app_with_openai(answer("Heat", 1995, "movie", 0.8)).await;
    let alice = app.person("alice").await;
    let bob = app.person("bob").await;
    for i in 0..3 {
        let res = as_user(&app, &alice, Upload::image(jpeg(300 + i, 200), "openai").request()).await;
        assert_eq!(res.status, 200, "{}", res.text());
    }
    let res = as_user(&app, &bob, Upload::image(jpeg(500, 200), "openai").request()).await;
    assert_eq!(res.status, 200);

    let h = as_user(&app, &alice, get("/api/history?page=1&limit=20")).await;
    assert_eq!(h.status, 200);
    let h = h.json();
    assert_eq!(h["total"], 3);
    assert_eq!(h["page"], 1);
    assert_eq!(h["limit"], 20);
    let item = &h["items"][0];
    for field in [
        "id",
        "title",
        "description",
        "year",
        "rating",
        "posterUrl",
        "director",
        "stars",
        "genres",
        "runtime",
        "classification",
        "confidenceScore",
        "createdAt",
        "streamingPlatforms",
        "fullResult",
    ] {
        assert!(item.get(field).is_some(), "history item lacks {field}: {item}");
    }
    assert_eq!(item["title"], "Heat");
    assert_eq!(item["confidenceScore"], 0.8);
    assert_eq!(item["fullResult"]["type"], "movie");
    let page2 = as_user(&app, &alice, get("/api/history?page=2&limit=2")).await.json();
    assert_eq!(page2["items"].as_array().unwrap().len(), 1);

    // Clearing removes only the caller's rows.
    let res = as_user(&app, &alice, Request::delete("/api/history").body(Body::empty()).unwrap()).await;
    assert_eq!(res.status, 200);
    assert_eq!(as_user(&app, &alice, get("/api/history")).await.json()["total"], 0);
    assert_eq!(as_user(&app, &bob, get("/api/history")).await.json()["total"], 1);

    // Guests have no history.
    assert_eq!(app.get("/api/history").await.status, 401);
    assert_eq!(app.delete("/api/history").await.status, 401);
    assert_eq!(
        reelfind::entities::identification::Entity::find().all(&app.db).await.unwrap().len(),
        1,
        "alice's rows are gone, bob's stays"
    );
}

#[tokio::test]
async fn top_confident_lists_at_most_three_without_personal_data() {
    let (app, openai) = app_with_openai(answer("Heat", 1995, "movie", 0.8)).await;
    let alice = app.person("alice").await;
    for i in 0..5u32 {
        openai.reset().await;
        let title = format!("Film {i}");
        wiremock::Mock::given(wiremock::matchers::method("POST"))
            .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(chat_completion(&answer(
                &title,
                2000 + i as i64,
                "movie",
                0.5 + f64::from(i) / 10.0,
            ))))
            .mount(&openai)
            .await;
        let res = as_user(&app, &alice, Upload::image(jpeg(300 + i, 200), "openai").request()).await;
        assert_eq!(res.status, 200);
    }
    let top = app.get("/api/history/top-confident").await;
    assert_eq!(top.status, 200);
    let items = top.json();
    let items = items.as_array().unwrap();
    assert_eq!(items.len(), 3);
    assert_eq!(items[0]["title"], "Film 4");
    assert_eq!(items[2]["title"], "Film 2");
    let text = top.text();
    assert!(!text.contains("alice") && !text.contains("engineVotes") && !text.contains("userId"));
    assert!(items.iter().all(|i| i.get("id").is_none() && i.get("identificationId").is_none()), "{text}");
}

#[tokio::test]
async fn a_shared_link_renders_a_page_with_social_tags() {
    let openai = openai_fake(&answer("The Matrix", 1999, "movie", 0.82)).await;
    let tmdb = tmdb_fake().await;
    let app = TestApp::with_env([
        ("OPENAI_API_KEY".to_string(), "k".to_string()),
        ("OPENAI_BASE_URL".into(), format!("{}/v1", openai.uri())),
        ("TMDB_API_KEY".into(), "v3key".into()),
        ("TMDB_BASE_URL".into(), format!("{}/3", tmdb.uri())),
    ])
    .await;
    let r = upload(&app, Upload::image(jpeg(400, 300), "openai")).await.json();
    // v3 keys travel as the api_key query parameter.
    let sent = tmdb.received_requests().await.unwrap();
    assert!(sent.iter().all(|q| q.url.query_pairs().any(|(k, v)| k == "api_key" && v == "v3key")));
    let id = r["identificationId"].as_str().unwrap();
    let page = app.get(&format!("/shared/{id}")).await;
    assert_eq!(page.status, 200);
    assert_eq!(page.select_text("h1").unwrap(), "The Matrix (1999)");
    assert_eq!(
        page.select_attr("meta[property='og:image']", "content").unwrap(),
        "https://image.tmdb.org/t/p/w500/f89U3ADr1oiB1s9GkdPOEpXUk5H.jpg"
    );
    assert!(page.select_attr("meta[property='og:title']", "content").unwrap().contains("The Matrix (1999)"));
    assert!(page.select_attr("meta[property='og:description']", "content").unwrap().contains("computer hacker"));
    assert_eq!(page.select_attr("meta[name='twitter:card']", "content").unwrap(), "summary_large_image");
    assert_eq!(page.select_attr("meta[property='og:type']", "content").unwrap(), "video.movie");
    assert_eq!(page.select_attr(".shared-actions a.btn-primary", "href").unwrap(), format!("/?id={id}"));
    let gone = app.get("/shared/AAAAAAAAAAAAAAAAAAAAAA").await;
    assert_eq!(gone.status, 404);
    assert_eq!(gone.select_text("main .lead").unwrap(), "This shared identification link is no longer available.");
}

#[tokio::test]
async fn analytics_events_are_stored_bounded() {
    let app = TestApp::new().await;
    let res = app
        .post_json(
            "/api/analytics/track",
            &serde_json::json!({"action": "click_streaming_link", "resourceType": "identification", "resourceId": "abc",
                "metadata": {"title": "Heat", "platform": "netflix", "url": "/", "timestamp": "2026-11-22T10:00:00Z"}}),
        )
        .await;
    assert_eq!(res.status, 204);
    let rows = reelfind::entities::analytics_event::Entity::find().all(&app.db).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].action, "click_streaming_link");
    assert_eq!(rows[0].resource_id.as_deref(), Some("abc"));
    assert!(rows[0].metadata.as_deref().unwrap().contains("netflix"));
    let bad = app.post_json("/api/analytics/track", &serde_json::json!({"action": "<script>"})).await;
    assert_eq!(bad.status, 400);
    let huge = app
        .post_json(
            "/api/analytics/track",
            &serde_json::json!({"action": "page_view", "metadata": {"x": "y".repeat(5000)}}),
        )
        .await;
    assert_eq!(huge.status, 204);
    let rows = reelfind::entities::analytics_event::Entity::find().all(&app.db).await.unwrap();
    assert!(rows[1].metadata.is_none(), "oversized metadata is dropped");
    let too_big = app
        .post_json(
            "/api/analytics/track",
            &serde_json::json!({"action": "page_view", "metadata": {"x": "y".repeat(20000)}}),
        )
        .await;
    assert_eq!(too_big.status, 413);
}

#[tokio::test]
async fn a_real_session_identifies_without_the_guest_limit_and_finds_its_history() {
    let (app, _openai) = app_with_openai(answer("Heat", 1995, "movie", 0.8)).await;
    let reg = crate::accounts::register(&app, "carol", "secret123").await;
    assert!(reg.status.is_success(), "{}", reg.text());
    for i in 0..2 {
        let res = upload(&app, Upload::image(jpeg(310 + i, 200), "openai")).await;
        assert_eq!(res.status, 200, "{}", res.text());
    }
    assert!(app.cookie("rf_guest").is_none(), "signed-in users get no guest cookie");
    let h = app.get("/api/history").await.json();
    assert_eq!(h["total"], 2);
    assert_eq!(app.delete("/api/history").await.status, 200);
    assert_eq!(app.get("/api/history").await.json()["total"], 0);
}

#[tokio::test]
async fn auto_follows_admin_primary_then_user_default_then_recommended_and_falls_back() {
    let openai = openai_fake(&answer("Heat", 1995, "movie", 0.8)).await;
    let gemini = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(
            wiremock::ResponseTemplate::new(200).set_body_json(gemini_response(&answer("Heat", 1995, "movie", 0.8))),
        )
        .mount(&gemini)
        .await;
    let app = TestApp::with_env([
        ("OPENAI_API_KEY".to_string(), "k".to_string()),
        ("OPENAI_BASE_URL".into(), format!("{}/v1", openai.uri())),
        ("GEMINI_API_KEY".into(), "g".into()),
        ("GEMINI_BASE_URL".into(), format!("{}/v1beta", gemini.uri())),
    ])
    .await;
    let dave = app.person("dave").await;
    let engine_for = |i: u32| {
        let app = &app;
        let dave = dave.clone();
        async move {
            let res = as_user(app, &dave, Upload::image(jpeg(300 + i, 200), "auto").request()).await;
            assert_eq!(res.status, 200, "{}", res.text());
            res.json()["engine"].as_str().unwrap().to_owned()
        }
    };
    // Nothing chosen: the recommended engine (Gemini first).
    assert_eq!(engine_for(0).await, "google");
    // The user's default.
    use sea_orm::{ActiveModelTrait, Set};
    let mut u: reelfind::entities::user::ActiveModel =
        reelfind::entities::user::Entity::find_by_id(dave.id).one(&app.db).await.unwrap().unwrap().into();
    u.default_ai_model = Set(Some("openai".into()));
    u.update(&app.db).await.unwrap();
    assert_eq!(engine_for(1).await, "openai");
    // The admin's primary model wins over the user's default.
    app.state.settings.set(&app.db, "ai_primary_model", "google").await.unwrap();
    assert_eq!(engine_for(2).await, "google");
    // The chosen engine failing: auto falls back to the next usable one.
    gemini.reset().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(403).set_body_json(
            serde_json::json!({"error": {"code": 403, "message": "denied", "status": "PERMISSION_DENIED"}}),
        ))
        .mount(&gemini)
        .await;
    assert_eq!(engine_for(3).await, "openai");
}

/// Stores an identification for `user` directly (no engine needed for list behaviour).
async fn stored(
    app: &TestApp,
    user: &Person,
    title: &str,
    kind: &str,
    rating: Option<f64>,
    confidence: f64,
    age_min: i64,
) {
    use reelfind::identify::result::IdentificationResult;
    use reelfind::identify::store;
    let r = IdentificationResult {
        identification_id: store::new_id(),
        title: title.into(),
        media_type: kind.into(),
        rating,
        confidence,
        confidence_score: confidence,
        engine: "openai".into(),
        created_at: (chrono::Utc::now() - chrono::Duration::minutes(age_min)).to_rfc3339(),
        ..Default::default()
    };
    let hash = format!("{:x>64}", r.identification_id);
    store::insert(
        &app.db,
        store::NewRow { user_id: Some(user.id), content_hash: &hash, mode: "auto", result: &r, memory_id: None },
    )
    .await
    .unwrap();
}

fn titles(page: &serde_json::Value) -> Vec<String> {
    page["items"].as_array().unwrap().iter().map(|i| i["title"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn history_search_type_and_sort_cover_every_page() {
    let app = TestApp::new().await;
    let ada = app.person("ada").await;
    let bob = app.person("bob").await;
    stored(&app, &ada, "The Matrix", "movie", Some(8.2), 0.91, 50).await;
    stored(&app, &ada, "Breaking Bad", "tv", Some(8.9), 0.70, 40).await;
    stored(&app, &ada, "Unrated 100%_Short", "movie", None, 0.99, 30).await;
    stored(&app, &ada, "The Matrix Reloaded", "movie", Some(7.0), 0.60, 20).await;
    for i in 0..25 {
        stored(&app, &ada, &format!("Filler {i}"), "movie", Some(5.0), 0.5, 10 - i / 5).await;
    }
    stored(&app, &bob, "The Matrix Resurrections", "movie", Some(5.7), 0.8, 5).await;

    // Page 1 of 20 holds only fillers, yet the search finds the older matrices on any page.
    let res = as_user(&app, &ada, get("/api/history?page=1&limit=20&search=MATRIX")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let page = res.json();
    assert_eq!(titles(&page), ["The Matrix Reloaded", "The Matrix"], "newest first, bob's is not there");
    assert_eq!(page["total"], 2);
    assert_eq!(page["totalAll"], 29);

    // LIKE wildcards in the search are plain characters.
    assert_eq!(titles(&as_user(&app, &ada, get("/api/history?search=100%25_")).await.json()), ["Unrated 100%_Short"]);
    assert_eq!(as_user(&app, &ada, get("/api/history?search=x_x")).await.json()["total"], 0);

    let tv = as_user(&app, &ada, get("/api/history?type=tv")).await.json();
    assert_eq!(titles(&tv), ["Breaking Bad"]);
    assert_eq!(as_user(&app, &ada, get("/api/history?type=all")).await.json()["total"], 29);

    let by_rating = as_user(&app, &ada, get("/api/history?sort=rating&limit=3")).await.json();
    assert_eq!(titles(&by_rating), ["Breaking Bad", "The Matrix", "The Matrix Reloaded"]);
    let last = as_user(&app, &ada, get("/api/history?sort=rating&page=29&limit=1")).await.json();
    assert_eq!(titles(&last), ["Unrated 100%_Short"], "unrated titles sort last on every database");
    let by_confidence = as_user(&app, &ada, get("/api/history?sort=confidence&limit=2")).await.json();
    assert_eq!(titles(&by_confidence), ["Unrated 100%_Short", "The Matrix"]);
    let oldest = as_user(&app, &ada, get("/api/history?sort=oldest&limit=2&type=movie")).await.json();
    assert_eq!(titles(&oldest), ["The Matrix", "Unrated 100%_Short"]);
}
