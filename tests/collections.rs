//! Collections: "Add to Collection" on a result, the Profile's Collections tab.
use axum::body::Body;
use axum::http::{Request, header};
use reelfind::entities::{collection_item, user};
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use serde_json::{Value, json};

use crate::accounts::register;
use crate::support::{TestApp, TestResponse};

const ITEMS: &str = "/api/collections/items";

/// Registers `name` and returns its session token; the jar is left empty so each person
/// sends their own cookie explicitly.
async fn person(app: &TestApp, name: &str) -> String {
    let res = register(app, name, "secret123").await;
    assert!(res.status.is_success(), "{}", res.text());
    let token = app.cookie("reelfind_session").expect("session cookie");
    app.clear_cookies();
    token
}

async fn send_as(app: &TestApp, token: &str, req: axum::http::request::Builder, body: Option<Value>) -> TestResponse {
    let req = req
        .header(header::COOKIE, format!("reelfind_session={token}"))
        .header(header::CONTENT_TYPE, "application/json");
    app.send(req.body(body.map_or_else(Body::empty, |b| Body::from(b.to_string()))).unwrap()).await
}

async fn add(app: &TestApp, token: &str, body: Value) -> TestResponse {
    send_as(app, token, Request::post(ITEMS), Some(body)).await
}

async fn list(app: &TestApp, token: &str) -> Value {
    let res = send_as(app, token, Request::get(ITEMS), None).await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()
}

fn matrix() -> Value {
    json!({"title": "The Matrix", "year": "1999", "posterUrl": "https://image.tmdb.org/t/p/w500/m.jpg", "tmdbId": 603})
}

#[tokio::test]
async fn signed_out_gets_401_on_every_call() {
    let app = TestApp::new().await;
    let res = app.post_json(ITEMS, &matrix()).await;
    assert_eq!(res.status, 401);
    assert!(res.json()["error"].as_str().unwrap().starts_with("Sign in Required"), "{}", res.text());
    assert_eq!(app.get(ITEMS).await.status, 401);
    assert_eq!(app.delete(&format!("{ITEMS}/1")).await.status, 401);
    assert_eq!(collection_item::Entity::find().count(&app.db).await.unwrap(), 0);
}

#[tokio::test]
async fn cross_origin_adds_are_refused() {
    let app = TestApp::new().await;
    let ada = person(&app, "ada").await;
    let res =
        send_as(&app, &ada, Request::post(ITEMS).header(header::ORIGIN, "https://evil.example"), Some(matrix())).await;
    assert_eq!(res.status, 403);
    assert_eq!(list(&app, &ada).await["total"], 0);
}

