//! Testimonials: the featured list, posting a review, and the home page carousel.
use axum::body::Body;
use axum::http::{Request, header};
use reelfind::auth::CurrentUser;
use reelfind::services::users::{self, NewUser};
use serde_json::{Value, json};

use crate::support::{TestApp, TestResponse};

async fn make_user(app: &TestApp, name: &str) -> CurrentUser {
    let u = users::create(
        &app.db,
        NewUser {
            username: name,
            email: &format!("{name}@example.com"),
            password: None,
            role: "user",
            email_verified: true,
        },
    )
    .await
    .unwrap();
    CurrentUser { id: u.id, username: u.username, email: u.email, role: u.role }
}

/// POST /api/testimonials as `user`.
async fn post_review(app: &TestApp, user: &CurrentUser, body: &Value) -> TestResponse {
    app.send(
        Request::post("/api/testimonials")
            .header(header::CONTENT_TYPE, "application/json")
            .extension(user.clone())
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
    let ada = make_user(&app, "ada").await;
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
    let ada = make_user(&app, "ada").await;
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
    assert_eq!(app.get("/api/testimonials/featured").await.json().as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn posted_reviews_are_featured_and_shown_on_home() {
    let app = TestApp::new().await;
    let ada = make_user(&app, "ada").await;
    let bob = make_user(&app, "bob").await;
    let res = post_review(
        &app,
        &ada,
        &json!({"rating": 5, "review": "Named a 1998 episode from one blurry frame.", "movieTitle": "The X-Files", "identificationId": "abc123"}),
    )
    .await;
    assert_eq!(res.status, 201);
    let created = res.json();
    assert_eq!(created["userName"], "ada");
    assert_eq!(created["movieTitle"], "The X-Files");
    assert_eq!(created["identificationId"], "abc123");
    for i in 0..7 {
        assert_eq!(post_review(&app, &bob, &json!({"rating": 4, "review": format!("Review {i}")})).await.status, 201);
    }
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

#[tokio::test]
async fn review_text_is_escaped_on_the_home_page() {
    let app = TestApp::new().await;
    let ada = make_user(&app, "ada").await;
    post_review(&app, &ada, &json!({"rating": 5, "review": "<script>alert(1)</script><b>bold</b>"})).await;
    let home = app.get("/").await;
    assert!(!home.text().contains("<script>alert(1)"));
    assert_eq!(home.select_text("#testimonials blockquote").as_deref(), Some("<script>alert(1)</script><b>bold</b>"));
}
