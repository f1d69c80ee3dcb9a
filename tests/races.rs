//! Limits that must hold when requests arrive together: one free try per guest, the API-key
//! cap and the keys' "at once" quota, the collection cap, the push-device cap, one review per
//! identification and the daily review cap.
//!
//! Every test here runs where requests really overlap: each request on a task of its own,
//! released together ([`TestApp::at_once`]) on a multi-thread runtime, against a SQLite file
//! opened with the production pool (8 connections, WAL) as well as the in-memory database
//! (one connection, where requests take turns) on SQLite runs, and against PostgreSQL on
//! PostgreSQL runs. Each test also checks that the requests did overlap. (Two server
//! processes on one database: `tests/nodes.rs`.)
use std::net::SocketAddr;
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, header};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::api_keys::new_key;
use crate::identify_support::*;
use crate::support::{DbKind, Person, Race, TestApp};

/// An OpenAI fake that answers after `delay`, so that the requests are still at work together.
async fn slow_openai(delay: Duration) -> MockServer {
    let s = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(chat_completion(&answer("Heat", 1995, "movie", 0.8)))
                .set_delay(delay),
        )
        .mount(&s)
        .await;
    s
}

fn openai_env(s: &MockServer) -> Vec<(String, String)> {
    vec![
        ("OPENAI_API_KEY".into(), "k".into()),
        ("OPENAI_BASE_URL".into(), format!("{}/v1", s.uri())),
        ("REELFIND_IDENTIFY_PER_ADDRESS_PER_MINUTE".into(), "100".into()),
    ]
}

