//! Testimonials: posting a review (only about your own identification), moderation (every
//! review waits as pending until an admin approves it), and the home page carousel.
use axum::body::Body;
use axum::http::{Request, header};
use chrono::Utc;
use reelfind::entities::{identification, testimonial};
use reelfind::services::testimonials;

use sea_orm::{ActiveModelTrait, ConnectionTrait, EntityTrait, PaginatorTrait, Set};
use serde_json::{Value, json};

use crate::admin::make_admin;
use crate::support::{Person, TestApp, TestResponse};

pub async fn add_identification(app: &TestApp, owner: Option<&Person>, title: &str) -> String {
    let id = reelfind::identify::store::new_id();
    identification::ActiveModel {
        id: Set(id.clone()),
        user_id: Set(owner.map(|u| u.id)),
        title: Set(title.into()),
        year: Set(Some("1999".into())),
        media_type: Set("movie".into()),
        poster_url: Set(None),
        confidence: Set(0.9),
        rating: Set(Some(8.7)),
        engine: Set("openai".into()),
        mode: Set("auto".into()),
        content_hash: Set("0".repeat(64)),
        result: Set("{}".into()),
        total_ms: Set(1200),
        created_at: Set(Utc::now()),
        shared: Set(true),
        memory_id: Set(None),
    }
    .insert(&app.db)
    .await
    .unwrap();
    id
}

/// Approves every review, as an admin working through the queue would.
async fn approve_all(app: &TestApp) {
    for t in testimonial::Entity::find().all(&app.db).await.unwrap() {
        testimonials::moderate(&app.db, t.id, "featured", 1).await.unwrap();
    }
}

/// POST /api/testimonials as `user`.
async fn post_review(app: &TestApp, user: &Person, body: &Value) -> TestResponse {
    app.send_as(
        Some(user),
        Request::post("/api/testimonials")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .unwrap(),
    )
    .await
}

#[tokio::test]
async fn featured_is_empty_on_a_fresh_site() {
    let app = TestApp::new().await;
    let res = app.get("/api/testimonials/featured?limit=6").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json(), json!([]));
}

#[tokio::test]
async fn posting_needs_a_signed_in_user() {
    let app = TestApp::new().await;
    let res = app.post_json("/api/testimonials", &json!({"rating": 5, "review": "Great"})).await;
    assert_eq!(res.status, 401);
    assert_eq!(res.json()["error"], "Sign in required - Please sign in to submit a review");
    assert_eq!(app.get("/api/testimonials/featured").await.json(), json!([]));
}

#[tokio::test]
async fn review_text_is_required_and_trimmed() {
    let app = TestApp::new().await;
    let ada = app.person("ada").await;
    for body in [json!({"rating": 5, "review": ""}), json!({"rating": 5, "review": "   \n "}), json!({"rating": 5})] {
        let res = post_review(&app, &ada, &body).await;
        assert_eq!(res.status, 400, "{body}");
        assert_eq!(res.json()["error"], "Review required - Please write a review before submitting");
    }
    let long = "x".repeat(1001);
    assert_eq!(post_review(&app, &ada, &json!({"rating": 5, "review": long})).await.status, 400);
    let res = post_review(&app, &ada, &json!({"rating": 4, "review": "  Found it in seconds!  "})).await;
    assert_eq!(res.status, 201);
    assert_eq!(res.json()["review"], "Found it in seconds!");
}