#[tokio::test]
async fn a_saved_title_is_listed_newest_first_and_can_be_removed() {
    let app = TestApp::new().await;
    let ada = person(&app, "ada").await;
    assert_eq!(list(&app, &ada).await, json!({"total": 0, "items": []}));

    let res = add(&app, &ada, matrix()).await;
    assert_eq!(res.status, 201, "{}", res.text());
    let first = res.json();
    assert_eq!(first["title"], "The Matrix");
    assert_eq!(first["year"], "1999");
    assert_eq!(first["tmdbId"], 603);
    assert_eq!(first["posterUrl"], "https://image.tmdb.org/t/p/w500/m.jpg");
    let res =
        add(&app, &ada, json!({"title": "Breaking Bad", "year": "2008-2013", "posterUrl": null, "tmdbId": 1396})).await;
    assert_eq!(res.status, 201, "{}", res.text());

    let l = list(&app, &ada).await;
    assert_eq!(l["total"], 2);
    let titles: Vec<&str> = l["items"].as_array().unwrap().iter().map(|i| i["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["Breaking Bad", "The Matrix"]);

    let res = send_as(&app, &ada, Request::delete(format!("{ITEMS}/{}", first["id"])), None).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let l = list(&app, &ada).await;
    assert_eq!(l["total"], 1);
    assert_eq!(l["items"][0]["title"], "Breaking Bad");
    let again = send_as(&app, &ada, Request::delete(format!("{ITEMS}/{}", first["id"])), None).await;
    assert_eq!(again.status, 404);
    assert_eq!(send_as(&app, &ada, Request::delete(format!("{ITEMS}/not-a-number")), None).await.status, 404);
}

#[tokio::test]
async fn saving_the_same_title_twice_keeps_one_item() {
    let app = TestApp::new().await;
    let ada = person(&app, "ada").await;
    let first = add(&app, &ada, matrix()).await;
    assert_eq!(first.status, 201);
    // Same catalog id, even with another spelling: the item already there.
    let second = add(&app, &ada, json!({"title": "Matrix", "year": 1999, "tmdbId": 603})).await;
    assert_eq!(second.status, 200, "{}", second.text());
    assert_eq!(second.json()["id"], first.json()["id"]);
    assert_eq!(second.json()["title"], "The Matrix");

    // Without a catalog id, title (case and spacing ignored) plus year decide.
    let a = add(&app, &ada, json!({"title": "Big Buck Bunny", "year": 2008})).await;
    assert_eq!(a.status, 201, "{}", a.text());
    let b = add(&app, &ada, json!({"title": "big  buck bunny ", "year": "2008"})).await;
    assert_eq!(b.status, 200);
    assert_eq!(a.json()["id"], b.json()["id"]);
    let other_year = add(&app, &ada, json!({"title": "Big Buck Bunny", "year": 2014})).await;
    assert_eq!(other_year.status, 201, "a remake is another title");
    assert_eq!(list(&app, &ada).await["total"], 3);
}

#[tokio::test]
async fn people_see_and_remove_only_their_own_items() {
    let app = TestApp::new().await;
    let ada = person(&app, "ada").await;
    let bob = person(&app, "bob").await;
    let ada_item = add(&app, &ada, matrix()).await.json();
    // Bob may save the same title: it is his own item.
    let bob_item = add(&app, &bob, matrix()).await;
    assert_eq!(bob_item.status, 201);
    assert_ne!(bob_item.json()["id"], ada_item["id"]);
    add(&app, &bob, json!({"title": "Heat", "year": 1995, "tmdbId": 949})).await;

    assert_eq!(list(&app, &ada).await["total"], 1);
    assert_eq!(list(&app, &bob).await["total"], 2);

    let res = send_as(&app, &bob, Request::delete(format!("{ITEMS}/{}", ada_item["id"])), None).await;
    assert_eq!(res.status, 404, "another person's item is not found");
    assert_eq!(list(&app, &ada).await["items"][0]["id"], ada_item["id"], "ada's item is still there");
}

#[tokio::test]
async fn invalid_items_get_422_naming_the_field() {
    let app = TestApp::new().await;
    let ada = person(&app, "ada").await;
    let cases = [
        (json!({"year": 1999}), "Title is required"),
        (json!({"title": "   "}), "Title is required"),
        (json!({"title": 42}), "Title is required"),
        (json!({"title": "x".repeat(301)}), "Title must be at most 300 characters"),
        (json!({"title": "Heat", "year": "soon"}), "Year must be"),
        (json!({"title": "Heat", "year": 12}), "Year must be"),
        (json!({"title": "Heat", "posterUrl": "javascript:alert(1)"}), "Poster URL must be"),
        (
            json!({"title": "Heat", "posterUrl": format!("https://x.example/{}", "a".repeat(1000))}),
            "Poster URL must be",
        ),
        (json!({"title": "Heat", "tmdbId": -3}), "tmdbId must be"),
        (json!({"title": "Heat", "tmdbId": 1.5}), "tmdbId must be"),
        (json!({"title": "Heat", "tmdbId": "abc"}), "tmdbId must be"),
    ];
    for (body, want) in cases {
        let res = add(&app, &ada, body.clone()).await;
        assert_eq!(res.status, 422, "{body}: {}", res.text());
        let msg = res.json()["error"].as_str().unwrap().to_owned();
        assert!(msg.starts_with(want), "{body}: {msg}");
    }
    let res = send_as(&app, &ada, Request::post(ITEMS), None).await;
    assert_eq!(res.status, 400, "no body at all: {}", res.text());
    assert_eq!(list(&app, &ada).await["total"], 0);

    // Optional fields may be absent, null or empty.
    let res = add(&app, &ada, json!({"title": "Heat", "year": "", "posterUrl": "", "tmdbId": null})).await;
    assert_eq!(res.status, 201, "{}", res.text());
    assert_eq!(res.json()["year"], Value::Null);
}

#[tokio::test]
async fn deleting_a_person_deletes_their_collection() {
    let app = TestApp::new().await;
    let ada = person(&app, "ada").await;
    let bob = person(&app, "bob").await;
    add(&app, &ada, matrix()).await;
    add(&app, &ada, json!({"title": "Heat", "year": 1995, "tmdbId": 949})).await;
    add(&app, &bob, matrix()).await;
    let ada_id = user::Entity::find().filter(user::Column::Username.eq("ada")).one(&app.db).await.unwrap().unwrap().id;

    user::Entity::delete_by_id(ada_id).exec(&app.db).await.unwrap();

    let left = collection_item::Entity::find().all(&app.db).await.unwrap();
    assert_eq!(left.len(), 1);
    assert_ne!(left[0].user_id, ada_id);
    assert_eq!(list(&app, &bob).await["total"], 1);
}
