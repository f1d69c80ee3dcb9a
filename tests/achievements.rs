//! Achievements on the profile: each rule read from stored activity, awarded once with the
//! date of the activity that earned it, announced once, kept after the activity is gone.
use axum::body::Body;
use axum::http::{Request, header};
use chrono::{DateTime, Duration, TimeZone, Utc};
use reelfind::entities::{achievement, identification};
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, Set};
use serde_json::{Value, json};

use crate::identify_support::{Upload, answer, jpeg, mp4, openai_fake};
use crate::support::{Person, TestApp, TestResponse};

/// One stored identification of `title` by `who` at `at` (`result` is the stored JSON).
async fn identified(app: &TestApp, who: &Person, title: &str, year: &str, at: DateTime<Utc>, result: Value) {
    identification::ActiveModel {
        id: Set(reelfind::identify::store::new_id()),
        user_id: Set(Some(who.id)),
        title: Set(title.into()),
        year: Set(Some(year.into())),
        media_type: Set("movie".into()),
        poster_url: Set(None),
        confidence: Set(0.9),
        rating: Set(None),
        engine: Set("openai".into()),
        mode: Set("auto".into()),
        content_hash: Set("0".repeat(64)),
        result: Set(result.to_string()),
        total_ms: Set(900),
        created_at: Set(at),
        shared: Set(true),
        memory_id: Set(None),
    }
    .insert(&app.db)
    .await
    .unwrap();
}

fn day(d: u32, h: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 10, d, h, 30, 0).unwrap()
}

async fn profile(app: &TestApp, who: &Person) -> Value {
    let res = app.send_as(Some(who), Request::get("/api/profiles/me").body(Body::empty()).unwrap()).await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()
}