#[tokio::test]
async fn rating_must_be_one_to_five() {
    let app = TestApp::new().await;
    let ada = app.person("ada").await;
    for rating in [json!(0), json!(6), json!(-1), json!(4.5), json!("x"), json!(true)] {
        let res = post_review(&app, &ada, &json!({"rating": rating, "review": "ok"})).await;
        assert_eq!(res.status, 400, "rating {rating}");
        assert!(res.json()["error"].as_str().unwrap().contains("rating"), "{}", res.text());
    }
    for (rating, stored) in [(json!(1), 1), (json!("3"), 3), (json!(5), 5), (Value::Null, 5)] {
        let res = post_review(&app, &ada, &json!({"rating": rating, "review": "ok"})).await;
        assert_eq!(res.status, 201, "rating {rating}");
        assert_eq!(res.json()["rating"], stored);
    }
    approve_all(&app).await;
    assert_eq!(app.get("/api/testimonials/featured").await.json().as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn approved_reviews_are_shown_on_home() {
    let app = TestApp::new().await;
    let ada = app.person("ada").await;
    let bob = app.person("bob").await;
    let xfiles = add_identification(&app, Some(&ada), "The X-Files").await;
    let res = post_review(
        &app,
        &ada,
        &json!({"rating": 5, "review": "Named a 1998 episode from one blurry frame.", "movieTitle": "The X-Files", "identificationId": xfiles}),
    )
    .await;
    assert_eq!(res.status, 201);
    let created = res.json();
    assert_eq!(created["userName"], "ada");
    assert_eq!(created["movieTitle"], "The X-Files");
    assert_eq!(created["identificationId"], xfiles.as_str());
    assert_eq!(created["status"], "pending");
    for i in 0..7 {
        assert_eq!(post_review(&app, &bob, &json!({"rating": 4, "review": format!("Review {i}")})).await.status, 201);
    }
    assert_eq!(app.get("/api/testimonials/featured").await.json(), json!([]), "nothing is public before moderation");
    assert_eq!(app.get("/").await.count("#testimonials .carousel .testimonial"), 0);
    approve_all(&app).await;
    let featured = app.get("/api/testimonials/featured?limit=6").await.json();
    let list = featured.as_array().unwrap();
    assert_eq!(list.len(), 6);
    assert_eq!(list[0]["review"], "Review 6", "newest first");
    assert_eq!(list[0]["userName"], "bob");
    assert_eq!(app.get("/api/testimonials/featured").await.json().as_array().unwrap().len(), 6);
    assert_eq!(app.get("/api/testimonials/featured?limit=100").await.json().as_array().unwrap().len(), 8);

    let home = app.get("/").await;
    assert_eq!(home.count("#testimonials .carousel .testimonial"), 6);
    assert_eq!(home.count("#testimonials .empty-state"), 0);
    assert_eq!(home.select_attr("#testimonials .stars", "aria-label").as_deref(), Some("Rated 4 out of 5"));
}

/// SPEC section 7: when the testimonials cannot be loaded the carousel says so in the SPEC's
/// words; the rest of the home page still renders.
#[tokio::test]
async fn home_says_failed_to_fetch_testimonials_when_they_cannot_be_loaded() {
    let app = TestApp::new().await;
    app.db.execute_unprepared("DROP TABLE testimonials").await.unwrap();
    let home = app.get("/").await;
    assert_eq!(home.status, 200);
    assert_eq!(home.select_text("#testimonials .empty-state h3").as_deref(), Some("Failed to fetch testimonials"));
    assert_eq!(home.count("#testimonials .carousel"), 0);
    assert_eq!(home.count("h1"), 1, "the rest of the page is there");
}

#[tokio::test]
async fn review_text_is_escaped_on_the_home_page() {
    let app = TestApp::new().await;
    let ada = app.person("ada").await;
    post_review(&app, &ada, &json!({"rating": 5, "review": "<script>alert(1)</script><b>bold</b>"})).await;
    approve_all(&app).await;
    let home = app.get("/").await;
    assert!(!home.text().contains("<script>alert(1)"));
    assert_eq!(home.select_text("#testimonials blockquote").as_deref(), Some("<script>alert(1)</script><b>bold</b>"));
}

/// The CEO's report: a signed-in person could post a review against someone else's
/// identification and it reached the home page at once.
#[tokio::test]
async fn a_review_can_only_name_your_own_identification() {
    let app = TestApp::new().await;
    let ada = app.person("ada").await;
    let mallory = app.person("mallory").await;
    let adas = add_identification(&app, Some(&ada), "The Matrix").await;
    let guests = add_identification(&app, None, "Heat").await;

    let res = post_review(&app, &mallory, &json!({"rating": 1, "review": "Terrible", "identificationId": adas})).await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(
        res.json()["error"],
        "Not your identification - You can only review an identification from your history"
    );
    let res =
        post_review(&app, &mallory, &json!({"rating": 1, "review": "Terrible", "identificationId": guests})).await;
    assert_eq!(res.status, 403, "a guest's identification is nobody's to review");
    for unknown in [json!("doesnotexist0000000000"), json!("../../etc"), json!(42), json!({"id": adas})] {
        let res =
            post_review(&app, &mallory, &json!({"rating": 1, "review": "Terrible", "identificationId": unknown})).await;
        assert_eq!(res.status, 404, "{unknown}: {}", res.text());
        assert_eq!(
            res.json()["error"],
            "Identification not found - You can only review an identification from your history"
        );
    }
    assert_eq!(testimonial::Entity::find().count(&app.db).await.unwrap(), 0, "nothing was stored");

    // The owner may, once; the title is the identification's, whatever the client claims.
    let res = post_review(
        &app,
        &ada,
        &json!({"rating": 5, "review": "Spot on", "movieTitle": "Something Else", "identificationId": adas}),
    )
    .await;
    assert_eq!(res.status, 201, "{}", res.text());
    assert_eq!(res.json()["movieTitle"], "The Matrix");
    let again =
        post_review(&app, &ada, &json!({"rating": 4, "review": "Still spot on", "identificationId": adas})).await;
    assert_eq!(again.status, 409);
    // A review without an identification is fine (and pending like every other).
    let res = post_review(&app, &mallory, &json!({"rating": 3, "review": "Nice site", "identificationId": null})).await;
    assert_eq!(res.status, 201);
    assert_eq!(res.json()["identificationId"], Value::Null);
    assert_eq!(app.get("/api/testimonials/featured").await.json(), json!([]));
}

#[tokio::test]
async fn admins_moderate_and_the_home_page_follows() {
    let app = TestApp::new().await;
    let ada = app.person("ada").await;
    let first = post_review(&app, &ada, &json!({"rating": 5, "review": "First"})).await.json()["id"].as_i64().unwrap();
    let second =
        post_review(&app, &ada, &json!({"rating": 4, "review": "Second"})).await.json()["id"].as_i64().unwrap();

    // Not an admin: 401 signed out, 403 signed in, for every moderation call.
    let calls = [
        ("GET", "/api/admin/testimonials".to_owned(), ""),
        ("PATCH", format!("/api/admin/testimonials/{first}"), r#"{"status":"featured"}"#),
        ("DELETE", format!("/api/admin/testimonials/{first}"), ""),
    ];
    let send = |m: &str, p: &str, b: &str, user: Option<&Person>| {
        let r = Request::builder().method(m).uri(p).header(header::CONTENT_TYPE, "application/json");
        let (app, user, req) = (&app, user.cloned(), r.body(Body::from(b.to_owned())).unwrap());
        async move { app.send_as(user.as_ref(), req).await }
    };
    for (m, p, b) in &calls {
        assert_eq!(send(m, p, b, None).await.status, 401, "{m} {p}");
        assert_eq!(send(m, p, b, Some(&ada)).await.status, 403, "{m} {p}");
    }
    for (m, p) in [("GET", "/admin/testimonials".to_owned()), ("POST", format!("/admin/testimonials/{first}"))] {
        let res = send(m, &p, "status=featured", Some(&ada)).await;
        assert_eq!(res.status, 303, "{m} {p}");
        assert_eq!(res.header("location").as_deref(), Some("/admin"));
    }
    assert_eq!(testimonial::Entity::find().count(&app.db).await.unwrap(), 2);

    make_admin(&app, "boss").await;
    let queue = app.get("/api/admin/testimonials?status=pending").await.json();
    assert_eq!(queue["total"], 2);
    assert_eq!(queue["counts"], json!({"pending": 2, "featured": 0, "hidden": 0}));
    assert_eq!(queue["testimonials"][0]["review"], "First", "the queue is worked oldest first");
    assert_eq!(app.get("/api/admin/testimonials?status=nonsense").await.status, 400);

    // Approve through the API, the other through the dashboard's form.
    let patch = |id: i64, status: &str| {
        app.send(
            Request::patch(format!("/api/admin/testimonials/{id}"))
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(json!({"status": status}).to_string()))
                .unwrap(),
        )
    };
    assert_eq!(patch(first, "featured").await.status, 204);
    assert_eq!(patch(first, "published").await.status, 400);
    assert_eq!(patch(999_999, "hidden").await.status, 404);
    let page = app.get("/admin/testimonials").await;
    assert_eq!(page.status, 200);
    assert_eq!(page.select_all_text(".review-item blockquote"), vec!["Second"]);
    let res = app
        .send(
            Request::post(format!("/admin/testimonials/{second}"))
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(Body::from("status=featured&back=pending"))
                .unwrap(),
        )
        .await;
    assert_eq!(res.status, 303);
    assert_eq!(res.header("location").as_deref(), Some("/admin/testimonials?status=pending&done=featured"));
    assert_eq!(app.get("/admin/testimonials").await.count(".review-item"), 0);

    let home = app.get("/").await;
    assert_eq!(home.select_all_text("#testimonials blockquote"), vec!["Second", "First"]);

    // Hiding takes it off the home page and the API at once; deleting removes it.
    assert_eq!(patch(second, "hidden").await.status, 204);
    assert_eq!(app.get("/").await.select_all_text("#testimonials blockquote"), vec!["First"]);
    let featured = app.get("/api/testimonials/featured").await.json();
    assert_eq!(featured.as_array().unwrap().len(), 1);
    let hidden = app.get("/api/admin/testimonials?status=hidden").await.json();
    assert_eq!(hidden["testimonials"][0]["moderatedBy"], "boss");
    let res = app.send(Request::delete(format!("/api/admin/testimonials/{first}")).body(Body::empty()).unwrap()).await;
    assert_eq!(res.status, 204);
    assert_eq!(app.get("/api/testimonials/featured").await.json(), json!([]));
    assert_eq!(app.get("/").await.count("#testimonials .empty-state"), 1);
}

/// Reviews stored before moderation existed were never looked at: the migration sends them
/// to the queue; only the ones already taken off the home page stay hidden.
#[tokio::test]
async fn reviews_from_before_moderation_go_to_the_queue() {
    use migration::{Migrator, MigratorTrait};
    use sea_orm::ConnectionTrait;

    let (test_db, ada_id) = crate::support::db_before_migration("m20261201_100000_testimonial_moderation").await;
    let db = test_db.conn.clone();
    for (review, featured) in [("was public", true), ("was taken down", false)] {
        db.execute_unprepared(&format!(
            "INSERT INTO testimonials (user_id, rating, review, featured, created_at) VALUES ({ada_id}, 5, '{review}', {featured}, CURRENT_TIMESTAMP)"
        ))
        .await
        .unwrap();
    }
    Migrator::up(&db, None).await.unwrap();
    let mut rows: Vec<(String, String)> =
        testimonial::Entity::find().all(&db).await.unwrap().into_iter().map(|t| (t.review, t.status)).collect();
    rows.sort();
    assert_eq!(
        rows,
        vec![("was public".to_owned(), "pending".to_owned()), ("was taken down".to_owned(), "hidden".to_owned())]
    );
    assert!(testimonials::featured(&db, 6).await.unwrap().is_empty());
}