fn json_req(method: &str, uri: &str, body: &Value) -> Request<Body> {
    Request::builder()
        .method(method)
        .uri(uri)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

/// The race's answers, said once for every assertion message.
fn seen(kind: DbKind, race: &Race) -> String {
    format!("{kind:?}: {:?} (at most {} at once)", race.statuses(), race.peak)
}

/// The requests overlapped: more than one was inside the router at a time.
fn overlapped(kind: DbKind, race: &Race) {
    assert!(race.peak >= 2, "the requests took turns, not a race: {}", seen(kind, race));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_parallel_guest_uploads_give_exactly_one_success() {
    for kind in DbKind::for_races() {
        let openai = slow_openai(Duration::from_millis(300)).await;
        let app = TestApp::with_env_on(kind, openai_env(&openai)).await;
        let uploads = (0..20u32)
            .map(|i| {
                let mut req = Upload::image(jpeg(200 + i, 120), "openai").request();
                req.extensions_mut().insert(ConnectInfo(SocketAddr::new("203.0.113.20".parse().unwrap(), 40000)));
                req
            })
            .collect();
        let race = app.at_once(uploads).await;
        overlapped(kind, &race);
        assert_eq!((race.count(200), race.count(403)), (1, 19), "{}", seen(kind, &race));
        assert_eq!(openai.received_requests().await.unwrap().len(), 1, "{kind:?}: the engine was paid once");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_key_requests_never_pass_the_cap() {
    use reelfind::services::api_keys::{self, MAX_KEYS};
    for kind in DbKind::for_races() {
        let app = TestApp::with_env_on(kind, Vec::<(String, String)>::new()).await;
        let alice = app.person("alice").await;
        // Ten places left, twenty asks at once (the hourly limit allows twenty): ten keys.
        for i in 0..MAX_KEYS - 10 {
            api_keys::create(&app.db, alice.id, &format!("key {i}")).await.unwrap();
        }
        let asks =
            (0..20).map(|i| alice.sends(json_req("POST", "/api/keys", &json!({"name": format!("p{i}")})))).collect();
        let race = app.at_once(asks).await;
        overlapped(kind, &race);
        assert_eq!((race.count(201), race.count(409)), (10, 10), "{}", seen(kind, &race));
        assert_eq!(api_keys::live_count(&app.db, alice.id).await.unwrap(), MAX_KEYS, "{kind:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_keyed_requests_hold_the_at_once_quota() {
    for kind in DbKind::for_races() {
        let openai = slow_openai(Duration::from_millis(500)).await;
        let app = TestApp::with_env_on(kind, openai_env(&openai)).await;
        app.state.settings.set(&app.db, "api_quota_concurrent", "2").await.unwrap();
        let alice = app.person("alice").await;
        app.set_cookie(reelfind::middleware::auth::SESSION_COOKIE, &alice.session());
        let (_, key) = new_key(&app, "batch job").await;
        app.clear_cookies();
        let calls = (0..8u32)
            .map(|i| {
                let mut req = Upload::image(jpeg(300 + i, 160), "openai").request();
                req.headers_mut().insert(header::AUTHORIZATION, format!("Bearer {key}").parse().unwrap());
                req
            })
            .collect();
        let race = app.at_once(calls).await;
        overlapped(kind, &race);
        assert_eq!((race.count(200), race.count(429)), (2, 6), "{}", seen(kind, &race));
        for refused in race.responses.iter().filter(|r| r.status == 429) {
            assert_eq!(refused.json()["code"], "quota_concurrent", "{kind:?}: {}", refused.text());
        }
        let quota = crate::api_keys::keyed(&app, &key, crate::api_keys::get("/api/me/quota")).await.json();
        assert_eq!(quota["concurrent"]["inUse"], 0, "{kind:?}: every slot was given back: {quota}");
    }
}

/// Seeds `n` saved titles for `person` straight into the table (the cap is 1000).
async fn seed_collection(app: &TestApp, person: &Person, n: u64) {
    use reelfind::entities::collection_item;
    use sea_orm::{EntityTrait, Set};
    let rows: Vec<collection_item::ActiveModel> = (0..n)
        .map(|i| {
            let title = format!("Seeded title {i}");
            collection_item::ActiveModel {
                user_id: Set(person.id),
                title: Set(title.clone()),
                year: Set(None),
                poster_url: Set(None),
                tmdb_id: Set(None),
                dedupe_key: Set(format!("seed:{i}")),
                created_at: Set(chrono::Utc::now()),
                ..Default::default()
            }
        })
        .collect();
    for chunk in rows.chunks(200) {
        collection_item::Entity::insert_many(chunk.to_vec()).exec(&app.db).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_adds_never_pass_the_collection_cap_or_save_a_title_twice() {
    use reelfind::services::collections::MAX_ITEMS;
    for kind in DbKind::for_races() {
        let app = TestApp::with_env_on(kind, Vec::<(String, String)>::new()).await;
        let ada = app.person("ada").await;
        let ten = app.person("ten").await;
        // The same title ten times at once: saved once.
        let same = (0..10)
            .map(|_| {
                ten.sends(json_req(
                    "POST",
                    "/api/collections/items",
                    &json!({"title": "Heat", "year": "1995", "tmdbId": 949}),
                ))
            })
            .collect();
        let race = app.at_once(same).await;
        overlapped(kind, &race);
        assert_eq!((race.count(201), race.count(200)), (1, 9), "{}", seen(kind, &race));
        let ids: std::collections::HashSet<_> = race.responses.iter().map(|r| r.json()["id"].clone()).collect();
        assert_eq!(ids.len(), 1, "{kind:?}: every answer names the one saved item: {ids:?}");
        // Two places left, ten different titles at once: two are saved.
        seed_collection(&app, &ada, MAX_ITEMS - 2).await;
        let adds = (0..10)
            .map(|i| ada.sends(json_req("POST", "/api/collections/items", &json!({"title": format!("Parallel {i}")}))))
            .collect();
        let race = app.at_once(adds).await;
        overlapped(kind, &race);
        assert_eq!((race.count(201), race.count(409)), (2, 8), "{}", seen(kind, &race));
        let listed = app.send_as(Some(&ada), Request::get("/api/collections/items").body(Body::empty()).unwrap()).await;
        assert_eq!(listed.json()["total"], MAX_ITEMS, "{kind:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_subscribes_cannot_pass_the_device_cap_together() {
    use reelfind::services::push::MAX_SUBSCRIPTIONS_PER_USER;
    let sub = |i: u64| {
        json!({"subscription": {
            "endpoint": format!("https://push.example/device/{i}"),
            "keys": {
                "p256dh": "BLMbF9ffKBiWQLCKvTHb6LO8Nb6dcUh6TItC455vu2kElga6PQvUmaFyCdykxY2nOSSL3yKgfbmFLRTUaGv4yV8",
                "auth": "xS03Fi5ErfTNH_l9WHE9Ig"
            }
        }})
    };
    for kind in DbKind::for_races() {
        let app = TestApp::with_env_on(
            kind,
            [("REELFIND_PUSH_ALLOW_HTTP", "true"), ("REELFIND_OUTBOUND_ALLOW_PRIVATE", "true")],
        )
        .await;
        let cap = app.person("cap").await;
        // Ten places left, twenty new devices at once: ten are kept.
        for i in 0..MAX_SUBSCRIPTIONS_PER_USER - 10 {
            let res = app.send_as(Some(&cap), json_req("POST", "/api/notifications/subscribe", &sub(i))).await;
            assert_eq!(res.status, 200, "{}", res.text());
        }
        let more = (100..120).map(|i| cap.sends(json_req("POST", "/api/notifications/subscribe", &sub(i)))).collect();
        let race = app.at_once(more).await;
        overlapped(kind, &race);
        assert_eq!((race.count(200), race.count(422)), (10, 10), "{}", seen(kind, &race));
        let status =
            app.send_as(Some(&cap), Request::get("/api/notifications/status").body(Body::empty()).unwrap()).await;
        assert_eq!(status.json()["subscriptionCount"], MAX_SUBSCRIPTIONS_PER_USER, "{kind:?}");
    }
}

/// `n` identifications of `owner`, stored as the pipeline stores them; their ids.
async fn identifications(app: &TestApp, owner: &Person, n: usize) -> Vec<String> {
    use reelfind::entities::identification;
    use sea_orm::{ActiveModelTrait, Set};
    let mut ids = Vec::new();
    for i in 0..n {
        let id = reelfind::identify::store::new_id();
        identification::ActiveModel {
            id: Set(id.clone()),
            user_id: Set(Some(owner.id)),
            title: Set(format!("Film {i}")),
            year: Set(Some("1999".into())),
            media_type: Set("movie".into()),
            poster_url: Set(None),
            confidence: Set(0.9),
            rating: Set(Some(8.0)),
            engine: Set("openai".into()),
            mode: Set("auto".into()),
            content_hash: Set("0".repeat(64)),
            result: Set("{}".into()),
            total_ms: Set(900),
            created_at: Set(chrono::Utc::now()),
            shared: Set(false),
            memory_id: Set(None),
        }
        .insert(&app.db)
        .await
        .unwrap();
        ids.push(id);
    }
    ids
}

fn review(identification: &str, i: usize) -> Request<Body> {
    json_req(
        "POST",
        "/api/testimonials",
        &json!({"rating": 5, "review": format!("Found it at once ({i})."), "identificationId": identification}),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_reviews_of_one_identification_store_one() {
    use reelfind::entities::testimonial;
    use sea_orm::{EntityTrait, PaginatorTrait};
    for kind in DbKind::for_races() {
        let app = TestApp::with_env_on(kind, Vec::<(String, String)>::new()).await;
        let rita = app.person("rita").await;
        let id = identifications(&app, &rita, 1).await.remove(0);
        let race = app.at_once((0..10).map(|i| rita.sends(review(&id, i))).collect()).await;
        overlapped(kind, &race);
        assert_eq!((race.count(201), race.count(409)), (1, 9), "{}", seen(kind, &race));
        assert_eq!(testimonial::Entity::find().count(&app.db).await.unwrap(), 1, "{kind:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_reviews_never_pass_the_daily_cap() {
    use reelfind::entities::testimonial;
    use reelfind::services::testimonials::DAILY_LIMIT;
    use sea_orm::{EntityTrait, PaginatorTrait};
    for kind in DbKind::for_races() {
        let app = TestApp::with_env_on(kind, Vec::<(String, String)>::new()).await;
        let rita = app.person("rita").await;
        let n = 2 * DAILY_LIMIT as usize;
        let ids = identifications(&app, &rita, n).await;
        let race = app.at_once(ids.iter().enumerate().map(|(i, id)| rita.sends(review(id, i))).collect()).await;
        overlapped(kind, &race);
        let cap = DAILY_LIMIT as usize;
        assert_eq!((race.count(201), race.count(429)), (cap, n - cap), "{}", seen(kind, &race));
        assert_eq!(testimonial::Entity::find().count(&app.db).await.unwrap(), DAILY_LIMIT, "{kind:?}");
    }
}