/// The keys held, with their dates, from the profile response.
async fn held(app: &TestApp, who: &Person) -> Vec<(String, String)> {
    profile(app, who).await["achievements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["key"].as_str().unwrap().to_owned(), a["earnedAt"].as_str().unwrap().to_owned()))
        .collect()
}

async fn check(app: &TestApp, who: &Person) -> TestResponse {
    app.send_as(Some(who), Request::post("/api/profiles/me/achievements").body(Body::empty()).unwrap()).await
}

fn keys(list: &Value) -> Vec<&str> {
    list.as_array().unwrap().iter().map(|a| a["key"].as_str().unwrap()).collect()
}

fn iso(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}

#[tokio::test]
async fn a_new_account_has_none_and_sees_what_it_can_earn() {
    let app = TestApp::new().await;
    let ada = app.person("ada").await;
    let body = profile(&app, &ada).await;
    assert_eq!(body["achievements"], json!([]));
    let to_earn = keys(&body["toEarn"]);
    assert_eq!(
        to_earn,
        [
            "first_identification",
            "ten_titles",
            "clip_with_audio",
            "first_collection_item",
            "first_review",
            "accepted_correction",
            "week_streak"
        ],
        "every achievement can be earned, the accepted correction too (answer feedback)"
    );
    assert!(body["toEarn"][0]["description"].as_str().unwrap().contains("first"));
    assert_eq!(check(&app, &ada).await.json(), json!([]));
    let signed_out =
        app.send_as(None, Request::post("/api/profiles/me/achievements").body(Body::empty()).unwrap()).await;
    assert_eq!(signed_out.status, 401);
}

#[tokio::test]
async fn a_real_identification_earns_first_scene_once_with_its_date() {
    let openai = openai_fake(&answer("The Matrix", 1999, "movie", 0.9)).await;
    let app =
        TestApp::with_env([("OPENAI_API_KEY", "k".to_owned()), ("OPENAI_BASE_URL", format!("{}/v1", openai.uri()))])
            .await;
    let res = app.register("bea", "secret123").await;
    assert!(res.status.is_success());
    let res = app.upload(&Upload::image(jpeg(320, 180), "openai")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let stored = identification::Entity::find().one(&app.db).await.unwrap().unwrap();

    let told = app.post_json("/api/profiles/me/achievements", &json!({})).await;
    assert_eq!(told.status, 200);
    let told = told.json();
    assert_eq!(keys(&told), ["first_identification"]);
    assert_eq!(told[0]["title"], "First Scene");
    let earned: DateTime<Utc> = told[0]["earnedAt"].as_str().unwrap().parse().unwrap();
    assert_eq!(earned, stored.created_at, "dated by the identification, not by the check");
    // Told once: a second check (another tab, another node) says nothing new.
    assert_eq!(app.post_json("/api/profiles/me/achievements", &json!({})).await.json(), json!([]));
    // A second identification changes nothing: one row, the first date.
    let res = app.upload(&Upload::image(jpeg(330, 180), "openai")).await;
    assert_eq!(res.status, 200);
    let me = app.get("/api/profiles/me").await.json();
    assert_eq!(keys(&me["achievements"]), ["first_identification"]);
    assert_eq!(me["achievements"][0]["earnedAt"], told[0]["earnedAt"]);
    assert_eq!(achievement::Entity::find().count(&app.db).await.unwrap(), 1);
}

#[tokio::test]
async fn ten_different_titles_count_titles_not_identifications() {
    let app = TestApp::new().await;
    let cy = app.person("cy").await;
    // Nine different titles, one of them identified three times.
    for n in 0..9 {
        identified(&app, &cy, &format!("Title {n}"), "2001", day(1, n), json!({})).await;
    }
    identified(&app, &cy, "title 3", "2001", day(2, 1), json!({})).await;
    identified(&app, &cy, "Title 3 ", "2001", day(2, 2), json!({})).await;
    assert!(!held(&app, &cy).await.iter().any(|(k, _)| k == "ten_titles"));
    // The same title from another year is another title.
    identified(&app, &cy, "Title 3", "2019", day(3, 4), json!({})).await;
    let got = held(&app, &cy).await;
    assert!(got.contains(&("ten_titles".to_owned(), iso(day(3, 4)))), "{got:?}");
    assert!(got.contains(&("first_identification".to_owned(), iso(day(1, 0)))), "{got:?}");
}

#[tokio::test]
async fn all_ears_needs_a_clip_with_its_sound_analysed() {
    let app = TestApp::new().await;
    let dee = app.person("dee").await;
    let result = |kind: &str, requested: bool, has: bool| json!({"mediaKind": kind, "audioAnalysisResults": {"requested": requested, "hasAudio": has, "summary": ""}});
    identified(&app, &dee, "Silent", "1927", day(1, 1), result("video", true, false)).await;
    identified(&app, &dee, "Muted", "1990", day(1, 2), result("video", false, true)).await;
    identified(&app, &dee, "Still", "1990", day(1, 3), result("image", true, true)).await;
    assert!(!held(&app, &dee).await.iter().any(|(k, _)| k == "clip_with_audio"));
    identified(&app, &dee, "Heard", "2004", day(2, 9), result("video", true, true)).await;
    assert!(held(&app, &dee).await.contains(&("clip_with_audio".to_owned(), iso(day(2, 9)))));
}

#[tokio::test]
async fn all_ears_from_a_real_clip_with_a_sound_track() {
    let openai = openai_fake(&answer("Test Pattern", 2001, "movie", 0.6)).await;
    let app =
        TestApp::with_env([("OPENAI_API_KEY", "k".to_owned()), ("OPENAI_BASE_URL", format!("{}/v1", openai.uri()))])
            .await;
    let eve = app.register("eve", "secret123").await;
    assert!(eve.status.is_success());
    let clip = mp4(app.data_dir(), 2, true);
    let res = app.upload(&Upload::video(clip, "openai", true)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["audioAnalysisResults"]["hasAudio"], true);
    let told = app.post_json("/api/profiles/me/achievements", &json!({})).await.json();
    assert_eq!(keys(&told), ["first_identification", "clip_with_audio"]);
}

#[tokio::test]
async fn collector_and_critic_come_from_a_saved_title_and_a_review() {
    let app = TestApp::new().await;
    let res = app.register("fay", "secret123").await;
    assert!(res.status.is_success());
    let saved = app
        .post_json(
            "/api/collections/items",
            &json!({"title": "Heat", "year": "1995", "posterUrl": null, "tmdbId": 949}),
        )
        .await;
    assert!(saved.status.is_success(), "{}", saved.text());
    assert_eq!(
        keys(&app.post_json("/api/profiles/me/achievements", &json!({})).await.json()),
        ["first_collection_item"]
    );

    // A review names one of your own identifications.
    let fay_id = res.json()["id"].as_i64().unwrap();
    let id = reelfind::identify::store::new_id();
    identification::ActiveModel {
        id: Set(id.clone()),
        user_id: Set(Some(fay_id)),
        title: Set("Heat".into()),
        year: Set(Some("1995".into())),
        media_type: Set("movie".into()),
        poster_url: Set(None),
        confidence: Set(0.9),
        rating: Set(None),
        engine: Set("openai".into()),
        mode: Set("auto".into()),
        content_hash: Set("1".repeat(64)),
        result: Set("{}".into()),
        total_ms: Set(900),
        created_at: Set(Utc::now() - Duration::minutes(5)),
        shared: Set(true),
        memory_id: Set(None),
    }
    .insert(&app.db)
    .await
    .unwrap();
    let review = app
        .post_json(
            "/api/testimonials",
            &json!({"rating": 5, "review": "Spot on.", "movieTitle": "Heat", "identificationId": id}),
        )
        .await;
    assert_eq!(review.status, 201, "{}", review.text());
    let told = keys(&app.post_json("/api/profiles/me/achievements", &json!({})).await.json()).join(",");
    assert_eq!(told, "first_identification,first_review");
    let me = app.get("/api/profiles/me").await.json();
    assert_eq!(me["achievements"].as_array().unwrap().len(), 3);
    assert!(!keys(&me["toEarn"]).contains(&"first_review"));
}

#[tokio::test]
async fn a_week_of_scenes_needs_seven_days_in_a_row() {
    let app = TestApp::new().await;
    let gus = app.person("gus").await;
    // Days 1-3, a gap on day 4, then 5-10: six in a row, not seven.
    for d in [1, 2, 3, 5, 6, 7, 8, 9, 10] {
        identified(&app, &gus, "Heat", "1995", day(d, 20), json!({})).await;
        identified(&app, &gus, "Heat", "1995", day(d, 21), json!({})).await;
    }
    assert!(!held(&app, &gus).await.iter().any(|(k, _)| k == "week_streak"));
    identified(&app, &gus, "Alien", "1979", day(11, 8), json!({})).await;
    assert!(held(&app, &gus).await.contains(&("week_streak".to_owned(), iso(day(11, 8)))));
}

#[tokio::test]
async fn clearing_history_keeps_what_was_earned() {
    let app = TestApp::new().await;
    let hal = app.person("hal").await;
    // Earned but never looked at: the clear awards it before the rows go.
    identified(&app, &hal, "Heat", "1995", day(4, 10), json!({})).await;
    assert_eq!(achievement::Entity::find().count(&app.db).await.unwrap(), 0);
    let cleared = app.send_as(Some(&hal), Request::delete("/api/history").body(Body::empty()).unwrap()).await;
    assert_eq!(cleared.status, 200, "{}", cleared.text());
    assert_eq!(identification::Entity::find().count(&app.db).await.unwrap(), 0);
    let me = profile(&app, &hal).await;
    assert_eq!(keys(&me["achievements"]), ["first_identification"]);
    assert_eq!(me["achievements"][0]["earnedAt"], iso(day(4, 10)));
    // And still announced once.
    assert_eq!(keys(&check(&app, &hal).await.json()), ["first_identification"]);
}

#[tokio::test]
async fn people_earn_only_from_their_own_activity() {
    let app = TestApp::new().await;
    let ida = app.person("ida").await;
    let jon = app.person("jon").await;
    identified(&app, &ida, "Heat", "1995", day(1, 1), json!({})).await;
    assert_eq!(held(&app, &jon).await, vec![]);
    assert_eq!(held(&app, &ida).await.len(), 1);
    assert_eq!(
        achievement::Entity::find().filter(achievement::Column::UserId.eq(jon.id)).count(&app.db).await.unwrap(),
        0
    );
}

#[tokio::test]
async fn the_profile_page_lists_them_with_dates() {
    let app = TestApp::new().await;
    let kim = app.person("kim").await;
    identified(&app, &kim, "Heat", "1995", day(4, 10), json!({})).await;
    let page = app
        .send_as(Some(&kim), Request::get("/profile").header(header::ACCEPT, "text/html").body(Body::empty()).unwrap())
        .await;
    assert_eq!(page.status, 200);
    assert_eq!(page.select_text(".profile-stats div:nth-child(2) dd").as_deref(), Some("1"));
    assert_eq!(page.select_text(".achievement-title").as_deref(), Some("First Scene"));
    assert_eq!(page.select_attr(".achievement time", "datetime").as_deref(), Some(iso(day(4, 10)).as_str()));
}
